//! The kernels in portable Rust: every target, and the reference for the assembly ones.

use super::{
    BLOCK_ZETAS, FORWARD, GroupTwiddles, INVERSE, Kernels, NEG_QINV, Nibbles, PreparedBlocks,
    QUARTER_COEFFS, SCALES, Twiddle, as_groups, prepare_from_passes,
};
use zeroize::Zeroize;

use crate::poly::{N, SecretPoly, centred};
use crate::polymul::ntt::params::{HALF_Q, Q};

/// `table`, hidden from the optimiser: with the constants in view LLVM rebuilds each one from
/// two immediates at every use and computes `mulh` by a known non-negative constant as `umull`
/// plus a sign fix-up (Cortex-M4), where a table load and one `smull` suffice.
#[inline(always)]
pub(super) fn opaque<T: ?Sized>(table: &T) -> &T {
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

/// Three Cooley–Tukey layers on eight coefficients x_k = a_(base + k·stride).
#[inline(always)]
fn forward_three(x: &mut [i32; 8], t: &GroupTwiddles) {
    for k in 0..4 {
        ct(x, k, k + 4, t[0]);
    }
    forward_two(x, t);
}

/// [`forward_three`] of a secret's coefficients (|x| <= 5): the first layer's products are exact
/// (|x·ω| <= 5·q'/2 < 2^31), plain multiplications.
#[inline(always)]
fn forward_three_small(x: &mut [i32; 8], t: &GroupTwiddles) {
    for k in 0..4 {
        let p = x[k + 4] * t[0].omega;
        x[k + 4] = x[k] - p;
        x[k] += p;
    }
    forward_two(x, t);
}

/// The second and third layers of [`forward_three`].
#[inline(always)]
fn forward_two(x: &mut [i32; 8], t: &GroupTwiddles) {
    for k in 0..2 {
        ct(x, k, k + 2, t[1]);
        ct(x, k + 4, k + 6, t[2]);
    }
    for k in 0..4 {
        ct(x, 2 * k, 2 * k + 1, t[3 + k]);
    }
}

/// Two Gentleman–Sande layers on eight coefficients (the inverse of the last two layers of
/// [`forward_three`], up to a factor 4); the third is done by the callers, which fold a scaling
/// into it.
#[inline(always)]
fn inverse_two(x: &mut [i32; 8], t: &GroupTwiddles) {
    for (k, &t) in t[..4].iter().enumerate() {
        gs(x, 2 * k, 2 * k + 1, t);
    }
    for k in 0..2 {
        gs(x, k, k + 2, t[4]);
        gs(x, k + 4, k + 6, t[5]);
    }
}

/// Layers 6–4 of the inverse on the coefficients x_k = a_(j + 4k) of a column of a group: two
/// Gentleman–Sande layers, then the third with the middle scaling F folded in (the sums
/// multiplied by F, the differences by the twiddle that includes it); the outputs in the same
/// order.
#[inline(always)]
fn inverse_column(mut x: [i32; 8], t: &GroupTwiddles, middle: Twiddle) -> [i32; 8] {
    inverse_two(&mut x, t);
    let mut out = [0; 8];
    for k in 0..4 {
        let (u, v) = (x[k], x[k + 4]);
        out[k] = mul_const(u + v, middle);
        out[k + 4] = mul_const(u - v, t[6]);
    }
    out
}

/// Layers 1–3 (`three`) of the forward transform of the coefficients `input(k)`.
#[inline(always)]
fn forward_first(
    input: impl Fn(usize) -> i32,
    three: impl Fn(&mut [i32; 8], &GroupTwiddles),
    out: &mut [i32; N],
) {
    let t = &opaque(&FORWARD)[0];
    for j in 0..32 {
        let mut x: [i32; 8] = core::array::from_fn(|k| input(j + 32 * k));
        three(&mut x, t);
        for (k, &v) in x.iter().enumerate() {
            out[j + 32 * k] = v;
        }
    }
}

/// Layers 1–3 of the forward transform in place, from centred coefficients (the low-memory
/// product's public operand, written straight into its transform buffer).
pub(super) fn forward_first_in_place(a: &mut [i32; N]) {
    let t = &opaque(&FORWARD)[0];
    for j in 0..32 {
        let mut x: [i32; 8] = core::array::from_fn(|k| a[j + 32 * k]);
        forward_three(&mut x, t);
        for (k, &v) in x.iter().enumerate() {
            a[j + 32 * k] = v;
        }
    }
}

/// The kernels in portable Rust.
pub(crate) struct Portable;

impl Kernels for Portable {
    type Sums = [i64; N];
    type Blocks = PreparedBlocks;

    fn forward_first_poly(a: &[u16; N], out: &mut [i32; N]) {
        forward_first(|k| centred(a[k]), forward_three, out);
    }

    fn forward_first_secret(s: &[i8; N], out: &mut [i32; N]) {
        forward_first(|k| i32::from(s[k]), forward_three_small, out);
    }

    fn forward_last(groups: &mut [[i32; 32]], twiddles: &[GroupTwiddles]) {
        let twiddles = opaque(twiddles);
        for (group, t) in groups.iter_mut().zip(twiddles) {
            for j in 0..4 {
                let mut x: [i32; 8] = core::array::from_fn(|k| group[j + 4 * k]);
                forward_three(&mut x, t);
                for (k, &v) in x.iter().enumerate() {
                    group[j + 4 * k] = v;
                }
            }
        }
    }

    fn secret_quarter_first(s: &Nibbles, quarter: usize, out: &mut [[i32; 32]; 2]) {
        let t = opaque(&FORWARD)[0][3 + quarter];
        let [c1, c2, c3] = opaque(&QUARTER_COEFFS)[quarter];
        // Byte k holds coefficients 2k (low nibble) and 2k + 1 (high), signed: the
        // combinations of columns j and j + 1 from one read of each byte.
        let pair = |k: usize| {
            let byte = |offset: usize| s[k + offset] as i8;
            let (b0, b1, b2, b3) = (byte(0), byte(32), byte(64), byte(96));
            let low = |b: i8| i32::from((b << 4) >> 4);
            let high = |b: i8| i32::from(b >> 4);
            [
                low(b0) + c1 * low(b1) + c2 * low(b2) + c3 * low(b3),
                high(b0) + c1 * high(b1) + c2 * high(b2) + c3 * high(b3),
            ]
        };
        let [lo, hi] = out;
        for k in 0..16 {
            let u = pair(k);
            let v = pair(k + 16);
            for half in 0..2 {
                let p = mul_const(v[half], t);
                lo[2 * k + half] = u[half] + p;
                hi[2 * k + half] = u[half] - p;
            }
        }
    }

    fn inverse_first(a: &mut [[i32; 32]; 8]) {
        let twiddles = opaque(&INVERSE);
        let middle = opaque(&SCALES)[0];
        for (group, t) in a.iter_mut().zip(twiddles) {
            for j in 0..4 {
                let x = inverse_column(core::array::from_fn(|k| group[j + 4 * k]), t, middle);
                for (k, v) in x.into_iter().enumerate() {
                    group[j + 4 * k] = v;
                }
            }
        }
    }

    fn finish_wide(sums: &mut [i64; N], out: &mut [u16; N]) {
        let mut w = [0i32; N];
        inverse_first_wide(sums, as_groups(&mut w));
        Self::inverse_last(&mut w, out, false);
    }

    fn inverse_last(a: &mut [i32; N], out: &mut [u16; N], add: bool) {
        let t = &opaque(&INVERSE)[8];
        let one = opaque(&SCALES)[1];
        for j in 0..32 {
            let mut x: [i32; 8] = core::array::from_fn(|k| a[j + 32 * k]);
            inverse_two(&mut x, t);
            for k in 0..4 {
                let (u, v) = (x[k], x[k + 4]);
                let sum = centre(mul_const(u + v, one)) as u16;
                let difference = centre(mul_const(u - v, t[6])) as u16;
                for (index, c) in [(j + 32 * k, sum), (j + 32 * k + 128, difference)] {
                    let o = &mut out[index];
                    *o = if add { o.wrapping_add(c) } else { c };
                }
            }
        }
        a.as_mut_slice().zeroize();
    }

    fn prepare_blocks(blocks: &mut PreparedBlocks) {
        let one = opaque(&SCALES)[1];
        let zetas = opaque(&BLOCK_ZETAS);
        for block in (0..64).rev() {
            let b: [i32; 4] = core::array::from_fn(|k| blocks[4 * block + k]);
            let zeta = zetas[block];
            let p = &mut blocks[7 * block..][..7];
            for k in 0..4 {
                p[k] = mul_const(b[k], one);
            }
            for k in 1..4 {
                p[3 + k] = mul_const(b[k], zeta);
            }
        }
    }

    fn prepare(s: &SecretPoly, out: &mut PreparedBlocks) {
        prepare_from_passes::<Self>(s, out);
    }

    fn base_mul_acc(acc: &mut [i64; N], a_hat: &[i32; N], prepared: &PreparedBlocks, first: bool) {
        for ((acc, a), p) in acc
            .chunks_exact_mut(4)
            .zip(a_hat.chunks_exact(4))
            .zip(prepared.chunks_exact(7))
        {
            let c = dot_products(a, p[..7].try_into().expect("7"));
            for k in 0..4 {
                acc[k] = if first { c[k] } else { acc[k] + c[k] };
            }
        }
    }

    fn base_mul_quarter(w: &mut [i32; 64], s_hat: &[i32; 64], quarter: usize) {
        let zetas = &opaque(&BLOCK_ZETAS)[16 * quarter..][..16];
        for ((a, b), &zeta) in w.chunks_exact_mut(4).zip(s_hat.chunks_exact(4)).zip(zetas) {
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
}

/// Layers 6–4 of the inverse of the Montgomery reductions of unreduced sums (bound 4) into
/// `out`, the middle scaling included (as [`Kernels::inverse_first`]); wipes `sums`.
pub(super) fn inverse_first_wide(sums: &mut [i64; N], out: &mut [[i32; 32]; 8]) {
    let twiddles = opaque(&INVERSE);
    let middle = opaque(&SCALES)[0];
    let (sums_by_group, _) = sums.as_chunks::<32>();
    for ((group, sums), t) in out.iter_mut().zip(sums_by_group).zip(twiddles) {
        for j in 0..4 {
            let x = inverse_column(
                core::array::from_fn(|k| montgomery(sums[j + 4 * k])),
                t,
                middle,
            );
            for (k, v) in x.into_iter().enumerate() {
                group[j + 4 * k] = v;
            }
        }
    }
    sums.as_mut_slice().zeroize();
}

/// The product of block `a` with a block b_0..b_3, ζ·b_1..ζ·b_3 mod x^4 − ζ, Montgomery-reduced
/// (bound 4).
#[inline(always)]
fn base_product(a: &[i32], p: &[i32; 7]) -> [i32; 4] {
    dot_products(a, p).map(montgomery)
}

/// The product of block `a` with a block b_0..b_3, ζ·b_1..ζ·b_3 mod x^4 − ζ, unreduced: four
/// 4-term dot products.
#[inline(always)]
fn dot_products(a: &[i32], p: &[i32; 7]) -> [i64; 4] {
    let w = |x: i32, y: i32| i64::from(x) * i64::from(y);
    let (a0, a1, a2, a3) = (a[0], a[1], a[2], a[3]);
    let [b0, b1, b2, b3, z1, z2, z3] = *p;
    [
        w(a0, b0) + w(a1, z3) + w(a2, z2) + w(a3, z1),
        w(a0, b1) + w(a1, b0) + w(a2, z3) + w(a3, z2),
        w(a0, b2) + w(a1, b1) + w(a2, b0) + w(a3, z3),
        w(a0, b3) + w(a1, b2) + w(a2, b1) + w(a3, b0),
    ]
}
