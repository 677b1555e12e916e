//! Secret hygiene: secret types print redacted `Debug` output and are wiped on drop.
//!
//! Wiping is checked two ways: the types are `ZeroizeOnDrop` (a compile-time check, which also
//! covers the SHA-3/SHAKE states through their `zeroize` feature), and the memory of a dropped
//! decapsulation key, shared secret and secret polynomial is read back (through `ManuallyDrop`,
//! whose storage stays valid after the destructor ran) and must no longer hold the secret bytes.
//! This file is also run under Miri (`.ci/miri.sh`).
#![allow(unsafe_code)] // reads the bytes of values (see `bytes_of`)

use std::mem::ManuallyDrop;

use saber_kem::SharedSecret;
use saber_kem::polymul::Schoolbook;
use saber_kem::polymul::{Poly, SecretPoly};
use saber_kem::{DecapsulationKey, ExpandedDecapsulationKey, LightSaber, LightSaberPlus};
use sha3::{Digest, Sha3_256};
use zeroize::{ZeroizeOnDrop, Zeroizing};

/// A copy of the bytes of `value`. Only for types made of byte arrays (no padding).
fn bytes_of<T>(value: &T) -> Vec<u8> {
    // SAFETY: `value` is a live reference, so `size_of::<T>()` bytes are readable; callers pass
    // types made only of `u8`/`i8` arrays, which have no padding, so every byte is initialised.
    unsafe { std::slice::from_raw_parts((value as *const T).cast::<u8>(), size_of::<T>()) }.to_vec()
}

/// Runs the destructor of `value` and returns the bytes its storage holds afterwards.
fn bytes_after_drop<T>(value: T) -> Vec<u8> {
    let mut slot = ManuallyDrop::new(value);
    // SAFETY: dropped exactly once, and never used as a `T` afterwards: only its bytes are read,
    // which `ManuallyDrop::drop` leaves in place ("the memory is left unchanged" except for the
    // destructor's own writes).
    unsafe { ManuallyDrop::drop(&mut slot) };
    bytes_of(&slot)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
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

#[test]
fn secret_types_wipe_on_drop() {
    fn wipes_on_drop<T: ZeroizeOnDrop>() {}
    wipes_on_drop::<DecapsulationKey<LightSaber>>();
    wipes_on_drop::<DecapsulationKey<LightSaberPlus>>();
    wipes_on_drop::<SharedSecret>();
    wipes_on_drop::<SecretPoly>();
    wipes_on_drop::<ExpandedDecapsulationKey<LightSaber, Schoolbook>>();
    // What `DecapsulationKey::to_bytes` returns.
    wipes_on_drop::<Zeroizing<[u8; 1568]>>();
    // The sponges that absorb m, K̂ and the coins (SHA3-256/512) and seed_s or r (SHAKE128).
    wipes_on_drop::<sha3::Sha3_256>();
    wipes_on_drop::<sha3::Sha3_512>();
    wipes_on_drop::<shake::Shake128>();
}

#[test]
fn decapsulation_key_memory_is_wiped() {
    let sk = light_saber_plus_key();
    let dk = DecapsulationKey::<LightSaberPlus>::from_bytes(&sk).unwrap();
    let (secret, pk, z) = (&sk[..256], &sk[256..928], &sk[sk.len() - 32..]);
    let before = bytes_of(&dk);
    let secret_at = find(&before, secret).expect("the secret is stored inline");
    let z_at = find(&before, z).expect("z is stored inline");
    let after = bytes_after_drop(dk);
    assert!(after[secret_at..secret_at + 256].iter().all(|&b| b == 0));
    assert!(after[z_at..z_at + 32].iter().all(|&b| b == 0));
    // The public key is left alone: the check above looked at the right memory.
    assert!(find(&after, pk).is_some());
}

#[test]
#[cfg_attr(miri, ignore = "key generation multiplies: too slow under Miri")]
fn generated_key_and_shared_secret_memory_is_wiped_and_redacted() {
    let (dk, ek) =
        LightSaber::generate_deterministic_with(&mut Schoolbook, &[1; 32], &[2; 32], &[3; 32]);
    let sk = dk.to_bytes();
    let secret = &sk.as_ref()[..832];
    let secret_at = find(&bytes_of(&dk), secret).expect("the secret is stored inline");
    let after = bytes_after_drop(dk);
    assert!(after[secret_at..secret_at + 832].iter().all(|&b| b == 0));

    let (_, ss) = ek.encapsulate_deterministic_with(&mut Schoolbook, &[4; 32]);
    assert_ne!(ss.as_bytes(), &[0; 32]);
    assert_eq!(format!("{ss:?}"), "SharedSecret(<redacted>)");
    assert_eq!(format!("{ss:#?}"), "SharedSecret(<redacted>)");
    assert_eq!(bytes_after_drop(ss), [0; 32]);
}

#[test]
fn secret_poly_memory_is_wiped() {
    let mut s = SecretPoly::ZERO;
    s.coeffs
        .iter_mut()
        .enumerate()
        .for_each(|(i, c)| *c = (i % 11) as i8 - 5);
    assert_eq!(bytes_after_drop(s), [0; 256]);
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
