//! The public API: sizes, typed errors instead of panics, malformed keys, round trips, implicit
//! rejection on every backend, the RustCrypto `kem` traits, redacted `Debug`.

use crate::support;

use proptest::prelude::*;
use saber_kem::{
    Ciphertext, DecapsulationKey, EncapsulationKey, Error, FireSaber, FireSaber90s, FireSaberPlus,
    KEY_SEED_BYTES, LightSaber, LightSaber90s, LightSaberPlus, ParameterSet, PolyMul, Saber,
    Saber90s, SaberPlus, UFireSaber, UFireSaber90s, ULightSaber, ULightSaber90s, USaber, USaber90s,
};
use sha2::Sha256;
use sha3::{Digest, Sha3_256};
use support::drbg::NistDrbg;

fn rng(tag: u8) -> NistDrbg {
    NistDrbg::new(&[tag; 48])
}

/// The set's H, computed independently: SHA-256 for the 90s sets, SHA3-256 for the others.
fn set_h<P: ParameterSet>(parts: &[&[u8]]) -> [u8; 32] {
    fn of<D: Digest>(parts: &[&[u8]]) -> [u8; 32] {
        let mut state = D::new();
        for part in parts {
            state.update(part);
        }
        state.finalize().as_slice().try_into().unwrap()
    }
    if P::NAME.ends_with("-90s") {
        of::<Sha256>(parts)
    } else {
        of::<Sha3_256>(parts)
    }
}

/// The three 32-byte draws of one key generation from `rng`, as one seed.
fn seed_from(rng: &mut NistDrbg) -> [u8; KEY_SEED_BYTES] {
    let mut seed = [0u8; KEY_SEED_BYTES];
    for part in seed.chunks_exact_mut(32) {
        rng.randombytes(part);
    }
    seed
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

            /// A flipped ciphertext bit yields H(z ‖ H(ct')) on every backend (the set's H).
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
                            let want = set_h::<P>(&[&z, &set_h::<P>(&[&bytes])]);
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

            /// H(pk) is computed when a public key is made or decoded (the set's H), and stored
            /// in the secret key.
            #[test]
            fn public_key_hash_is_cached() {
                let (dk, ek) = P::generate(&mut rng(11));
                let hpk = set_h::<P>(&[ek.as_bytes()]);
                let sk = dk.to_bytes();
                assert_eq!(&sk.as_ref()[$sk - 64..$sk - 32], &hpk);
                let decoded = EncapsulationKey::<P>::from_bytes(ek.as_bytes()).unwrap();
                let (ct, ss) = decoded.encapsulate(&mut rng(12));
                assert_eq!(dk.decapsulate(&ct), ss);
            }

            #[test]
            fn kem_traits() {
                use kem::{
                    Decapsulate, Decapsulator, Encapsulate, FromSeed, Kem, KeyExport, KeyInit,
                    KeySizeUser, TryKeyInit,
                };
                let (dk, ek) = P::generate_keypair_from_rng(&mut rng(8));
                let (ct, ss) = ek.encapsulate_with_rng(&mut rng(9));
                assert_eq!(Decapsulate::decapsulate(&dk, &ct), ss);
                assert_eq!(Decapsulator::encapsulation_key(&dk), &ek);
                // Public keys: the NIST encoding in and out.
                let ek2 = <EncapsulationKey<P> as TryKeyInit>::new(&KeyExport::to_bytes(&ek)).unwrap();
                assert_eq!(ek2, ek);
                // Secret keys: the 96-byte seed in (`KeyInit`, `FromSeed`).
                assert_eq!(<DecapsulationKey<P> as KeySizeUser>::key_size(), KEY_SEED_BYTES);
                let seed = dk.to_seed().expect("generated keys keep their seed");
                let dk2 = <DecapsulationKey<P> as KeyInit>::new(&(*seed).into());
                assert_eq!(dk2, dk);
                assert_eq!(Decapsulate::decapsulate(&dk2, &ct), ss);
                let (dk3, ek3) = <P as FromSeed>::from_seed(&(*seed).into());
                assert_eq!(dk3, dk);
                assert_eq!(ek3, ek);
                assert!(dk.decapsulate_slice(&ct[1..]).is_err());
            }

            /// A key made from a seed is the key pair key generation makes from the same three
            /// DRBG draws, on every backend; the seed round-trips, keys decoded from the NIST
            /// encoding have none, and either kind compares equal.
            #[test]
            fn seed_form_keys() {
                let seed = seed_from(&mut rng(13));
                let (dk, ek) =
                    P::try_generate_with(&mut saber_kem::DefaultPolyMul::default(), &mut rng(13))
                        .unwrap();
                let (seed_a, rest) = seed.split_at(32);
                let (seed_s, z) = rest.split_at(32);
                let (dk_det, _) = P::generate_deterministic_with(
                    &mut saber_kem::DefaultPolyMul::default(),
                    seed_a.try_into().unwrap(),
                    seed_s.try_into().unwrap(),
                    z.try_into().unwrap(),
                );
                assert_eq!(dk_det, dk);
                assert_eq!(dk.to_seed().as_deref(), Some(&seed));
                macro_rules! check_backend {
                    ($id:ident, $name:expr, $ctor:expr) => {
                        let from_seed = DecapsulationKey::<P>::from_seed_with(&mut $ctor, &seed);
                        assert_eq!(from_seed, dk, "{}", $name);
                        assert_eq!(from_seed.encapsulation_key(), &ek, "{}", $name);
                        assert_eq!(from_seed.to_bytes().as_ref(), dk.to_bytes().as_ref());
                        assert_eq!(from_seed.to_seed().as_deref(), Some(&seed), "{}", $name);
                        let from_seed =
                            DecapsulationKey::<P>::from_seed_with(&mut saber_kem::LowMemory($ctor), &seed);
                        assert_eq!(from_seed, dk, "low-memory {}", $name);
                    };
                }
                let decoded = DecapsulationKey::<P>::from_bytes(dk.to_bytes().as_ref()).unwrap();
                assert!(decoded.to_seed().is_none());
                assert_eq!(decoded, dk);
                assert!(decoded.clone().to_seed().is_none());
                assert_eq!(dk.clone().to_seed().as_deref(), Some(&seed));
                // Last: `or_skip!` ends the loop (and the test) at a backend this CPU lacks.
                support::backends::for_each_backend!(check_backend);
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
    lightsaber_90s: LightSaber90s, pk 672, sk 1568, ct 736;
    saber_90s: Saber90s, pk 992, sk 2304, ct 1088;
    firesaber_90s: FireSaber90s, pk 1312, sk 3040, ct 1472;
    ulightsaber: ULightSaber, pk 672, sk 1504, ct 736;
    usaber: USaber, pk 992, sk 2208, ct 1088;
    ufiresaber: UFireSaber, pk 1312, sk 2912, ct 1472;
    ulightsaber_90s: ULightSaber90s, pk 672, sk 1504, ct 736;
    usaber_90s: USaber90s, pk 992, sk 2208, ct 1088;
    ufiresaber_90s: UFireSaber90s, pk 1312, sk 2912, ct 1472;
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
        LightSaber90s::NAME,
        Saber90s::NAME,
        FireSaber90s::NAME,
        ULightSaber::NAME,
        USaber::NAME,
        UFireSaber::NAME,
        ULightSaber90s::NAME,
        USaber90s::NAME,
        UFireSaber90s::NAME,
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
            "LightSaber-90s",
            "Saber-90s",
            "FireSaber-90s",
            "uLightSaber",
            "uSaber",
            "uFireSaber",
            "uLightSaber-90s",
            "uSaber-90s",
            "uFireSaber-90s",
            "LightSaber+",
            "Saber+",
            "FireSaber+"
        ]
    );
    let _: fn(&mut saber_kem::polymul::Schoolbook) -> &'static str = |b| b.name();
}
