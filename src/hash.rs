//! The symmetric primitives of Saber (spec §2.3): SHA3-256 (H), SHA3-512 (G) and SHAKE128 (the
//! XOF for both the matrix and the secrets).
//!
//! Two implementations behind one interface, chosen at run time: the `sha3` and `shake` crates,
//! and, on x86 CPUs with AVX-512 (F and VL), one state of the crate's four-way Keccak
//! ([`crate::keccak`]), where a four-way permutation costs less than one `keccak`-crate
//! permutation (`BENCHMARKS.md`, "KEM on x86_64": the same hash calls take 0.81–0.83× the time).
//! Both give the same bytes (tests in `keccak::sponge` and every KAT). `four_way` also tells
//! the KEM when to squeeze an operation's independent streams together (`keccak::lanes`).

use sha3::{Digest, Sha3_256, Sha3_512};
use shake::{ExtendableOutput, Shake128, Shake128Reader, Update, XofReader};

use crate::keccak::KeccakX4;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use crate::keccak::sponge::{self, Shake128Stream};

/// The four-way Keccak when four of its lanes cost no more than one permutation of the `keccak`
/// crate on this CPU (AVX-512, detected once per process), else `None` (always, off x86).
#[inline]
pub(crate) fn four_way() -> Option<KeccakX4> {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    let four_way = KeccakX4::avx512();
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    let four_way = None;
    four_way
}

/// SHA3-256 of the concatenation of `parts`. Not inlined (nor is [`sha3_512`]), so that the
/// hasher's state lives only in this call, never in a caller's frame (low-memory mode).
#[inline(never)]
pub fn sha3_256(parts: &[&[u8]]) -> [u8; 32] {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if let Some(keccak) = four_way() {
        return sponge::sha3_256(keccak, parts);
    }
    let mut h = Sha3_256::new();
    for p in parts {
        Digest::update(&mut h, p);
    }
    h.finalize().into()
}

/// SHA3-512 of the concatenation of `parts`.
#[inline(never)]
pub fn sha3_512(parts: &[&[u8]]) -> [u8; 64] {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if let Some(keccak) = four_way() {
        return sponge::sha3_512(keccak, parts);
    }
    let mut h = Sha3_512::new();
    for p in parts {
        Digest::update(&mut h, p);
    }
    h.finalize().into()
}

/// A SHAKE128 output stream over the concatenation of `parts` (read it with
/// [`XofReader::read`]).
pub fn shake128(parts: &[&[u8]]) -> Shake128Xof {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if let Some(keccak) = four_way() {
        return Shake128Xof(Xof::FourWay(Shake128Stream::new(keccak, parts)));
    }
    let mut x = Shake128::default();
    for p in parts {
        x.update(p);
    }
    Shake128Xof(Xof::Crate(x.finalize_xof()))
}

/// A SHAKE128 output stream from [`shake128`]. Wiped on drop.
pub struct Shake128Xof(Xof);

// The four-way state (about 1 KB) exists only on x86: elsewhere the stream stays the crate's
// (about 200 bytes), which the low-memory figures of the microcontrollers count on. No boxing: the
// crate has no allocator, and on x86 the size is immaterial.
#[allow(clippy::large_enum_variant)]
enum Xof {
    Crate(Shake128Reader),
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    FourWay(Shake128Stream),
}

impl XofReader for Shake128Xof {
    fn read(&mut self, buffer: &mut [u8]) {
        match &mut self.0 {
            Xof::Crate(reader) => reader.read(buffer),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Xof::FourWay(stream) => stream.read(buffer),
        }
    }
}

impl core::fmt::Debug for Shake128Xof {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Shake128Xof(<redacted>)")
    }
}
