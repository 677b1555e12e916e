//! The only constant-time primitives of the crate: ciphertext comparison and the key selection of
//! implicit rejection. One place to audit; built on `subtle`.

use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};

/// `1` when the two byte strings are equal, in time independent of their contents.
pub fn bytes_equal(a: &[u8], b: &[u8]) -> Choice {
    a.ct_eq(b)
}

/// `dst = if take_src { src } else { dst }`, byte-wise, without a branch on `take_src`.
pub fn select_into(dst: &mut [u8; 32], src: &[u8; 32], take_src: Choice) {
    for (d, s) in dst.iter_mut().zip(src.iter()) {
        d.conditional_assign(s, take_src);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_and_selection() {
        assert!(bool::from(bytes_equal(&[1, 2, 3], &[1, 2, 3])));
        assert!(!bool::from(bytes_equal(&[1, 2, 3], &[1, 2, 4])));
        let mut dst = [7u8; 32];
        select_into(&mut dst, &[9u8; 32], Choice::from(0));
        assert_eq!(dst, [7u8; 32]);
        select_into(&mut dst, &[9u8; 32], Choice::from(1));
        assert_eq!(dst, [9u8; 32]);
    }
}
