//! AVX2 centred binomial sampling (β_μ for μ = 6, 8, 10): sixteen coefficients per iteration
//! instead of 3.5–11 instructions per coefficient in the word-parallel code.
//!
//! Sixteen coefficients are `2μ` bytes: eight (`μ` bytes) per 128-bit half, each half loaded
//! from its own 16 bytes. In 16-bit lane `i`, a byte shuffle places bytes `⌊μ·i/8⌋` and the next;
//! the field starts at bit `r = μ·i mod 8` and `r + μ <= 16` for μ <= 10 (`r` is even for
//! μ = 6, 10 and 0 for μ = 8). Multiplying by `2^(16 − μ − r)` moves the field to the top of the
//! lane (shifts by a per-lane amount: AVX2 has no variable 16-bit shift) and a logical shift by
//! `16 − μ` brings it down, alone. Then the same half-field popcount as the word code
//! (`sampling.rs`, `binomial_words`), the difference of the two counts, and a saturating
//! narrowing to bytes (the values are within ±5). Nothing depends on the data.
//!
//! **Safety.** `binomial` is safe: it runs the `unsafe` AVX2 function only after run-time
//! detection (CPUID through `cpufeatures`, cached). Loads and stores go through `loadu`/`storeu`
//! on pointers of slices just taken by bounds-checked indexing, of exactly the accessed length.
#![allow(unsafe_code)]

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

/// Coefficients per half register and per iteration.
const HALF: usize = 8;
const STEP: usize = 16;
/// Bytes per 128-bit load.
const LOAD: usize = 16;

/// Byte shuffle of one half: 16-bit lane `i` takes bytes `⌊μ·i/8⌋` and `⌊μ·i/8⌋ + 1`.
const fn shuffle(mu: usize) -> [u8; 32] {
    let mut table = [0u8; 32];
    let mut half = 0;
    while half < 2 {
        let mut i = 0;
        while i < HALF {
            let first = (mu * i) >> 3;
            table[16 * half + 2 * i] = first as u8;
            table[16 * half + 2 * i + 1] = first as u8 + 1;
            i += 1;
        }
        half += 1;
    }
    table
}

/// Multipliers `2^(16 − μ − r_i)` of the 16-bit lanes (both halves alike).
const fn lifts(mu: usize) -> [u16; 16] {
    let mut table = [0u16; 16];
    let mut lane = 0;
    while lane < STEP {
        let r = (mu * (lane & (HALF - 1))) & 7;
        table[lane] = 1 << (16 - mu - r);
        lane += 1;
    }
    table
}

/// Samples a prefix of `out` (whole steps of sixteen coefficients) from `bytes`; returns its
/// length (0 without AVX2). The caller samples the rest.
pub(super) fn binomial<const MU: usize>(bytes: &[u8], out: &mut [i8]) -> usize {
    const { assert!(MU == 6 || MU == 8 || MU == 10) };
    if crate::cpu::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { binomial_avx2::<MU>(bytes, out) }
    } else {
        0
    }
}

/// See [`binomial`].
///
/// Each half loads the 16 bytes at its start, or, where that would pass the end of `bytes`,
/// the last 16 bytes, `δ` before its start, with the shuffle indices moved up by `δ`: its `μ`
/// bytes are then at `δ .. δ + μ <= 16`, and an index past 15 (a byte the lane does not need,
/// when `r + μ <= 8`) wraps within the load and is shifted out with the rest of the lane.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
unsafe fn binomial_avx2<const MU: usize>(bytes: &[u8], out: &mut [i8]) -> usize {
    let shuffle_table = const { shuffle(MU) };
    let lift_table = const { lifts(MU) };
    let h = MU >> 1;
    // SAFETY: both tables are 32 bytes, the size of the unaligned loads.
    let (shuffle, lift, half_field, down) = unsafe {
        (
            _mm256_loadu_si256(shuffle_table.as_ptr().cast()),
            _mm256_loadu_si256(lift_table.as_ptr().cast()),
            _mm256_set1_epi16((1 << h) - 1),
            // The shift count `16 − μ`, in a register.
            _mm_cvtsi32_si128(16 - MU as i32),
        )
    };
    if bytes.len() < LOAD {
        return 0;
    }
    let last_load = bytes.len() - LOAD;
    let mut done = 0;
    // Steps whose loads stay within `bytes` take the shuffle as it is; the last ones (where a
    // load would pass the end) move their loads and shuffles by `δ`.
    while done + STEP <= out.len() && ((done + STEP) * MU) >> 3 <= bytes.len() {
        let low_start = (done * MU) >> 3;
        let high_start = low_start + MU;
        let target = &mut out[done..done + STEP];
        if high_start <= last_load {
            let low = &bytes[low_start..low_start + LOAD];
            let high = &bytes[high_start..high_start + LOAD];
            // SAFETY: AVX2 is available; the slices have the lengths `step` requires.
            unsafe { step::<MU>(low, high, shuffle, lift, half_field, down, target) };
        } else {
            let (low_at, high_at) = (low_start.min(last_load), high_start.min(last_load));
            let low = &bytes[low_at..low_at + LOAD];
            let high = &bytes[high_at..high_at + LOAD];
            // SAFETY: as above.
            unsafe {
                let moved = _mm256_inserti128_si256(
                    _mm256_castsi128_si256(_mm_set1_epi8((low_start - low_at) as i8)),
                    _mm_set1_epi8((high_start - high_at) as i8),
                    1,
                );
                let shuffle = _mm256_add_epi8(shuffle, moved);
                step::<MU>(low, high, shuffle, lift, half_field, down, target);
            }
        }
        done += STEP;
    }
    done
}

/// Sixteen coefficients from the 16 bytes of `low` and of `high` (the halves) into `target`.
///
/// # Safety
/// The CPU must support AVX2; `low`, `high` and `target` must be 16 bytes long.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn step<const MU: usize>(
    low: &[u8],
    high: &[u8],
    shuffle: __m256i,
    lift: __m256i,
    half_field: __m256i,
    down: __m128i,
    target: &mut [i8],
) {
    debug_assert!(low.len() == LOAD && high.len() == LOAD && target.len() == STEP);
    let h = MU >> 1;
    // SAFETY: AVX2 is available; the two loads read the 16 bytes of `low` and `high`, the
    // store writes the 16 bytes of `target` (the caller's lengths).
    unsafe {
        let input = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128(low.as_ptr().cast())),
            _mm_loadu_si128(high.as_ptr().cast()),
            1,
        );
        let lanes = _mm256_shuffle_epi8(input, shuffle);
        // The field alone: to the top of the lane, then down to bit 0.
        let field = _mm256_srl_epi16(_mm256_mullo_epi16(lanes, lift), down);
        // popcount of both half-fields: v − Σ_k ⌊v / 2^k⌋ per half-field.
        let mut counts = field;
        let mut k = 1;
        while k < h {
            let keep = (1i16 << (h - k)) - 1;
            let mask = _mm256_set1_epi16(keep | (keep << h));
            let shifted = _mm256_srl_epi16(field, _mm_cvtsi32_si128(k as i32));
            counts = _mm256_sub_epi16(counts, _mm256_and_si256(shifted, mask));
            k += 1;
        }
        let difference = _mm256_sub_epi16(
            _mm256_and_si256(counts, half_field),
            _mm256_srl_epi16(counts, _mm_cvtsi32_si128(h as i32)),
        );
        // Per half: eight bytes and eight zeros; the 64-bit permutation joins the halves.
        let narrowed = _mm256_packs_epi16(difference, _mm256_setzero_si256());
        let joined = _mm256_permute4x64_epi64(narrowed, 0b11_01_10_00);
        _mm_storeu_si128(target.as_mut_ptr().cast(), _mm256_castsi256_si128(joined));
    }
}
