//! One SHA3-256, SHA3-512 or SHAKE128 computation (FIPS 202 §4, §6) on one state of the
//! four-way permutation, for [`crate::hash`] on CPUs where one four-way permutation costs less
//! than one permutation of the `keccak` crate (AVX-512: `BENCHMARKS.md`, "KEM on x86_64"). The
//! other three states are permuted along and ignored.
//!
//! Byte order and padding are those of FIPS 202: the input is absorbed `rate` bytes at a time as
//! little-endian words, the last block carries the suffix (`01` for SHA-3, `1111` for SHAKE, each
//! followed by the first pad bit) and the final pad bit `0x80` in its last byte. Nothing depends
//! on the data, only on the (public) lengths.

use zeroize::Zeroize;

use super::{
    KeccakX4, SHA3_256_RATE, SHA3_512_RATE, SHA3_SUFFIX, SHAKE_SUFFIX, SHAKE128_RATE, StateX4,
};

/// The state in use (any of the four would do).
const LANE: usize = 0;

/// A sponge on lane 0 of a four-way state: absorbing, then squeezing.
struct Sponge {
    keccak: KeccakX4,
    state: StateX4,
    rate: usize,
    /// Input bytes not yet absorbed while absorbing; the current output block while squeezing.
    block: [u8; SHAKE128_RATE],
    /// Bytes of `block` filled (absorbing) or already read (squeezing).
    position: usize,
}

impl Sponge {
    fn new(keccak: KeccakX4, rate: usize) -> Self {
        Self {
            keccak,
            state: StateX4::new(),
            rate,
            block: [0; SHAKE128_RATE],
            position: 0,
        }
    }

    /// XORs the whole `rate`-byte `block` into the state as little-endian words.
    fn xor_block(&mut self) {
        for (index, word) in self.block[..self.rate].chunks_exact(8).enumerate() {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(word);
            self.state.xor_word(LANE, index, u64::from_le_bytes(bytes));
        }
    }

    fn absorb(&mut self, mut input: &[u8]) {
        while !input.is_empty() {
            let take = (self.rate - self.position).min(input.len());
            self.block[self.position..self.position + take].copy_from_slice(&input[..take]);
            self.position += take;
            input = &input[take..];
            if self.position == self.rate {
                self.xor_block();
                self.keccak.permute(&mut self.state);
                self.position = 0;
            }
        }
    }

    /// Pads (FIPS 202 §5.1 with the domain `suffix`), absorbs the last block and makes the first
    /// output block current.
    fn finish(&mut self, suffix: u8) {
        self.block[self.position..self.rate].fill(0);
        self.block[self.position] ^= suffix;
        self.block[self.rate - 1] ^= 0x80;
        self.xor_block();
        self.keccak.permute(&mut self.state);
        self.extract_block();
    }

    /// Copies the rate part of the state into `block` and marks it unread.
    fn extract_block(&mut self) {
        for (index, word) in self.block[..self.rate].chunks_exact_mut(8).enumerate() {
            word.copy_from_slice(&self.state.word(LANE, index).to_le_bytes());
        }
        self.position = 0;
    }

    fn squeeze(&mut self, mut out: &mut [u8]) {
        while !out.is_empty() {
            if self.position == self.rate {
                self.keccak.permute(&mut self.state);
                self.extract_block();
            }
            let take = (self.rate - self.position).min(out.len());
            out[..take].copy_from_slice(&self.block[self.position..self.position + take]);
            self.position += take;
            out = &mut out[take..];
        }
    }
}

impl Drop for Sponge {
    fn drop(&mut self) {
        // `state` wipes itself.
        self.block.as_mut_slice().zeroize();
    }
}

/// A fixed-length SHA-3 digest of the concatenation of `parts`.
fn sha3<const BYTES: usize>(keccak: KeccakX4, rate: usize, parts: &[&[u8]]) -> [u8; BYTES] {
    let mut sponge = Sponge::new(keccak, rate);
    for part in parts {
        sponge.absorb(part);
    }
    sponge.finish(SHA3_SUFFIX);
    let mut digest = [0u8; BYTES];
    sponge.squeeze(&mut digest);
    digest
}

/// SHA3-256 of the concatenation of `parts`.
pub(crate) fn sha3_256(keccak: KeccakX4, parts: &[&[u8]]) -> [u8; 32] {
    sha3(keccak, SHA3_256_RATE, parts)
}

/// SHA3-512 of the concatenation of `parts`.
pub(crate) fn sha3_512(keccak: KeccakX4, parts: &[&[u8]]) -> [u8; 64] {
    sha3(keccak, SHA3_512_RATE, parts)
}

/// A SHAKE128 output stream, read in pieces of any length. Wiped on drop.
pub(crate) struct Shake128Stream(Sponge);

impl Shake128Stream {
    /// The stream of the concatenation of `parts`.
    pub(crate) fn new(keccak: KeccakX4, parts: &[&[u8]]) -> Self {
        let mut sponge = Sponge::new(keccak, SHAKE128_RATE);
        for part in parts {
            sponge.absorb(part);
        }
        sponge.finish(SHAKE_SUFFIX);
        Self(sponge)
    }

    /// The next `out.len()` bytes of the stream.
    pub(crate) fn read(&mut self, out: &mut [u8]) {
        self.0.squeeze(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha3::Digest;
    use shake::{ExtendableOutput, Update, XofReader};

    fn paths() -> impl Iterator<Item = KeccakX4> {
        let mut all = [Some(KeccakX4::portable()), None, None];
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            all[1] = KeccakX4::avx2();
            all[2] = KeccakX4::avx512();
        }
        all.into_iter().flatten()
    }

    /// Inputs around every block boundary of the three rates, split into two parts at varying
    /// points, against the `sha3` and `shake` crates; the stream read in uneven pieces.
    #[test]
    fn matches_the_sha3_and_shake_crates() {
        let message: [u8; 700] = core::array::from_fn(|i| (i * 31 + 7) as u8);
        for keccak in paths() {
            for len in (0..300).chain([335, 336, 337, 504, 671, 672, 673, 700]) {
                let input = &message[..len];
                let (head, tail) = input.split_at(len & 0x3F);
                let parts: [&[u8]; 2] = [head, tail];
                assert_eq!(
                    sha3_256(keccak, &parts)[..],
                    sha3::Sha3_256::digest(input)[..],
                    "{} sha3-256 {len}",
                    keccak.name()
                );
                assert_eq!(
                    sha3_512(keccak, &parts)[..],
                    sha3::Sha3_512::digest(input)[..],
                    "{} sha3-512 {len}",
                    keccak.name()
                );
                let mut expected = [0u8; 600];
                let mut reference = shake::Shake128::default();
                reference.update(input);
                reference.finalize_xof().read(&mut expected);
                let mut actual = [0u8; 600];
                let mut stream = Shake128Stream::new(keccak, &parts);
                let mut done = 0;
                for piece in [1, 0, 167, 168, 2, 169, 93].iter().cycle() {
                    let end = (done + piece).min(actual.len());
                    stream.read(&mut actual[done..end]);
                    done = end;
                    if done == actual.len() {
                        break;
                    }
                }
                assert_eq!(actual, expected, "{} shake128 {len}", keccak.name());
            }
        }
    }
}
