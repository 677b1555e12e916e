//! The symmetric primitives of Saber (spec §2.3): SHA3-256 (H), SHA3-512 (G) and SHAKE128 (the
//! XOF for both the matrix and the secrets), on `Single::fastest` (`crate::keccak`): one state
//! of the AVX-512 four-way permutation on x86 CPUs that have it, the 32-bit permutation on 32-bit
//! targets, the `keccak` crate's otherwise. `four_way` tells the KEM when to squeeze an
//! operation's independent streams together (the lane runner).

use shake::XofReader;

use crate::keccak::{Function, Multi, Shake128Stream, Single};

/// The four-way lane runner when four of its lanes cost no more than one single-state
/// permutation on this CPU (AVX-512: the eight-way permutation exists exactly there), else
/// `None` (always, off x86).
#[inline]
pub(crate) fn four_way() -> Option<Multi> {
    Multi::x8().and(Multi::x4())
}

/// SHA3-256 of the concatenation of `parts`. Not inlined (nor is [`sha3_512`]), so that the
/// hasher's state lives only in this call, never in a caller's frame (low-memory mode).
#[inline(never)]
pub fn sha3_256(parts: &[&[u8]]) -> [u8; 32] {
    let mut digest = [0u8; 32];
    Single::fastest().hash(Function::Sha3_256, parts, &mut digest);
    digest
}

/// SHA3-512 of the concatenation of `parts`.
#[inline(never)]
pub fn sha3_512(parts: &[&[u8]]) -> [u8; 64] {
    let mut digest = [0u8; 64];
    Single::fastest().hash(Function::Sha3_512, parts, &mut digest);
    digest
}

/// A SHAKE128 output stream over the concatenation of `parts` (read it with
/// [`XofReader::read`]). Not inlined: the stream is returned into the caller's slot for it (no
/// copy in the caller's frame: low-memory mode).
#[inline(never)]
pub fn shake128(parts: &[&[u8]]) -> Shake128Xof {
    Shake128Xof(Single::fastest().shake128(parts))
}

/// A SHAKE128 output stream from [`shake128`]. Wiped on drop.
pub struct Shake128Xof(Shake128Stream);

impl XofReader for Shake128Xof {
    fn read(&mut self, buffer: &mut [u8]) {
        self.0.read(buffer);
    }
}

impl core::fmt::Debug for Shake128Xof {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Shake128Xof(<redacted>)")
    }
}
