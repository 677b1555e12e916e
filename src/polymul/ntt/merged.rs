//! NTT kernels for cores without SIMD (32-bit microcontrollers): layers merged three at a time
//! (each coefficient is loaded and stored twice per transform), and constant multiplications by
//! precomputed quotients (Shoup's method, "Barrett multiplication" in Becker et al., "Neon NTT",
//! TCHES 2022(1), §3): `ω·a mod q'` is `ω·a − q'·⌊a·ω'/2^32⌋` with ω' = ⌊ω·2^32/q'⌉, three
//! instructions on a Cortex-M4 (`smmul`, `mul`, `mls`) and four on RV32IM (`mulh`, `mul`, `mul`,
//! `sub`).
//!
//! Same prime, same transform and same NTT-domain order as [`super::scalar`] (a 6-layer
//! negacyclic NTT into 64 blocks mod x^4 ∓ ζ over q' = 41,944,577); only the arithmetic and the
//! loop structure differ, so the exactness argument of [`super`] carries over with the bounds
//! below.
//!
//! # Bounds
//!
//! 1. **Constant multiplication.** With ω' = ⌊ω·2^32/q'⌉ and a·ω'/2^32 = a·ω/q' + a·e,
//!    |e| <= 2^(−33), the result is q'·(frac(a·ω'/2^32) − a·e): in [−|a|·q'/2^33, q' +
//!    |a|·q'/2^33), for any |a| < 2^31 within (−q'/4, 1.25·q'), whatever the size of a. Below,
//!    |a| <= k·q' gives (−0.0049·k·q', (1 + 0.0049·k)·q') (q'/2^33 < 0.0049).
//! 2. **Forward.** A layer adds the product of (1) to the magnitude: from |a| <= 4096, the six
//!    layers add less than (1 + 0.0049·k)·q' each for the running bound k·q', so |â| < 6.1·q'.
//! 3. **Prepared secret** ([`NttMerged`]). A multiplication by 1 (a Barrett reduction, (1))
//!    brings each coefficient into (−0.03·q', 1.03·q'); the ζ-multiples of the unreduced
//!    coefficients lie in the same range. Secret quarters ([`NttLowStack`]): below 11.7·q' (see
//!    [`secret_quarter`]), their ζ-multiples below 1.06·q'.
//! 4. **Base multiplication.** A 4-term dot product is at most 4 · 6.1·q' · 1.03·q' < 25.2·q'^2
//!    ([`NttMerged`]) or 4 · 6.1 · 11.7·q'^2 < 285.5·q'^2 ([`NttLowStack`]), below 2^63 in
//!    `i64`; its Montgomery reduction (R = 2^32) is at most |x|/2^32 + q'/2 (q'/2^32 <
//!    0.00977): below 0.75·q', four accumulated products below 3·q'; or below 3.3·q'.
//! 5. **Inverse**, for inputs below 4·q'. Gentleman–Sande butterflies double the sums per layer:
//!    the first three layers give at most 32·q' = 1,342,226,464 < 2^31. Between the two halves
//!    every coefficient is multiplied by 2^32/2^6 mod q' ((1): within (−0.16·q', 1.16·q')),
//!    which removes the 2^(−32) of (4) and the 2^6 of the butterflies; the last three layers
//!    then give at most 8 · 1.16·q' < 9.3·q'. A final multiplication by 1 ((1): within
//!    (−0.05·q', 1.05·q')) and one conditional subtraction of q' give the canonical centred
//!    residue, which is the exact coefficient (the bound proof of [`super`], step 1).

use super::params::{HALF_Q, Q, QINV, inverse_power_of_two, plain_twiddles};
use zeroize::Zeroize;

use crate::poly::{N, Poly, SecretPoly, centred};
use crate::polymul::PolyMul;

/// A constant multiplier with its precomputed quotient ⌊ω·2^32/q'⌉.
#[derive(Clone, Copy)]
struct Twiddle {
    omega: i32,
    quotient: i32,
}

#[allow(clippy::integer_division_remainder_used)] // compile time, public constants
const fn twiddle(omega: i32) -> Twiddle {
    let scaled = (omega as i64) << 32;
    let q = Q as i64;
    let quotient = if scaled >= 0 {
        (scaled + (q >> 1)) / q
    } else {
        -((-scaled + (q >> 1)) / q)
    };
    Twiddle {
        omega,
        quotient: quotient as i32,
    }
}

const fn twiddle_table(zetas: [i32; N]) -> [Twiddle; 64] {
    let mut out = [twiddle(0); 64];
    let mut i = 1;
    while i < 64 {
        out[i] = twiddle(zetas[i]);
        i += 1;
    }
    out
}

/// Forward twiddles, indexed as [`super::params::Params::ZETAS`] (plain residues).
const FORWARD: [Twiddle; 64] = twiddle_table(plain_twiddles(6, false));
/// Inverse twiddles, same indexing.
const INVERSE: [Twiddle; 64] = twiddle_table(plain_twiddles(6, true));
/// The multiplier between the two halves of the inverse: 2^32 · 2^(−6) mod q'.
const MIDDLE_SCALE: Twiddle = twiddle(middle_scale());
/// Multiplication by one: a Barrett reduction into (−0.01·q', 1.04·q').
const ONE: Twiddle = twiddle(1);
/// −q'^(−1) mod 2^32, for Montgomery reductions of the form (x + m·q')/2^32.
const NEG_QINV: i32 = QINV.wrapping_neg();

#[allow(clippy::integer_division_remainder_used)] // compile time, public constants
const fn middle_scale() -> i32 {
    let q = Q as i64;
    let two_32 = (1i64 << 32) % q;
    let inv = inverse_power_of_two(6) as i64;
    let x = (two_32 * inv).rem_euclid(q);
    (if x > (q - 1) / 2 { x - q } else { x }) as i32
}

/// `table`, hidden from the optimiser: with the constants in view LLVM rebuilds each one from
/// two immediates at every use and computes `mulh` by a known non-negative constant as `umull`
/// plus a sign fix-up (Cortex-M4), where a table load and one `smmul` suffice.
#[inline(always)]
fn opaque<T>(table: &T) -> &T {
    core::hint::black_box(table)
}

/// ω·a mod q', in (−|a|·q'/2^33, q' + |a|·q'/2^33) (bound 1 of the module docs).
#[inline(always)]
fn mul_const(a: i32, t: Twiddle) -> i32 {
    let estimate = ((i64::from(a) * i64::from(t.quotient)) >> 32) as i32;
    a.wrapping_mul(t.omega)
        .wrapping_sub(estimate.wrapping_mul(Q))
}

/// Signed Montgomery reduction: (x + m·q')/2^32 ≡ x·2^(−32), at most |x|/2^32 + q'/2.
#[inline(always)]
fn montgomery(x: i64) -> i32 {
    let m = (x as i32).wrapping_mul(NEG_QINV);
    ((x + i64::from(m) * i64::from(Q)) >> 32) as i32
}

/// The canonical centred residue of x in (−q'/2, 1.5·q').
#[inline(always)]
fn centre(x: i32) -> i32 {
    x - (Q & ((HALF_Q - x) >> 31))
}

#[inline(always)]
fn ct(x: &mut [i32; 8], i: usize, j: usize, t: Twiddle) {
    let p = mul_const(x[j], t);
    x[j] = x[i] - p;
    x[i] += p;
}

#[inline(always)]
fn gs(x: &mut [i32; 8], i: usize, j: usize, t: Twiddle) {
    let (u, v) = (x[i], x[j]);
    x[i] = u + v;
    x[j] = mul_const(u - v, t);
}

/// Three Cooley–Tukey layers on eight coefficients x_k = a_(base + k·stride) of one group:
/// `first` is the twiddle of the first layer, then 2 and 4 consecutive ones.
#[inline(always)]
fn forward_three(x: &mut [i32; 8], tw: &[Twiddle; 64], first: usize, second: usize, third: usize) {
    for k in 0..4 {
        ct(x, k, k + 4, tw[first]);
    }
    for k in 0..2 {
        ct(x, k, k + 2, tw[second]);
        ct(x, k + 4, k + 6, tw[second + 1]);
    }
    for k in 0..4 {
        ct(x, 2 * k, 2 * k + 1, tw[third + k]);
    }
}

/// The inverse of [`forward_three`] up to a factor 8 (Gentleman–Sande, same twiddle indices).
#[inline(always)]
fn inverse_three(x: &mut [i32; 8], tw: &[Twiddle; 64], first: usize, second: usize, third: usize) {
    for k in 0..4 {
        gs(x, 2 * k, 2 * k + 1, tw[third + k]);
    }
    for k in 0..2 {
        gs(x, k, k + 2, tw[second]);
        gs(x, k + 4, k + 6, tw[second + 1]);
    }
    for k in 0..4 {
        gs(x, k, k + 4, tw[first]);
    }
}

/// Forward 6-layer NTT of the coefficients `input(k)` (|input| <= 4096) into `out`, natural
/// order: block b (mod x^4 − [`block_zeta`]`(b)`) at `out[4b..4b + 4]`.
#[inline(always)]
fn forward(input: impl Fn(usize) -> i32, out: &mut [i32; N]) {
    let tw = opaque(&FORWARD);
    // Layers 1–3: 32 columns of eight coefficients at stride 32.
    for j in 0..32 {
        let mut x: [i32; 8] = core::array::from_fn(|k| input(j + 32 * k));
        forward_three(&mut x, tw, 1, 2, 4);
        for (k, &v) in x.iter().enumerate() {
            out[j + 32 * k] = v;
        }
    }
    // Layers 4–6: in each of the 8 groups of 32, four columns at stride 4.
    for (g, group) in out.chunks_exact_mut(32).enumerate() {
        for j in 0..4 {
            let mut x: [i32; 8] = core::array::from_fn(|k| group[j + 4 * k]);
            forward_three(&mut x, tw, 8 + g, 16 + 2 * g, 32 + 4 * g);
            for (k, &v) in x.iter().enumerate() {
                group[j + 4 * k] = v;
            }
        }
    }
}

/// Inverse of [`forward`] for NTT-domain values below 4·q', scaled by 2^32 (undoing a
/// Montgomery reduction): hands `output(k, c)` the exact centred coefficient c.
#[inline(always)]
fn inverse(a: &mut [i32; N], mut output: impl FnMut(usize, i32)) {
    let tw = opaque(&INVERSE);
    let (middle, one) = *opaque(&(MIDDLE_SCALE, ONE));
    for (g, group) in a.chunks_exact_mut(32).enumerate() {
        for j in 0..4 {
            let mut x: [i32; 8] = core::array::from_fn(|k| group[j + 4 * k]);
            inverse_three(&mut x, tw, 8 + g, 16 + 2 * g, 32 + 4 * g);
            for (k, &v) in x.iter().enumerate() {
                group[j + 4 * k] = mul_const(v, middle);
            }
        }
    }
    for j in 0..32 {
        let mut x: [i32; 8] = core::array::from_fn(|k| a[j + 32 * k]);
        inverse_three(&mut x, tw, 1, 2, 4);
        for (k, &v) in x.iter().enumerate() {
            output(j + 32 * k, centre(mul_const(v, one)));
        }
    }
}

/// The modulus ζ of block b (x^4 − ζ): the last layer's twiddle of group b/2, negated for odd b.
const fn block_zeta(block: usize) -> i32 {
    let zeta = plain_twiddles(6, false)[32 + (block >> 1)];
    if block & 1 == 0 { zeta } else { -zeta }
}

const BLOCK_ZETAS: [Twiddle; 64] = {
    let mut out = [twiddle(0); 64];
    let mut b = 0;
    while b < 64 {
        out[b] = twiddle(block_zeta(b));
        b += 1;
    }
    out
};

/// Entries per block of a prepared secret: b_0..b_3 and ζ·b_1, ζ·b_2, ζ·b_3.
pub(crate) const PREPARED_PER_BLOCK: usize = 7;

/// The forward transform of a secret and its ζ-multiples, per block (bounds 2 and 3).
pub(crate) fn prepare(s: &SecretPoly, out: &mut [i32; PREPARED_PER_BLOCK * 64]) {
    let mut t = [0i32; N];
    forward(|k| i32::from(s.coeffs[k]), &mut t);
    let (zetas, one) = (opaque(&BLOCK_ZETAS), *opaque(&ONE));
    for ((block, b), p) in t
        .chunks_exact(4)
        .enumerate()
        .zip(out.chunks_exact_mut(PREPARED_PER_BLOCK))
    {
        let zeta = zetas[block];
        for k in 0..4 {
            p[k] = mul_const(b[k], one);
        }
        for k in 1..4 {
            p[3 + k] = mul_const(b[k], zeta);
        }
    }
    t.as_mut_slice().zeroize();
}

/// The product of block `a` with a prepared block, Montgomery-reduced (bound 4).
#[inline(always)]
fn base_product(a: &[i32], p: &[i32]) -> [i32; 4] {
    let w = |x: i32, y: i32| i64::from(x) * i64::from(y);
    let (a0, a1, a2, a3) = (a[0], a[1], a[2], a[3]);
    let (b0, b1, b2, b3, z1, z2, z3) = (p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
    [
        montgomery(w(a0, b0) + w(a1, z3) + w(a2, z2) + w(a3, z1)),
        montgomery(w(a0, b1) + w(a1, b0) + w(a2, z3) + w(a3, z2)),
        montgomery(w(a0, b2) + w(a1, b1) + w(a2, b0) + w(a3, z3)),
        montgomery(w(a0, b3) + w(a1, b2) + w(a2, b1) + w(a3, b0)),
    ]
}

/// `acc += NTT(a) ∘ prepared` in the NTT domain (a centred from its 13 bits).
pub(crate) fn mul_acc(acc: &mut [i32; N], a: &Poly, prepared: &[i32; PREPARED_PER_BLOCK * 64]) {
    let mut t = [0i32; N];
    forward(|k| centred(a.coeffs[k]), &mut t);
    for ((acc, a), p) in acc
        .chunks_exact_mut(4)
        .zip(t.chunks_exact(4))
        .zip(prepared.chunks_exact(PREPARED_PER_BLOCK))
    {
        let c = base_product(a, p);
        for k in 0..4 {
            acc[k] += c[k];
        }
    }
    // `a` is secret-derived in decapsulation's re-encryption.
    t.as_mut_slice().zeroize();
}

/// Leaves the NTT domain: the exact sum, wrapped to `u16`.
pub(crate) fn finish(acc: &[i32; N]) -> Poly {
    let mut t = *acc;
    let mut out = Poly::ZERO;
    inverse(&mut t, |k, c| out.coeffs[k] = c as u16);
    t.as_mut_slice().zeroize();
    out
}

/// The constants c_1, c_2, c_3 with which quarter Q of the transform after two layers is
/// s_j + c_1·s_(j+64) + c_2·s_(j+128) + c_3·s_(j+192): for Q = 2h + k, c_1 = ±ζ_(2+h) (− for
/// odd k), c_2 = ±ζ_1 (− for odd h), c_3 = c_1·c_2.
#[allow(clippy::integer_division_remainder_used)] // compile time, public constants
const QUARTER_COEFFS: [[i32; 3]; 4] = {
    let zetas = plain_twiddles(6, false);
    let q = Q as i64;
    let mut out = [[0; 3]; 4];
    let mut quarter = 0;
    while quarter < 4 {
        let (h, k) = (quarter >> 1, quarter & 1);
        let c1 = if k == 0 { zetas[2 + h] } else { -zetas[2 + h] } as i64;
        let c2 = if h == 0 { zetas[1] } else { -zetas[1] } as i64;
        let c3 = (c1 * c2).rem_euclid(q);
        let c3 = if c3 > (q - 1) / 2 { c3 - q } else { c3 };
        out[quarter] = [c1 as i32, c2 as i32, c3 as i32];
        quarter += 1;
    }
    out
};

/// Quarter `quarter` of the forward transform of a secret (its blocks 16Q..16Q + 16), from the
/// secret directly: the first two layers as one exact combination with constants (|s| <= 5, so
/// each product is an exact `i32`: |c·s| <= 5·q'/2, the sum below 7.5·q'), then the remaining
/// four layers, each adding less than 1.06·q' (bound 1): |out| < 11.7·q'.
#[inline(always)]
fn secret_quarter(s: &SecretPoly, quarter: usize, out: &mut [i32; 64]) {
    let tw = opaque(&FORWARD);
    let [c1, c2, c3] = opaque(&QUARTER_COEFFS)[quarter];
    let s = |k: usize| i32::from(s.coeffs[k]);
    let combined = |j: usize| s(j) + c1 * s(j + 64) + c2 * s(j + 128) + c3 * s(j + 192);
    // Layer 3 (one group of 64 in this quarter) fused with the combination.
    for j in 0..32 {
        let (mut x, mut y) = (combined(j), combined(j + 32));
        let p = mul_const(y, tw[4 + quarter]);
        y = x - p;
        x += p;
        out[j] = x;
        out[j + 32] = y;
    }
    // Layers 4–6 in the quarter's two groups of 32.
    for (g, group) in out.chunks_exact_mut(32).enumerate() {
        let g = 2 * quarter + g;
        for j in 0..4 {
            let mut x: [i32; 8] = core::array::from_fn(|k| group[j + 4 * k]);
            forward_three(&mut x, tw, 8 + g, 16 + 2 * g, 32 + 4 * g);
            for (k, &v) in x.iter().enumerate() {
                group[j + 4 * k] = v;
            }
        }
    }
}

/// `acc += a · s`, finished at once: the transform of `a` (1 KiB), the secret's transform one
/// quarter at a time (256 B), the base products in place, the inverse added into `acc`.
/// Bounds 2–5 of the module docs: the base products are reduced to below 3.3·q'.
pub(crate) fn product_into(acc: &mut Poly, a: &Poly, s: &SecretPoly) {
    let mut w = [0i32; N];
    forward(|k| centred(a.coeffs[k]), &mut w);
    let mut quarter_hat = [0i32; 64];
    let zetas = opaque(&BLOCK_ZETAS);
    for (quarter, w_quarter) in w.chunks_exact_mut(64).enumerate() {
        secret_quarter(s, quarter, &mut quarter_hat);
        for (block, (a, b)) in w_quarter
            .chunks_exact_mut(4)
            .zip(quarter_hat.chunks_exact(4))
            .enumerate()
        {
            let zeta = zetas[16 * quarter + block];
            let p = [
                b[0],
                b[1],
                b[2],
                b[3],
                mul_const(b[1], zeta),
                mul_const(b[2], zeta),
                mul_const(b[3], zeta),
            ];
            let c = base_product(a, &p);
            a.copy_from_slice(&c);
        }
    }
    inverse(&mut w, |k, c| {
        acc.coeffs[k] = acc.coeffs[k].wrapping_add(c as u16);
    });
    w.as_mut_slice().zeroize();
    quarter_hat.as_mut_slice().zeroize();
}

/// A secret in the NTT domain for [`NttMerged`]: per block b_0..b_3 and ζ·b_1..ζ·b_3 (1,792 B).
/// Wiped by the caller (the [`PolyMul`] contract).
#[derive(Clone)]
pub struct MergedPrepared {
    blocks: [i32; PREPARED_PER_BLOCK * 64],
}

impl Zeroize for MergedPrepared {
    fn zeroize(&mut self) {
        self.blocks.as_mut_slice().zeroize();
    }
}

impl core::fmt::Debug for MergedPrepared {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("MergedPrepared(<redacted>)")
    }
}

/// A sum of up to four products in the NTT domain for [`NttMerged`]: reduced `i32`s (1 KiB).
#[derive(Clone)]
pub struct MergedAccumulator {
    sums: [i32; N],
}

impl Zeroize for MergedAccumulator {
    fn zeroize(&mut self) {
        self.sums.as_mut_slice().zeroize();
    }
}

impl core::fmt::Debug for MergedAccumulator {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("MergedAccumulator(<redacted>)")
    }
}

/// The NTT for cores without SIMD (see the module docs): NTT-domain accumulation like
/// [`super::NttScalar`], with merged layers and precomputed-quotient constant products.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NttMerged;

impl PolyMul for NttMerged {
    type Prepared = MergedPrepared;
    type Accumulator = MergedAccumulator;

    fn prepare(&mut self, s: &SecretPoly) -> MergedPrepared {
        let mut out = MergedPrepared {
            blocks: [0; PREPARED_PER_BLOCK * 64],
        };
        prepare(s, &mut out.blocks);
        out
    }

    fn accumulator(&mut self) -> MergedAccumulator {
        MergedAccumulator { sums: [0; N] }
    }

    fn mul_acc(&mut self, acc: &mut MergedAccumulator, a: &Poly, s: &MergedPrepared) {
        mul_acc(&mut acc.sums, a, &s.blocks);
    }

    fn finish(&mut self, acc: &MergedAccumulator) -> Poly {
        finish(&acc.sums)
    }

    fn name(&self) -> &'static str {
        "ntt-merged"
    }
}

/// The NTT with a small working set, for the low-memory mode on microcontrollers: each product
/// is finished inside `mul_acc` (forward transform of `a`, the secret's transform a quarter at
/// a time, base products in place, inverse transform added into a plain accumulator), so
/// `Prepared` is the secret itself (256 B), `Accumulator` the plain sum (512 B), and `mul_acc`
/// needs about 1.3 KiB. Costs an inverse transform and a secret transform per product.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NttLowStack;

impl PolyMul for NttLowStack {
    type Prepared = SecretPoly;
    type Accumulator = Poly;

    fn prepare(&mut self, s: &SecretPoly) -> SecretPoly {
        s.clone()
    }

    fn accumulator(&mut self) -> Poly {
        Poly::ZERO
    }

    fn mul_acc(&mut self, acc: &mut Poly, a: &Poly, s: &SecretPoly) {
        product_into(acc, a, s);
    }

    fn finish(&mut self, acc: &Poly) -> Poly {
        acc.clone()
    }

    fn name(&self) -> &'static str {
        "ntt-lowstack"
    }
}
