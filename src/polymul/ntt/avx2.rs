//! AVX2 kernels of the 6-layer NTT: eight `i32` lanes per register, 32×32→64-bit products with
//! `vpmuldq` on even and odd lanes, signed Montgomery reduction as in the scalar code, so every
//! intermediate value (and therefore every result) is bit for bit the scalar one.
//!
//! Layout: layers 1–3 run on eight registers 32 coefficients apart, layers 4–6 on eight adjacent
//! registers; the last layer butterflies the 128-bit halves of two registers, which leaves the
//! NTT domain in the slot order of [`block_slot`](super::params::block_slot) (each 128-bit half
//! is one block mod x^4 ∓ ζ). `mul_acc` fuses the second pass with the base multiplication, so
//! `â` is never stored.
//!
//! **Safety.** Every function that executes AVX2 instructions is an `unsafe fn` that may only
//! run on a CPU with AVX2; the safe entry points take an [`Avx2Token`], which can only be
//! obtained from [`Avx2Token::detect`] (run-time CPUID through `cpufeatures`, cached) or when the
//! target enables AVX2 at compile time. Memory is read and written only through
//! `loadu`/`storeu` on pointers taken from slices whose length was checked by indexing just
//! before, except the output of `prepare`: an uninitialised 1,024-entry array (no zero fill),
//! written through its pointer at offsets computed from constants (`prepared_index`), which
//! cover it exactly once before it is read.
#![allow(unsafe_code)]

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::params::{HALF_Q, Layers6, Params, Q, QINV, block_slot, block_zeta, prepared_index};
use core::mem::MaybeUninit;

use crate::poly::{N, Poly, SecretPoly};

pub(crate) use crate::cpu::Avx2Token;

type P6 = Layers6;

/// Twiddle `ζ` and its companion `ζ·q'^(−1) mod 2^32`, which saves one multiplication per
/// Montgomery product (the low word of a·ζ·q'^(−1) is computed directly).
#[derive(Clone, Copy)]
pub(super) struct Twiddle {
    pub(super) zeta: i32,
    pub(super) zeta_qinv: i32,
}

/// `scalar::mont_mul` for constants, centred like every twiddle (|result| <= (q' − 1)/2).
const fn mont_mul_const(a: i32, b: i32) -> i32 {
    let x = a as i64 * b as i64;
    let m = (x as i32).wrapping_mul(QINV);
    let r = ((x - m as i64 * Q as i64) >> 32) as i32;
    if r > HALF_Q {
        r - Q
    } else if r < -HALF_Q {
        r + Q
    } else {
        r
    }
}

const fn twiddle(zeta: i32) -> Twiddle {
    Twiddle {
        zeta,
        zeta_qinv: zeta.wrapping_mul(QINV),
    }
}

const fn twiddle_table(zetas: &[i32; N]) -> [Twiddle; 64] {
    let mut out = [Twiddle {
        zeta: 0,
        zeta_qinv: 0,
    }; 64];
    let mut i = 0;
    while i < 64 {
        out[i] = twiddle(zetas[i]);
        i += 1;
    }
    out
}

/// Pairs of 128-bit-half twiddles: entry `p` is [ζ_a ×4, ζ_b ×4].
#[derive(Clone, Copy)]
struct HalfTwiddles {
    zeta: [i32; 8],
    zeta_qinv: [i32; 8],
}

const fn half_twiddles(lo: i32, hi: i32) -> HalfTwiddles {
    let (lq, hq) = (lo.wrapping_mul(QINV), hi.wrapping_mul(QINV));
    HalfTwiddles {
        zeta: [lo, lo, lo, lo, hi, hi, hi, hi],
        zeta_qinv: [lq, lq, lq, lq, hq, hq, hq, hq],
    }
}

/// Last-layer twiddles per register pair (`p`: groups 2p and 2p + 1 of layer 6).
const fn last_layer_table(zetas: &[i32; N]) -> [HalfTwiddles; 16] {
    let mut out = [half_twiddles(0, 0); 16];
    let mut p = 0;
    while p < 16 {
        out[p] = half_twiddles(zetas[32 + 2 * p], zetas[33 + 2 * p]);
        p += 1;
    }
    out
}

/// Block moduli per NTT-domain slot (two blocks per register).
const fn block_zeta_table() -> [HalfTwiddles; 32] {
    let mut out = [half_twiddles(0, 0); 32];
    let mut s = 0;
    while s < 32 {
        // block_slot is an involution: slot 2s + h holds block block_slot(2s + h).
        out[s] = half_twiddles(
            block_zeta::<P6>(block_slot(2 * s)),
            block_zeta::<P6>(block_slot(2 * s + 1)),
        );
        s += 1;
    }
    out
}

pub(super) const FWD: [Twiddle; 64] = twiddle_table(&P6::ZETAS);
pub(super) const INV: [Twiddle; 64] = twiddle_table(&P6::ZETAS_INV);
const FWD_LAST: [HalfTwiddles; 16] = last_layer_table(&P6::ZETAS);
const INV_LAST: [HalfTwiddles; 16] = last_layer_table(&P6::ZETAS_INV);
const BLOCK_ZETAS: [HalfTwiddles; 32] = block_zeta_table();
pub(super) const FINAL: Twiddle = twiddle(P6::FINAL_SCALE);
/// ζ_1^(−1)·F: the first twiddle of the inverse fused with the final scale (Montgomery product
/// of the two, computed at compile time).
pub(super) const INV_1_SCALED: Twiddle = twiddle(mont_mul_const(P6::ZETAS_INV[1], P6::FINAL_SCALE));

// ---------------------------------------------------------------------------------------------
// Lane arithmetic. These helpers are `unsafe fn`s: they execute AVX2 instructions, so they may
// only be called from code running on an AVX2 CPU (the `#[target_feature]` entry points below).

/// Broadcasts a twiddle into (ζ, ζ·q'^(−1)) registers.
#[inline(always)]
unsafe fn splat(t: Twiddle) -> (__m256i, __m256i) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe { (_mm256_set1_epi32(t.zeta), _mm256_set1_epi32(t.zeta_qinv)) }
}

#[inline(always)]
unsafe fn load_half(t: &HalfTwiddles) -> (__m256i, __m256i) {
    // SAFETY: AVX2 is present (caller contract); both arrays hold exactly eight i32.
    unsafe {
        (
            _mm256_loadu_si256(t.zeta.as_ptr().cast()),
            _mm256_loadu_si256(t.zeta_qinv.as_ptr().cast()),
        )
    }
}

/// The odd lanes moved to the even ones (`vmovshdup`, off the multiplier ports).
#[inline(always)]
unsafe fn odd_lanes(x: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe { _mm256_castps_si256(_mm256_movehdup_ps(_mm256_castsi256_ps(x))) }
}

/// Joins the high words of the 64-bit lanes of `even` and `odd` into eight `i32` lanes.
#[inline(always)]
unsafe fn join_high(even: __m256i, odd: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe { _mm256_blend_epi32::<0xAA>(odd_lanes(even), odd) }
}

/// Lane-wise Montgomery product a·ζ·2^(−32), identical to the scalar `mont_mul`. `zeta` must be
/// equal in lanes 2j and 2j + 1 (all twiddle registers are).
#[inline(always)]
unsafe fn mont_mul(a: __m256i, zeta: __m256i, zeta_qinv: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let q = _mm256_set1_epi32(Q);
        let a_odd = odd_lanes(a);
        let prod_even = _mm256_mul_epi32(a, zeta);
        let prod_odd = _mm256_mul_epi32(a_odd, zeta);
        // Low words: m = a·ζ·q'^(−1) mod 2^32, as in the scalar code.
        let m_even = _mm256_mul_epi32(a, zeta_qinv);
        let m_odd = _mm256_mul_epi32(a_odd, zeta_qinv);
        let mq_even = _mm256_mul_epi32(m_even, q);
        let mq_odd = _mm256_mul_epi32(m_odd, q);
        // The low words agree, so subtracting the high words alone is exact.
        join_high(
            _mm256_sub_epi32(prod_even, mq_even),
            _mm256_sub_epi32(prod_odd, mq_odd),
        )
    }
}

/// Montgomery reduction of four `i64` lanes; the result is in the high word of each lane.
#[inline(always)]
unsafe fn reduce64(x: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let m = _mm256_mul_epi32(x, _mm256_set1_epi32(QINV));
        _mm256_sub_epi32(x, _mm256_mul_epi32(m, _mm256_set1_epi32(Q)))
    }
}

/// Lane-wise x − m where x > limit, then + m where x < −limit (masks, no branch).
#[inline(always)]
unsafe fn fold(x: __m256i, m: i32, limit: i32) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let m = _mm256_set1_epi32(m);
        let x = _mm256_sub_epi32(
            x,
            _mm256_and_si256(m, _mm256_cmpgt_epi32(x, _mm256_set1_epi32(limit))),
        );
        let below = _mm256_cmpgt_epi32(_mm256_set1_epi32(-limit), x);
        _mm256_add_epi32(x, _mm256_and_si256(m, below))
    }
}

/// Lane-wise `canonical_small`: the centred residue of |x| < q'.
#[inline(always)]
unsafe fn canonical_small(x: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe { fold(x, Q, HALF_Q) }
}

/// The centred residue of a forward-transform output (|x| < 3.1·q', the module-level bound;
/// valid up to 3.5·q'): 2q' off beyond ±(3q' − 1)/2, then [`canonical_small`]. No
/// multiplication.
#[inline(always)]
unsafe fn canonical_transformed(x: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe { canonical_small(fold(x, 2 * Q, (3 * Q - 1) >> 1)) }
}

/// Cooley–Tukey butterfly (x, y) ← (x + ζy, x − ζy).
#[inline(always)]
unsafe fn ct(x: &mut __m256i, y: &mut __m256i, (zeta, zeta_qinv): (__m256i, __m256i)) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let t = mont_mul(*y, zeta, zeta_qinv);
        *y = _mm256_sub_epi32(*x, t);
        *x = _mm256_add_epi32(*x, t);
    }
}

/// Gentleman–Sande butterfly (x, y) ← (x + y, (x − y)·ζ^(−1)).
#[inline(always)]
unsafe fn gs(x: &mut __m256i, y: &mut __m256i, (zeta, zeta_qinv): (__m256i, __m256i)) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let d = _mm256_sub_epi32(*x, *y);
        *x = _mm256_add_epi32(*x, *y);
        *y = mont_mul(d, zeta, zeta_qinv);
    }
}

// ---------------------------------------------------------------------------------------------
// Transform passes on 32 registers (256 coefficients).

/// Forward layers 1–3 on registers `j, j + 4, …, j + 28` (coefficients 32 apart).
#[inline(always)]
unsafe fn forward_layers_1_to_3(v: &mut [__m256i; 8]) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let [v0, v1, v2, v3, v4, v5, v6, v7] = v;
        let z = splat(FWD[1]);
        ct(v0, v4, z);
        ct(v1, v5, z);
        ct(v2, v6, z);
        ct(v3, v7, z);
        let z = splat(FWD[2]);
        ct(v0, v2, z);
        ct(v1, v3, z);
        let z = splat(FWD[3]);
        ct(v4, v6, z);
        ct(v5, v7, z);
        ct(v0, v1, splat(FWD[4]));
        ct(v2, v3, splat(FWD[5]));
        ct(v4, v5, splat(FWD[6]));
        ct(v6, v7, splat(FWD[7]));
    }
}

/// Forward layers 4–6 on the eight adjacent registers of chunk `c` (64 coefficients); leaves
/// them in slot order.
#[inline(always)]
unsafe fn forward_layers_4_to_6(w: &mut [__m256i; 8], c: usize) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        {
            let [w0, w1, w2, w3, w4, w5, w6, w7] = &mut *w;
            let z = splat(FWD[8 + 2 * c]);
            ct(w0, w2, z);
            ct(w1, w3, z);
            let z = splat(FWD[9 + 2 * c]);
            ct(w4, w6, z);
            ct(w5, w7, z);
            ct(w0, w1, splat(FWD[16 + 4 * c]));
            ct(w2, w3, splat(FWD[17 + 4 * c]));
            ct(w4, w5, splat(FWD[18 + 4 * c]));
            ct(w6, w7, splat(FWD[19 + 4 * c]));
        }
        for h in 0..4 {
            let (a, b) = (w[2 * h], w[2 * h + 1]);
            // Low halves (coefficients 0–3 of each register) against high halves (4–7).
            let mut x = _mm256_permute2x128_si256::<0x20>(a, b);
            let mut y = _mm256_permute2x128_si256::<0x31>(a, b);
            ct(&mut x, &mut y, load_half(&FWD_LAST[4 * c + h]));
            w[2 * h] = x;
            w[2 * h + 1] = y;
        }
    }
}

/// Inverse layers 6–4 on chunk `c`, from slot order back to natural order.
#[inline(always)]
unsafe fn inverse_layers_6_to_4(w: &mut [__m256i; 8], c: usize) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        for h in 0..4 {
            let (mut x, mut y) = (w[2 * h], w[2 * h + 1]);
            gs(&mut x, &mut y, load_half(&INV_LAST[4 * c + h]));
            w[2 * h] = _mm256_permute2x128_si256::<0x20>(x, y);
            w[2 * h + 1] = _mm256_permute2x128_si256::<0x31>(x, y);
        }
        let [w0, w1, w2, w3, w4, w5, w6, w7] = w;
        gs(w0, w1, splat(INV[16 + 4 * c]));
        gs(w2, w3, splat(INV[17 + 4 * c]));
        gs(w4, w5, splat(INV[18 + 4 * c]));
        gs(w6, w7, splat(INV[19 + 4 * c]));
        let z = splat(INV[8 + 2 * c]);
        gs(w0, w2, z);
        gs(w1, w3, z);
        let z = splat(INV[9 + 2 * c]);
        gs(w4, w6, z);
        gs(w5, w7, z);
    }
}

/// Inverse layers 3–1 on registers `j, j + 4, …, j + 28`, the last one fused with the final
/// scaling: sums are multiplied by F, differences by ζ^(−1)·F in one Montgomery product (one
/// product fewer per pair than scaling afterwards). Outputs are below q' in magnitude (the
/// module-level bound: |x| <= 47.5·q' before the last products).
#[inline(always)]
unsafe fn inverse_layers_3_to_1_scaled(v: &mut [__m256i; 8]) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let [v0, v1, v2, v3, v4, v5, v6, v7] = v;
        gs(v0, v1, splat(INV[4]));
        gs(v2, v3, splat(INV[5]));
        gs(v4, v5, splat(INV[6]));
        gs(v6, v7, splat(INV[7]));
        let z = splat(INV[2]);
        gs(v0, v2, z);
        gs(v1, v3, z);
        let z = splat(INV[3]);
        gs(v4, v6, z);
        gs(v5, v7, z);
        let (f, fq) = splat(FINAL);
        let (z, zq) = splat(INV_1_SCALED);
        for (x, y) in [(v0, v4), (v1, v5), (v2, v6), (v3, v7)] {
            let d = _mm256_sub_epi32(*x, *y);
            *x = mont_mul(_mm256_add_epi32(*x, *y), f, fq);
            *y = mont_mul(d, z, zq);
        }
    }
}

/// Runs forward pass 1 over all of `t` (natural order, 32 registers); with `SECRET`, the
/// working registers' stack copy is wiped afterwards (the caller wipes `t`).
#[inline(always)]
unsafe fn forward_pass_1<const SECRET: bool>(t: &mut [__m256i; 32]) {
    // SAFETY: AVX2 is present (caller contract).
    let mut v = unsafe { [_mm256_setzero_si256(); 8] };
    for j in 0..4 {
        v = core::array::from_fn(|m| t[j + 4 * m]);
        // SAFETY: AVX2 is present (caller contract).
        unsafe { forward_layers_1_to_3(&mut v) };
        for (m, &x) in v.iter().enumerate() {
            t[j + 4 * m] = x;
        }
    }
    if SECRET {
        // SAFETY: AVX2 is present (caller contract).
        unsafe { wipe(&mut v) };
    }
}

/// Overwrites the registers' stack copy (the transform of a secret, or a secret-derived sum).
#[inline(always)]
unsafe fn wipe(registers: &mut [__m256i]) {
    for v in registers.iter_mut() {
        // SAFETY: AVX2 is present (caller contract); `v` is a valid, aligned reference.
        unsafe { core::ptr::write_volatile(v, _mm256_setzero_si256()) };
    }
}

/// Eight `i32` lanes from `src[..8]`.
#[inline(always)]
unsafe fn load_i32(src: &[i32]) -> __m256i {
    let src = &src[..8];
    // SAFETY: AVX2 is present (caller contract); `src` holds eight i32 (checked above).
    unsafe { _mm256_loadu_si256(src.as_ptr().cast()) }
}

#[inline(always)]
unsafe fn store_i32(dst: &mut [i32], x: __m256i) {
    let dst = &mut dst[..8];
    // SAFETY: AVX2 is present (caller contract); `dst` holds eight i32 (checked above).
    unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), x) }
}

#[inline(always)]
unsafe fn load_i64(src: &[i64]) -> __m256i {
    let src = &src[..4];
    // SAFETY: AVX2 is present (caller contract); `src` holds four i64 (checked above).
    unsafe { _mm256_loadu_si256(src.as_ptr().cast()) }
}

#[inline(always)]
unsafe fn store_i64(dst: &mut [i64], x: __m256i) {
    let dst = &mut dst[..4];
    // SAFETY: AVX2 is present (caller contract); `dst` holds four i64 (checked above).
    unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), x) }
}

// ---------------------------------------------------------------------------------------------
// Entry points.

#[target_feature(enable = "avx2")]
unsafe fn prepare_avx2(s: &SecretPoly, out: &mut MaybeUninit<[i32; 4 * N]>) {
    let out: *mut i32 = out.as_mut_ptr().cast();
    // SAFETY: this function runs only on AVX2 CPUs (its caller holds an `Avx2Token`).
    unsafe {
        let mut t = [_mm256_setzero_si256(); 32];
        for (v, chunk) in t.iter_mut().zip(s.coeffs.chunks_exact(8)) {
            let chunk = &chunk[..8];
            *v = _mm256_cvtepi8_epi32(_mm_loadl_epi64(chunk.as_ptr().cast()));
        }
        forward_pass_1::<true>(&mut t);
        for c in 0..4 {
            // In place in `t`, so that the only copy of the transform on the stack is `t`.
            let w: &mut [__m256i; 8] = (&mut t[8 * c..8 * c + 8]).try_into().unwrap();
            forward_layers_4_to_6(w, c);
            for (h, &x) in w.iter().enumerate() {
                let slot = 8 * c + h;
                // Canonical b and ζ·b per 128-bit block, then the four columns: column i is
                // [ζb_(4−i), …, ζb_3, b_0, …, b_(3−i)], a byte shift of (ζb ‖ b).
                let b = canonical_transformed(x);
                let (bz, bzq) = load_half(&BLOCK_ZETAS[slot]);
                let zb = canonical_small(mont_mul(b, bz, bzq));
                // Column i of slots 2·slot, 2·slot + 1: eight entries from
                // prepared_index(2·slot, i, 0) = 64·(slot / 2) + 16i + 8·(slot & 1), below
                // 1,024; over the 32 slots and 4 columns every entry is written exactly once.
                let column = |i| out.add(prepared_index::<P6>(2 * slot, i, 0)).cast();
                _mm256_storeu_si256(column(0), b);
                _mm256_storeu_si256(column(1), _mm256_alignr_epi8::<12>(b, zb));
                _mm256_storeu_si256(column(2), _mm256_alignr_epi8::<8>(b, zb));
                _mm256_storeu_si256(column(3), _mm256_alignr_epi8::<4>(b, zb));
            }
        }
        // Wipe the secret's transform from the stack.
        wipe(&mut t);
    }
}

/// Loads the centred `a` (sign-extended bit 12, the scalar `poly::centred`) and runs forward
/// pass 1.
#[inline(always)]
unsafe fn load_public_pass_1(a: &Poly, t: &mut [__m256i; 32]) {
    for (v, chunk) in t.iter_mut().zip(a.coeffs.chunks_exact(8)) {
        let chunk = &chunk[..8];
        // SAFETY: AVX2 is present (caller contract); `chunk` holds eight u16 (checked above).
        *v = unsafe {
            let x = _mm256_cvtepu16_epi32(_mm_loadu_si128(chunk.as_ptr().cast()));
            _mm256_srai_epi32::<19>(_mm256_slli_epi32::<19>(x))
        };
    }
    // SAFETY: AVX2 is present (caller contract).
    unsafe { forward_pass_1::<false>(t) };
}

/// `acc += â ∘ ŝ` for the two blocks of NTT-domain register `slot` (â in `x`).
#[inline(always)]
unsafe fn basemul_slot(acc: &mut [i64; N], prepared: &[i32; 4 * N], slot: usize, x: __m256i) {
    // The register's eight positions are one half of a 16-position accumulator group (eight
    // even sums, then eight odd ones) and of a 4-block prepared group (column i of four blocks).
    let half = slot & 1;
    let cols = &prepared[64 * (slot >> 1) + 8 * half..][..56];
    let sums = &mut acc[16 * (slot >> 1) + 4 * half..][..12];
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let mut even = load_i64(&sums[0..]);
        let mut odd = load_i64(&sums[8..]);
        // Row k of a block: Σ_i a_i · column_i[k]; a_i broadcast within each block (128 bits).
        let a_i = [
            _mm256_shuffle_epi32::<0x00>(x),
            _mm256_shuffle_epi32::<0x55>(x),
            _mm256_shuffle_epi32::<0xAA>(x),
            _mm256_shuffle_epi32::<0xFF>(x),
        ];
        for (i, &ai) in a_i.iter().enumerate() {
            let col = load_i32(&cols[16 * i..]);
            even = _mm256_add_epi64(even, _mm256_mul_epi32(ai, col));
            odd = _mm256_add_epi64(odd, _mm256_mul_epi32(ai, odd_lanes(col)));
        }
        store_i64(&mut sums[0..], even);
        store_i64(&mut sums[8..], odd);
    }
}

#[target_feature(enable = "avx2")]
unsafe fn mul_acc_avx2(acc: &mut [i64; N], a: &Poly, prepared: &[i32; 4 * N]) {
    // SAFETY: this function runs only on AVX2 CPUs (its caller holds an `Avx2Token`).
    unsafe {
        let mut t = [_mm256_setzero_si256(); 32];
        load_public_pass_1(a, &mut t);
        for c in 0..4 {
            let mut w: [__m256i; 8] = core::array::from_fn(|k| t[8 * c + k]);
            forward_layers_4_to_6(&mut w, c);
            // Fused: the base multiplication reads the registers, â is never stored.
            for (h, &x) in w.iter().enumerate() {
                basemul_slot(acc, prepared, 8 * c + h, x);
            }
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn public_to_domain_avx2(a: &Poly, out: &mut [i32; N]) {
    // SAFETY: this function runs only on AVX2 CPUs (its caller holds an `Avx2Token`).
    unsafe {
        let mut t = [_mm256_setzero_si256(); 32];
        load_public_pass_1(a, &mut t);
        for c in 0..4 {
            let mut w: [__m256i; 8] = core::array::from_fn(|k| t[8 * c + k]);
            forward_layers_4_to_6(&mut w, c);
            for (h, &x) in w.iter().enumerate() {
                store_i32(&mut out[8 * (8 * c + h)..], x);
            }
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn basemul_acc_avx2(acc: &mut [i64; N], a_hat: &[i32; N], prepared: &[i32; 4 * N]) {
    // SAFETY: this function runs only on AVX2 CPUs (its caller holds an `Avx2Token`).
    unsafe {
        for slot in 0..32 {
            basemul_slot(acc, prepared, slot, load_i32(&a_hat[8 * slot..]));
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn finish_avx2(acc: &[i64; N]) -> Poly {
    // SAFETY: this function runs only on AVX2 CPUs (its caller holds an `Avx2Token`).
    unsafe {
        let mut t = [_mm256_setzero_si256(); 32];
        for c in 0..4 {
            // In place in `t` (wiped below), as in `prepare_avx2`.
            let w: &mut [__m256i; 8] = (&mut t[8 * c..8 * c + 8]).try_into().unwrap();
            *w = core::array::from_fn(|h| {
                // Slot 8c + h: half h & 1 of accumulator group 4c + h / 2 (see `basemul_slot`).
                let sums = &acc[16 * (4 * c + (h >> 1)) + 4 * (h & 1)..][..12];
                join_high(
                    reduce64(load_i64(&sums[0..])),
                    reduce64(load_i64(&sums[8..])),
                )
            });
            inverse_layers_6_to_4(w, c);
        }
        let mut out = Poly::ZERO;
        let low16 = _mm256_set1_epi32(0xFFFF);
        let mut v = [_mm256_setzero_si256(); 8];
        for j in 0..4 {
            v = core::array::from_fn(|m| t[j + 4 * m]);
            inverse_layers_3_to_1_scaled(&mut v);
            for (m, &x) in v.iter().enumerate() {
                let x = canonical_small(x);
                // Wrap to u16 (as `x as u16`): mask, pack with unsigned saturation (now exact),
                // gather the two 64-bit halves holding the eight results.
                let x = _mm256_and_si256(x, low16);
                let packed = _mm256_permute4x64_epi64::<0x08>(_mm256_packus_epi32(x, x));
                let dst = &mut out.coeffs[8 * (j + 4 * m)..][..8];
                _mm_storeu_si128(dst.as_mut_ptr().cast(), _mm256_castsi256_si128(packed));
            }
        }
        // The accumulated sums are secret-derived: wipe their transforms from the stack.
        wipe(&mut t);
        wipe(&mut v);
        out
    }
}

/// AVX2 `prepare` (same output as the scalar one).
pub(crate) fn prepare(_token: Avx2Token, s: &SecretPoly) -> [i32; 4 * N] {
    // Not zero-filled first: the 4 KiB fill was a measurable share of `prepare`.
    let mut out = MaybeUninit::uninit();
    // SAFETY: the token proves AVX2 is present; `prepare_avx2` writes all 1,024 entries (32
    // slots × 4 columns × 8), so `out` is initialised.
    unsafe {
        prepare_avx2(s, &mut out);
        out.assume_init()
    }
}

/// AVX2 `mul_acc` (same sums as the scalar one).
pub(crate) fn mul_acc(_token: Avx2Token, acc: &mut [i64; N], a: &Poly, prepared: &[i32; 4 * N]) {
    // SAFETY: the token proves AVX2 is present.
    unsafe { mul_acc_avx2(acc, a, prepared) }
}

/// AVX2 forward transform of a public polynomial into NTT-domain order (same values as the
/// scalar `public_to_domain`).
pub(crate) fn public_to_domain(_token: Avx2Token, a: &Poly, out: &mut [i32; N]) {
    // SAFETY: the token proves AVX2 is present.
    unsafe { public_to_domain_avx2(a, out) }
}

/// AVX2 base multiplication of an NTT-domain public polynomial (same sums as the scalar one).
pub(crate) fn basemul_acc(
    _token: Avx2Token,
    acc: &mut [i64; N],
    a_hat: &[i32; N],
    prepared: &[i32; 4 * N],
) {
    // SAFETY: the token proves AVX2 is present.
    unsafe { basemul_acc_avx2(acc, a_hat, prepared) }
}

/// AVX2 `finish` (same output as the scalar one).
pub(crate) fn finish(_token: Avx2Token, acc: &[i64; N]) -> Poly {
    // SAFETY: the token proves AVX2 is present.
    unsafe { finish_avx2(acc) }
}
