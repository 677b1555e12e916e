//! The 90s family ([`Symmetric::Sha2Aes`](crate::params::Symmetric::Sha2Aes)) on the RustCrypto
//! crates: H = SHA-256 and G = SHA-512 (`sha2`), and as the XOF the AES-256-CTR keystream (`aes`,
//! `ctr`) keyed with the 32-byte seed, counter block = twelve zero bytes ‖ a 32-bit big-endian
//! block number from 0: the reference implementation's `saber_aes256ctr_prf`
//! (`Variants/uSaber-90s/ref/symmetric-aes.c`, `aes256ctr.c`). No AES or SHA-2 is written here.
//!
//! The `aes` crate is constant time on every target: AES-NI where the CPU has it (detected at run
//! time), bit-sliced ("fixsliced") software otherwise; its key schedules are wiped on drop (its
//! `zeroize` feature), as are the `sha2` states and the `ctr` keystream buffer.
//!
//! # Hardware engines
//!
//! This is the one place where the 90s family can leave software: with [`Sha2AesEngines`]
//! (brought by the caller's backend, `crate::Accelerated`), SHA-256 and the AES-256 keystream
//! run on them, e.g. on the ESP32's SHA and AES accelerators (`crate::hw::esp32_sha_aes`).
//! SHA-512 (G) always runs here in software: the ESP32-C3's SHA engine has no SHA-512. An engine
//! that fails returns false and the same bytes are computed here instead.

use aes::Aes256Enc;
use ctr::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use sha2::digest::{Digest, Output};
use sha2::{Sha256, Sha512};
use zeroize::Zeroize;

use super::Function;

/// AES-256 in counter mode with a 32-bit big-endian counter in the last four bytes of the block.
type Aes256Ctr = ctr::Ctr32BE<Aes256Enc>;

/// The counter block before the first block: the reference's all-zero 12-byte nonce and counter 0.
const START: [u8; 16] = [0; 16];

/// Engines for the 90s family's SHA-256 and AES-256 keystream, as plain functions (so that the
/// hash layer holds them by value: they may run on every worker and in every operation without
/// borrowing the backend that brought them). Each returns false if the engine failed; the hash
/// layer then computes the same bytes in software.
#[derive(Clone, Copy, Debug)]
pub struct Sha2AesEngines {
    /// SHA-256 of the concatenation of the parts into the digest.
    pub sha256: fn(parts: &[&[u8]], digest: &mut [u8; 32]) -> bool,
    /// The AES-256-CTR keystream of `key` (counter block = twelve zero bytes ‖ a 32-bit
    /// big-endian block number from 0) from byte `position` on, into all of `out`.
    pub aes256_ctr: fn(key: &[u8; 32], position: u32, out: &mut [u8]) -> bool,
}

/// `function` of the concatenation of `parts` into all of `out` (32 bytes for H, 64 for G, any
/// length for the XOF, whose key is the 32 bytes of `parts`), on `engines` where they have it.
pub(super) fn hash(
    function: Function,
    parts: &[&[u8]],
    out: &mut [u8],
    engines: Option<Sha2AesEngines>,
) {
    match function {
        Function::H => {
            let on_engine = match (engines, <&mut [u8; 32]>::try_from(&mut *out)) {
                (Some(engines), Ok(digest)) => (engines.sha256)(parts, digest),
                _ => false,
            };
            if !on_engine {
                digest::<Sha256>(parts, out)
            }
        }
        Function::G => digest::<Sha512>(parts, out),
        Function::Xof => AesStream::new(parts, engines).read(out),
    }
}

/// `D` of the concatenation of `parts`, written straight into `out` (no copy of the digest).
fn digest<D: Digest>(parts: &[&[u8]], out: &mut [u8]) {
    let mut state = D::new();
    for part in parts {
        state.update(part);
    }
    match <&mut Output<D>>::try_from(out) {
        Ok(out) => state.finalize_into(out),
        Err(_) => unreachable!("H and G jobs have outputs of their digest length"),
    }
}

/// The AES-256-CTR keystream of a 32-byte key, read in pieces of any length.
///
/// It holds only the key and the position: each read expands the key afresh, once for a whole
/// list of runs ([`read_runs`](Self::read_runs): a matrix entry read in pieces); the expanded
/// key, 240 to 960 bytes, lives only in the read's frame and is wiped there. So the stream is
/// smaller than the SHAKE128 one, and the
/// low-memory plan's stack, which holds a stream beside each multiplication, does not grow. On
/// x86 an operation's streams are read whole, once (`Hasher::squeezes_in_advance`). Wiped on
/// drop.
pub(crate) struct AesStream {
    key: [u8; 32],
    /// Bytes of the keystream already read.
    position: u32,
    /// The engine that makes the keystream, if not software.
    engines: Option<Sha2AesEngines>,
}

impl AesStream {
    /// The keystream of the concatenation of `parts`, which must be 32 bytes (a seed), made on
    /// `engines` if given.
    pub(super) fn new(parts: &[&[u8]], engines: Option<Sha2AesEngines>) -> Self {
        let mut key = [0u8; 32];
        let mut at = 0;
        for part in parts {
            let take = part.len().min(32 - at);
            key[at..at + take].copy_from_slice(&part[..take]);
            at += take;
        }
        debug_assert_eq!(
            (at, parts.iter().map(|p| p.len()).sum::<usize>()),
            (32, 32),
            "the 90s XOF is keyed with exactly one 32-byte seed"
        );
        Self {
            key,
            position: 0,
            engines,
        }
    }

    /// The next `out.len()` bytes of the keystream.
    pub(crate) fn read(&mut self, out: &mut [u8]) {
        self.read_runs(out, 1, &mut |_, _| {});
    }

    /// The next `count` runs of `buf.len()` bytes, each read into `buf` and handed to
    /// `take(run, bytes)`. In software the key is expanded once for all of them (an expansion
    /// costs about as much as the blocks of a 50-byte run).
    pub(crate) fn read_runs(
        &mut self,
        buf: &mut [u8],
        count: usize,
        take: &mut dyn FnMut(usize, &[u8]),
    ) {
        for run in 0..count {
            let on_engine = self
                .engines
                .is_some_and(|engines| (engines.aes256_ctr)(&self.key, self.position, buf));
            if !on_engine {
                return self.software_runs(buf, run..count, take);
            }
            self.advance(buf.len());
            take(run, buf);
        }
    }

    /// [`read_runs`](Self::read_runs) in software from run `runs.start` on. Not inlined: the
    /// cipher's expanded key stays in this call's frame.
    #[inline(never)]
    fn software_runs(
        &mut self,
        buf: &mut [u8],
        runs: core::ops::Range<usize>,
        take: &mut dyn FnMut(usize, &[u8]),
    ) {
        let mut cipher = Aes256Ctr::new((&self.key).into(), (&START).into());
        // Saber reads at most a few kilobytes of a stream: the 32-bit block counter (64 GiB of
        // keystream) can neither overflow nor wrap.
        let positioned = cipher.try_seek(self.position);
        debug_assert!(positioned.is_ok());
        for run in runs {
            buf.fill(0);
            let applied = cipher.try_apply_keystream(buf);
            debug_assert!(applied.is_ok());
            self.advance(buf.len());
            take(run, buf);
        }
    }

    fn advance(&mut self, bytes: usize) {
        self.position = self.position.wrapping_add(bytes as u32);
    }
}

impl Drop for AesStream {
    fn drop(&mut self) {
        self.key.as_mut_slice().zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keystream against AES-256 block encryptions of the counter blocks (`aes` directly),
    /// read whole and in uneven pieces.
    #[test]
    fn keystream_is_aes_of_the_counter_blocks() {
        use aes::cipher::{BlockCipherEncrypt, KeyInit};
        let key: [u8; 32] = core::array::from_fn(|i| (i * 7 + 3) as u8);
        let cipher = Aes256Enc::new((&key).into());
        let mut expected = [0u8; 16 * 40];
        for (n, block) in expected.chunks_exact_mut(16).enumerate() {
            block[12..].copy_from_slice(&(n as u32).to_be_bytes());
            cipher.encrypt_block(block.try_into().unwrap());
        }
        let mut whole = [0u8; 16 * 40];
        hash(Function::Xof, &[&key[..5], &key[5..]], &mut whole, None);
        assert_eq!(whole, expected);
        let mut stream = AesStream::new(&[&key], None);
        let mut pieces = [0u8; 16 * 40];
        let mut done = 0;
        for piece in [1, 0, 15, 16, 17, 104, 33, 3].iter().cycle() {
            let end = (done + piece).min(pieces.len());
            stream.read(&mut pieces[done..end]);
            done = end;
            if done == pieces.len() {
                break;
            }
        }
        assert_eq!(pieces, expected);
    }

    /// FIPS 180-4 test vectors ("abc"), split into parts.
    #[test]
    fn sha2_digests() {
        let mut h = [0u8; 32];
        hash(Function::H, &[b"a", b"", b"bc"], &mut h, None);
        assert_eq!(h[..4], [0xba, 0x78, 0x16, 0xbf], "SHA-256(abc) = ba7816bf…");
        let mut g = [0u8; 64];
        hash(Function::G, &[b"ab", b"c"], &mut g, None);
        assert_eq!(g[..4], [0xdd, 0xaf, 0x35, 0xa1], "SHA-512(abc) = ddaf35a1…");
        assert_eq!(h[..], Sha256::digest(b"abc")[..]);
        assert_eq!(g[..], Sha512::digest(b"abc")[..]);
    }
}
