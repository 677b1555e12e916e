//! AVX2 unpacking and packing of the wide widths (10 bits for b and b', 13 bits for A and the
//! secret key, 12 for uSaber's): sixteen coefficients per iteration instead of about four
//! instructions per coefficient.
//!
//! Each group of eight `W`-bit coefficients is `W` bytes. Its first 16 bytes are loaded into
//! both 128-bit halves of a register; one byte shuffle gives every 32-bit lane `i` the three
//! bytes `⌊W·i/8⌋ …+2` that hold coefficient `i` (`W·i mod 8 + W <= 7 + 14 <= 24` bits, and
//! `⌊7W/8⌋ + 2 < 16` for `W <= 14`: all within the load), a
//! variable shift by `W·i mod 8` and a mask leave the coefficient. Two groups are narrowed to
//! 16 bits and stored together. Nothing depends on the data: same instructions, same addresses.
//!
//! **Safety.** `unpack` is safe: it runs the `unsafe` AVX2 functions only after run-time
//! detection (CPUID through `cpufeatures`, cached). Loads and stores go through `loadu`/`storeu`
//! on pointers of slices just taken by bounds-checked indexing, of exactly the accessed length.
#![allow(unsafe_code)]

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::GROUP;

/// Bytes loaded per group (one 128-bit load).
const LOAD: usize = 16;

/// The byte shuffle of a group of `w`-bit coefficients: lane `i` (bytes `4i..4i+4` of the
/// 256-bit register, coefficients 0–3 in the low half, 4–7 in the high half) takes bytes
/// `⌊w·i/8⌋, +1, +2` of the group and a zero (index with the top bit set).
const fn shuffle(w: usize) -> [u8; 32] {
    let mut table = [0u8; 32];
    let mut i = 0;
    while i < GROUP {
        let first = (w * i) >> 3;
        let mut k = 0;
        while k < 3 {
            table[4 * i + k] = (first + k) as u8;
            k += 1;
        }
        table[4 * i + 3] = 0x80;
        i += 1;
    }
    table
}

/// The right shift of lane `i`: `w·i mod 8`.
const fn shifts(w: usize) -> [u32; 8] {
    let mut table = [0u32; 8];
    let mut i = 0;
    while i < GROUP {
        table[i] = ((w * i) & 7) as u32;
        i += 1;
    }
    table
}

/// Unpacks a prefix of `out` (an even number of groups of eight) from `bytes`; returns its
/// length in coefficients (0 without AVX2). The caller unpacks the rest.
pub(super) fn unpack<const W: usize>(bytes: &[u8], out: &mut [u16]) -> usize {
    const { assert!(W >= 1 && W <= 14) };
    if crate::cpu::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { unpack_avx2::<W>(bytes, out) }
    } else {
        0
    }
}

/// See [`unpack`].
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
unsafe fn unpack_avx2<const W: usize>(bytes: &[u8], out: &mut [u16]) -> usize {
    let shuffle_table = const { shuffle(W) };
    let shift_table = const { shifts(W) };
    // SAFETY: both tables are 32 bytes, the size of the unaligned loads.
    let (shuffle, shift, mask) = unsafe {
        (
            _mm256_loadu_si256(shuffle_table.as_ptr().cast()),
            _mm256_loadu_si256(shift_table.as_ptr().cast()),
            _mm256_set1_epi32((1 << W) - 1),
        )
    };
    let mut groups = 0;
    // Two groups per iteration while both 16-byte loads stay within `bytes`.
    while W * (groups + 1) + LOAD <= bytes.len() && GROUP * (groups + 2) <= out.len() {
        let first = &bytes[W * groups..W * groups + LOAD];
        let second = &bytes[W * (groups + 1)..W * (groups + 1) + LOAD];
        let target = &mut out[GROUP * groups..GROUP * (groups + 2)];
        // SAFETY: AVX2 is available (this function's contract); the slices have the lengths
        // `unpack_pair` requires.
        unsafe { unpack_pair(first, shuffle, second, shuffle, shift, mask, target) };
        groups += 2;
    }
    // The last pair (where the loop stops short of the end: 2 of the 8 groups of a quarter
    // polynomial, 2 of 32 of a whole one): a load that would pass the end of `bytes` ends at it
    // instead, `δ` bytes before the group, and the shuffle indices move up by `δ`. The bytes of
    // coefficient `i` are then at `δ + ⌊W·i/8⌋ … δ + ⌊(W·(i+1) − 1)/8⌋ <= δ + W − 1 <= 15`, since
    // the group ends within `bytes` (`δ <= 16 − W`). Indices past 15 (bytes the coefficient does
    // not need) wrap within the 16 bytes; they land at bit `8k − W·i mod 8 >= W` or above and
    // are masked off. The zeroing indices `0x80 + δ` keep their top bit.
    if GROUP * (groups + 2) <= out.len() && W * (groups + 2) <= bytes.len() && LOAD <= bytes.len() {
        let last_load = bytes.len() - LOAD;
        let (a, b) = (W * groups, W * (groups + 1));
        let (a_at, b_at) = (a.min(last_load), b.min(last_load));
        let first = &bytes[a_at..a_at + LOAD];
        let second = &bytes[b_at..b_at + LOAD];
        let target = &mut out[GROUP * groups..GROUP * (groups + 2)];
        // SAFETY: as above.
        unsafe {
            let first_shuffle = _mm256_add_epi8(shuffle, _mm256_set1_epi8((a - a_at) as i8));
            let second_shuffle = _mm256_add_epi8(shuffle, _mm256_set1_epi8((b - b_at) as i8));
            unpack_pair(
                first,
                first_shuffle,
                second,
                second_shuffle,
                shift,
                mask,
                target,
            );
        }
        groups += 2;
    }
    GROUP * groups
}

/// Unpacks two groups, from the 16 bytes of `first` and of `second` with their shuffles, into
/// the 16 coefficients of `target`.
///
/// # Safety
/// The CPU must support AVX2; `first` and `second` must be 16 bytes and `target` 16 `u16`s.
/// Always inlined into [`unpack_avx2`], whose AVX2 its intrinsics take: a call per pair would
/// pass its vectors through the stack.
#[inline(always)]
unsafe fn unpack_pair(
    first: &[u8],
    first_shuffle: __m256i,
    second: &[u8],
    second_shuffle: __m256i,
    shift: __m256i,
    mask: __m256i,
    target: &mut [u16],
) {
    debug_assert!(first.len() == LOAD && second.len() == LOAD && target.len() == 2 * GROUP);
    // SAFETY: the loads read 16 bytes of `first` and `second` and the store writes the 32 bytes
    // of `target` (the caller's lengths); AVX2 is available.
    unsafe {
        let a = _mm256_broadcastsi128_si256(_mm_loadu_si128(first.as_ptr().cast()));
        let b = _mm256_broadcastsi128_si256(_mm_loadu_si128(second.as_ptr().cast()));
        let a = _mm256_and_si256(
            _mm256_srlv_epi32(_mm256_shuffle_epi8(a, first_shuffle), shift),
            mask,
        );
        let b = _mm256_and_si256(
            _mm256_srlv_epi32(_mm256_shuffle_epi8(b, second_shuffle), shift),
            mask,
        );
        // Per 128-bit half: [a 0–3, b 0–3 | a 4–7, b 4–7]; the 64-bit permutation puts the
        // quarters in the order a 0–3, a 4–7, b 0–3, b 4–7.
        let packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0b11_01_10_00);
        _mm256_storeu_si256(target.as_mut_ptr().cast(), packed);
    }
}

/// Packs a prefix of `coeffs` (an even number of groups of eight) with `W` bits each (`W` up to
/// 14) into `out`; returns its length in coefficients (0 without AVX2). The caller packs
/// the rest.
///
/// Per 128-bit half (one group): the coefficients, masked to `W` bits, are multiplied-and-added
/// in pairs (`c₀ + 2^W·c₁`, `2W` bits per 32-bit lane; `vpmaddwd` with small positive operands
/// is exact), the pairs of a 64-bit lane joined (`a + 2^2W·b`, `4W` bits), and the second
/// 64-bit lane shifted left by `4W mod 8` so that its bits sit where they belong within their
/// byte (13 bits: 52-bit lanes, the second starts half-way through byte 6). Two byte shuffles
/// then move the first lane's bytes to `0..⌈4W/8⌉` and the second's to `⌊4W/8⌋..W`, ORed: the
/// group's `W` bytes. Each half is stored with a 16-byte store whose last `16 − W` bytes the next
/// group's store overwrites, so stores stop one group early, where the last 16 bytes would pass
/// the end of `out`.
pub(super) fn pack<const W: usize>(coeffs: &[u16], out: &mut [u8]) -> usize {
    const { assert!(W >= 1 && W <= 14) };
    if crate::cpu::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { pack_avx2::<W>(coeffs, out) }
    } else {
        0
    }
}

/// The two byte shuffles of [`pack`]: bytes of the first 64-bit lane of each half to the start
/// of the group (`first`), bytes of the second lane after bit `4W` of it (`second`).
const fn pack_shuffles(w: usize) -> ([u8; 32], [u8; 32]) {
    let (mut first, mut second) = ([0x80u8; 32], [0x80u8; 32]);
    let lane_bits = 4 * w;
    let mut half = 0;
    while half < 2 {
        let mut k = 0;
        while k < lane_bits.div_ceil(8) {
            first[16 * half + k] = k as u8;
            k += 1;
        }
        let mut k = 0;
        while (lane_bits >> 3) + k < w {
            second[16 * half + (lane_bits >> 3) + k] = 8 + k as u8;
            k += 1;
        }
        half += 1;
    }
    (first, second)
}

/// See [`pack`].
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
unsafe fn pack_avx2<const W: usize>(coeffs: &[u16], out: &mut [u8]) -> usize {
    let (first_table, second_table) = const { pack_shuffles(W) };
    // SAFETY: the tables are 32 bytes, the size of the unaligned loads.
    let (first, second, mask, pair_weights, low, high, join, align) = unsafe {
        (
            _mm256_loadu_si256(first_table.as_ptr().cast()),
            _mm256_loadu_si256(second_table.as_ptr().cast()),
            _mm256_set1_epi16((1 << W) - 1),
            _mm256_set1_epi32(1 | (1 << (W + 16))),
            _mm256_set1_epi64x((1 << (2 * W)) - 1),
            _mm256_set1_epi64x(((1 << (2 * W)) - 1) << (2 * W)),
            _mm256_set1_epi64x(32 - 2 * W as i64),
            _mm256_set_epi64x(((4 * W) & 7) as i64, 0, ((4 * W) & 7) as i64, 0),
        )
    };
    let mut groups = 0;
    // Both 16-byte stores of the pair must stay within `out`.
    while W * (groups + 1) + LOAD <= out.len() && GROUP * (groups + 2) <= coeffs.len() {
        let source = &coeffs[GROUP * groups..GROUP * (groups + 2)];
        // SAFETY: AVX2 is available; `source` is 16 `u16`s (32 bytes, the load), and the two
        // stores write 16 bytes each of slices just taken with that length.
        unsafe {
            let c = _mm256_and_si256(_mm256_loadu_si256(source.as_ptr().cast()), mask);
            let pairs = _mm256_madd_epi16(c, pair_weights);
            let joined = _mm256_or_si256(
                _mm256_and_si256(pairs, low),
                _mm256_and_si256(_mm256_srlv_epi64(pairs, join), high),
            );
            let aligned = _mm256_sllv_epi64(joined, align);
            let bytes = _mm256_or_si256(
                _mm256_shuffle_epi8(aligned, first),
                _mm256_shuffle_epi8(aligned, second),
            );
            let low_half = &mut out[W * groups..W * groups + LOAD];
            _mm_storeu_si128(low_half.as_mut_ptr().cast(), _mm256_castsi256_si128(bytes));
            let high_half = &mut out[W * (groups + 1)..W * (groups + 1) + LOAD];
            _mm_storeu_si128(
                high_half.as_mut_ptr().cast(),
                _mm256_extracti128_si256(bytes, 1),
            );
        }
        groups += 2;
    }
    GROUP * groups
}
