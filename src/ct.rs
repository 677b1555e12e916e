//! The constant-time primitives of the crate (ciphertext comparison, the key selection of implicit
//! rejection) and its one wiped-buffer type. One place to audit; built on `subtle` and `zeroize`.

use core::ops::{Deref, DerefMut};

use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};
use zeroize::Zeroize;

/// `1` when the two byte strings are equal, in time independent of their contents.
///
/// The differences are OR-ed together eight bytes at a time and the final word is compared with
/// `subtle` (a byte-wise `ct_eq` on slices costs about ten instructions per byte: a ciphertext
/// comparison was 2–3 % of a decapsulation). The loop has no exit but the lengths, which are
/// public.
pub fn bytes_equal(a: &[u8], b: &[u8]) -> Choice {
    if a.len() != b.len() {
        return Choice::from(0);
    }
    let mut difference = 0u64;
    let (a_words, b_words) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in a_words.remainder().iter().zip(b_words.remainder()) {
        difference |= u64::from(x ^ y);
    }
    for (x, y) in a_words.zip(b_words) {
        let mut x_word = [0u8; 8];
        let mut y_word = [0u8; 8];
        x_word.copy_from_slice(x);
        y_word.copy_from_slice(y);
        difference |= u64::from_ne_bytes(x_word) ^ u64::from_ne_bytes(y_word);
    }
    difference.ct_eq(&0)
}

/// `dst = if take_src { src } else { dst }`, byte-wise, without a branch on `take_src`.
pub fn select_into(dst: &mut [u8; 32], src: &[u8; 32], take_src: Choice) {
    for (d, s) in dst.iter_mut().zip(src.iter()) {
        d.conditional_assign(s, take_src);
    }
}

/// The key selection of implicit rejection, as a type parameter of decapsulation.
///
/// The crate only ever uses [`ConstantTimeSelect`]. The trait exists so that the test suites can
/// run the real decapsulation with a deliberately broken selector (one that never rejects, or one
/// that branches on the secret) and prove that the rejection and constant-time checks catch it:
/// a no-op selection passes every valid-ciphertext KAT (RUSTSEC-2026-0290).
#[doc(hidden)]
pub trait KeySelect {
    /// `dst = if take_src { src } else { dst }`.
    fn select_into(dst: &mut [u8; 32], src: &[u8; 32], take_src: Choice);
}

/// [`select_into`]: the selector of every decapsulation.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ConstantTimeSelect;

impl KeySelect for ConstantTimeSelect {
    fn select_into(dst: &mut [u8; 32], src: &[u8; 32], take_src: Choice) {
        select_into(dst, src, take_src)
    }
}

/// Secret byte buffers that [`Wiped`] can hold: byte arrays and arrays of them.
pub(crate) trait Bytes {
    /// Overwrites every byte with zero: one bulk fill per byte array (`zeroize` on a slice: a
    /// fill and an optimisation barrier).
    fn wipe(&mut self);
}

impl<const LEN: usize> Bytes for [u8; LEN] {
    fn wipe(&mut self) {
        self.as_mut_slice().zeroize();
    }
}

impl<T: Bytes, const K: usize> Bytes for [T; K] {
    fn wipe(&mut self) {
        self.iter_mut().for_each(Bytes::wipe);
    }
}

/// A buffer of secret bytes wiped on drop with bulk fills. `Zeroizing` of an array would store
/// each byte with its own volatile write, which for a ciphertext or a secret key costs more than
/// the rest of its handling.
pub(crate) struct Wiped<T: Bytes>(pub(crate) T);

impl<T: Bytes> Deref for Wiped<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Bytes> DerefMut for Wiped<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T: Bytes> Drop for Wiped<T> {
    fn drop(&mut self) {
        self.0.wipe();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_and_selection() {
        assert!(bool::from(bytes_equal(&[1, 2, 3], &[1, 2, 3])));
        assert!(!bool::from(bytes_equal(&[1, 2, 3], &[1, 2, 4])));
        assert!(!bool::from(bytes_equal(&[1, 2, 3], &[1, 2])));
        // Every position of a word-sized body and of the tail.
        let base: [u8; 21] = core::array::from_fn(|i| i as u8);
        assert!(bool::from(bytes_equal(&base, &base)));
        for i in 0..base.len() {
            for bit in 0..8 {
                let mut other = base;
                other[i] ^= 1 << bit;
                assert!(
                    !bool::from(bytes_equal(&base, &other)),
                    "byte {i} bit {bit}"
                );
            }
        }
        let mut dst = [7u8; 32];
        select_into(&mut dst, &[9u8; 32], Choice::from(0));
        assert_eq!(dst, [7u8; 32]);
        select_into(&mut dst, &[9u8; 32], Choice::from(1));
        assert_eq!(dst, [9u8; 32]);
    }

    /// Every byte of a 32-byte selection must follow the flag, for distinct byte values.
    fn check_selector<S: KeySelect>() {
        let a: [u8; 32] = core::array::from_fn(|i| i as u8);
        let b: [u8; 32] = core::array::from_fn(|i| 0xFF - i as u8);
        let mut dst = a;
        S::select_into(&mut dst, &b, Choice::from(0));
        assert_eq!(dst, a, "flag 0 must keep dst");
        S::select_into(&mut dst, &b, Choice::from(1));
        assert_eq!(dst, b, "flag 1 must take src");
    }

    #[test]
    fn constant_time_selector_follows_the_flag() {
        check_selector::<ConstantTimeSelect>();
    }

    /// The check above is real: the RUSTSEC-2026-0290 failure (a selection that never happens)
    /// and its opposite both fail it.
    #[test]
    #[should_panic(expected = "flag 1 must take src")]
    fn selector_check_catches_a_no_op_selection() {
        struct NeverTakes;
        impl KeySelect for NeverTakes {
            fn select_into(_: &mut [u8; 32], _: &[u8; 32], _: Choice) {}
        }
        check_selector::<NeverTakes>();
    }

    #[test]
    #[should_panic(expected = "flag 0 must keep dst")]
    fn selector_check_catches_an_always_taken_selection() {
        struct AlwaysTakes;
        impl KeySelect for AlwaysTakes {
            fn select_into(dst: &mut [u8; 32], src: &[u8; 32], _: Choice) {
                *dst = *src;
            }
        }
        check_selector::<AlwaysTakes>();
    }

    /// Only the top bit of each byte of a mask (the AVX2 byte-blend of RUSTSEC-2026-0290) is
    /// not enough: a selector keyed on the flag bit itself must be caught too.
    #[test]
    #[should_panic(expected = "flag 1 must take src")]
    fn selector_check_catches_an_unnegated_mask() {
        struct TopBitBlend;
        impl KeySelect for TopBitBlend {
            fn select_into(dst: &mut [u8; 32], src: &[u8; 32], take_src: Choice) {
                // The bug: the flag (0 or 1) is used as the mask without negation, so only bit 0
                // of each byte is ever selected from src.
                let mask = take_src.unwrap_u8();
                for (d, s) in dst.iter_mut().zip(src) {
                    *d ^= mask & (*d ^ s);
                }
            }
        }
        check_selector::<TopBitBlend>();
    }
}
