//! Deterministic sampling from SHAKE128: the public matrix A (spec §2.4.1, GenMatrix) and the
//! secret vectors (§2.4.2, GenSecret with the centred binomial distribution β_μ).
//!
//! Round-3 Saber and Saber+ differ only here (see `docs/saber-plus.md` §4): how A's entries are
//! derived and which bytes of the secret stream each polynomial reads. Both are expressed with the
//! same two building blocks: a [`MatrixSource`] and a table of [`SecretSegment`]s.

use shake::XofReader;
use zeroize::Zeroize;

use crate::encoding::{packed_len, unpack};
use crate::hash::{Shake128Xof, shake128};
use crate::poly::{EQ, N, Poly, SecretPoly};

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx2;

/// Bytes of XOF output per matrix entry (256 coefficients of 13 bits).
pub const MATRIX_ENTRY_BYTES: usize = packed_len(EQ);

/// Entries of the public matrix A, delivered in row-major order (`A[0][0]`, `A[0][1]`, …).
///
/// Row-major order is the order of round-3 Saber's single SHAKE128 stream, so a source never has
/// to buffer the matrix: callers that need `A[i][j]` only once can stream it just in time.
pub trait MatrixSource {
    /// Writes the next entry (coefficients in `[0, 2^13)`).
    fn next_entry(&mut self, out: &mut Poly);
}

/// Matrix entries that can be generated independently, in any order (Saber+).
pub trait RandomAccessMatrix {
    /// Writes `A[row][col]`.
    fn entry(&self, row: usize, col: usize, out: &mut Poly);
}

/// Round-3 GenMatrix: `A[i][j]` is polynomial `i·L + j` of one SHAKE128(seed_A) stream.
pub struct StreamMatrix {
    xof: Shake128Xof,
}

impl StreamMatrix {
    /// Starts the stream for `seed_a`.
    pub fn new(seed_a: &[u8; 32]) -> Self {
        Self {
            xof: shake128(&[seed_a]),
        }
    }
}

/// Squeezed per read: 64 coefficients. Reading an entry in four pieces keeps the buffer (on the
/// stack beside the multiplication in the low-memory mode) at a quarter of an entry.
const MATRIX_PIECE_BYTES: usize = MATRIX_ENTRY_BYTES >> 2;

/// Fills `out` with 13-bit coefficients squeezed from `xof`, a piece at a time.
fn squeeze_entry(xof: &mut Shake128Xof, out: &mut Poly) {
    let mut buf = [0u8; MATRIX_PIECE_BYTES];
    for piece in out.coeffs.chunks_exact_mut(N >> 2) {
        xof.read(&mut buf);
        unpack(&buf, EQ, piece);
    }
}

impl MatrixSource for StreamMatrix {
    fn next_entry(&mut self, out: &mut Poly) {
        squeeze_entry(&mut self.xof, out);
    }
}

/// Saber+ matrix: `A[i][j]` = SHAKE128(seed_A ‖ i ‖ j), first 416 bytes (`docs/saber-plus.md` §4.1).
pub struct IndexedMatrix {
    seed: [u8; 32],
    rank: usize,
    row: usize,
    col: usize,
}

impl IndexedMatrix {
    /// Row-major iteration over the `rank × rank` matrix for `seed_a`.
    pub fn new(seed_a: &[u8; 32], rank: usize) -> Self {
        Self {
            seed: *seed_a,
            rank,
            row: 0,
            col: 0,
        }
    }
}

impl RandomAccessMatrix for IndexedMatrix {
    fn entry(&self, row: usize, col: usize, out: &mut Poly) {
        // Indices are single bytes in the spec; L <= 4 keeps them exact.
        let mut xof = shake128(&[&self.seed, &[row as u8, col as u8]]);
        squeeze_entry(&mut xof, out);
    }
}

impl MatrixSource for IndexedMatrix {
    // Not inlined: the entry's XOF state (about 200 bytes) then lives in this call only, not in
    // the frame of a caller that goes on to multiply (low-memory mode).
    #[inline(never)]
    fn next_entry(&mut self, out: &mut Poly) {
        self.entry(self.row, self.col, out);
        self.col += 1;
        if self.col == self.rank {
            self.col = 0;
            self.row += 1;
        }
    }
}

/// A run of secret coefficients read from the secret stream: `coeffs` coefficients starting at
/// byte `offset` of SHAKE128(seed). Segments are listed in coefficient order and increasing offset.
#[derive(Clone, Copy, Debug)]
pub struct SecretSegment {
    /// Byte offset into the SHAKE128 stream.
    pub offset: usize,
    /// Number of coefficients (a multiple of 4 and of 256's divisors used here).
    pub coeffs: usize,
}

/// β_μ: coefficient = popcount(low μ/2 bits) − popcount(high μ/2 bits) of each μ-bit field.
///
/// `bytes` holds `out.len() · μ / 8` bytes. No branch or index depends on the bytes.
///
/// μ = 6, 8, 10 (the Saber parameters), with `out.len()` a multiple of 8, take
/// `binomial_words` (and AVX2 where available); other arguments the per-coefficient loop.
pub fn centred_binomial(bytes: &[u8], mu: u32, out: &mut [i8]) {
    debug_assert_eq!(bytes.len() * 8, out.len() * mu as usize);
    if out.len() & 7 != 0 {
        return binomial_per_coefficient(bytes, mu, out);
    }
    match mu {
        6 => binomial_fast::<6>(bytes, out),
        8 => binomial_fast::<8>(bytes, out),
        10 => binomial_fast::<10>(bytes, out),
        _ => binomial_per_coefficient(bytes, mu, out),
    }
}

/// β_MU with an AVX2 path for most of the coefficients where the CPU has it
/// (`sampling/avx2.rs`), [`binomial_words`] for the rest.
fn binomial_fast<const MU: usize>(bytes: &[u8], out: &mut [i8]) {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    let done = avx2::binomial::<MU>(bytes, out);
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    let done = 0;
    binomial_words::<MU>(&bytes[(done * MU) >> 3..], &mut out[done..]);
}

/// Sets the low `width` bits of every `period`-bit field of a 64-bit word.
const fn field_mask(period: usize, width: usize) -> u64 {
    let mut mask = 0u64;
    let mut at = 0;
    while at + period <= 64 {
        mask |= ((1u64 << width) - 1) << at;
        at += period;
    }
    mask
}

/// β_MU on whole words: a word holds `8` coefficients (`4` for μ = 10, so that their `4μ` bits
/// are whole bytes), i.e. up to `2·8` half-fields of `h = μ/2` bits.
///
/// 1. The popcount of every half-field at once: for `v < 2^h`,
///    `popcount(v) = v − Σ_{k=1}^{h−1} ⌊v / 2^k⌋`, and `(word >> k) & M_k`, where `M_k` keeps the
///    low `h − k` bits of each half-field, is `⌊v / 2^k⌋` in every half-field. The partial
///    differences never go below `popcount(v) >= 0`, so no half-field borrows from its
///    neighbour, and counts (at most `h`) fit in their half-field.
/// 2. Per μ-bit field, `low count + h − high count`, in `[0, 2h]`: the sum `low + h <= 2h` fits
///    in the field and the difference does not go below 0, so fields stay independent again.
/// 3. Each coefficient is its field minus `h`; for μ = 8 the fields are the bytes, and the eight
///    subtractions are one: `((d | 0x80…) − 0x04…) ^ 0x80…` subtracts 4 from every byte `d < 0x80`
///    without borrows, leaving two's-complement bytes.
///
/// The words stay in registers; the caller wipes the byte buffer.
fn binomial_words<const MU: usize>(bytes: &[u8], out: &mut [i8]) {
    const { assert!(MU == 6 || MU == 8 || MU == 10) };
    let half = MU >> 1;
    let per_word: usize = if MU == 10 { 4 } else { 8 };
    let word_bytes = (per_word * MU) >> 3;
    let low_halves = field_mask(MU, half);
    let biases = field_mask(MU, 1) * half as u64;
    let field = (1u64 << MU) - 1;
    for (coeffs, chunk) in out
        .chunks_exact_mut(per_word)
        .zip(bytes.chunks_exact(word_bytes))
    {
        let mut word = 0u64;
        for (k, &b) in chunk.iter().enumerate() {
            word |= u64::from(b) << (8 * k);
        }
        let mut counts = word;
        for k in 1..half {
            counts -= (word >> k) & field_mask(half, half - k);
        }
        let shifted = (counts & low_halves) + biases - ((counts >> half) & low_halves);
        if MU == 8 {
            let high_bits = 0x8080_8080_8080_8080u64;
            let centred = ((shifted | high_bits) - biases) ^ high_bits;
            for (c, b) in coeffs.iter_mut().zip(centred.to_le_bytes()) {
                *c = b as i8;
            }
        } else {
            for (i, c) in coeffs.iter_mut().enumerate() {
                *c = ((shifted >> (i * MU)) & field) as i8 - half as i8;
            }
        }
    }
}

/// β_μ one coefficient at a time (any μ <= 16, any length).
fn binomial_per_coefficient(bytes: &[u8], mu: u32, out: &mut [i8]) {
    let half_mask = (1u32 << (mu >> 1)) - 1;
    let mut acc = 0u64;
    let mut bits = 0u32;
    let mut input = bytes.iter();
    for c in out.iter_mut() {
        while bits < mu {
            acc |= u64::from(input.next().copied().unwrap_or(0)) << bits;
            bits += 8;
        }
        let field = acc as u32;
        let plus = (field & half_mask).count_ones() as i8;
        let minus = ((field >> (mu >> 1)) & half_mask).count_ones() as i8;
        *c = plus - minus;
        acc >>= mu;
        bits -= mu;
    }
    acc.zeroize();
}

/// GenSecret: fills `out` from SHAKE128(seed) following `segments`, which must cover exactly
/// `out.len() · 256` coefficients. The stream is read once, front to back, 128 coefficients per
/// read straight into `out` (the fast path's buffer is 160 bytes; [`gen_secret_with`] keeps
/// memory lower).
pub fn gen_secret(seed: &[u8; 32], mu: u32, segments: &[SecretSegment], out: &mut [SecretPoly]) {
    debug_assert_eq!(
        segments.iter().map(|seg| seg.coeffs).sum::<usize>(),
        out.len() * N
    );
    // 128 coefficients of at most μ = 10 bits.
    let mut buf = [0u8; 160];
    read_pieces(seed, mu, segments, &mut buf, 7, |coeff, bytes| {
        // N = 256: polynomial index and offset are the high and low bits.
        let poly = &mut out[coeff >> 8].coeffs;
        let start = coeff & (N - 1);
        centred_binomial(bytes, mu, &mut poly[start..start + (1 << 7)]);
    });
}

/// Coefficients sampled per XOF read by [`gen_secret_with`]: 32, i.e. 4μ bytes.
const SECRET_PIECE_LOG: u32 = 5;

/// GenSecret, streaming: hands each secret polynomial to `take(index, poly)` as soon as it is
/// complete. The stream is read once, front to back, a few bytes at a time; skipped bytes are
/// squeezed and discarded. Memory: one polynomial and a 40-byte buffer, whatever the rank (the
/// low-memory mode packs each polynomial as it arrives).
pub fn gen_secret_with(
    seed: &[u8; 32],
    mu: u32,
    segments: &[SecretSegment],
    mut take: impl FnMut(usize, &SecretPoly),
) {
    // 32 coefficients of at most μ = 10 bits.
    let mut buf = [0u8; 40];
    let mut poly = SecretPoly::ZERO;
    let piece = 1 << SECRET_PIECE_LOG;
    read_pieces(
        seed,
        mu,
        segments,
        &mut buf,
        SECRET_PIECE_LOG,
        |coeff, bytes| {
            // N = 256: the offset in the current polynomial is the low bits.
            let start = coeff & (N - 1);
            centred_binomial(bytes, mu, &mut poly.coeffs[start..start + piece]);
            if (coeff + piece) & (N - 1) == 0 {
                take(coeff >> 8, &poly);
            }
        },
    );
}

/// The walk of GenSecret over the secret stream: reads the pieces of `2^piece_log` coefficients
/// of `segments` (segment lengths are multiples of 128) in order, calling
/// `sample(first coefficient, bytes)` for each; bytes between segments are squeezed and
/// discarded. `buf` holds a piece (`2^piece_log · μ / 8` bytes) and is wiped at the end.
fn read_pieces(
    seed: &[u8; 32],
    mu: u32,
    segments: &[SecretSegment],
    buf: &mut [u8],
    piece_log: u32,
    mut sample: impl FnMut(usize, &[u8]),
) {
    let mut xof = shake128(&[seed]);
    let len = (mu as usize) << (piece_log - 3);
    let mut position = 0;
    let mut coeff = 0;
    for seg in segments {
        while position < seg.offset {
            let skip = (seg.offset - position).min(buf.len());
            xof.read(&mut buf[..skip]);
            position += skip;
        }
        for _ in 0..seg.coeffs >> piece_log {
            xof.read(&mut buf[..len]);
            position += len;
            sample(coeff, &buf[..len]);
            coeff += 1 << piece_log;
        }
    }
    // As a slice: one fill and an optimisation barrier (zeroize >= 1.9; an array would be wiped
    // with one volatile store per byte).
    buf.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_counts_bits() {
        // μ = 8: low nibble 0b1111 (+4), high nibble 0b0001 (−1) → 3.
        let mut out = [0i8; 4];
        centred_binomial(&[0x1F, 0x00, 0xF0, 0xFF], 8, &mut out);
        assert_eq!(out, [3, 0, -4, 0]);
        // μ = 6, fields LSB-first across bytes.
        let mut out = [0i8; 4];
        centred_binomial(&[0b0000_0111, 0, 0], 6, &mut out);
        assert_eq!(out, [3, 0, 0, 0]);
    }

    /// The word-parallel sampler against the per-coefficient one, on every byte value in every
    /// position (pseudo-random buffers), for the three μ of Saber.
    #[test]
    fn words_match_per_coefficient() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        // Every round takes every path; Miri (~1000× slower) runs three.
        let rounds = if cfg!(miri) { 3 } else { 50 };
        for _ in 0..rounds {
            let mut bytes = [0u8; 320];
            for b in bytes.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            for mu in [6u32, 8, 10] {
                let len = (N * mu as usize) >> 3;
                let (mut fast, mut slow) = ([0i8; N], [0i8; N]);
                centred_binomial(&bytes[..len], mu, &mut fast);
                binomial_per_coefficient(&bytes[..len], mu, &mut slow);
                assert_eq!(fast, slow, "mu {mu}");
                let mut words = [0i8; N];
                match mu {
                    6 => binomial_words::<6>(&bytes[..len], &mut words),
                    8 => binomial_words::<8>(&bytes[..len], &mut words),
                    _ => binomial_words::<10>(&bytes[..len], &mut words),
                }
                assert_eq!(words, slow, "mu {mu}, words");
                // Pieces of 16 · 2^k coefficients (the SIMD steps, their tails).
                for log_pieces in 0..5 {
                    let (count, piece_bytes) = (N >> log_pieces, len >> log_pieces);
                    let mut pieces = [0i8; N];
                    for (o, b) in pieces
                        .chunks_exact_mut(count)
                        .zip(bytes[..len].chunks_exact(piece_bytes))
                    {
                        centred_binomial(b, mu, o);
                    }
                    assert_eq!(pieces, slow, "mu {mu}, 2^{log_pieces} pieces");
                }
                // Streaming callers sample 32 coefficients at a time.
                centred_binomial(&bytes[..(32 * mu as usize) >> 3], mu, &mut fast[..32]);
                assert_eq!(fast[..32], slow[..32], "mu {mu}, piece");
            }
        }
        // Extremes: all ones is +μ/2 − μ/2 = 0; low halves only is +μ/2.
        let mut out = [0i8; 8];
        centred_binomial(&[0x1F, 0x7C, 0xF0, 0xC1, 0x07], 10, &mut out[..4]);
        assert_eq!(out[..4], [5, 5, 5, 5]);
        centred_binomial(&[0xFF; 6], 6, &mut out);
        assert_eq!(out, [0; 8]);
    }

    /// The fast sampler (128 coefficients per read, straight into the output) and the streaming
    /// one (32 per read, a polynomial at a time) read the same bytes the same way.
    #[test]
    fn fast_and_streaming_samplers_agree() {
        const fn seg(offset: usize, coeffs: usize) -> SecretSegment {
            SecretSegment { offset, coeffs }
        }
        let layouts: [(u32, &[SecretSegment]); 4] = [
            (
                10,
                &[seg(0, 128), seg(168, 128), seg(336, 128), seg(504, 128)],
            ),
            (8, &[seg(0, 256), seg(256, 256), seg(584, 256)]),
            (
                6,
                &[seg(0, 256), seg(264, 256), seg(456, 256), seg(648, 256)],
            ),
            (8, &[seg(0, 256), seg(256, 256), seg(512, 256)]),
        ];
        for (mu, segments) in layouts {
            let polys = segments.iter().map(|s| s.coeffs).sum::<usize>() >> 8;
            let mut fast = [
                SecretPoly::ZERO,
                SecretPoly::ZERO,
                SecretPoly::ZERO,
                SecretPoly::ZERO,
            ];
            gen_secret(&[7; 32], mu, segments, &mut fast[..polys]);
            let mut count = 0;
            gen_secret_with(&[7; 32], mu, segments, |i, poly| {
                assert_eq!(poly.coeffs, fast[i].coeffs, "mu {mu}, polynomial {i}");
                count += 1;
            });
            assert_eq!(count, polys);
        }
    }

    #[test]
    fn segments_with_gaps_skip_stream_bytes() {
        let seed = [42u8; 32];
        let mut whole = [0u8; 840];
        shake128(&[&seed]).read(&mut whole);
        let mut want = SecretPoly::ZERO;
        centred_binomial(&whole[584..840], 8, &mut want.coeffs);
        let mut got = [SecretPoly::ZERO, SecretPoly::ZERO];
        let segs = [
            SecretSegment {
                offset: 0,
                coeffs: 256,
            },
            SecretSegment {
                offset: 584,
                coeffs: 256,
            },
        ];
        gen_secret(&seed, 8, &segs, &mut got);
        assert_eq!(got[1].coeffs, want.coeffs);
    }
}
