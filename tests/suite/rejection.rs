//! Implicit rejection (round-3 spec §2.6, Algorithm 6) for every parameter set and backend.
//!
//! A ciphertext that is not exactly what encapsulation produced must decapsulate to the
//! rejection key `SHA3-256(z ‖ SHA3-256(c'))`, computed here independently with `sha3`, and never
//! to the real key; inputs of the wrong length must give a typed error. Valid-ciphertext KATs
//! cannot see a broken key selection (RUSTSEC-2026-0290), so the same checks are also run
//! against decapsulation with deliberately broken selectors, which they must reject.
//!
//! Every backend of `for_each_backend!` runs these checks plain and under `LowMemory`, and through
//! the batch API (on the fastest lanes; the default backend on every lane path). The bits flipped
//! include the first, middle and last bit of every polynomial of b' and of c_m. The secret range
//! check of key decoding is tested at its boundaries (±μ/2 accepted, ±(μ/2 + 1) rejected) at the
//! first and the last coefficient, and a ciphertext of the other set of the same length
//! (LightSaber and LightSaber+, …) gives the rejection key.
//!
//! The parameter sets are the lines of `for_each_rejection_set!` and the same-length pairs those
//! of `for_each_same_length_pair!`: a new set is one line in each.
//!
//! For Saber+, when `../shared/kat/SaberPlus/rejection_*.txt` exists, the keys of its tampered
//! ciphertexts are compared with its `ss_z` column; without `../shared` that check is skipped.

use crate::support;

use saber_kem::batch::Lanes;
use saber_kem::hazmat::KeySelect;
use saber_kem::polymul::PolyMulPublic;
use saber_kem::{
    Backend, Ciphertext, DecapsulationKey, EncapsulationKey, Error, LowMemory, PolyMul, SaberKem,
    SharedSecret, Variant,
};
use saber_kem::{ByteArray, ParameterSet};
use saber_kem::{Nineties, Plus, Round3, Uniform, UniformNineties};
use sha3::{Digest, Sha3_256};
use subtle::Choice;
use support::drbg::NistDrbg;

/// Bit positions flipped per parameter set and backend (at least 200 are required).
const SAMPLED_BITS: usize = 256;

/// Calls `$callback!(test, Alias, Variant, L, MU, ET, secret_key_bits, low, high)` per parameter
/// set: the secret-key coding's bits per coefficient and the inclusive secret range of the
/// specification (centred binomial: ±μ/2). One line per set.
macro_rules! for_each_rejection_set {
    ($callback:ident) => {
        $callback!(lightsaber, LightSaber, Round3, 2, 10, 3, 13, -5, 5);
        $callback!(saber, Saber, Round3, 3, 8, 4, 13, -4, 4);
        $callback!(firesaber, FireSaber, Round3, 4, 6, 6, 13, -3, 3);
        $callback!(lightsaber_plus, LightSaberPlus, Plus, 2, 10, 3, 4, -5, 5);
        $callback!(saber_plus, SaberPlus, Plus, 3, 8, 4, 4, -4, 4);
        $callback!(firesaber_plus, FireSaberPlus, Plus, 4, 6, 6, 4, -3, 3);
        $callback!(lightsaber_90s, LightSaber90s, Nineties, 2, 10, 3, 13, -5, 5);
        $callback!(saber_90s, Saber90s, Nineties, 3, 8, 4, 13, -4, 4);
        $callback!(firesaber_90s, FireSaber90s, Nineties, 4, 6, 6, 13, -3, 3);
        // uSaber: uniform secrets in [-2, 1], packed with EQ = 12 bits.
        $callback!(ulightsaber, ULightSaber, Uniform, 2, 10, 3, 12, -2, 1);
        $callback!(usaber, USaber, Uniform, 3, 8, 4, 12, -2, 1);
        $callback!(ufiresaber, UFireSaber, Uniform, 4, 6, 6, 12, -2, 1);
        $callback!(
            ulightsaber_90s,
            ULightSaber90s,
            UniformNineties,
            2,
            10,
            3,
            12,
            -2,
            1
        );
        $callback!(usaber_90s, USaber90s, UniformNineties, 3, 8, 4, 12, -2, 1);
        $callback!(
            ufiresaber_90s,
            UFireSaber90s,
            UniformNineties,
            4,
            6,
            6,
            12,
            -2,
            1
        );
    };
}

/// Calls `$callback!(test, A, B)` per pair of parameter sets whose ciphertexts have the same
/// length. One line per pair.
macro_rules! for_each_same_length_pair {
    ($callback:ident) => {
        $callback!(lightsaber_and_lightsaber_plus, LightSaber, LightSaberPlus);
        $callback!(saber_and_saber_plus, Saber, SaberPlus);
        $callback!(firesaber_and_firesaber_plus, FireSaber, FireSaberPlus);
        $callback!(lightsaber_and_ulightsaber, LightSaber, ULightSaber);
        $callback!(saber_and_saber_90s, Saber, Saber90s);
        $callback!(usaber_and_usaber_90s, USaber, USaber90s);
    };
}

fn sha3_256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha3_256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// The rejection key for `ct` under `dk`, from the secret key's encoding: z is its last 32 bytes;
/// H is SHA-256 for the 90s sets, SHA3-256 otherwise.
fn rejection_key<P: ParameterSet>(dk: &DecapsulationKey<P>, ct: &[u8]) -> [u8; 32] {
    let sk = dk.to_bytes();
    let z = &sk.as_ref()[sk.as_ref().len() - 32..];
    if P::NAME.ends_with("-90s") {
        sha256(&[z, &sha256(&[ct])])
    } else {
        sha3_256(&[z, &sha3_256(&[ct])])
    }
}

/// Bytes of one packed polynomial of b' (10 bits per coefficient).
const POLY_P_BYTES: usize = 320;

/// The first, a middle and the last bit of every polynomial of b' and of c_m (`ct_len` bytes of
/// ciphertext, `b_len` of them b').
fn structured_bits(ct_len: usize, b_len: usize) -> Vec<usize> {
    assert_eq!(b_len % POLY_P_BYTES, 0);
    let parts = (0..b_len / POLY_P_BYTES)
        .map(|k| (k * POLY_P_BYTES * 8, POLY_P_BYTES * 8))
        .chain([(b_len * 8, (ct_len - b_len) * 8)]);
    let mut positions = Vec::new();
    for (start, bits) in parts {
        positions.extend([start, start + bits / 2 + 3, start + bits - 1]);
    }
    positions
}

/// Bit positions to flip: [`structured_bits`], both ends of the ciphertext and of its two parts
/// (b' and c_m), and pseudorandom positions (xorshift, fixed seed) up to `SAMPLED_BITS`.
fn sampled_bits(ct_len: usize, b_len: usize) -> Vec<usize> {
    let bits = ct_len * 8;
    let mut positions = structured_bits(ct_len, b_len);
    for p in [0, 1, 7, 8, b_len * 8 - 1, b_len * 8, bits - 8, bits - 1] {
        if !positions.contains(&p) {
            positions.push(p);
        }
    }
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

fn key_pair<V: Variant, B: Backend, const L: usize, const MU: usize, const ET: usize>(
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

fn full_suite<V: Variant, B: Backend, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    name: &str,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let (dk, _, ct, ss) = key_pair::<V, B, L, MU, ET>(backend, 0x21);
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

/// Batch decapsulation on `lanes`: the valid ciphertext and one with each bit of
/// [`structured_bits`] flipped, in groups of eight (each group mixes the valid one in first).
fn batch_suite<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    name: &str,
    lanes: Lanes,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    type K<V, const L: usize, const MU: usize, const ET: usize> = SaberKem<V, L, MU, ET>;
    let (dk, _, ct, ss) = key_pair::<V, B, L, MU, ET>(backend, 0x21);
    let ct_bytes = ct.as_bytes();
    let b_len = <K<V, L, MU, ET> as ParameterSet>::PublicKeyBytes::ZERO
        .as_ref()
        .len()
        - 32;
    let tampered: Vec<Ciphertext<K<V, L, MU, ET>>> = structured_bits(ct_bytes.len(), b_len)
        .into_iter()
        .map(|bit| {
            let mut bytes = ct_bytes.to_vec();
            bytes[bit >> 3] ^= 1 << (bit & 7);
            Ciphertext::from_bytes(&bytes).expect("same length")
        })
        .collect();
    let what = format!("{name}, batch on lanes {}", lanes.name());
    for group in tampered.chunks(7) {
        let cts: [&Ciphertext<K<V, L, MU, ET>>; 8] = core::array::from_fn(|i| {
            if i == 0 {
                &ct
            } else {
                group.get(i - 1).unwrap_or(&ct)
            }
        });
        let keys =
            K::<V, L, MU, ET>::decapsulate_batch_with_lanes(backend, lanes, cts.map(|c| (&dk, c)));
        for (c, key) in cts.iter().zip(&keys) {
            if c.as_bytes() == ct_bytes {
                assert!(
                    *key == ss,
                    "{what}: the valid ciphertext did not give the real key"
                );
            } else {
                assert!(
                    *key != ss,
                    "{what}: a tampered ciphertext gave the real key"
                );
                assert_eq!(
                    key.as_bytes(),
                    &rejection_key(&dk, c.as_bytes()),
                    "{what}: a tampered ciphertext did not give H(z || H(c'))"
                );
            }
        }
    }
}

macro_rules! rejection_tests {
    ($backend:ident, $name:expr, $ctor:expr) => {
        mod $backend {
            use super::*;

            macro_rules! one_set {
                ($test:ident, $alias:ident, $v:ty, $l:literal, $mu:literal, $et:literal, $bits:literal, $low:literal, $high:literal) => {
                    #[test]
                    fn $test() {
                        full_suite::<$v, _, $l, $mu, $et>(&mut $ctor, $name);
                    }
                };
            }
            for_each_rejection_set!(one_set);

            /// The low-memory plan (its own secret handling and partial sums; the same
            /// polynomial-by-polynomial comparison of the re-encryption).
            mod low_memory {
                use super::*;

                macro_rules! one_set {
                    ($test:ident, $alias:ident, $v:ty, $l:literal, $mu:literal, $et:literal, $bits:literal, $low:literal, $high:literal) => {
                        #[test]
                        fn $test() {
                            full_suite::<$v, _, $l, $mu, $et>(
                                &mut LowMemory($ctor),
                                concat!("low-memory ", $name),
                            );
                        }
                    };
                }
                for_each_rejection_set!(one_set);
            }

            /// The batch API on the fastest lanes.
            mod batch {
                use super::*;

                macro_rules! one_set {
                    ($test:ident, $alias:ident, $v:ty, $l:literal, $mu:literal, $et:literal, $bits:literal, $low:literal, $high:literal) => {
                        #[test]
                        fn $test() {
                            batch_suite::<$v, _, $l, $mu, $et>(&mut $ctor, $name, Lanes::fastest());
                        }
                    };
                }
                for_each_rejection_set!(one_set);
            }
        }
    };
}

support::backends::for_each_backend!(rejection_tests);

/// The batch API with the default backend on every lane path this CPU runs (one job at a time,
/// the portable four-way Keccak, AVX2, AVX-512).
mod batch_lane_paths {
    use super::*;

    macro_rules! one_set {
        ($test:ident, $alias:ident, $v:ty, $l:literal, $mu:literal, $et:literal, $bits:literal, $low:literal, $high:literal) => {
            #[test]
            fn $test() {
                let mut backend = saber_kem::DefaultPolyMul::default();
                for lanes in Lanes::all() {
                    batch_suite::<$v, _, $l, $mu, $et>(&mut backend, "default", lanes);
                }
            }
        };
    }
    for_each_rejection_set!(one_set);
}

/// Writes `value` as coefficient `index` of the secret-key coding (`bits`-bit two's complement,
/// least significant bit first) at the front of `sk`.
fn set_secret_coefficient(sk: &mut [u8], bits: usize, index: usize, value: i32) {
    let field = (value as u32) & ((1 << bits) - 1);
    for b in 0..bits {
        let at = index * bits + b;
        let bit = ((field >> b) & 1) as u8;
        sk[at / 8] = (sk[at / 8] & !(1 << (at % 8))) | (bit << (at % 8));
    }
}

/// Key decoding's secret range check at its boundaries: `low` and `high` (the spec's ±μ/2) are
/// accepted and the key still decapsulates; `low - 1` and `high + 1` are `SecretOutOfRange`; at
/// the first and at the last secret coefficient.
fn check_secret_range<P: ParameterSet>(
    (dk, ek): (DecapsulationKey<P>, EncapsulationKey<P>),
    bits: usize,
    low: i32,
    high: i32,
    l: usize,
) {
    let mut backend = saber_kem::polymul::Schoolbook;
    let mut rng = NistDrbg::new(&[0x5E; 48]);
    let (ct, ss) = ek.try_encapsulate_with(&mut backend, &mut rng).unwrap();
    let sk = dk.to_bytes();
    let cpa = P::SecretCpaBytes::ZERO.as_ref().len();
    assert_eq!(
        cpa * 8,
        l * 256 * bits,
        "{}: secret-key coding width",
        P::NAME
    );
    for index in [0, l * 256 - 1] {
        for value in [low, high] {
            let mut edited = sk.as_ref().to_vec();
            set_secret_coefficient(&mut edited, bits, index, value);
            let key = DecapsulationKey::<P>::from_bytes(&edited).unwrap_or_else(|e| {
                panic!("{}: coefficient {index} = {value} rejected: {e:?}", P::NAME)
            });
            // Another secret: the valid ciphertext now gives the rejection key (or, rarely, it
            // still decrypts); either way no panic and never a different key than these two.
            let got = key.decapsulate_with(&mut backend, &ct);
            assert!(
                got == ss || got.as_bytes() == &rejection_key(&key, ct.as_bytes()),
                "{}: coefficient {index} = {value}",
                P::NAME
            );
        }
        for value in [low - 1, high + 1] {
            let mut edited = sk.as_ref().to_vec();
            set_secret_coefficient(&mut edited, bits, index, value);
            assert_eq!(
                DecapsulationKey::<P>::from_bytes(&edited).err(),
                Some(Error::SecretOutOfRange),
                "{}: coefficient {index} = {value} accepted",
                P::NAME
            );
        }
    }
}

/// The secret range check at ±μ/2 and ±(μ/2 + 1), per set.
mod secret_range {
    use super::*;

    macro_rules! one_set {
        ($test:ident, $alias:ident, $v:ty, $l:literal, $mu:literal, $et:literal, $bits:literal, $low:literal, $high:literal) => {
            #[test]
            fn $test() {
                let mut rng = NistDrbg::new(&[0x5D; 48]);
                let pair = saber_kem::$alias::try_generate_with(
                    &mut saber_kem::polymul::Schoolbook,
                    &mut rng,
                )
                .unwrap();
                check_secret_range(pair, $bits, $low, $high, $l);
            }
        };
    }
    for_each_rejection_set!(one_set);
}

/// A ciphertext of another set with the same length decodes as one of this set and gives the
/// rejection key H(z ‖ H(c)), both ways.
fn check_other_set<A: ParameterSet, B: ParameterSet>(
    (dk_a, ek_a): (DecapsulationKey<A>, EncapsulationKey<A>),
    (dk_b, ek_b): (DecapsulationKey<B>, EncapsulationKey<B>),
) {
    let mut backend = saber_kem::polymul::Schoolbook;
    let mut rng = NistDrbg::new(&[0x6F; 48]);
    let (ct_a, ss_a) = ek_a.try_encapsulate_with(&mut backend, &mut rng).unwrap();
    let (ct_b, ss_b) = ek_b.try_encapsulate_with(&mut backend, &mut rng).unwrap();
    assert_eq!(ct_a.as_bytes().len(), ct_b.as_bytes().len());
    let as_a = Ciphertext::<A>::from_bytes(ct_b.as_bytes()).unwrap();
    let got = dk_a.decapsulate_with(&mut backend, &as_a);
    assert!(got != ss_b && got != ss_a);
    assert_eq!(
        got.as_bytes(),
        &rejection_key(&dk_a, ct_b.as_bytes()),
        "{} ciphertext under a {} key",
        B::NAME,
        A::NAME
    );
    let as_b = Ciphertext::<B>::from_bytes(ct_a.as_bytes()).unwrap();
    let got = dk_b.decapsulate_with(&mut backend, &as_b);
    assert!(got != ss_a && got != ss_b);
    assert_eq!(
        got.as_bytes(),
        &rejection_key(&dk_b, ct_a.as_bytes()),
        "{} ciphertext under a {} key",
        A::NAME,
        B::NAME
    );
    // The same through the slice entry points (default backend).
    assert_eq!(
        dk_a.decapsulate_slice(ct_b.as_bytes()).unwrap().as_bytes(),
        &rejection_key(&dk_a, ct_b.as_bytes())
    );
}

mod other_set_same_length {
    use super::*;

    macro_rules! one_pair {
        ($test:ident, $a:ident, $b:ident) => {
            #[test]
            fn $test() {
                let mut rng = NistDrbg::new(&[0x6E; 48]);
                let mut backend = saber_kem::polymul::Schoolbook;
                let a = saber_kem::$a::try_generate_with(&mut backend, &mut rng).unwrap();
                let b = saber_kem::$b::try_generate_with(&mut backend, &mut rng).unwrap();
                check_other_set(a, b);
            }
        };
    }
    for_each_same_length_pair!(one_pair);
}

macro_rules! expanded_rejection_tests {
    ($backend:ident, $name:expr, $ctor:expr) => {
        mod $backend {
            use super::*;

            #[test]
            fn all_sets() {
                macro_rules! one_set {
                    ($test:ident, $alias:ident, $v:ty, $l:literal, $mu:literal, $et:literal, $bits:literal, $low:literal, $high:literal) => {
                        expanded_suite::<$v, _, $l, $mu, $et>(&mut $ctor);
                    };
                }
                for_each_rejection_set!(one_set);
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
