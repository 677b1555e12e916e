//! The public API: sizes, typed errors instead of panics, malformed keys, round trips, implicit
//! rejection on every backend, the RustCrypto `kem` traits, redacted `Debug`.

mod support;

use proptest::prelude::*;
use saber_kem::{
    Ciphertext, DecapsulationKey, EncapsulationKey, Error, FireSaber, FireSaberPlus, LightSaber,
    LightSaberPlus, ParameterSet, PolyMul, Saber, SaberPlus,
};
use sha3::{Digest, Sha3_256};
use support::drbg::NistDrbg;

fn rng(tag: u8) -> NistDrbg {
    NistDrbg::new(&[tag; 48])
}

/// Everything below runs once per parameter set.
macro_rules! per_set {
    ($($mod:ident: $set:ty, pk $pk:literal, sk $sk:literal, ct $ct:literal;)*) => {$(
        mod $mod {
            use super::*;
            type P = $set;

            #[test]
            fn sizes() {
                let (dk, ek) = P::generate(&mut rng(1));
                assert_eq!(ek.as_bytes().len(), $pk);
                assert_eq!(dk.to_bytes().as_ref().len(), $sk);
                let (ct, ss) = ek.encapsulate(&mut rng(2));
                assert_eq!(ct.as_bytes().len(), $ct);
                assert_eq!(ss.as_bytes().len(), 32);
            }

            #[test]
            fn wrong_lengths_are_typed_errors() {
                let (dk, _) = P::generate(&mut rng(1));
                for len in [0, 1, $pk - 1, $pk + 1, 4096] {
                    assert_eq!(
                        EncapsulationKey::<P>::from_bytes(&vec![0; len]).unwrap_err(),
                        Error::InvalidLength { expected: $pk, actual: len }
                    );
                }
                for len in [0, $sk - 1, $sk + 1] {
                    assert!(matches!(
                        DecapsulationKey::<P>::from_bytes(&vec![0; len]),
                        Err(Error::InvalidLength { .. })
                    ));
                }
                for len in [0, $ct - 1, $ct + 1] {
                    assert!(matches!(Ciphertext::<P>::from_bytes(&vec![0; len]), Err(Error::InvalidLength { .. })));
                    assert!(matches!(dk.decapsulate_slice(&vec![0; len]), Err(Error::InvalidLength { .. })));
                }
            }

            #[test]
            fn secret_keys_round_trip_and_malformed_ones_are_rejected() {
                let (dk, ek) = P::generate(&mut rng(3));
                let bytes = dk.to_bytes();
                let loaded = DecapsulationKey::<P>::from_bytes(bytes.as_ref()).unwrap();
                assert_eq!(loaded, dk);
                assert_eq!(loaded.encapsulation_key(), &ek);

                // A secret coefficient far out of range (all bits set in the first bytes).
                let mut bad = bytes.as_ref().to_vec();
                bad[0] = 0x77;
                bad[1] = 0x77;
                assert_eq!(DecapsulationKey::<P>::from_bytes(&bad).unwrap_err(), Error::SecretOutOfRange);

                // The embedded public key no longer matches its stored hash.
                let mut bad = bytes.as_ref().to_vec();
                let pk_start = $sk - 64 - $pk;
                bad[pk_start] ^= 1;
                assert_eq!(
                    DecapsulationKey::<P>::from_bytes(&bad).unwrap_err(),
                    Error::PublicKeyHashMismatch
                );
            }

            /// A flipped ciphertext bit yields SHA3-256(z ‖ SHA3-256(ct')) on every backend.
            #[test]
            fn tampered_ciphertexts_are_implicitly_rejected_on_every_backend() {
                let (dk, ek) = P::generate(&mut rng(4));
                let z = dk.to_bytes().as_ref()[$sk - 32..].to_vec();
                let (ct, ss) = ek.encapsulate(&mut rng(5));
                let backends = support::backends::Backends::here();
                let mut ran = Vec::new();
                macro_rules! check_backend {
                    ($id:ident, $name:expr, $ctor:expr) => {
                        ran.push($name);
                        let mut backend = $ctor;
                        assert_eq!(dk.decapsulate_with(&mut backend, &ct), ss, "{}", $name);
                        for position in [0, 7 * 8 + 3, ($ct - 1) * 8 + 7] {
                            let mut bytes = ct.as_bytes().to_vec();
                            bytes[position / 8] ^= 1 << (position % 8);
                            let tampered = Ciphertext::<P>::from_bytes(&bytes).unwrap();
                            let want: [u8; 32] =
                                Sha3_256::new().chain_update(&z).chain_update(Sha3_256::digest(&bytes)).finalize().into();
                            let got = dk.decapsulate_with(&mut backend, &tampered);
                            assert_eq!(got.as_bytes(), &want, "{} bit {position}", $name);
                            assert_ne!(got, ss);
                        }
                    };
                }
                support::backends::for_each_backend!(check_backend, backends);
                backends.expect_ran(&ran, "tampered ciphertexts");
            }

            #[test]
            fn debug_output_hides_secrets() {
                let (dk, ek) = P::generate(&mut rng(6));
                let (_, ss) = ek.encapsulate(&mut rng(7));
                let dk_debug = format!("{dk:?}");
                let ss_debug = format!("{ss:?}");
                assert!(dk_debug.contains("redacted") && ss_debug.contains("redacted"));
                let hex: String = ss.as_bytes()[..4].iter().map(|b| format!("{b:02x}")).collect();
                assert!(!ss_debug.to_lowercase().contains(&hex));
                assert!(format!("{ek:?}").starts_with("EncapsulationKey<"));
            }

            #[test]
            fn kem_traits() {
                use kem::{Decapsulate, Decapsulator, Encapsulate, Kem, KeyExport, TryKeyInit};
                let (dk, ek) = P::generate_keypair_from_rng(&mut rng(8));
                let (ct, ss) = ek.encapsulate_with_rng(&mut rng(9));
                assert_eq!(Decapsulate::decapsulate(&dk, &ct), ss);
                assert_eq!(Decapsulator::encapsulation_key(&dk), &ek);
                // NIST encodings in and out.
                let ek2 = <EncapsulationKey<P> as TryKeyInit>::new(&KeyExport::to_bytes(&ek)).unwrap();
                assert_eq!(ek2, ek);
                let dk2 = <DecapsulationKey<P> as TryKeyInit>::new(&KeyExport::to_bytes(&dk)).unwrap();
                assert_eq!(Decapsulate::decapsulate(&dk2, &ct), ss);
                assert!(dk.decapsulate_slice(&ct[1..]).is_err());
            }

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(16))]
                #[test]
                fn round_trip(seed_a: [u8; 32], seed_s: [u8; 32], z: [u8; 32], m: [u8; 32]) {
                    let mut backend = saber_kem::DefaultPolyMul::default();
                    let (dk, ek) = P::generate_deterministic_with(&mut backend, &seed_a, &seed_s, &z);
                    let (ct, ss) = ek.encapsulate_deterministic_with(&mut backend, &m);
                    prop_assert_eq!(dk.decapsulate(&ct), ss);
                }

                #[test]
                fn arbitrary_ciphertexts_never_panic(bytes in proptest::collection::vec(any::<u8>(), $ct)) {
                    let (dk, _) = P::generate(&mut rng(10));
                    let _ = dk.decapsulate_slice(&bytes).unwrap();
                }

                #[test]
                fn arbitrary_key_bytes_never_panic(
                    pk in proptest::collection::vec(any::<u8>(), $pk),
                    sk in proptest::collection::vec(any::<u8>(), $sk)
                ) {
                    prop_assert!(EncapsulationKey::<P>::from_bytes(&pk).is_ok());
                    // Random bytes practically never form a valid secret key; it must just not panic.
                    let _ = DecapsulationKey::<P>::from_bytes(&sk);
                }
            }
        }
    )*};
}

per_set! {
    lightsaber: LightSaber, pk 672, sk 1568, ct 736;
    saber: Saber, pk 992, sk 2304, ct 1088;
    firesaber: FireSaber, pk 1312, sk 3040, ct 1472;
    lightsaber_plus: LightSaberPlus, pk 672, sk 992, ct 736;
    saber_plus: SaberPlus, pk 992, sk 1440, ct 1088;
    firesaber_plus: FireSaberPlus, pk 1312, sk 1888, ct 1472;
}

/// All parameter sets live in one binary, with distinct names.
#[test]
fn every_set_is_usable_together() {
    let names = [
        LightSaber::NAME,
        Saber::NAME,
        FireSaber::NAME,
        LightSaberPlus::NAME,
        SaberPlus::NAME,
        FireSaberPlus::NAME,
    ];
    assert_eq!(
        names,
        [
            "LightSaber",
            "Saber",
            "FireSaber",
            "LightSaber+",
            "Saber+",
            "FireSaber+"
        ]
    );
    let _: fn(&mut saber_kem::polymul::Schoolbook) -> &'static str = |b| b.name();
}
