//! Secret hygiene: secret types print redacted `Debug` output and are wiped on drop.
//!
//! Wiping is checked by reading memory, not by trusting `ZeroizeOnDrop` markers the crate writes
//! by hand: each value is moved into a `MaybeUninit` slot, its secret bytes are located in the
//! slot (the encoded secret, z, a prepared secret as the backend computes it), the destructor runs
//! in place (`drop_in_place`, which leaves the storage valid and unchanged but for the
//! destructor's own writes), and the same bytes must then be zero, while a public part of the
//! same value (the public key) must still be there, proving the check looked at the right memory.
//! Types covered: `DecapsulationKey`, `ExpandedDecapsulationKey`, `KeySeeds`, `SharedSecret`,
//! `SecretPoly`, `to_bytes`'s `Zeroizing` buffer, the batch API's result arrays (key pairs,
//! shared secrets) and the hazmat SHAKE128 stream on every single-state Keccak path.
//!
//! Reading a value's bytes requires that it has no padding (padding is uninitialised memory):
//! the sizes of the types read whole are asserted to be the sum of their byte-array fields.
//! This file is also run under Miri (`.ci/miri.sh`); the tests that multiply or hash at length
//! are not.
#![allow(unsafe_code)] // reads the bytes of values (see `Slot`)

use std::mem::MaybeUninit;

use saber_kem::SharedSecret;
use saber_kem::batch::{KeySeeds, Lanes};
use saber_kem::hazmat::keccak::{Single, permute};
use saber_kem::polymul::{Poly, PolyMul, Schoolbook, SecretPoly};
use saber_kem::{DecapsulationKey, ExpandedDecapsulationKey, LightSaber, LightSaberPlus};
use sha3::{Digest, Sha3_256};
use zeroize::ZeroizeOnDrop;

/// A value in storage that outlives its destructor.
struct Slot<T> {
    slot: MaybeUninit<T>,
    dropped: bool,
}

impl<T> Slot<T> {
    fn new(value: T) -> Self {
        Self {
            slot: MaybeUninit::new(value),
            dropped: false,
        }
    }

    fn value(&self) -> &T {
        assert!(!self.dropped);
        // SAFETY: initialised by `new` and not dropped yet.
        unsafe { self.slot.assume_init_ref() }
    }

    /// The bytes of the storage. Only for types without padding (every byte initialised, before
    /// and after the destructor, whose writes are zeroing stores of whole fields).
    fn bytes(&self) -> Vec<u8> {
        // SAFETY: `size_of::<T>()` bytes of our own storage; callers pass types without padding,
        // whose bytes are all initialised (also after `drop_in_place`, which does not
        // deinitialise memory).
        unsafe { std::slice::from_raw_parts(self.slot.as_ptr().cast::<u8>(), size_of::<T>()) }
            .to_vec()
    }

    /// Runs the destructor in place, once.
    fn drop_in_place(&mut self) {
        assert!(!self.dropped);
        self.dropped = true;
        // SAFETY: initialised and not dropped before; never used as a `T` afterwards (only its
        // bytes are read).
        unsafe { self.slot.as_mut_ptr().drop_in_place() };
    }
}

impl<T> Drop for Slot<T> {
    fn drop(&mut self) {
        if !self.dropped {
            self.drop_in_place();
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Where `needle` lies in `haystack` (it must be there).
fn locate(haystack: &[u8], needle: &[u8], what: &str) -> std::ops::Range<usize> {
    let at = find(haystack, needle).unwrap_or_else(|| panic!("{what} is not stored inline"));
    at..at + needle.len()
}

fn all_zero(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| b == 0)
}

/// A LightSaber+ secret key built directly (no multiplication, so Miri stays fast): secret
/// nibbles 0x1 and 0xF (coefficients 1 and −1), an arbitrary public key, its hash, and z.
fn light_saber_plus_key() -> Vec<u8> {
    let mut sk = vec![0x1F_u8; 256];
    let pk: Vec<u8> = (0..672).map(|i| (i * 7 + 3) as u8).collect();
    sk.extend_from_slice(&pk);
    sk.extend_from_slice(&Sha3_256::digest(&pk));
    sk.extend_from_slice(&[0xA5; 32]);
    sk
}

/// The secret polynomial of every rank of [`light_saber_plus_key`]: −1 at even coefficients
/// (low nibble 0xF), 1 at odd ones.
fn light_saber_plus_secret() -> SecretPoly {
    let mut s = SecretPoly::ZERO;
    for (i, c) in s.coeffs.iter_mut().enumerate() {
        *c = if i % 2 == 0 { -1 } else { 1 };
    }
    s
}

/// Sizes of the LightSaber+ key types: byte arrays only (sk_cpa 256, pk 672, H(pk) 32, z 32, and
/// the optional key-generation seed seed_A ‖ seed_s: 64 bytes and its tag).
const LIGHT_SABER_PLUS_DK: usize = 256 + 672 + 32 + 32 + 1 + 64;
const LIGHT_SABER_PLUS_EK: usize = 672 + 32;

#[test]
fn decapsulation_key_memory_is_wiped() {
    assert_eq!(
        size_of::<DecapsulationKey<LightSaberPlus>>(),
        LIGHT_SABER_PLUS_DK
    );
    let sk = light_saber_plus_key();
    let (secret, pk, z) = (&sk[..256], &sk[256..928], &sk[sk.len() - 32..]);
    let mut slot = Slot::new(DecapsulationKey::<LightSaberPlus>::from_bytes(&sk).unwrap());
    let before = slot.bytes();
    let secret_at = locate(&before, secret, "the secret");
    let z_at = locate(&before, z, "z");
    slot.drop_in_place();
    let after = slot.bytes();
    assert!(all_zero(&after[secret_at]));
    assert!(all_zero(&after[z_at]));
    assert!(find(&after, pk).is_some(), "the public key is left alone");
}

#[test]
fn expanded_decapsulation_key_memory_is_wiped() {
    type Expanded = ExpandedDecapsulationKey<LightSaberPlus, Schoolbook>;
    // The key, the expanded public key (pk, H(pk), A: 2×2 and b: 2 polynomials of 512 bytes)
    // and the prepared secret (schoolbook: the secret itself, 2 × 256 bytes); the key's odd size
    // leaves one byte of padding before the 2-byte aligned polynomials.
    assert_eq!(
        size_of::<Expanded>(),
        (LIGHT_SABER_PLUS_DK + LIGHT_SABER_PLUS_EK + 6 * 512 + 2 * 256)
            .next_multiple_of(align_of::<Expanded>())
    );
    let sk = light_saber_plus_key();
    let (secret, pk, z) = (&sk[..256], &sk[256..928], &sk[sk.len() - 32..]);
    let dk = DecapsulationKey::<LightSaberPlus>::from_bytes(&sk).unwrap();
    let mut slot = Slot::new(Expanded::new(&mut Schoolbook, &dk));
    drop(dk);
    assert_eq!(
        slot.value().decapsulation_key().to_bytes().as_ref(),
        &sk[..]
    );
    let prepared = Schoolbook.prepare(&light_saber_plus_secret());
    let prepared: Vec<u8> = [prepared.coeffs, prepared.coeffs]
        .concat()
        .iter()
        .map(|&c| c as u8)
        .collect();
    let before = slot.bytes();
    let secret_at = locate(&before, secret, "the secret");
    let z_at = locate(&before, z, "z");
    let prepared_at = locate(&before, &prepared, "the prepared secret");
    slot.drop_in_place();
    let after = slot.bytes();
    assert!(all_zero(&after[secret_at]), "encoded secret not wiped");
    assert!(all_zero(&after[z_at]), "z not wiped");
    assert!(all_zero(&after[prepared_at]), "prepared secret not wiped");
    assert!(find(&after, pk).is_some(), "the public key is left alone");
}

#[test]
fn key_seeds_memory_is_wiped() {
    assert_eq!(size_of::<KeySeeds>(), 96);
    let mut slot = Slot::new(KeySeeds {
        seed_a: [0x11; 32],
        seed_s: [0x22; 32],
        z: [0x33; 32],
    });
    assert!(!all_zero(&slot.bytes()));
    slot.drop_in_place();
    assert!(all_zero(&slot.bytes()));
}

#[test]
#[cfg_attr(miri, ignore = "decapsulation multiplies: too slow under Miri")]
fn shared_secret_memory_is_wiped_and_redacted() {
    assert_eq!(size_of::<SharedSecret>(), 32);
    let dk = DecapsulationKey::<LightSaberPlus>::from_bytes(&light_saber_plus_key()).unwrap();
    let ss = dk.decapsulate_slice(&[0x42; 736]).unwrap();
    assert_eq!(format!("{ss:?}"), "SharedSecret(<redacted>)");
    assert_eq!(format!("{ss:#?}"), "SharedSecret(<redacted>)");
    let mut ss = Slot::new(ss);
    assert!(!all_zero(&ss.bytes()));
    ss.drop_in_place();
    assert_eq!(ss.bytes(), [0; 32]);
}

#[test]
fn secret_poly_memory_is_wiped() {
    let mut s = SecretPoly::ZERO;
    s.coeffs
        .iter_mut()
        .enumerate()
        .for_each(|(i, c)| *c = (i % 11) as i8 - 5);
    let mut s = Slot::new(s);
    s.drop_in_place();
    assert_eq!(s.bytes(), [0; 256]);
}

#[test]
fn secret_key_encoding_buffer_is_wiped() {
    let sk = light_saber_plus_key();
    let dk = DecapsulationKey::<LightSaberPlus>::from_bytes(&sk).unwrap();
    let mut slot = Slot::new(dk.to_bytes());
    assert_eq!(slot.bytes(), sk);
    slot.drop_in_place();
    assert!(all_zero(&slot.bytes()));
}

#[test]
#[cfg_attr(miri, ignore = "key generation multiplies: too slow under Miri")]
fn generated_key_memory_is_wiped() {
    let (dk, _) =
        LightSaber::generate_deterministic_with(&mut Schoolbook, &[1; 32], &[2; 32], &[3; 32]);
    let sk = dk.to_bytes();
    assert!(dk.to_seed().is_some(), "a generated key keeps its seed");
    let mut slot = Slot::new(dk);
    let secret_at = locate(&slot.bytes(), &sk.as_ref()[..832], "the secret");
    let seed_s_at = locate(&slot.bytes(), &[2; 32], "seed_s");
    slot.drop_in_place();
    assert!(all_zero(&slot.bytes()[secret_at]));
    assert!(all_zero(&slot.bytes()[seed_s_at]));
}

/// The batch API's result arrays: every key pair's secret and z, and every shared secret.
#[test]
#[cfg_attr(miri, ignore = "key generation multiplies: too slow under Miri")]
fn batch_results_memory_is_wiped() {
    assert_eq!(
        size_of::<saber_kem::batch::KeyPair<LightSaberPlus>>(),
        LIGHT_SABER_PLUS_DK + LIGHT_SABER_PLUS_EK
    );
    for lanes in Lanes::all() {
        let seeds: [KeySeeds; 3] = core::array::from_fn(|i| KeySeeds {
            seed_a: [i as u8 + 1; 32],
            seed_s: [i as u8 + 11; 32],
            z: [i as u8 + 21; 32],
        });
        let pairs =
            LightSaberPlus::generate_batch_deterministic_with(&mut Schoolbook, lanes, &seeds);
        let secrets: Vec<_> = pairs.iter().map(|(dk, _)| dk.to_bytes()).collect();
        let mut ms = [[0u8; 32]; 3];
        ms.iter_mut()
            .enumerate()
            .for_each(|(i, m)| *m = [i as u8 + 31; 32]);
        let keys = [&pairs[0].1, &pairs[1].1, &pairs[2].1];
        let encapsulated =
            LightSaberPlus::encapsulate_batch_deterministic_with(&mut Schoolbook, lanes, keys, &ms);
        let shared = LightSaberPlus::decapsulate_batch_with_lanes(
            &mut Schoolbook,
            lanes,
            core::array::from_fn::<_, 3, _>(|i| (&pairs[i].0, &encapsulated[i].0)),
        );
        drop(encapsulated);

        let mut slot = Slot::new(pairs);
        let before = slot.bytes();
        let wiped: Vec<_> = secrets
            .iter()
            .flat_map(|sk| {
                let sk = sk.as_ref();
                [
                    locate(&before, &sk[..256], "a batch secret"),
                    locate(&before, &sk[sk.len() - 32..], "a batch z"),
                ]
            })
            .collect();
        let public: Vec<_> = secrets
            .iter()
            .map(|sk| sk.as_ref()[256..928].to_vec())
            .collect();
        slot.drop_in_place();
        let after = slot.bytes();
        for range in wiped {
            assert!(
                all_zero(&after[range]),
                "lanes {}: key pair not wiped",
                lanes.name()
            );
        }
        for pk in public {
            assert!(
                find(&after, &pk).is_some(),
                "the public keys are left alone"
            );
        }

        let mut slot = Slot::new(shared);
        assert!(!all_zero(&slot.bytes()));
        slot.drop_in_place();
        assert!(
            all_zero(&slot.bytes()),
            "lanes {}: shared secrets not wiped",
            lanes.name()
        );
    }
}

/// The hazmat SHAKE128 stream on every single-state path: the permuted state (200 bytes) must be
/// gone after its destructor. Where the state is kept as plain 64-bit lanes, the lanes computed
/// here independently must no longer appear anywhere in the storage; that does not depend on the
/// enum's padding (which holds whatever the move copied, e.g. 62 bytes before a 64-byte aligned
/// four-way state). The bit-interleaved 32-bit state has no lane to find: there at most 16 bytes
/// (tag, read position, padding) may be nonzero after the destructor.
#[test]
#[cfg_attr(miri, ignore = "reads enum padding; Keccak under Miri is slow")]
fn shake128_stream_memory_is_wiped() {
    // SHAKE128 of 40 bytes of 0x5A after its first permutation: the state while bytes are read.
    let mut state = [0u64; 25];
    let mut block = [0u8; 168];
    block[..40].fill(0x5A);
    block[40] = 0x1F;
    block[167] |= 0x80;
    for (lane, bytes) in state.iter_mut().zip(block.chunks_exact(8)) {
        *lane = u64::from_le_bytes(bytes.try_into().unwrap());
    }
    permute(&mut state);
    let lanes_in = |bytes: &[u8]| {
        state
            .iter()
            .filter(|lane| bytes.windows(8).any(|w| w == lane.to_le_bytes()))
            .count()
    };
    for keccak in Single::all() {
        let mut stream = keccak.shake128(&[&[0x5A; 40]]);
        let mut out = [0u8; 10];
        stream.read(&mut out);
        let mut slot = Slot::new(stream);
        let nonzero = |bytes: &[u8]| bytes.iter().filter(|&&b| b != 0).count();
        let before = slot.bytes();
        assert!(nonzero(&before) > 150, "{}: no state found", keccak.name());
        let lanes_before = lanes_in(&before);
        slot.drop_in_place();
        let after = slot.bytes();
        if lanes_before == state.len() {
            let left = lanes_in(&after);
            assert_eq!(left, 0, "{}: {left} lanes left after drop", keccak.name());
        } else {
            assert_eq!(lanes_before, 0, "{}: a partial state found", keccak.name());
            let left = nonzero(&after);
            assert!(
                left <= 16,
                "{}: {left} bytes left after drop",
                keccak.name()
            );
        }
    }
}

/// Third-party types the crate relies on for wiping (the `sha3` crate's sponges, with its
/// `zeroize` feature), where only the marker can be checked without knowing their layout.
#[test]
fn third_party_sponges_are_marked_zeroize_on_drop() {
    fn wipes_on_drop<T: ZeroizeOnDrop>() {}
    wipes_on_drop::<sha3::Sha3_256>();
    wipes_on_drop::<sha3::Sha3_512>();
    wipes_on_drop::<shake::Shake128>();
}

#[test]
fn debug_output_is_redacted() {
    let sk = light_saber_plus_key();
    let dk = DecapsulationKey::<LightSaberPlus>::from_bytes(&sk).unwrap();
    assert_eq!(
        format!("{dk:?}"),
        "DecapsulationKey<LightSaber+>(<redacted>)"
    );
    assert_eq!(
        format!("{dk:#?}"),
        "DecapsulationKey<LightSaber+>(<redacted>)"
    );
    let expanded = ExpandedDecapsulationKey::new(&mut Schoolbook, &dk);
    assert_eq!(
        format!("{expanded:?}"),
        "ExpandedDecapsulationKey<LightSaber+>(<redacted>)"
    );

    let mut s = SecretPoly::ZERO;
    s.coeffs[0] = 3;
    assert_eq!(format!("{s:?}"), "SecretPoly(<redacted>)");
    // Public polynomials carry secret-derived values inside the algorithms (v, v'): no
    // coefficients either.
    let mut p = Poly::ZERO;
    p.coeffs[0] = 1234;
    assert!(!format!("{p:?}").contains("1234"));
}
