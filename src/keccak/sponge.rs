//! The sponge construction of FIPS 202 §4 with pad10*1 (§5.1) and the SHA-3/SHAKE domain
//! suffixes (§6, B.2), written once for every state layout and cut at the permutations: a
//! [`Sponge`] absorbs one block ([`Sponge::absorb_next`]) or squeezes from the current one
//! ([`Sponge::squeeze`]), and its driver permutes in between. The one-state driver
//! ([`super::single`]) runs one sponge on one state; the lane runner ([`super::lanes`]) runs one
//! per state of a multi-way permutation and permutes them together.
//!
//! Byte order is FIPS 202's: the input is XORed `rate` bytes at a time into the state as
//! little-endian 64-bit words (B.1), the last block carries the suffix after the data and `0x80`
//! in its last byte, and the output is the rate part of the state read the same way. What is
//! done depends only on the (public) lengths.

use super::Function;

/// A Keccak-f\[1600\] state as the sponge sees it: 25 little-endian 64-bit words, word `x + 5y`
/// holding lane (x, y) (FIPS 202 §3.1.2), whatever the permutation's own layout.
pub(super) trait Words {
    /// XORs `value` into word `index` (< 25).
    fn xor_word(&mut self, index: usize, value: u64);
    /// Word `index` (< 25).
    fn word(&self, index: usize) -> u64;

    /// XORs the little-endian `words` into words `first..` (implementations with a plain array
    /// override it with one bounds check for all).
    #[inline(always)]
    fn xor_words(&mut self, first: usize, words: &[[u8; 8]]) {
        for (index, word) in (first..).zip(words) {
            self.xor_word(index, u64::from_le_bytes(*word));
        }
    }

    /// Words `first..` as little-endian bytes into `out` (as `xor_words`).
    #[inline(always)]
    fn read_words(&self, first: usize, out: &mut [[u8; 8]]) {
        for (index, word) in (first..).zip(out) {
            *word = self.word(index).to_le_bytes();
        }
    }
}

/// Where one sponge stands between two permutations.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sponge {
    function: Function,
    /// Input bytes absorbed so far.
    absorbed: usize,
    /// Whether the padded last block has been absorbed (the sponge is squeezing).
    padded: bool,
    /// Bytes of the current output block already read.
    read: usize,
}

impl Sponge {
    /// A sponge for `function`, on a zero state.
    pub(super) const fn new(function: Function) -> Self {
        Self {
            function,
            absorbed: 0,
            padded: false,
            read: 0,
        }
    }

    /// A squeezing sponge for `function` that has read `read` bytes of its current block.
    pub(super) const fn squeezing(function: Function, read: u8) -> Self {
        Self {
            function,
            absorbed: 0,
            padded: true,
            read: read as usize,
        }
    }

    /// The bytes of the current output block already read (at most a rate, < 256).
    pub(super) fn read_position(&self) -> u8 {
        self.read as u8
    }

    /// Whether the padded last block has been absorbed: from the next permutation on, the state
    /// holds output.
    pub(super) fn is_squeezing(&self) -> bool {
        self.padded
    }

    /// Before a permutation, while absorbing: XORs the next `rate` bytes of `input` (the
    /// concatenation of its parts) into `state`, or, when fewer remain, the padded last block.
    pub(super) fn absorb_next(&mut self, state: &mut impl Words, input: &[&[u8]]) {
        debug_assert!(!self.padded);
        let rate = self.function.rate();
        let mut skip = self.absorbed;
        let mut filled = 0;
        for part in input {
            if skip >= part.len() {
                skip -= part.len();
                continue;
            }
            let take = (part.len() - skip).min(rate - filled);
            xor_bytes(state, filled, &part[skip..skip + take]);
            filled += take;
            skip = 0;
            if filled == rate {
                break;
            }
        }
        self.absorbed += filled;
        if filled < rate {
            // pad10*1 after the domain bits; the two bytes coincide when one byte is left. The
            // last byte of a block is the top byte of a word (every rate is a multiple of 8).
            let suffix = u64::from(self.function.suffix()) << (8 * (filled & 7));
            state.xor_word(filled >> 3, suffix);
            state.xor_word((rate >> 3) - 1, 0x80 << 56);
            self.padded = true;
            // The first output block starts with the next permutation.
            self.read = rate;
        }
    }

    /// After a permutation: a squeezing sponge whose block was read entirely starts the new one.
    pub(super) fn permuted(&mut self) {
        if self.padded && self.read == self.function.rate() {
            self.read = 0;
        }
    }

    /// Whether the current output block is read entirely (the next output needs a permutation).
    pub(super) fn block_read(&self) -> bool {
        self.read == self.function.rate()
    }

    /// While squeezing: the next bytes of the current output block into the front of `out`, as
    /// many as fit; returns how many.
    pub(super) fn squeeze(&mut self, state: &impl Words, out: &mut [u8]) -> usize {
        debug_assert!(self.padded);
        let take = (self.function.rate() - self.read).min(out.len());
        read_bytes(state, self.read, &mut out[..take]);
        self.read += take;
        take
    }
}

/// XORs `bytes` into the state from byte `offset` on (little-endian words; the bytes stay within
/// the 200 of the state).
fn xor_bytes(state: &mut impl Words, offset: usize, mut bytes: &[u8]) {
    let mut index = offset >> 3;
    let shift = offset & 7;
    if shift != 0 {
        // A partial first word.
        let take = (8 - shift).min(bytes.len());
        state.xor_word(index, partial_word(&bytes[..take]) << (8 * shift));
        bytes = &bytes[take..];
        index += 1;
    }
    let (words, tail) = bytes.as_chunks::<8>();
    state.xor_words(index, words);
    if !tail.is_empty() {
        state.xor_word(index + words.len(), partial_word(tail));
    }
}

/// Up to eight bytes as the low bytes of a little-endian word (byte by byte: a variable-length
/// copy would be a `memcpy` call, and its frame, on the deepest path of the low-memory mode).
#[inline(always)]
fn partial_word(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0, |word, &byte| (word << 8) | u64::from(byte))
}

/// Bytes `offset..offset + out.len()` of the state (little-endian words).
fn read_bytes(state: &impl Words, offset: usize, mut out: &mut [u8]) {
    let mut index = offset >> 3;
    let shift = offset & 7;
    if shift != 0 && !out.is_empty() {
        let take = (8 - shift).min(out.len());
        copy_low_bytes(state.word(index) >> (8 * shift), &mut out[..take]);
        out = &mut out[take..];
        index += 1;
    }
    // Whole words with fixed-size stores (a variable-length copy per word would be a `memcpy`
    // call each), then the partial last word, if any.
    let (words, tail) = out.as_chunks_mut::<8>();
    state.read_words(index, words);
    if !tail.is_empty() {
        copy_low_bytes(state.word(index + words.len()), tail);
    }
}

/// The low `out.len()` (≤ 8) bytes of `word`, little-endian (byte by byte, as [`partial_word`]).
#[inline(always)]
fn copy_low_bytes(word: u64, out: &mut [u8]) {
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = (word >> (8 * i)) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain state, to test the byte handling alone.
    struct Plain([u64; 25]);

    impl Words for Plain {
        fn xor_word(&mut self, index: usize, value: u64) {
            self.0[index] ^= value;
        }
        fn word(&self, index: usize) -> u64 {
            self.0[index]
        }
    }

    /// Bytes XORed in and read back at every offset and length, against a byte array.
    #[test]
    fn bytes_land_where_fips_202_puts_them() {
        let data: [u8; 200] = core::array::from_fn(|i| (i * 7 + 3) as u8);
        for offset in 0..20 {
            for len in 0..30 {
                let mut state = Plain([0; 25]);
                xor_bytes(&mut state, offset, &data[..len]);
                let mut expected = [0u8; 200];
                expected[offset..offset + len].copy_from_slice(&data[..len]);
                let mut all = [0u8; 200];
                read_bytes(&state, 0, &mut all);
                assert_eq!(all, expected, "{offset} {len}");
                let mut some = [0u8; 30];
                read_bytes(&state, offset, &mut some[..len]);
                assert_eq!(some[..len], data[..len], "{offset} {len}");
            }
        }
    }
}
