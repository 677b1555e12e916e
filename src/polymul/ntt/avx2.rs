//! AVX2 kernels of the 6-layer NTT over **two 16-bit primes**: sixteen `i16` lanes per register,
//! each product computed mod p₀ = 7681 and mod p₁ = 7937 and joined by the CRT in `finish`.
//!
//! # Why not the scalar code's prime
//!
//! AVX2 has no 32×32→64-bit multiply on all eight lanes: a Montgomery product mod the 25-bit q'
//! takes six `vpmuldq` on even and odd lanes for eight coefficients. Mod a 13-bit prime it takes
//! three 16-bit multiplies (`vpmullw`, `vpmulhw` ×2) for sixteen; the base multiplication's dot
//! products are `vpmaddwd`. Both primes together take fewer instructions than the one 32-bit
//! prime (BENCHMARKS.md, issue 18). The NTT-domain values therefore differ from the scalar and
//! AVX-512 paths' (same types, same sizes, another layout); the outputs of `finish` are the same
//! bit for bit.
//!
//! # Bounds (Chung et al., TCHES 2021(2), §3: a product over Z via a CRT of NTT-friendly primes)
//!
//! Both primes are ≡ 1 mod 128 (a primitive 128th root of unity: six layers, blocks x^4 ∓ ζ).
//! p₀·p₁ = 60,964,097 > 2 · 20,971,520, twice the contract's largest coefficient
//! (L·256·4096·η = 4·256·4096·5, the module-level proof in `ntt.rs`), so the centred CRT
//! residue is the integer coefficient itself, of which the output keeps the low 16 bits.
//! Let p ≤ 7937. All values stay in `i16`:
//! 1. `fqmul(a, c)` (signed Montgomery, R = 2^16) with |a| < 2^15 and centred |c| ≤ p/2 gives
//!    |r| ≤ 2^15·3968/2^16 + p/2 ≤ 5953.
//! 2. `barrett(x)` for |x| < 2^15 gives x − p·round(x/p) with the rounding error under 0.002:
//!    |r| ≤ 3985.
//! 3. Forward: from |a| ≤ 4096 four layers add at most 4·5953 (27,908), then `barrett` of the
//!    halves that layer 5 adds to (the others only enter `fqmul`), then two more layers:
//!    |â| ≤ 3985 + 2·5953 = 15,891.
//! 4. Base multiplication: prepared entries are b = `barrett`(b̂) (≤ 3985) and
//!    ζb = `fqmul`(b, ζ) (≤ 3985·3968/2^16 + p/2 ≤ 4210), so L = 4 products sum 16 terms of at
//!    most 15,891·4210: ≤ 1.071·10^9 < 2^31 in `i32`, with no reduction.
//! 5. `finish`: a Montgomery reduction of the sums (|r| ≤ 1.071·10^9/2^16 + p/2 ≤ 20,304),
//!    `barrett` (≤ 3985), three Gentleman–Sande layers (sums ≤ 8·3985 = 31,880; differences up
//!    to 31,880 are multiplied, giving ≤ 5953), `barrett`, two layers (≤ 15,940), and the last
//!    layer fused with the scaling by R²/64 (the 2^6 of the butterflies and the R^(−1) of the
//!    reduction): sums ≤ 31,880 go into one `fqmul` each.
//! 6. CRT, neither residue centred: with |r₀|, |r₁| ≤ 5953 (bound 1), t = `fqmul`(r₁ − r₀,
//!    p₀^(−1)) ≡ (r₁ − r₀)·p₀^(−1) mod p₁ has |t| ≤ 11,906·3968/2^16 + p₁/2 < 4690. The
//!    coefficient x (|x| ≤ 20,971,520) is r₀ + p₀·t' for an integer t' ≡ t mod p₁ with
//!    |t'| ≤ (20,971,520 + 5953)/p₀ < 2732; |t − t'| < 4690 + 2732 < p₁ makes t' = t, so
//!    x = r₀ + p₀·t exactly, computed mod 2^16 (`vpmullw`, `vpaddw`): the exact coefficient
//!    wrapped to `u16`, as the scalar code outputs it.
//!
//! # Layout
//!
//! Register r holds coefficients 16r..16r + 15. Layers 1–3 pair registers of one parity (8, 4, 2
//! registers apart; both parities step by step), layers 4–6 work on register pairs (2h, 2h + 1),
//! four pairs at a time: layer 4 pairs the two registers, layer 5 their 128-bit halves, layer 6
//! their 64-bit quarters. The pair ends as X = blocks [8h, 8h + 2 | 8h + 4, 8h + 6] and Y = blocks
//! [8h + 1, 8h + 3 | 8h + 5, 8h + 7] (a block is four coefficients, one quarter); block 2i is mod
//! x^4 − ζ_(32+i), block 2i + 1 mod x^4 + ζ_(32+i), so X's block roots are its layer-6 twiddles and
//! Y's their negatives.
//!
//! A block's product row k is Σ_i a_i·M[k][i] with M[k][i] = b_(k−i), or ζ·b_(k−i+4) where
//! k < i: with T = (ζb ‖ b), M[k][i] = T[4 + k − i]. `vpmaddwd` of the broadcast pair (a₀, a₁)
//! with the prepared pairs (M[k][0], M[k][1]), k = 0..3, plus the same for (a₂, a₃), gives
//! the block's four sums in `i32`: the even quarters (0, 2) of a register in one accumulator
//! register, the odd ones (1, 3) in another. `finish` reduces both and packs them (`vpackssdw`)
//! back into the layout above.
//!
//! Storage (as `i32`/`i64` arrays of the shared NTT-domain types, read as 256-bit vectors):
//! prepared secret vector 64p + 8h + 4·(Y) + (0: pairs (a₀, a₁) even, 1: (a₂, a₃) even, 2, 3:
//! odd); accumulator vector 32p + 4h + 2·(Y) + (0: even, 1: odd); public vector 16p + 2h + (Y).
//!
//! **Safety.** Every function that executes AVX2 instructions is an `unsafe fn` that may only
//! run on a CPU with AVX2; the safe entry points take an [`Avx2Token`], which can only be
//! obtained from [`Avx2Token::detect`] (run-time CPUID through `cpufeatures`, cached) or when the
//! target enables AVX2 at compile time. Memory is read and written only through
//! `loadu`/`storeu` on pointers taken from slices whose length was checked by indexing just
//! before, except two buffers written before they are read, neither zero-filled first: the output
//! of `prepare`, a 1,024-entry array (left uninitialised where `prepare` returns a value; the
//! caller's own where it prepares in place), written through its pointer at the constant offsets
//! 8·(64p + 8h + j) (p < 2, h < 8, j < 8), which cover it exactly once; and the 32 vectors of a
//! secret's (ζb ‖ b) blocks in the frame of `mul_acc_once`, each prime's written in full (indices
//! 4h + 0..4, h < 8) before any is read, and wiped.
//!
//! **`mul_acc_once`** (decryption, whose secrets are used once each): per prime the secret's
//! transform is kept as its (ζb ‖ b) blocks, 1 KiB, and shuffled into the prepared vectors as
//! the public transform reaches them, instead of a 4 KiB prepared image written, read back and
//! wiped. The same accumulator as `prepare` then `mul_acc`, bit for bit.
#![allow(unsafe_code)]

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use core::mem::MaybeUninit;

use super::params;
use crate::poly::{N, Poly, SecretPoly};

pub(crate) use crate::cpu::Avx2Token;

// ---------------------------------------------------------------------------------------------
// Constants, computed at compile time from the two primes.

/// The primes; `PRIMES[0]·PRIMES[1]` bounds the CRT (module docs).
const PRIMES: [i32; 2] = [7681, 7937];
/// R = 2^16, the Montgomery radix of `i16` lanes.
const R: i64 = 1 << 16;

/// base^exp mod q, on the `i64` values of this module's constants.
const fn pow_mod(base: i64, exp: i64, q: i64) -> i64 {
    params::pow_mod(base as u64, exp as u64, q as u64) as i64
}

/// A constant c·R mod q (centred) with its companion c·R·q^(−1) mod 2^16, for `fqmul`.
#[derive(Clone, Copy)]
struct Twiddle {
    c: i16,
    c_qinv: i16,
}

/// One twiddle per lane.
#[derive(Clone, Copy)]
struct Lanes {
    c: [i16; 16],
    c_qinv: [i16; 16],
}

impl Lanes {
    const fn set(&mut self, lane: usize, t: Twiddle) {
        self.c[lane] = t.c;
        self.c_qinv[lane] = t.c_qinv;
    }
}

/// Everything one prime's kernels need.
struct Prime {
    q: i16,
    /// q^(−1) mod 2^16.
    qinv: i16,
    /// round(2^26/q), for `barrett`.
    barrett: i16,
    /// Layers 1–4, indexed as the forward groups (1..16).
    fwd: [Twiddle; 16],
    /// Layers 5 and 6 of register pair h, lanes as the pair's registers hold them.
    fwd5: [Lanes; 8],
    fwd6: [Lanes; 8],
    /// The roots of register Y's blocks: the negated layer-6 twiddles.
    roots_odd: [Lanes; 8],
    inv: [Twiddle; 16],
    inv5: [Lanes; 8],
    inv6: [Lanes; 8],
    /// R²/64: the last inverse layer's sums; the same times ζ₁^(−1) for its differences.
    scale: Twiddle,
    scale_inv1: Twiddle,
}

const fn twiddle(value: i64, q: i64, qinv: i16) -> Twiddle {
    let c = params::centred_in(value * R, q) as i16;
    Twiddle {
        c,
        c_qinv: c.wrapping_mul(qinv),
    }
}

#[allow(clippy::integer_division_remainder_used)] // compile time, public constants
const fn prime(q: i64) -> Prime {
    // q^(−1) mod 2^16: the low half of the inverse mod 2^32.
    let qinv = params::odd_inverse(q as u32) as u16 as i16;
    // The smallest ω with ω^64 = −1: a primitive 128th root of unity.
    let mut omega = 2;
    while pow_mod(omega, 64, q) != q - 1 {
        omega += 1;
    }
    // Forward twiddle of group k (1..64): ω^brv6(k); inverse: its inverse.
    let mut zeta = [0i64; 64];
    let mut zeta_inv = [0i64; 64];
    let mut k = 1;
    while k < 64 {
        zeta[k] = pow_mod(omega, ((k as u8).reverse_bits() >> 2) as i64, q);
        zeta_inv[k] = pow_mod(zeta[k], q - 2, q);
        k += 1;
    }
    let blank = Twiddle { c: 0, c_qinv: 0 };
    let blank_lanes = Lanes {
        c: [0; 16],
        c_qinv: [0; 16],
    };
    let mut out = Prime {
        q: q as i16,
        qinv,
        barrett: ((1 << 26) as i64 + q / 2).div_euclid(q) as i16,
        fwd: [blank; 16],
        fwd5: [blank_lanes; 8],
        fwd6: [blank_lanes; 8],
        roots_odd: [blank_lanes; 8],
        inv: [blank; 16],
        inv5: [blank_lanes; 8],
        inv6: [blank_lanes; 8],
        scale: blank,
        scale_inv1: blank,
    };
    let mut k = 1;
    while k < 16 {
        out.fwd[k] = twiddle(zeta[k], q, qinv);
        out.inv[k] = twiddle(zeta_inv[k], q, qinv);
        k += 1;
    }
    let mut h = 0;
    while h < 8 {
        let mut lane = 0;
        while lane < 16 {
            // Layer 5: group 16 + 2h in the low 128 bits, 17 + 2h in the high ones. Layer 6:
            // group 32 + 4h + (quarter).
            let (g5, g6) = (16 + 2 * h + lane / 8, 32 + 4 * h + lane / 4);
            out.fwd5[h].set(lane, twiddle(zeta[g5], q, qinv));
            out.fwd6[h].set(lane, twiddle(zeta[g6], q, qinv));
            out.roots_odd[h].set(lane, twiddle(q - zeta[g6], q, qinv));
            out.inv5[h].set(lane, twiddle(zeta_inv[g5], q, qinv));
            out.inv6[h].set(lane, twiddle(zeta_inv[g6], q, qinv));
            lane += 1;
        }
        h += 1;
    }
    // R²/64 as a twiddle value: twiddle() multiplies by R once more.
    let scale = R % q * pow_mod(64, q - 2, q) % q;
    out.scale = twiddle(scale, q, qinv);
    out.scale_inv1 = twiddle(scale * zeta_inv[1] % q, q, qinv);
    out
}

const P0: Prime = prime(PRIMES[0] as i64);
const P1: Prime = prime(PRIMES[1] as i64);
/// p₀^(−1) mod p₁, for the CRT.
const CRT: Twiddle = twiddle(
    pow_mod(PRIMES[0] as i64, PRIMES[1] as i64 - 2, PRIMES[1] as i64),
    PRIMES[1] as i64,
    P1.qinv,
);

// ---------------------------------------------------------------------------------------------
// Lane arithmetic. These helpers are `unsafe fn`s: they execute AVX2 instructions, so they may
// only be called from code running on an AVX2 CPU (the `#[target_feature]` entry points below).

#[inline(always)]
unsafe fn splat(t: Twiddle) -> (__m256i, __m256i) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe { (_mm256_set1_epi16(t.c), _mm256_set1_epi16(t.c_qinv)) }
}

#[inline(always)]
unsafe fn load_lanes(t: &Lanes) -> (__m256i, __m256i) {
    // SAFETY: AVX2 is present (caller contract); both arrays hold sixteen i16.
    unsafe {
        (
            _mm256_loadu_si256(t.c.as_ptr().cast()),
            _mm256_loadu_si256(t.c_qinv.as_ptr().cast()),
        )
    }
}

/// a·c·R^(−1) mod q, lane-wise, |result| <= 5953 (module docs, bound 1).
#[inline(always)]
unsafe fn fqmul(a: __m256i, (c, c_qinv): (__m256i, __m256i), p: &Prime) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let m = _mm256_mullo_epi16(a, c_qinv);
        // The low halves of a·c and m·q agree, so the difference of the high halves is exact.
        _mm256_sub_epi16(
            _mm256_mulhi_epi16(a, c),
            _mm256_mulhi_epi16(m, _mm256_set1_epi16(p.q)),
        )
    }
}

/// x − q·round(x/q), |result| <= 3985 (module docs, bound 2).
#[inline(always)]
unsafe fn barrett(x: __m256i, p: &Prime) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let t = _mm256_mulhi_epi16(x, _mm256_set1_epi16(p.barrett));
        // round(t / 2^10)
        let t = _mm256_mulhrs_epi16(t, _mm256_set1_epi16(1 << 5));
        _mm256_sub_epi16(x, _mm256_mullo_epi16(t, _mm256_set1_epi16(p.q)))
    }
}

/// Cooley–Tukey butterfly (x, y) ← (x + ζy, x − ζy).
#[inline(always)]
unsafe fn ct(x: &mut __m256i, y: &mut __m256i, zeta: (__m256i, __m256i), p: &Prime) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let t = fqmul(*y, zeta, p);
        *y = _mm256_sub_epi16(*x, t);
        *x = _mm256_add_epi16(*x, t);
    }
}

/// Gentleman–Sande butterfly (x, y) ← (x + y, (x − y)·ζ^(−1)).
#[inline(always)]
unsafe fn gs(x: &mut __m256i, y: &mut __m256i, zeta_inv: (__m256i, __m256i), p: &Prime) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let d = _mm256_sub_epi16(*x, *y);
        *x = _mm256_add_epi16(*x, *y);
        *y = fqmul(d, zeta_inv, p);
    }
}

// ---------------------------------------------------------------------------------------------
// Transform passes.

/// The butterfly (Gentleman–Sande if `INVERSE`, else Cooley–Tukey) on registers 2a + j and
/// 2b + j of both parities j: two independent chains per step, which a parity at a time left
/// waiting on the multiplies' latency.
#[inline(always)]
unsafe fn butterfly_both<const INVERSE: bool>(
    t: &mut [__m256i; 16],
    a: usize,
    b: usize,
    zeta: (__m256i, __m256i),
    p: &Prime,
) {
    for j in 0..2 {
        let (mut x, mut y) = (t[2 * a + j], t[2 * b + j]);
        // SAFETY: AVX2 is present (caller contract).
        unsafe {
            if INVERSE {
                gs(&mut x, &mut y, zeta, p);
            } else {
                ct(&mut x, &mut y, zeta, p);
            }
        }
        (t[2 * a + j], t[2 * b + j]) = (x, y);
    }
}

/// Forward layers 1–3: register 2m + j holds block m of parity j (layer 1 pairs blocks m and
/// m + 4, layer 2 m and m + 2, layer 3 m and m + 1), both parities step by step.
#[inline(always)]
unsafe fn forward_layers_1_to_3(t: &mut [__m256i; 16], p: &Prime) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let z = splat(p.fwd[1]);
        for m in 0..4 {
            butterfly_both::<false>(t, m, m + 4, z, p);
        }
        let z = splat(p.fwd[2]);
        butterfly_both::<false>(t, 0, 2, z, p);
        butterfly_both::<false>(t, 1, 3, z, p);
        let z = splat(p.fwd[3]);
        butterfly_both::<false>(t, 4, 6, z, p);
        butterfly_both::<false>(t, 5, 7, z, p);
        for m in 0..4 {
            butterfly_both::<false>(t, 2 * m, 2 * m + 1, splat(p.fwd[4 + m]), p);
        }
    }
}

/// Forward layers 4–6 on registers 2h, 2h + 1 (`barrett` after layer 4, bound 3): (X, Y) of the
/// layout.
#[inline(always)]
unsafe fn forward_pair(a: __m256i, b: __m256i, h: usize, p: &Prime) -> (__m256i, __m256i) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let (mut a, mut b) = (a, b);
        ct(&mut a, &mut b, splat(p.fwd[8 + h]), p);
        // Only the halves that layer 5 adds to are reduced: the others go into `fqmul`, whose
        // output bound 1 gives for any input in `i16` (bound 3).
        let mut x = barrett(_mm256_permute2x128_si256::<0x20>(a, b), p);
        let mut y = _mm256_permute2x128_si256::<0x31>(a, b);
        ct(&mut x, &mut y, load_lanes(&p.fwd5[h]), p);
        let mut lo = _mm256_unpacklo_epi64(x, y);
        let mut hi = _mm256_unpackhi_epi64(x, y);
        ct(&mut lo, &mut hi, load_lanes(&p.fwd6[h]), p);
        (lo, hi)
    }
}

/// The forward transform of the sixteen registers `t` mod `p`: layers 1–3 in place in `t`, then
/// layers 4–6 per register pair h (2h, 2h + 1), whose (X, Y) go to `each_pair(h, X, Y)` (stored,
/// or used at once by the base multiplication). Called only from the `#[target_feature]` entry
/// points, whose closures are compiled with AVX2.
#[inline(always)]
unsafe fn forward(
    t: &mut [__m256i; 16],
    p: &Prime,
    mut each_pair: impl FnMut(usize, __m256i, __m256i),
) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe { forward_layers_1_to_3(t, p) };
    // Four pairs at a time, written out: four independent chains of dependent multiplies in
    // flight (an array filled in a loop here was spilled; BENCHMARKS.md, issue 18).
    for h in (0..8).step_by(4) {
        // SAFETY: AVX2 is present (caller contract).
        let (x0, y0) = unsafe { forward_pair(t[2 * h], t[2 * h + 1], h, p) };
        let (x1, y1) = unsafe { forward_pair(t[2 * h + 2], t[2 * h + 3], h + 1, p) };
        let (x2, y2) = unsafe { forward_pair(t[2 * h + 4], t[2 * h + 5], h + 2, p) };
        let (x3, y3) = unsafe { forward_pair(t[2 * h + 6], t[2 * h + 7], h + 3, p) };
        each_pair(h, x0, y0);
        each_pair(h + 1, x1, y1);
        each_pair(h + 2, x2, y2);
        each_pair(h + 3, x3, y3);
    }
}

/// Inverse of [`forward_pair`] from reduced NTT-domain registers, and layer 4; outputs below
/// 3985 in magnitude (reduced again after layer 4).
#[inline(always)]
unsafe fn inverse_pair(x: __m256i, y: __m256i, h: usize, p: &Prime) -> (__m256i, __m256i) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let (mut x, mut y) = (barrett(x, p), barrett(y, p));
        gs(&mut x, &mut y, load_lanes(&p.inv6[h]), p);
        let mut lo = _mm256_unpacklo_epi64(x, y);
        let mut hi = _mm256_unpackhi_epi64(x, y);
        gs(&mut lo, &mut hi, load_lanes(&p.inv5[h]), p);
        let mut a = _mm256_permute2x128_si256::<0x20>(lo, hi);
        let mut b = _mm256_permute2x128_si256::<0x31>(lo, hi);
        gs(&mut a, &mut b, splat(p.inv[8 + h]), p);
        (barrett(a, p), barrett(b, p))
    }
}

/// Inverse layers 3–1 on both parities step by step (the layout of [`forward_layers_1_to_3`]),
/// the last fused with the scaling by R²/64; outputs at most 5953 in magnitude (bound 1).
#[inline(always)]
unsafe fn inverse_layers_3_to_1(t: &mut [__m256i; 16], p: &Prime) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        for m in 0..4 {
            butterfly_both::<true>(t, 2 * m, 2 * m + 1, splat(p.inv[4 + m]), p);
        }
        let z = splat(p.inv[2]);
        butterfly_both::<true>(t, 0, 2, z, p);
        butterfly_both::<true>(t, 1, 3, z, p);
        let z = splat(p.inv[3]);
        butterfly_both::<true>(t, 4, 6, z, p);
        butterfly_both::<true>(t, 5, 7, z, p);
        let (scale, scale_inv1) = (splat(p.scale), splat(p.scale_inv1));
        for r in 0..8 {
            let (x, y) = (t[r], t[r + 8]);
            let d = _mm256_sub_epi16(x, y);
            t[r] = fqmul(_mm256_add_epi16(x, y), scale, p);
            t[r + 8] = fqmul(d, scale_inv1, p);
        }
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

// Vector `v` of the storage arrays (module docs: the indices).

#[inline(always)]
unsafe fn load_i32(src: &[i32], v: usize) -> __m256i {
    let src = &src[8 * v..][..8];
    // SAFETY: AVX2 is present (caller contract); `src` holds 32 bytes (checked above).
    unsafe { _mm256_loadu_si256(src.as_ptr().cast()) }
}

#[inline(always)]
unsafe fn store_i32(dst: &mut [i32], v: usize, x: __m256i) {
    let dst = &mut dst[8 * v..][..8];
    // SAFETY: AVX2 is present (caller contract); `dst` holds 32 bytes (checked above).
    unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), x) }
}

#[inline(always)]
unsafe fn load_i64(src: &[i64], v: usize) -> __m256i {
    let src = &src[4 * v..][..4];
    // SAFETY: AVX2 is present (caller contract); `src` holds 32 bytes (checked above).
    unsafe { _mm256_loadu_si256(src.as_ptr().cast()) }
}

#[inline(always)]
unsafe fn store_i64(dst: &mut [i64], v: usize, x: __m256i) {
    let dst = &mut dst[4 * v..][..4];
    // SAFETY: AVX2 is present (caller contract); `dst` holds 32 bytes (checked above).
    unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), x) }
}

/// The centred public polynomial (bit 12 sign-extended, the scalar `poly::centred`). Read afresh
/// at every call (`black_box` on the reference): called once per prime, its loads hoisted out of
/// the callers' two-prime loops kept their sign extensions as 32-bit lanes, narrowed again inside
/// them.
#[inline(always)]
unsafe fn load_public(a: &Poly) -> [__m256i; 16] {
    let a = core::hint::black_box(a);
    // A loop, not `array::from_fn`: a closure passed to a generic function is compiled without
    // this function's target features, and its intrinsics become calls.
    // SAFETY: AVX2 is present (caller contract).
    let mut t = unsafe { [_mm256_setzero_si256(); 16] };
    for (r, v) in t.iter_mut().enumerate() {
        let chunk = &a.coeffs[16 * r..][..16];
        // SAFETY: AVX2 is present (caller contract); `chunk` holds sixteen u16 (checked above).
        unsafe {
            let x = _mm256_loadu_si256(chunk.as_ptr().cast());
            *v = _mm256_srai_epi16::<3>(_mm256_slli_epi16::<3>(x));
        }
    }
    t
}

/// The secret polynomial, widened to `i16`, into `t` (in place: `t` is wiped after use). Read
/// afresh at every call, as [`load_public`].
#[inline(always)]
unsafe fn load_secret(s: &SecretPoly, t: &mut [__m256i; 16]) {
    let s = core::hint::black_box(s);
    for (r, v) in t.iter_mut().enumerate() {
        let chunk = &s.coeffs[16 * r..][..16];
        // SAFETY: AVX2 is present (caller contract); `chunk` holds sixteen i8 (checked above).
        *v = unsafe { _mm256_cvtepi8_epi16(_mm_loadu_si128(chunk.as_ptr().cast())) };
    }
}

/// `acc += â ∘ ŝ` for one NTT-domain register (`x`, four blocks) against its four prepared
/// vectors `pairs`, into accumulator vectors `acc_vector`, `acc_vector + 1`.
#[inline(always)]
unsafe fn basemul(acc: &mut [i64; N], acc_vector: usize, pairs: [__m256i; 4], x: __m256i) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        // (a₀, a₁) and (a₂, a₃) of the even blocks, then of the odd ones, broadcast per block.
        let even = _mm256_add_epi32(
            _mm256_madd_epi16(_mm256_shuffle_epi32::<0x00>(x), pairs[0]),
            _mm256_madd_epi16(_mm256_shuffle_epi32::<0x55>(x), pairs[1]),
        );
        let odd = _mm256_add_epi32(
            _mm256_madd_epi16(_mm256_shuffle_epi32::<0xAA>(x), pairs[2]),
            _mm256_madd_epi16(_mm256_shuffle_epi32::<0xFF>(x), pairs[3]),
        );
        let sums = load_i64(acc, acc_vector);
        store_i64(acc, acc_vector, _mm256_add_epi32(sums, even));
        let sums = load_i64(acc, acc_vector + 1);
        store_i64(acc, acc_vector + 1, _mm256_add_epi32(sums, odd));
    }
}

/// [`basemul`] of register pair h of prime `p_index` (X and Y, module docs: the indices).
#[inline(always)]
unsafe fn basemul_pair(
    acc: &mut [i64; N],
    prepared: &[i32; 4 * N],
    p_index: usize,
    h: usize,
    (x, y): (__m256i, __m256i),
) {
    let (acc_vector, prepared_vector) = (32 * p_index + 4 * h, 64 * p_index + 8 * h);
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        basemul(acc, acc_vector, load_vectors(prepared, prepared_vector), x);
        basemul(
            acc,
            acc_vector + 2,
            load_vectors(prepared, prepared_vector + 4),
            y,
        );
    }
}

/// Prepared vectors `v..v + 4`.
#[inline(always)]
unsafe fn load_vectors(prepared: &[i32; 4 * N], v: usize) -> [__m256i; 4] {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        [
            load_i32(prepared, v),
            load_i32(prepared, v + 1),
            load_i32(prepared, v + 2),
            load_i32(prepared, v + 3),
        ]
    }
}

/// The `vpshufb` masks that turn a register's (ζb ‖ b) blocks into its prepared vectors: the
/// pairs (T[4 + k], T[3 + k]) and (T[2 + k], T[1 + k]), k = 0..3, as byte indices into each
/// 128-bit (ζb ‖ b).
#[inline(always)]
unsafe fn column_shuffles() -> (__m256i, __m256i) {
    const PAIRS_01: [i8; 16] = [8, 9, 6, 7, 10, 11, 8, 9, 12, 13, 10, 11, 14, 15, 12, 13];
    const PAIRS_23: [i8; 16] = [4, 5, 2, 3, 6, 7, 4, 5, 8, 9, 6, 7, 10, 11, 8, 9];
    // SAFETY: AVX2 is present (caller contract); both arrays hold 16 bytes.
    unsafe {
        let shuffle =
            |bytes: &[i8; 16]| _mm256_broadcastsi128_si256(_mm_loadu_si128(bytes.as_ptr().cast()));
        (shuffle(&PAIRS_01), shuffle(&PAIRS_23))
    }
}

/// One NTT-domain register `b` of a secret (its blocks' roots `roots`) as (ζb ‖ b) per block:
/// the even blocks, then the odd ones (bound 4: |b| <= 3985, |ζb| <= 4210; no centring needed).
#[inline(always)]
unsafe fn secret_blocks(b: __m256i, roots: &Lanes, p: &Prime) -> (__m256i, __m256i) {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        let b = barrett(b, p);
        let zb = fqmul(b, load_lanes(roots), p);
        (_mm256_unpacklo_epi64(zb, b), _mm256_unpackhi_epi64(zb, b))
    }
}

/// The four prepared vectors of a register from its [`secret_blocks`].
#[inline(always)]
unsafe fn prepared_vectors(
    (even, odd): (__m256i, __m256i),
    (pairs_01, pairs_23): (__m256i, __m256i),
) -> [__m256i; 4] {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        [
            _mm256_shuffle_epi8(even, pairs_01),
            _mm256_shuffle_epi8(even, pairs_23),
            _mm256_shuffle_epi8(odd, pairs_01),
            _mm256_shuffle_epi8(odd, pairs_23),
        ]
    }
}

/// Montgomery reduction of two accumulator vectors (even and odd blocks) into one register of
/// the NTT-domain layout.
#[inline(always)]
unsafe fn reduce_sums(acc: &[i64; N], acc_vector: usize, p: &Prime) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        // Per 32-bit lane: m = (low half)·q^(−1) mod 2^16 with a zero high half, m·q by
        // `vpmaddwd`, then (x − m·q)/2^16.
        let qinv = _mm256_set1_epi32(p.qinv as u16 as i32);
        let q = _mm256_set1_epi32(p.q as i32);
        let reduce = |x: __m256i| {
            let m = _mm256_mullo_epi16(x, qinv);
            _mm256_srai_epi32::<16>(_mm256_sub_epi32(x, _mm256_madd_epi16(m, q)))
        };
        let even = reduce(load_i64(acc, acc_vector));
        let odd = reduce(load_i64(acc, acc_vector + 1));
        // Per 128 bits: the even block's four results, then the odd block's (exact: |r| < 2^15).
        _mm256_packs_epi32(even, odd)
    }
}

// ---------------------------------------------------------------------------------------------
// Entry points.

/// `out` must point to 1,024 writable `i32`s (all written once).
#[target_feature(enable = "avx2")]
unsafe fn prepare_avx2(s: &SecretPoly, out: *mut i32) {
    // SAFETY: this function runs only on AVX2 CPUs (its caller holds an `Avx2Token`).
    unsafe {
        let shuffles = column_shuffles();
        let mut t = [_mm256_setzero_si256(); 16];
        for (p_index, p) in [&P0, &P1].into_iter().enumerate() {
            load_secret(s, &mut t);
            forward(&mut t, p, |h, x, y| {
                for (half, b, roots) in [(0, x, &p.fwd6[h]), (1, y, &p.roots_odd[h])] {
                    let vectors = prepared_vectors(secret_blocks(b, roots, p), shuffles);
                    // Vectors 64p + 8h + 4·half + 0..4: below 128, each written once.
                    let base = 64 * p_index + 8 * h + 4 * half;
                    for (j, v) in vectors.into_iter().enumerate() {
                        _mm256_storeu_si256(out.add(8 * (base + j)).cast(), v);
                    }
                }
            });
        }
        // Wipe the secret's partial transform (layers 1–3) from the stack.
        wipe(&mut t);
    }
}

/// `acc += a·s` for a secret used in this product only: per prime, the secret's transform kept
/// as its (ζb ‖ b) blocks (1 KiB of this frame, shuffled into the prepared vectors at use), then
/// the public transform multiplied against it. No 4 KiB image is written, read and wiped.
#[target_feature(enable = "avx2")]
unsafe fn mul_acc_once_avx2(acc: &mut [i64; N], a: &Poly, s: &SecretPoly) {
    // Register pair h's blocks at 4h + 2·(Y) + (0: even, 1: odd). Not zero-filled: each prime's
    // secret transform writes all 32 before its public transform reads any.
    let mut blocks = MaybeUninit::<[__m256i; 32]>::uninit();
    let blocks: *mut __m256i = blocks.as_mut_ptr().cast();
    // SAFETY: this function runs only on AVX2 CPUs (its caller holds an `Avx2Token`); `blocks`
    // is 32 vectors of this frame, accessed at indices 4h + 0..4 (h < 8), each written (by the
    // first `forward`, which calls its closure for every h) before it is read.
    unsafe {
        let shuffles = column_shuffles();
        let mut t = [_mm256_setzero_si256(); 16];
        for (p_index, p) in [&P0, &P1].into_iter().enumerate() {
            load_secret(s, &mut t);
            forward(&mut t, p, |h, x, y| {
                let (even, odd) = secret_blocks(x, &p.fwd6[h], p);
                blocks.add(4 * h).write(even);
                blocks.add(4 * h + 1).write(odd);
                let (even, odd) = secret_blocks(y, &p.roots_odd[h], p);
                blocks.add(4 * h + 2).write(even);
                blocks.add(4 * h + 3).write(odd);
            });
            forward(&mut load_public(a), p, |h, x, y| {
                let acc_vector = 32 * p_index + 4 * h;
                for (half, v) in [(0, x), (1, y)] {
                    let at = 4 * h + 2 * half;
                    let b = (blocks.add(at).read(), blocks.add(at + 1).read());
                    basemul(acc, acc_vector + 2 * half, prepared_vectors(b, shuffles), v);
                }
            });
        }
        // The secret's transforms, partial and whole.
        wipe(&mut t);
        for i in 0..32 {
            core::ptr::write_volatile(blocks.add(i), _mm256_setzero_si256());
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn mul_acc_avx2(acc: &mut [i64; N], a: &Poly, prepared: &[i32; 4 * N]) {
    // SAFETY: this function runs only on AVX2 CPUs (its caller holds an `Avx2Token`).
    unsafe {
        for (p_index, p) in [&P0, &P1].into_iter().enumerate() {
            // Fused: the base multiplication reads the registers, â is never stored.
            forward(&mut load_public(a), p, |h, x, y| {
                basemul_pair(acc, prepared, p_index, h, (x, y));
            });
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn public_to_domain_avx2(a: &Poly, out: &mut [i32; N]) {
    // SAFETY: this function runs only on AVX2 CPUs (its caller holds an `Avx2Token`).
    unsafe {
        for (p_index, p) in [&P0, &P1].into_iter().enumerate() {
            forward(&mut load_public(a), p, |h, x, y| {
                store_i32(out, 16 * p_index + 2 * h, x);
                store_i32(out, 16 * p_index + 2 * h + 1, y);
            });
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn basemul_acc_avx2(acc: &mut [i64; N], a_hat: &[i32; N], prepared: &[i32; 4 * N]) {
    // SAFETY: this function runs only on AVX2 CPUs (its caller holds an `Avx2Token`).
    unsafe {
        for p_index in 0..2 {
            for h in 0..8 {
                let x = load_i32(a_hat, 16 * p_index + 2 * h);
                let y = load_i32(a_hat, 16 * p_index + 2 * h + 1);
                basemul_pair(acc, prepared, p_index, h, (x, y));
            }
        }
    }
}

/// Writes the finished sum into `out`, which also holds the residues mod p₀ in between, and
/// wipes `acc` as it reads it.
#[target_feature(enable = "avx2")]
unsafe fn finish_avx2(acc: &mut [i64; N], out: &mut Poly) {
    // SAFETY: this function runs only on AVX2 CPUs (its caller holds an `Avx2Token`).
    unsafe {
        // The prime being inverted.
        let mut t = [_mm256_setzero_si256(); 16];
        // Written out, not a loop over the primes: the loop stayed one, and the second prime's
        // work did not overlap the first's (BENCHMARKS.md, issue 18).
        finish_prime::<0>(acc, &mut t, out);
        finish_prime::<1>(acc, &mut t, out);
        // The accumulated sums are secret-derived: wipe their transforms from the stack.
        wipe(&mut t);
    }
    // The zeros `finish_prime` stored are the wipe: kept though nothing reads them.
    zeroize::optimization_barrier(acc);
}

/// Prime `P_INDEX`'s part of [`finish_avx2`]: its inverse transform in `t`, then its residues
/// kept in `out` (prime 0) or joined with those by the CRT (prime 1).
#[inline(always)]
unsafe fn finish_prime<const P_INDEX: usize>(
    acc: &mut [i64; N],
    t: &mut [__m256i; 16],
    out: &mut Poly,
) {
    let p = if P_INDEX == 0 { &P0 } else { &P1 };
    // SAFETY: AVX2 is present (caller contract).
    unsafe {
        // Four pairs at a time, as in `forward`.
        for h in (0..8).step_by(4) {
            let base = 32 * P_INDEX + 4 * h;
            let (x0, y0) = (reduce_sums(acc, base, p), reduce_sums(acc, base + 2, p));
            let (x1, y1) = (reduce_sums(acc, base + 4, p), reduce_sums(acc, base + 6, p));
            let (x2, y2) = (
                reduce_sums(acc, base + 8, p),
                reduce_sums(acc, base + 10, p),
            );
            let (x3, y3) = (
                reduce_sums(acc, base + 12, p),
                reduce_sums(acc, base + 14, p),
            );
            (t[2 * h], t[2 * h + 1]) = inverse_pair(x0, y0, h, p);
            (t[2 * h + 2], t[2 * h + 3]) = inverse_pair(x1, y1, h + 1, p);
            (t[2 * h + 4], t[2 * h + 5]) = inverse_pair(x2, y2, h + 2, p);
            (t[2 * h + 6], t[2 * h + 7]) = inverse_pair(x3, y3, h + 3, p);
            // Wiped as read (the accumulator's contract), not in a pass of its own.
            for v in base..base + 16 {
                store_i64(acc, v, _mm256_setzero_si256());
            }
        }
        inverse_layers_3_to_1(t, p);
        for (r, &x) in t.iter().enumerate() {
            let dst = &mut out.coeffs[16 * r..][..16];
            if P_INDEX == 0 {
                // r₀, a residue mod p₀ (not centred: bound 6), kept in `out` until the CRT.
                _mm256_storeu_si256(dst.as_mut_ptr().cast(), x);
                continue;
            }
            // CRT: t = (r₁ − r₀)·p₀^(−1) mod p₁, x = r₀ + p₀·t (mod 2^16; bound 6).
            let r0 = _mm256_loadu_si256(dst.as_ptr().cast());
            let lift = fqmul(_mm256_sub_epi16(x, r0), splat(CRT), p);
            let x = _mm256_add_epi16(
                r0,
                _mm256_mullo_epi16(lift, _mm256_set1_epi16(PRIMES[0] as i16)),
            );
            _mm256_storeu_si256(dst.as_mut_ptr().cast(), x);
        }
    }
}

/// AVX2 `prepare`: the secret mod both primes (this path's layout, module docs).
pub(crate) fn prepare(_token: Avx2Token, s: &SecretPoly) -> [i32; 4 * N] {
    // Not zero-filled first: the 4 KiB fill was a measurable share of `prepare`.
    let mut out = MaybeUninit::<[i32; 4 * N]>::uninit();
    // SAFETY: the token proves AVX2 is present; `prepare_avx2` writes all 1,024 entries (128
    // vectors of eight), so `out` is initialised.
    unsafe {
        prepare_avx2(s, out.as_mut_ptr().cast());
        out.assume_init()
    }
}

/// [`prepare`] into `out`, in place: no copy of the secret's image is made (and left unwiped).
pub(crate) fn prepare_into(_token: Avx2Token, s: &SecretPoly, out: &mut [i32; 4 * N]) {
    // SAFETY: the token proves AVX2 is present; `out` holds the 1,024 entries `prepare_avx2`
    // writes.
    unsafe { prepare_avx2(s, out.as_mut_ptr()) }
}

/// AVX2 `mul_acc_once`: `acc += a·s` without the prepared secret.
pub(crate) fn mul_acc_once(_token: Avx2Token, acc: &mut [i64; N], a: &Poly, s: &SecretPoly) {
    // SAFETY: the token proves AVX2 is present.
    unsafe { mul_acc_once_avx2(acc, a, s) }
}

/// AVX2 `mul_acc` into this path's accumulator layout.
pub(crate) fn mul_acc(_token: Avx2Token, acc: &mut [i64; N], a: &Poly, prepared: &[i32; 4 * N]) {
    // SAFETY: the token proves AVX2 is present.
    unsafe { mul_acc_avx2(acc, a, prepared) }
}

/// AVX2 forward transform of a public polynomial, mod both primes.
pub(crate) fn public_to_domain(_token: Avx2Token, a: &Poly, out: &mut [i32; N]) {
    // SAFETY: the token proves AVX2 is present.
    unsafe { public_to_domain_avx2(a, out) }
}

/// AVX2 base multiplication of an NTT-domain public polynomial.
pub(crate) fn basemul_acc(
    _token: Avx2Token,
    acc: &mut [i64; N],
    a_hat: &[i32; N],
    prepared: &[i32; 4 * N],
) {
    // SAFETY: the token proves AVX2 is present.
    unsafe { basemul_acc_avx2(acc, a_hat, prepared) }
}

/// AVX2 `finish` into `out` (same output as the scalar one, bit for bit), `acc` left wiped.
pub(crate) fn finish_into(_token: Avx2Token, acc: &mut [i64; N], out: &mut Poly) {
    // SAFETY: the token proves AVX2 is present.
    unsafe { finish_avx2(acc, out) }
}
