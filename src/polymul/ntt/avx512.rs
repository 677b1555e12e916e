//! AVX-512 kernels of the 6-layer NTT: sixteen `i32` lanes per register, the scalar code's
//! arithmetic mod q' (`vpmuldq` on even and odd lanes, signed Montgomery reduction), so every
//! intermediate value, accumulator, prepared secret and output is bit for bit the scalar one.
//!
//! Layout: the 256 coefficients fill sixteen registers, so layers 1–4 pair whole registers (8,
//! 4, 2, 1 registers apart) with the whole polynomial in registers. Layers 5 and 6 work on
//! register pairs: the 256-bit halves, then the 128-bit quarters are rearranged so that every
//! butterfly pairs two registers lane by lane, and a last exchange of quarters leaves register
//! `j` holding NTT-domain slots 4j..4j + 3 (four blocks mod x^4 ∓ ζ, the order of
//! [`block_slot`]) — one 16-position accumulator group and one 4-block prepared group.
//!
//! **Safety.** Every function that executes AVX-512 instructions is an
//! `unsafe fn` that may only run on a CPU with AVX-512 F and BW; the safe entry points take an
//! [`Avx512Token`], which only [`Avx512Token::detect`] creates (CPUID and the OS's register
//! state support through `cpufeatures`, cached). Memory is read and written only through
//! `loadu`/`storeu` on pointers taken from slices whose length was checked by indexing just
//! before, except the output of `prepare`: a 1,024-entry array (left uninitialised where `prepare`
//! returns a value: no zero fill; the caller's own where it prepares in place), written through
//! its pointer at the constant offsets 64j + 16i + 0..16 (j < 16, i < 4), which cover it exactly
//! once before it is read.
#![allow(unsafe_code)]

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::params::{HALF_Q, Layers6, Params, Q, QINV, block_slot, block_zeta};
use core::mem::MaybeUninit;

use crate::poly::{N, Poly, SecretPoly};

pub(crate) use crate::cpu::Avx512BwToken as Avx512Token;

type P6 = Layers6;

/// Twiddle `ζ` and its companion `ζ·q'^(−1) mod 2^32`, which saves one multiplication per
/// Montgomery product (the low word of a·ζ·q'^(−1) is computed directly).
#[derive(Clone, Copy)]
struct Twiddle {
    zeta: i32,
    zeta_qinv: i32,
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

const FWD: [Twiddle; 64] = twiddle_table(&P6::ZETAS);
const INV: [Twiddle; 64] = twiddle_table(&P6::ZETAS_INV);
const FINAL: Twiddle = twiddle(P6::FINAL_SCALE);
/// ζ_1^(−1)·F: the first twiddle of the inverse fused with the final scale (Montgomery product
/// of the two, computed at compile time).
const INV_1_SCALED: Twiddle = twiddle(mont_mul_const(P6::ZETAS_INV[1], P6::FINAL_SCALE));

/// One twiddle per 128-bit quarter (each repeated in its four lanes), with its companions
/// ζ·q'^(−1) mod 2^32.
#[derive(Clone, Copy)]
struct QuarterTwiddles {
    zeta: [i32; 16],
    zeta_qinv: [i32; 16],
}

const fn quarter_twiddles(zetas: [i32; 4]) -> QuarterTwiddles {
    let mut out = QuarterTwiddles {
        zeta: [0; 16],
        zeta_qinv: [0; 16],
    };
    let mut lane = 0;
    while lane < 16 {
        out.zeta[lane] = zetas[lane >> 2];
        out.zeta_qinv[lane] = zetas[lane >> 2].wrapping_mul(QINV);
        lane += 1;
    }
    out
}

/// Layer-5 twiddles of register pair `p` (registers 2p, 2p + 1 = groups 2p, 2p + 1), arranged as
/// the halves are: [A_lo, B_lo] against [A_hi, B_hi].
const fn layer_5_table(zetas: &[i32; N]) -> [QuarterTwiddles; 8] {
    let mut out = [quarter_twiddles([0; 4]); 8];
    let mut p = 0;
    while p < 8 {
        let (a, b) = (zetas[16 + 2 * p], zetas[17 + 2 * p]);
        out[p] = quarter_twiddles([a, a, b, b]);
        p += 1;
    }
    out
}

/// Layer-6 twiddles of register pair `p`: the quarters are arranged so that groups 4p..4p + 3
/// come in order (see `layer_5_6_forward`).
const fn layer_6_table(zetas: &[i32; N]) -> [QuarterTwiddles; 8] {
    let mut out = [quarter_twiddles([0; 4]); 8];
    let mut p = 0;
    while p < 8 {
        let g = 32 + 4 * p;
        out[p] = quarter_twiddles([zetas[g], zetas[g + 1], zetas[g + 2], zetas[g + 3]]);
        p += 1;
    }
    out
}

/// Block moduli of the four slots of each NTT-domain register.
const fn block_zeta_table() -> [QuarterTwiddles; 16] {
    let mut out = [quarter_twiddles([0; 4]); 16];
    let mut j = 0;
    while j < 16 {
        // block_slot is an involution: slot 4j + i holds block block_slot(4j + i).
        out[j] = quarter_twiddles([
            block_zeta::<P6>(block_slot(4 * j)),
            block_zeta::<P6>(block_slot(4 * j + 1)),
            block_zeta::<P6>(block_slot(4 * j + 2)),
            block_zeta::<P6>(block_slot(4 * j + 3)),
        ]);
        j += 1;
    }
    out
}

const FWD_5: [QuarterTwiddles; 8] = layer_5_table(&P6::ZETAS);
const FWD_6: [QuarterTwiddles; 8] = layer_6_table(&P6::ZETAS);
const INV_5: [QuarterTwiddles; 8] = layer_5_table(&P6::ZETAS_INV);
const INV_6: [QuarterTwiddles; 8] = layer_6_table(&P6::ZETAS_INV);
const BLOCK_ZETAS: [QuarterTwiddles; 16] = block_zeta_table();

/// The butterflies of layers 1–4 in forward order, eight per layer: (register, partner register,
/// twiddle index). Layer l pairs registers d = 8 / 2^l apart; group g of it covers registers
/// 2dg..2dg + 2d and uses twiddle 2^l + g.
const REGISTER_BUTTERFLIES: [(usize, usize, usize); 32] = register_butterflies();

const fn register_butterflies() -> [(usize, usize, usize); 32] {
    let mut out = [(0, 0, 0); 32];
    let mut n = 0;
    let mut layer = 0;
    while layer < 4 {
        let d = 8 >> layer;
        let mut group = 0;
        while group < 1 << layer {
            let mut r = 2 * d * group;
            while r < 2 * d * group + d {
                out[n] = (r, r + d, (1 << layer) + group);
                n += 1;
                r += 1;
            }
            group += 1;
        }
        layer += 1;
    }
    out
}

/// Expands `$body` once per listed index, `$i` being a constant there. The transforms are fully
/// unrolled this way so that every register index is a constant and the sixteen registers stay
/// in registers (a loop would index an array on the stack).
macro_rules! unrolled {
    ($i:ident in [$($n:literal),* $(,)?] $body:block) => {
        $({
            const $i: usize = $n;
            $body
        })*
    };
}

// ---------------------------------------------------------------------------------------------
// Lane arithmetic. `unsafe fn`s: they execute AVX-512 instructions, so they may only be called
// from code running on an AVX-512 CPU (the `#[target_feature]` entry points below).

#[inline(always)]
unsafe fn splat(t: Twiddle) -> (__m512i, __m512i) {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe { (_mm512_set1_epi32(t.zeta), _mm512_set1_epi32(t.zeta_qinv)) }
}

#[inline(always)]
unsafe fn load_quarters(t: &QuarterTwiddles) -> (__m512i, __m512i) {
    // SAFETY: AVX-512 F is present (caller contract); both arrays hold exactly sixteen i32.
    unsafe {
        (
            _mm512_loadu_si512(t.zeta.as_ptr().cast()),
            _mm512_loadu_si512(t.zeta_qinv.as_ptr().cast()),
        )
    }
}

/// The odd lanes moved to the even ones (`vmovshdup`).
#[inline(always)]
unsafe fn odd_lanes(x: __m512i) -> __m512i {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe { _mm512_castps_si512(_mm512_movehdup_ps(_mm512_castsi512_ps(x))) }
}

/// Joins the high words of the 64-bit lanes of `even` and `odd` into sixteen `i32` lanes.
#[inline(always)]
unsafe fn join_high(even: __m512i, odd: __m512i) -> __m512i {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe { _mm512_mask_blend_epi32(0xAAAA, odd_lanes(even), odd) }
}

/// `vpmuldq`, opaque to the optimiser. Applied to a product (m = a·ζq'^(−1) or x·q'^(−1)), the
/// intrinsic is rewritten by LLVM into `vpmuludq` for m plus a shift pair that clears m's high
/// words before the `vpmuldq` by q' (which ignores them anyway): two extra port-0 instructions
/// per half (seen in the disassembly).
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn mul_epi32_opaque(a: __m512i, b: __m512i) -> __m512i {
    let product;
    // SAFETY: AVX-512 F is present (caller contract; this function's target feature); the
    // instruction only reads and writes the named registers.
    unsafe {
        core::arch::asm!(
            "vpmuldq {product}, {a}, {b}",
            product = lateout(zmm_reg) product,
            a = in(zmm_reg) a,
            b = in(zmm_reg) b,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    product
}

/// Lane-wise Montgomery product a·ζ·2^(−32), identical to the scalar `mont_mul`. `zeta` must be
/// equal in lanes 2j and 2j + 1 (all twiddle registers are).
#[inline(always)]
unsafe fn mont_mul(a: __m512i, zeta: __m512i, zeta_qinv: __m512i) -> __m512i {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe {
        let q = _mm512_set1_epi32(Q);
        let a_odd = odd_lanes(a);
        let prod_even = _mm512_mul_epi32(a, zeta);
        let prod_odd = _mm512_mul_epi32(a_odd, zeta);
        let m_even = _mm512_mul_epi32(a, zeta_qinv);
        let m_odd = _mm512_mul_epi32(a_odd, zeta_qinv);
        let mq_even = mul_epi32_opaque(m_even, q);
        let mq_odd = mul_epi32_opaque(m_odd, q);
        // The low words agree, so subtracting the high words alone is exact.
        join_high(
            _mm512_sub_epi32(prod_even, mq_even),
            _mm512_sub_epi32(prod_odd, mq_odd),
        )
    }
}

/// Montgomery reduction of eight `i64` lanes; the result is in the high word of each lane.
#[inline(always)]
unsafe fn reduce64(x: __m512i) -> __m512i {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe {
        let m = _mm512_mul_epi32(x, _mm512_set1_epi32(QINV));
        _mm512_sub_epi32(x, mul_epi32_opaque(m, _mm512_set1_epi32(Q)))
    }
}

/// Lane-wise `canonical_small`: the centred residue of |x| < q'.
#[inline(always)]
unsafe fn canonical_small(x: __m512i) -> __m512i {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe {
        let q = _mm512_set1_epi32(Q);
        let above = _mm512_cmpgt_epi32_mask(x, _mm512_set1_epi32(HALF_Q));
        let x = _mm512_mask_sub_epi32(x, above, x, q);
        let below = _mm512_cmplt_epi32_mask(x, _mm512_set1_epi32(-HALF_Q));
        _mm512_mask_add_epi32(x, below, x, q)
    }
}

/// The centred residue of a forward-transform output (|x| < 3.1·q', the module-level bound;
/// valid up to 3.5·q'): 2q' off beyond ±1.5·q' leaves |x| <= (3q' − 1)/2, which
/// [`canonical_small`] finishes. Compares and masked subtractions only, no multiplication.
#[inline(always)]
unsafe fn canonical_transformed(x: __m512i) -> __m512i {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe {
        let two_q = _mm512_set1_epi32(2 * Q);
        let limit = (3 * Q - 1) >> 1;
        let above = _mm512_cmpgt_epi32_mask(x, _mm512_set1_epi32(limit));
        let x = _mm512_mask_sub_epi32(x, above, x, two_q);
        let below = _mm512_cmplt_epi32_mask(x, _mm512_set1_epi32(-limit));
        canonical_small(_mm512_mask_add_epi32(x, below, x, two_q))
    }
}

/// Cooley–Tukey butterfly (x, y) ← (x + ζy, x − ζy).
#[inline(always)]
unsafe fn ct(x: &mut __m512i, y: &mut __m512i, (zeta, zeta_qinv): (__m512i, __m512i)) {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe {
        let t = mont_mul(*y, zeta, zeta_qinv);
        *y = _mm512_sub_epi32(*x, t);
        *x = _mm512_add_epi32(*x, t);
    }
}

/// Gentleman–Sande butterfly (x, y) ← (x + y, (x − y)·ζ^(−1)).
#[inline(always)]
unsafe fn gs(x: &mut __m512i, y: &mut __m512i, (zeta, zeta_qinv): (__m512i, __m512i)) {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe {
        let d = _mm512_sub_epi32(*x, *y);
        *x = _mm512_add_epi32(*x, *y);
        *y = mont_mul(d, zeta, zeta_qinv);
    }
}

/// Quarters 0, 1 of `a` and 0, 1 of `b` (`vshufi64x2`).
#[inline(always)]
unsafe fn low_halves(a: __m512i, b: __m512i) -> __m512i {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe { _mm512_shuffle_i64x2::<0x44>(a, b) }
}

/// Quarters 2, 3 of `a` and 2, 3 of `b`.
#[inline(always)]
unsafe fn high_halves(a: __m512i, b: __m512i) -> __m512i {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe { _mm512_shuffle_i64x2::<0xEE>(a, b) }
}

/// Quarters (a0, b0, a2, b2) and (a1, b1, a3, b3): pairs the neighbouring quarters of `a` and of
/// `b` lane by lane. Its own inverse.
#[inline(always)]
unsafe fn interleave_quarters(a: __m512i, b: __m512i) -> (__m512i, __m512i) {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe {
        let even = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
        let odd = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
        (
            _mm512_permutex2var_epi64(a, even, b),
            _mm512_permutex2var_epi64(a, odd, b),
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Transforms on sixteen registers (256 coefficients).

/// Forward layers 1–4 (`REGISTER_BUTTERFLIES` in order).
#[inline(always)]
unsafe fn forward_layers_1_to_4(u: &mut [__m512i; 16]) {
    unrolled!(K in [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
        16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
    ] {
        const B: (usize, usize, usize) = REGISTER_BUTTERFLIES[K];
        let (mut x, mut y) = (u[B.0], u[B.1]);
        // SAFETY: AVX-512 F is present (caller contract).
        unsafe { ct(&mut x, &mut y, splat(FWD[B.2])) };
        (u[B.0], u[B.1]) = (x, y);
    });
}

/// Forward layers 5 and 6 on registers A = 2p, B = 2p + 1 (quarters A0..A3, B0..B3, each four
/// coefficients); leaves register 2p with slots 8p..8p + 3, 2p + 1 with 8p + 4..8p + 7.
#[inline(always)]
unsafe fn layer_5_6_forward(u: &mut [__m512i; 16], p: usize) {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe {
        let (a, b) = (u[2 * p], u[2 * p + 1]);
        // Layer 5: 8-coefficient halves (group 2p for A, 2p + 1 for B).
        let (mut x, mut y) = (low_halves(a, b), high_halves(a, b));
        ct(&mut x, &mut y, load_quarters(&FWD_5[p]));
        // Layer 6: (A0, A2, B0, B2) against (A1, A3, B1, B3), groups 4p..4p + 3 in order.
        let (mut x, mut y) = interleave_quarters(x, y);
        ct(&mut x, &mut y, load_quarters(&FWD_6[p]));
        // Blocks (8p, 8p + 2, 8p + 1, 8p + 3) and (8p + 4, 8p + 6, 8p + 5, 8p + 7): slot order.
        u[2 * p] = low_halves(x, y);
        u[2 * p + 1] = high_halves(x, y);
    }
}

/// The whole forward transform; register j ends up holding slots 4j..4j + 3.
#[inline(always)]
unsafe fn forward(u: &mut [__m512i; 16]) {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe {
        forward_layers_1_to_4(u);
        unrolled!(P in [0, 1, 2, 3, 4, 5, 6, 7] {
            layer_5_6_forward(u, P);
        });
    }
}

/// Inverse layers 6 and 5 on registers 2p, 2p + 1: exactly undoes the arrangement of
/// [`layer_5_6_forward`].
#[inline(always)]
unsafe fn layer_6_5_inverse(u: &mut [__m512i; 16], p: usize) {
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe {
        let (r0, r1) = (u[2 * p], u[2 * p + 1]);
        let (mut x, mut y) = (low_halves(r0, r1), high_halves(r0, r1));
        gs(&mut x, &mut y, load_quarters(&INV_6[p]));
        let (mut x, mut y) = interleave_quarters(x, y);
        gs(&mut x, &mut y, load_quarters(&INV_5[p]));
        u[2 * p] = low_halves(x, y);
        u[2 * p + 1] = high_halves(x, y);
    }
}

/// Inverse layers 4–1, the last one fused with the final scaling: sums
/// are multiplied by F, differences by ζ^(−1)·F (outputs below q' in magnitude, the
/// module-level bound).
#[inline(always)]
unsafe fn inverse_layers_4_to_1_scaled(u: &mut [__m512i; 16]) {
    // Layers 4, 3, 2 (`REGISTER_BUTTERFLIES` entries 24–31, 16–23, 8–15).
    unrolled!(K in [
        24, 25, 26, 27, 28, 29, 30, 31, 16, 17, 18, 19, 20, 21, 22, 23,
        8, 9, 10, 11, 12, 13, 14, 15,
    ] {
        const B: (usize, usize, usize) = REGISTER_BUTTERFLIES[K];
        let (mut x, mut y) = (u[B.0], u[B.1]);
        // SAFETY: AVX-512 F is present (caller contract).
        unsafe { gs(&mut x, &mut y, splat(INV[B.2])) };
        (u[B.0], u[B.1]) = (x, y);
    });
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe {
        let (f, fq) = splat(FINAL);
        let (z, zq) = splat(INV_1_SCALED);
        unrolled!(R in [0, 1, 2, 3, 4, 5, 6, 7] {
            let (x, y) = (u[R], u[R + 8]);
            u[R] = mont_mul(_mm512_add_epi32(x, y), f, fq);
            u[R + 8] = mont_mul(_mm512_sub_epi32(x, y), z, zq);
        });
    }
}

#[inline(always)]
unsafe fn load_i32(src: &[i32]) -> __m512i {
    let src = &src[..16];
    // SAFETY: AVX-512 F is present (caller contract); `src` holds sixteen i32 (checked above).
    unsafe { _mm512_loadu_si512(src.as_ptr().cast()) }
}

#[inline(always)]
unsafe fn store_i32(dst: &mut [i32], x: __m512i) {
    let dst = &mut dst[..16];
    // SAFETY: AVX-512 F is present (caller contract); `dst` holds sixteen i32 (checked above).
    unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), x) }
}

#[inline(always)]
unsafe fn load_i64(src: &[i64]) -> __m512i {
    let src = &src[..8];
    // SAFETY: AVX-512 F is present (caller contract); `src` holds eight i64 (checked above).
    unsafe { _mm512_loadu_si512(src.as_ptr().cast()) }
}

#[inline(always)]
unsafe fn store_i64(dst: &mut [i64], x: __m512i) {
    let dst = &mut dst[..8];
    // SAFETY: AVX-512 F is present (caller contract); `dst` holds eight i64 (checked above).
    unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), x) }
}

/// Overwrites the registers' stack copy (the transform of a secret or of a secret-derived `a`).
#[inline(always)]
unsafe fn wipe(u: &mut [__m512i; 16]) {
    for v in u.iter_mut() {
        // SAFETY: AVX-512 F is present (caller contract); `v` is a valid, aligned reference.
        unsafe { core::ptr::write_volatile(v, _mm512_setzero_si512()) };
    }
}

/// Loads the centred `a` (sign-extended bit 12, the scalar `poly::centred`) and transforms it.
#[inline(always)]
unsafe fn load_public_forward(a: &Poly, u: &mut [__m512i; 16]) {
    unrolled!(J in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
        let chunk = &a.coeffs[16 * J..][..16];
        // SAFETY: AVX-512 F is present (caller contract); `chunk` holds sixteen u16 (checked).
        u[J] = unsafe {
            let x = _mm512_cvtepu16_epi32(_mm256_loadu_si256(chunk.as_ptr().cast()));
            _mm512_srai_epi32::<19>(_mm512_slli_epi32::<19>(x))
        };
    });
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe { forward(u) };
}

/// `acc += â ∘ ŝ` for the four blocks of NTT-domain register `j` (â in `x`): accumulator group
/// j (eight even positions, eight odd ones), prepared group j (column i of the four blocks).
#[inline(always)]
unsafe fn basemul_register(acc: &mut [i64; N], prepared: &[i32; 4 * N], j: usize, x: __m512i) {
    let cols = &prepared[64 * j..][..64];
    let sums = &mut acc[16 * j..][..16];
    // SAFETY: AVX-512 F is present (caller contract).
    unsafe {
        let mut even = load_i64(&sums[0..]);
        let mut odd = load_i64(&sums[8..]);
        // Row k of a block: Σ_i a_i · column_i[k]; a_i broadcast within each block (128 bits).
        let a_i = [
            _mm512_shuffle_epi32::<0x00>(x),
            _mm512_shuffle_epi32::<0x55>(x),
            _mm512_shuffle_epi32::<0xAA>(x),
            _mm512_shuffle_epi32::<0xFF>(x),
        ];
        for (i, &ai) in a_i.iter().enumerate() {
            let col = load_i32(&cols[16 * i..]);
            even = _mm512_add_epi64(even, _mm512_mul_epi32(ai, col));
            odd = _mm512_add_epi64(odd, _mm512_mul_epi32(ai, odd_lanes(col)));
        }
        store_i64(&mut sums[0..], even);
        store_i64(&mut sums[8..], odd);
    }
}

// ---------------------------------------------------------------------------------------------
// Entry points.

/// `out` must point to 1,024 writable `i32`s (all written once).
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn prepare_avx512(s: &SecretPoly, out: *mut i32) {
    // SAFETY: this function runs only on AVX-512 CPUs (its caller holds an `Avx512Token`).
    unsafe {
        let mut u = [_mm512_setzero_si512(); 16];
        unrolled!(J in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
            let chunk = &s.coeffs[16 * J..][..16];
            u[J] = _mm512_cvtepi8_epi32(_mm_loadu_si128(chunk.as_ptr().cast()));
        });
        forward(&mut u);
        unrolled!(J in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
            let x = u[J];
            // Canonical b and ζ·b per block, then the four columns: column i is
            // [ζb_(4−i), …, ζb_3, b_0, …, b_(3−i)], a byte shift of (ζb ‖ b) per 128 bits.
            let b = canonical_transformed(x);
            let (bz, bzq) = load_quarters(&BLOCK_ZETAS[J]);
            let zb = canonical_small(mont_mul(b, bz, bzq));
            // Group J: entries 64J..64J + 64 of the 1,024 (J < 16), so every entry is written
            // exactly once over the sixteen groups.
            let dst = out.add(64 * J);
            _mm512_storeu_si512(dst.cast(), b);
            _mm512_storeu_si512(dst.add(16).cast(), _mm512_alignr_epi8::<12>(b, zb));
            _mm512_storeu_si512(dst.add(32).cast(), _mm512_alignr_epi8::<8>(b, zb));
            _mm512_storeu_si512(dst.add(48).cast(), _mm512_alignr_epi8::<4>(b, zb));
        });
        wipe(&mut u);
    }
}

#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn mul_acc_avx512(acc: &mut [i64; N], a: &Poly, prepared: &[i32; 4 * N]) {
    // SAFETY: this function runs only on AVX-512 CPUs (its caller holds an `Avx512Token`).
    unsafe {
        let mut u = [_mm512_setzero_si512(); 16];
        load_public_forward(a, &mut u);
        // Fused: the base multiplication reads the registers, â is never stored.
        unrolled!(J in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
            basemul_register(acc, prepared, J, u[J]);
        });
        wipe(&mut u);
    }
}

#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn public_to_domain_avx512(a: &Poly, out: &mut [i32; N]) {
    // SAFETY: this function runs only on AVX-512 CPUs (its caller holds an `Avx512Token`).
    unsafe {
        let mut u = [_mm512_setzero_si512(); 16];
        load_public_forward(a, &mut u);
        unrolled!(J in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
            store_i32(&mut out[16 * J..], u[J]);
        });
        wipe(&mut u);
    }
}

#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn basemul_acc_avx512(acc: &mut [i64; N], a_hat: &[i32; N], prepared: &[i32; 4 * N]) {
    // SAFETY: this function runs only on AVX-512 CPUs (its caller holds an `Avx512Token`).
    unsafe {
        for j in 0..16 {
            basemul_register(acc, prepared, j, load_i32(&a_hat[16 * j..]));
        }
    }
}

#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn finish_avx512(acc: &mut [i64; N], out: &mut Poly) {
    // SAFETY: this function runs only on AVX-512 CPUs (its caller holds an `Avx512Token`).
    unsafe {
        let mut u = [_mm512_setzero_si512(); 16];
        unrolled!(J in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
            let sums = &mut acc[16 * J..][..16];
            u[J] = join_high(
                reduce64(load_i64(&sums[0..])),
                reduce64(load_i64(&sums[8..])),
            );
            // Wiped as read (the accumulator's contract), not in a pass of its own.
            store_i64(&mut sums[0..], _mm512_setzero_si512());
            store_i64(&mut sums[8..], _mm512_setzero_si512());
        });
        unrolled!(P in [0, 1, 2, 3, 4, 5, 6, 7] {
            layer_6_5_inverse(&mut u, P);
        });
        inverse_layers_4_to_1_scaled(&mut u);
        unrolled!(J in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
            let dst = &mut out.coeffs[16 * J..][..16];
            // `vpmovdw` truncates each lane to its low 16 bits: `x as u16`.
            let packed = _mm512_cvtepi32_epi16(canonical_small(u[J]));
            _mm256_storeu_si256(dst.as_mut_ptr().cast(), packed);
        });
        wipe(&mut u);
    }
    // The zeros above are the wipe: kept though nothing reads them.
    zeroize::optimization_barrier(acc);
}

/// AVX-512 `prepare` (same output as the scalar one).
pub(crate) fn prepare(_token: Avx512Token, s: &SecretPoly) -> [i32; 4 * N] {
    // Not zero-filled first: the 4 KiB fill was a measurable share of `prepare`.
    let mut out = MaybeUninit::<[i32; 4 * N]>::uninit();
    // SAFETY: the token proves AVX-512 F and BW are present; `prepare_avx512` writes all 1,024
    // entries (sixteen groups of 64), so `out` is initialised.
    unsafe {
        prepare_avx512(s, out.as_mut_ptr().cast());
        out.assume_init()
    }
}

/// [`prepare`] into `out`, in place: no copy of the secret's image is made (and left unwiped).
pub(crate) fn prepare_into(_token: Avx512Token, s: &SecretPoly, out: &mut [i32; 4 * N]) {
    // SAFETY: the token proves AVX-512 F and BW are present; `out` holds the 1,024 entries
    // `prepare_avx512` writes.
    unsafe { prepare_avx512(s, out.as_mut_ptr()) }
}

/// AVX-512 `mul_acc` (same sums as the scalar one).
pub(crate) fn mul_acc(_token: Avx512Token, acc: &mut [i64; N], a: &Poly, prepared: &[i32; 4 * N]) {
    // SAFETY: the token proves AVX-512 F and BW are present.
    unsafe { mul_acc_avx512(acc, a, prepared) }
}

/// AVX-512 forward transform of a public polynomial into NTT-domain order (same values as the
/// scalar `public_to_domain`).
pub(crate) fn public_to_domain(_token: Avx512Token, a: &Poly, out: &mut [i32; N]) {
    // SAFETY: the token proves AVX-512 F and BW are present.
    unsafe { public_to_domain_avx512(a, out) }
}

/// AVX-512 base multiplication of an NTT-domain public polynomial (same sums as the scalar one).
pub(crate) fn basemul_acc(
    _token: Avx512Token,
    acc: &mut [i64; N],
    a_hat: &[i32; N],
    prepared: &[i32; 4 * N],
) {
    // SAFETY: the token proves AVX-512 F and BW are present.
    unsafe { basemul_acc_avx512(acc, a_hat, prepared) }
}

/// AVX-512 `finish` into `out` (same output as the scalar one), `acc` left wiped.
pub(crate) fn finish_into(_token: Avx512Token, acc: &mut [i64; N], out: &mut Poly) {
    // SAFETY: the token proves AVX-512 F and BW are present.
    unsafe { finish_avx512(acc, out) }
}
