//! The symmetric primitives of Saber (spec §2.3): SHA3-256 (H), SHA3-512 (G) and SHAKE128 (the
//! XOF for both the matrix and the secrets).

use sha3::{Digest, Sha3_256, Sha3_512};
use shake::{ExtendableOutput, Shake128, Shake128Reader, Update};

/// SHA3-256 of the concatenation of `parts`. Not inlined (nor is [`sha3_512`]), so that the
/// hasher's state lives only in this call, never in a caller's frame (low-memory mode).
#[inline(never)]
pub fn sha3_256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha3_256::new();
    for p in parts {
        Digest::update(&mut h, p);
    }
    h.finalize().into()
}

/// SHA3-512 of the concatenation of `parts`.
#[inline(never)]
pub fn sha3_512(parts: &[&[u8]]) -> [u8; 64] {
    let mut h = Sha3_512::new();
    for p in parts {
        Digest::update(&mut h, p);
    }
    h.finalize().into()
}

/// A SHAKE128 output stream over the concatenation of `parts`.
pub fn shake128(parts: &[&[u8]]) -> Shake128Reader {
    let mut x = Shake128::default();
    for p in parts {
        x.update(p);
    }
    x.finalize_xof()
}
