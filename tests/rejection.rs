//! Implicit rejection (round-3 spec §2.6, Algorithm 6) for every parameter set and backend.
//!
//! A ciphertext that is not exactly what encapsulation produced must decapsulate to the
//! rejection key `SHA3-256(z ‖ SHA3-256(c'))`, computed here independently with `sha3`, and never
//! to the real key; inputs of the wrong length must give a typed error. Valid-ciphertext KATs
//! cannot see a broken key selection (RUSTSEC-2026-0290), so the same checks are also run
//! against decapsulation with deliberately broken selectors, which they must reject.
//!
//! For Saber+, when `../shared/kat/SaberPlus/rejection_*.txt` exists, the keys of its tampered
//! ciphertexts are compared with its `ss_z` column; without `../shared` that check is skipped.

mod support;

use saber_kem::hazmat::KeySelect;
use saber_kem::polymul::PolyMulPublic;
use saber_kem::{ByteArray, ParameterSet};
use saber_kem::{
    Ciphertext, DecapsulationKey, EncapsulationKey, Error, PolyMul, SaberKem, SharedSecret, Variant,
};
use saber_kem::{Plus, Round3};
use sha3::{Digest, Sha3_256};
use subtle::Choice;
use support::drbg::NistDrbg;

/// Bit positions flipped per parameter set and backend (at least 200 are required).
const SAMPLED_BITS: usize = 256;

fn sha3_256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha3_256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// The rejection key for `ct` under `dk`, from the secret key's encoding: z is its last 32 bytes.
fn rejection_key<P: ParameterSet>(dk: &DecapsulationKey<P>, ct: &[u8]) -> [u8; 32] {
    let sk = dk.to_bytes();
    let z = &sk.as_ref()[sk.as_ref().len() - 32..];
    sha3_256(&[z, &sha3_256(&[ct])])
}

/// Bit positions to flip: both ends of the ciphertext and of its two parts (b' and c_m), and
/// pseudorandom positions (xorshift, fixed seed) up to `SAMPLED_BITS`.
fn sampled_bits(ct_len: usize, b_len: usize) -> Vec<usize> {
    let bits = ct_len * 8;
    let mut positions = vec![0, 1, 7, 8, b_len * 8 - 1, b_len * 8, bits - 8, bits - 1];
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ ct_len as u64;
    while positions.len() < SAMPLED_BITS {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let p = (((state >> 32) * bits as u64) >> 32) as usize; // uniform-ish in [0, bits)
        if !positions.contains(&p) {
            positions.push(p);
        }
    }
    positions
}

/// Every check of this file for one key pair and one decapsulation function; `Err` describes
/// the first violation.
fn check_rejection<P: ParameterSet>(
    dk: &DecapsulationKey<P>,
    ct: &Ciphertext<P>,
    ss: &SharedSecret,
    decapsulate: &mut dyn FnMut(&Ciphertext<P>) -> SharedSecret,
) -> Result<(), String> {
    if decapsulate(ct) != *ss {
        return Err(format!(
            "{}: valid ciphertext did not give the real key",
            P::NAME
        ));
    }
    let ct_bytes = ct.as_bytes();
    // b' has the length of b in the public key: everything but the 32-byte seed.
    let b_len = P::PublicKeyBytes::ZERO.as_ref().len() - 32;
    for bit in sampled_bits(ct_bytes.len(), b_len) {
        let mut tampered = ct_bytes.to_vec();
        tampered[bit >> 3] ^= 1 << (bit & 7);
        let tampered = Ciphertext::<P>::from_bytes(&tampered).expect("same length");
        let got = decapsulate(&tampered);
        if got == *ss {
            return Err(format!("{}: bit {bit} flipped gave the real key", P::NAME));
        }
        if got.as_bytes() != &rejection_key(dk, tampered.as_bytes()) {
            return Err(format!(
                "{}: bit {bit} flipped did not give H(z || H(c'))",
                P::NAME
            ));
        }
    }
    Ok(())
}

/// A key pair, and a ciphertext with its shared secret.
type Exchange<P> = (
    DecapsulationKey<P>,
    EncapsulationKey<P>,
    Ciphertext<P>,
    SharedSecret,
);

fn key_pair<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    seed: u8,
) -> Exchange<SaberKem<V, L, MU, ET>>
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let mut rng = NistDrbg::new(&[seed; 48]);
    let (dk, ek) = SaberKem::<V, L, MU, ET>::try_generate_with(backend, &mut rng).unwrap();
    let (ct, ss) = ek.try_encapsulate_with(backend, &mut rng).unwrap();
    (dk, ek, ct, ss)
}

/// Wrong lengths are typed errors on every entry point that takes bytes.
fn check_lengths<P: ParameterSet>(dk: &DecapsulationKey<P>, ct: &Ciphertext<P>) {
    let ct_len = ct.as_bytes().len();
    let mut long = ct.as_bytes().to_vec();
    long.extend_from_slice(&[0xA5; 64]);
    for len in 0..long.len() {
        let input = &long[..len];
        let expected_error = Error::InvalidLength {
            expected: ct_len,
            actual: len,
        };
        if len == ct_len {
            assert!(Ciphertext::<P>::from_bytes(input).is_ok());
            continue;
        }
        assert_eq!(
            Ciphertext::<P>::from_bytes(input).err(),
            Some(expected_error)
        );
        assert_eq!(dk.decapsulate_slice(input).err(), Some(expected_error));
    }
    // Truncated and extended keys.
    let sk = dk.to_bytes();
    let pk = dk.encapsulation_key().as_bytes();
    for cut in [0, 1, 32] {
        assert!(matches!(
            DecapsulationKey::<P>::from_bytes(&sk.as_ref()[..sk.as_ref().len() - cut.max(1)]),
            Err(Error::InvalidLength { .. })
        ));
        assert!(matches!(
            EncapsulationKey::<P>::from_bytes(&pk[..pk.len() - cut.max(1)]),
            Err(Error::InvalidLength { .. })
        ));
        let mut longer = sk.as_ref().to_vec();
        longer.extend(std::iter::repeat_n(0, cut + 1));
        assert!(matches!(
            DecapsulationKey::<P>::from_bytes(&longer),
            Err(Error::InvalidLength { .. })
        ));
    }
}

/// A malformed secret key is a typed error, never a key that decapsulates.
fn check_malformed_secret_keys<P: ParameterSet>(dk: &DecapsulationKey<P>) {
    let sk = dk.to_bytes();
    let cpa = P::SecretCpaBytes::ZERO.as_ref().len();
    let pk_len = P::PublicKeyBytes::ZERO.as_ref().len();
    // Low byte of secret coefficient 0 set to 0x08: 8 or −248 as a 13-bit value (round 3),
    // −8 as a 4-bit nibble (Saber+); out of range for every μ.
    let mut bad_secret = sk.as_ref().to_vec();
    bad_secret[0] = 0x08;
    assert_eq!(
        DecapsulationKey::<P>::from_bytes(&bad_secret).err(),
        Some(Error::SecretOutOfRange)
    );
    let mut bad_hash = sk.as_ref().to_vec();
    bad_hash[cpa + pk_len] ^= 1;
    assert_eq!(
        DecapsulationKey::<P>::from_bytes(&bad_hash).err(),
        Some(Error::PublicKeyHashMismatch)
    );
    // A changed public key inside the secret key no longer matches the stored hash.
    let mut bad_pk = sk.as_ref().to_vec();
    bad_pk[cpa] ^= 1;
    assert_eq!(
        DecapsulationKey::<P>::from_bytes(&bad_pk).err(),
        Some(Error::PublicKeyHashMismatch)
    );
}

/// The rejection checks through an expanded key (secret and public key cached in the backend's
/// domain).
fn expanded_suite<V: Variant, B: PolyMulPublic, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let (dk, _, ct, ss) = key_pair::<V, B, L, MU, ET>(backend, 0x21);
    let name = backend.name();
    let expanded = saber_kem::ExpandedDecapsulationKey::new(backend, &dk);
    check_rejection(&dk, &ct, &ss, &mut |c| expanded.decapsulate(backend, c))
        .unwrap_or_else(|e| panic!("backend {name}, expanded key: {e}"));
}

fn full_suite<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let (dk, _, ct, ss) = key_pair::<V, B, L, MU, ET>(backend, 0x21);
    let name = backend.name();
    check_rejection(&dk, &ct, &ss, &mut |c| dk.decapsulate_with(backend, c))
        .unwrap_or_else(|e| panic!("backend {name}: {e}"));
    // A valid ciphertext for another key pair is rejected too.
    let (_, _, other_ct, other_ss) = key_pair::<V, B, L, MU, ET>(backend, 0x42);
    let got = dk.decapsulate_with(backend, &other_ct);
    assert!(got != other_ss && got != ss);
    assert_eq!(
        got.as_bytes(),
        &rejection_key(&dk, other_ct.as_bytes()),
        "another key's ciphertext"
    );
    // The same through the slice entry point and the `kem` traits (default backend).
    assert!(dk.decapsulate_slice(ct.as_bytes()).unwrap() == ss);
    let rejected = dk.decapsulate_slice(other_ct.as_bytes()).unwrap();
    assert_eq!(
        rejected.as_bytes(),
        &rejection_key(&dk, other_ct.as_bytes())
    );
    check_lengths(&dk, &ct);
    check_malformed_secret_keys(&dk);
}

macro_rules! rejection_tests {
    ($backend:ident, $name:expr, $ctor:expr) => {
        mod $backend {
            use super::*;

            #[test]
            fn lightsaber() {
                full_suite::<Round3, _, 2, 10, 3>(&mut $ctor);
            }
            #[test]
            fn saber() {
                full_suite::<Round3, _, 3, 8, 4>(&mut $ctor);
            }
            #[test]
            fn firesaber() {
                full_suite::<Round3, _, 4, 6, 6>(&mut $ctor);
            }
            #[test]
            fn lightsaber_plus() {
                full_suite::<Plus, _, 2, 10, 3>(&mut $ctor);
            }
            #[test]
            fn saber_plus() {
                full_suite::<Plus, _, 3, 8, 4>(&mut $ctor);
            }
            #[test]
            fn firesaber_plus() {
                full_suite::<Plus, _, 4, 6, 6>(&mut $ctor);
            }
        }
    };
}

support::backends::for_each_backend!(rejection_tests);

macro_rules! expanded_rejection_tests {
    ($backend:ident, $name:expr, $ctor:expr) => {
        mod $backend {
            use super::*;

            #[test]
            fn all_sets() {
                expanded_suite::<Round3, _, 2, 10, 3>(&mut $ctor);
                expanded_suite::<Round3, _, 3, 8, 4>(&mut $ctor);
                expanded_suite::<Round3, _, 4, 6, 6>(&mut $ctor);
                expanded_suite::<Plus, _, 2, 10, 3>(&mut $ctor);
                expanded_suite::<Plus, _, 3, 8, 4>(&mut $ctor);
                expanded_suite::<Plus, _, 4, 6, 6>(&mut $ctor);
            }
        }
    };
}

/// Expanded keys, on the backends that support them.
mod expanded {
    use super::*;
    support::backends::for_each_public_backend!(expanded_rejection_tests);
}

/// The `kem` 0.3 trait path: wrong lengths are `TryFromSliceError`, tampering gives the
/// rejection key.
#[test]
fn kem_traits_reject() {
    use kem::{Decapsulate, Kem};
    type K = saber_kem::Saber;
    let mut rng = NistDrbg::new(&[7; 48]);
    let (dk, ek) = K::generate_keypair_from_rng(&mut rng);
    let (ct, ss) = kem::Encapsulate::encapsulate_with_rng(&ek, &mut rng);
    assert_eq!(Decapsulate::decapsulate(&dk, &ct), ss);
    let mut tampered = ct;
    tampered[100] ^= 0x40;
    assert_eq!(
        Decapsulate::decapsulate(&dk, &tampered).as_slice(),
        &rejection_key(&dk, &tampered)
    );
    assert!(Decapsulate::decapsulate_slice(&dk, &ct[..ct.len() - 1]).is_err());
    let mut long = ct.to_vec();
    long.push(0);
    assert!(Decapsulate::decapsulate_slice(&dk, &long).is_err());
}

/// A selector that never takes the rejection key: the RUSTSEC-2026-0290 failure.
struct NeverRejects;
impl KeySelect for NeverRejects {
    fn select_into(_: &mut [u8; 32], _: &[u8; 32], _: Choice) {}
}

/// A selector that always takes the rejection key.
struct AlwaysRejects;
impl KeySelect for AlwaysRejects {
    fn select_into(dst: &mut [u8; 32], src: &[u8; 32], _: Choice) {
        *dst = *src;
    }
}

/// The checks above are real: decapsulation with a broken selector fails them, on every set.
mod broken_selectors_are_caught {
    use super::*;
    use saber_kem::polymul::Schoolbook;

    fn caught<V: Variant, const L: usize, const MU: usize, const ET: usize>()
    where
        SaberKem<V, L, MU, ET>: ParameterSet,
    {
        let mut backend = Schoolbook;
        let (dk, _, ct, ss) = key_pair::<V, _, L, MU, ET>(&mut backend, 0x21);
        let never = check_rejection(&dk, &ct, &ss, &mut |c| {
            dk.decapsulate_with_selector::<_, NeverRejects>(&mut backend, c)
        });
        // Saber's final key is H(K̂ ‖ H(c')), so a skipped selection does not return the real
        // key: only the comparison with the independently computed H(z ‖ H(c')) sees it.
        assert!(
            never
                .as_ref()
                .is_err_and(|e| e.contains("did not give H(z")),
            "no-op selection not caught: {never:?}"
        );
        let always = check_rejection(&dk, &ct, &ss, &mut |c| {
            dk.decapsulate_with_selector::<_, AlwaysRejects>(&mut backend, c)
        });
        assert!(
            always
                .as_ref()
                .is_err_and(|e| e.contains("valid ciphertext")),
            "always-reject selection not caught: {always:?}"
        );
    }

    #[test]
    fn round3() {
        caught::<Round3, 2, 10, 3>();
        caught::<Round3, 4, 6, 6>();
    }

    #[test]
    fn plus() {
        caught::<Plus, 2, 10, 3>();
        caught::<Plus, 4, 6, 6>();
    }
}

/// Saber+: the tampered ciphertexts of `../shared/kat/SaberPlus/rejection_*.txt` give its
/// `ss_z` keys (keys regenerated from the KAT seeds of the same `count`).
mod saber_plus_shared_vectors {
    use super::*;
    use std::path::Path;
    use support::drbg::kat_seeds;

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    fn check<const L: usize, const MU: usize, const ET: usize>(file: &str)
    where
        SaberKem<Plus, L, MU, ET>: ParameterSet,
    {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/kat/SaberPlus")
            .join(file);
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("skipped: {} not present", path.display());
            return;
        };
        let seeds = kat_seeds();
        let mut checked = 0;
        let mut key: Option<(usize, DecapsulationKey<SaberKem<Plus, L, MU, ET>>)> = None;
        let (mut count, mut ct) = (0usize, Vec::new());
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("count = ") {
                count = v.parse().unwrap();
            } else if let Some(v) = line.strip_prefix("ct = ") {
                ct = hex(v);
            } else if let Some(v) = line.strip_prefix("ss_z = ") {
                if key.as_ref().is_none_or(|(c, _)| *c != count) {
                    let mut rng = NistDrbg::new(&seeds[count]);
                    let (dk, _) = SaberKem::<Plus, L, MU, ET>::try_generate(&mut rng).unwrap();
                    key = Some((count, dk));
                }
                let dk = &key.as_ref().unwrap().1;
                let got = dk.decapsulate_slice(&ct).unwrap();
                assert_eq!(
                    got.as_bytes().as_slice(),
                    hex(v).as_slice(),
                    "{file}: count {count}"
                );
                checked += 1;
            }
        }
        assert!(checked >= 100, "{file}: only {checked} vectors");
    }

    #[test]
    fn light_saber_plus() {
        check::<2, 10, 3>("rejection_SaberPlus_L2.txt");
    }
    #[test]
    fn saber_plus() {
        check::<3, 8, 4>("rejection_SaberPlus_L3.txt");
    }
    #[test]
    fn fire_saber_plus() {
        check::<4, 6, 6>("rejection_SaberPlus_L4.txt");
    }
}
