//! Toom-Cook-4 over two levels of Karatsuba, in 16-bit wrapping lanes, with the secret
//! evaluated once and lazy interpolation.
//!
//! # Algorithm
//!
//! Write a polynomial of R_q as `A(y) = A0 + A1·y + A2·y² + A3·y³` with `y = x^64` and blocks
//! `Ak` of 64 coefficients (research notes `algorithms.md` §3; Saber spec §8.3.1, the round-3
//! reference multiplication). The product `C = A·S` (before the reduction x^256 = -1) is
//! `C(y) = Σ_{k=0..6} Ck·y^k` with 127-coefficient blocks `Ck`, so seven evaluations determine
//! it. The points, in storage order, are
//!
//! | index | point | value of `A`                      |
//! |-------|-------|-----------------------------------|
//! | 0     | 0     | `A0`                              |
//! | 1     | 1     | `A0 + A1 + A2 + A3`               |
//! | 2     | -1    | `A0 - A1 + A2 - A3`               |
//! | 3     | 2     | `A0 + 2·A1 + 4·A2 + 8·A3`         |
//! | 4     | 1/2   | `8·A0 + 4·A1 + 2·A2 + A3` (= 8·A(1/2))   |
//! | 5     | -1/2  | `8·A0 - 4·A1 + 2·A2 - A3` (= 8·A(-1/2))  |
//! | 6     | ∞     | `A3`                              |
//!
//! Each of the seven 64×64 point products is two levels of Karatsuba (64 → 3 × 32 → 9 × 16)
//! over 16×16 schoolbook products: 63 schoolbook products per multiplication instead of the 256
//! a flat 16-block schoolbook would need.
//!
//! Following Mera, Karmakar and Verbauwhede ("Time-memory trade-off in Toom-Cook
//! multiplication", TCHES 2020(2)), both linear maps are hoisted out of the inner loop:
//! - [`PolyMul::prepare`] evaluates the secret once, down to its 63 Karatsuba leaves
//!   ([`ToomCookSecret`]), so [`PolyMul::mul_acc`] evaluates only the public operand;
//! - [`PolyMul::mul_acc`] adds the seven point products into the accumulator
//!   ([`ToomCookAccumulator`]) without interpolating;
//! - [`PolyMul::finish`] interpolates once and folds negacyclically.
//!
//! # Why 16-bit wrapping lanes are exact mod 2^13
//!
//! All arithmetic is in Z/2^16 (`u16` wrapping). Addition, subtraction and multiplication
//! commute with reduction mod 2^16, so each accumulated point value is, mod 2^16, exactly the
//! integer value at that point of `C = Σ_k A_k·S_k` (an evaluation of an integer polynomial):
//! accumulating before interpolating is exact whatever the number of products, wrap-around
//! included, and neither the 16-bit inputs nor the secret's range need a bound. (The contract's
//! limit of four products and [`crate::poly::SECRET_BOUND`] are not used.)
//!
//! Interpolation (`interpolate_lane`) solves for the integer blocks `Ck` with additions,
//! multiplications by constants, and exact divisions: the dividend is a multiple of the divisor
//! *in Z*. A division by `2^t·d`, d odd, is a logical shift right by `t` and a multiplication by
//! `d⁻¹ mod 2^16` (`INV3`, `INV9`, `INV15`). If `v` is known mod 2^m (m ≥ t) and `2^t | v` in
//! Z, the stored `u16` is `v + j·2^m` for some integer `j`, so the shift gives
//! `v/2^t + j·2^(m−t)`: the quotient mod 2^(m−t). A shift loses its `t` top bits; the odd
//! inverse loses nothing. Along every path at most 3 bits are lost:
//! - `C2`: one shift by 3 (a division by 24); `C4` = (shift by 1) − `C2`;
//! - `C1`, `C5`: shift by 1 for `64·C(±1/2)`'s difference, shift by 1 in the divisions by 30
//!   and by 18, shift by 1 to halve `2·C1` (the `A(2)` term uses `4·C2` and `16·C4`, which are
//!   known mod 2^15, no worse than the first shift); `C3` = (shift by 1) − (`C1 + C5`).
//!
//! So every `Ck` is exact mod 2^(16−3) = 2^13 = q, which is all the [`PolyMul`] contract asks
//! for; the negacyclic fold only adds and subtracts. Two of the divisions need a factor 8
//! (24 = 8·3; and 2·2·2 on the odd path), which is why Toom-Cook-4 with the points ±1/2 in
//! 16-bit lanes yields 13 bits and no more.
//!
//! # Data layout, cost and memory
//!
//! Every coefficient is a *row* of the seven point values (`LANES` = 8 on SIMD targets,
//! the eighth lane zero; 7 elsewhere). Karatsuba and the 16×16 schoolbook products then
//! process all seven points at once with vertical operations: with 128-bit SIMD (SSE2, NEON,
//! wasm `simd128`) a row is one vector, a multiply-add of two rows is one `pmullw`/`paddw`
//! pair, and the compiler vectorises plain array code with no shuffles. Only evaluation and
//! interpolation cross lanes, once per operand and once per output.
//!
//! - `prepare`: one Toom-4 evaluation of the secret and the Karatsuba sums.
//! - `mul_acc`: one Toom-4 evaluation of `a`, its Karatsuba sums, 9 row-wise 16×16 schoolbook
//!   products (63 scalar ones; 16,128 multiply-adds), refined Karatsuba recombination at
//!   level 2, and level 1 added into the accumulator.
//! - `finish`: one interpolation of 127 rows and the fold.
//!
//! Measured with `valgrind --tool=callgrind` on x86-64 (SSE2 baseline, release): `mul_acc`
//! ≈ 12.4k instructions (schoolbook: ≈ 690k), `prepare` ≈ 5.4k, `finish` ≈ 4.9k; an L = 3
//! matrix-vector product (3 `prepare`, 9 `mul_acc`, 3 `finish`) ≈ 146k (schoolbook ≈ 6.2M).
//!
//! | item | 128-bit SIMD | scalar |
//! |------|--------------|--------|
//! | [`ToomCookSecret`] (`Prepared`) | 2,304 B | 2,016 B |
//! | [`ToomCookAccumulator`] | 2,048 B | 1,792 B |
//! | `mul_acc` stack (measured frames) | ≈ 3.0 KiB (x86-64) | ≈ 2.7 KiB (thumbv7em) |
//! | `finish` stack | ≈ 0.9 KiB | ≈ 1.0 KiB |
//!
//! On scalar targets the leaf products are loops (`leaf_product_compact`, about 100
//! Cortex-M4 instructions); on SIMD targets they are fully unrolled
//! (`leaf_product_unrolled`) so that each output row is one register-resident sum.
//!
//! # Constant time
//!
//! Every loop has a trip count fixed by the algorithm and every index is public: control flow
//! and memory access are independent of both operands. There are no divisions (the odd
//! divisors are multiplications by inverses) and no data-dependent branches.
//!
//! `prepare` evaluates the secret straight into the returned value. Stack temporaries (sums of
//! secret leaves in `prepare`, products in `mul_acc`, interpolated blocks in `finish`) are not
//! wiped, as in the rest of the crate's arithmetic; the caller wipes `Prepared` and
//! `Accumulator`.

use zeroize::Zeroize;

use crate::poly::{N, Poly, SecretPoly};
use crate::polymul::PolyMul;

/// Toom-Cook-4 block length: 256 = 4 × 64.
const BLOCK: usize = N >> 2;
/// Evaluation points of Toom-Cook-4 (see the table in the module docs).
const POINTS: usize = 7;
/// Length of a Karatsuba leaf: 64 → 32 → 16.
const LEAF: usize = BLOCK >> 2;
/// Karatsuba leaves per point: low half, high half and their sum, at each of two levels.
const LEAVES: usize = 9;
/// Rows of a point product: 2·64 − 1 = 127 coefficients, padded to 128 so that rows group evenly
/// into 16-row chunks for interpolation.
const PRODUCT_ROWS: usize = 2 * BLOCK;

/// Whether the target has 128-bit SIMD, which the compiler uses for rows of 8 × `u16`.
const SIMD: bool = cfg!(any(
    target_feature = "sse2",
    target_feature = "neon",
    target_feature = "simd128"
));

/// Lanes per coefficient row: the seven points, padded to eight on [`SIMD`] targets so that a
/// row is exactly one vector; seven elsewhere, where a padding lane would only cost scalar
/// multiplications.
const LANES: usize = if SIMD { 8 } else { 7 };

/// Multiplicative inverses mod 2^16 of the odd parts of the interpolation divisors.
const INV3: u16 = 43_691;
const INV9: u16 = 36_409;
const INV15: u16 = 61_167;

/// Toom-Cook-4 + Karatsuba multiplication: the portable default backend.
///
/// See the [module documentation](self) for the algorithm, its exactness proof and its memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToomCook;

/// A secret evaluated at the seven Toom-Cook points and split into its nine Karatsuba leaves of
/// 16 coefficients, each coefficient a row of `LANES` point values: 2,304 bytes with 128-bit
/// SIMD (2,016 without).
///
/// The caller wipes it ([`PolyMul::Prepared`]); it is not also wiped on drop, which would
/// cost a second pass of about a thousand volatile stores.
#[derive(Clone, Zeroize)]
pub struct ToomCookSecret {
    /// Leaf `3·g + h` (see [`complete_leaves`]), then `[coefficient][point]`.
    leaves: [Leaf<LANES>; LEAVES],
}

impl ToomCookSecret {
    /// Zero leaves (a constant: written where it is kept, not built aside and copied).
    const ZERO: Self = Self {
        leaves: [Leaf::ZERO; LEAVES],
    };
}

/// A sum of products kept as its seven point products, not yet interpolated: 127 coefficient
/// rows (plus one zero row) of `LANES` point values, 2,048 bytes with 128-bit SIMD (1,792
/// without).
///
/// The caller wipes it ([`PolyMul::Accumulator`]); it is not also wiped on drop.
#[derive(Clone, Zeroize)]
pub struct ToomCookAccumulator {
    /// `rows[coefficient][point]`.
    rows: [[u16; LANES]; PRODUCT_ROWS],
}

impl core::fmt::Debug for ToomCookSecret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ToomCookSecret(<redacted>)")
    }
}

impl core::fmt::Debug for ToomCookAccumulator {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ToomCookAccumulator(<redacted>)")
    }
}

impl PolyMul for ToomCook {
    type Prepared = ToomCookSecret;
    type Accumulator = ToomCookAccumulator;

    /// A secret prepared for one use is built in its slot: a value returned from `prepare` was
    /// built aside and copied (2 KiB beside the low-memory products).
    fn prepares_in_slot(&self) -> bool {
        true
    }

    fn prepare(&mut self, s: &SecretPoly) -> ToomCookSecret {
        let mut prepared = ToomCookSecret::ZERO;
        prepare_leaves(s, &mut prepared.leaves);
        prepared
    }

    fn prepare_into(&mut self, s: &SecretPoly, out: &mut ToomCookSecret) {
        prepare_leaves(s, &mut out.leaves);
    }

    /// Built in the slot (no prepared value on the stack beside it).
    fn prepare_in(&mut self, s: &SecretPoly, slot: &mut Option<ToomCookSecret>) {
        // A constant of the slot's type, assigned: `Some(ToomCookSecret::ZERO)` was a 2 KiB
        // temporary, cleared and copied.
        const FRESH: Option<ToomCookSecret> = Some(ToomCookSecret::ZERO);
        if slot.is_none() {
            *slot = FRESH;
        }
        if let Some(prepared) = slot {
            prepare_leaves(s, &mut prepared.leaves);
        }
    }

    fn accumulator(&mut self) -> ToomCookAccumulator {
        ToomCookAccumulator {
            rows: [[0; LANES]; PRODUCT_ROWS],
        }
    }

    fn mul_acc(&mut self, acc: &mut ToomCookAccumulator, a: &Poly, s: &ToomCookSecret) {
        add_product(&mut acc.rows, &a.coeffs, &s.leaves);
    }

    fn finish(&mut self, acc: &ToomCookAccumulator) -> Poly {
        interpolate_and_fold(&acc.rows)
    }

    fn name(&self) -> &'static str {
        "toom-cook"
    }
}

// The algorithm proper, generic over the lane count so that tests cover both layouts.

/// Sixteen coefficient rows: a Karatsuba leaf, or a quarter of an operand's point values.
///
/// Aligned to 16 bytes on [`SIMD`] targets so that with eight lanes every row is an aligned
/// vector: SSE2 can then multiply straight from memory (its memory operands must be aligned).
/// Elsewhere the alignment would only pad the frames that hold leaves and the slots' tags.
#[derive(Clone, Copy, Zeroize)]
#[repr(C)]
#[cfg_attr(
    any(
        target_feature = "sse2",
        target_feature = "neon",
        target_feature = "simd128"
    ),
    repr(align(16))
)]
struct Leaf<const L: usize>([[u16; L]; LEAF]);

impl<const L: usize> Leaf<L> {
    const ZERO: Self = Self([[0; L]; LEAF]);

    /// `x + y`, row by row.
    #[inline(always)]
    fn sum(x: &Self, y: &Self) -> Self {
        let mut out = *x;
        out.add_assign(y);
        out
    }

    /// `self += other`, row by row.
    #[inline(always)]
    fn add_assign(&mut self, other: &Self) {
        for (x, y) in self.0.iter_mut().zip(&other.0) {
            for (x, &y) in x.iter_mut().zip(y) {
                *x = x.wrapping_add(y);
            }
        }
    }

    /// `self -= other`, row by row (undoes [`Self::add_assign`]).
    #[inline(always)]
    fn sub_assign(&mut self, other: &Self) {
        for (x, y) in self.0.iter_mut().zip(&other.0) {
            for (x, &y) in x.iter_mut().zip(y) {
                *x = x.wrapping_sub(y);
            }
        }
    }
}

/// Writes the nine Karatsuba leaves of `s` at the seven points (see [`complete_leaves`]).
fn prepare_leaves<const L: usize>(s: &SecretPoly, leaves: &mut [Leaf<L>; LEAVES]) {
    let [l0, l1, _, l3, l4, ..] = leaves;
    // Sign extension: -1 becomes 0xffff, i.e. -1 mod 2^16.
    evaluate(|m| s.coeffs[m] as i16 as u16, [l0, l1, l3, l4]);
    complete_leaves(leaves);
}

/// Completes the Karatsuba leaves of a 64-coefficient operand whose four quarters are leaves
/// 0, 1, 3 and 4.
///
/// Leaf `3·g + h` is level-2 half `h` (low 16, high 16, their sum) of level-1 part `g` (low 32,
/// high 32, their sum): the quarters are the halves of parts 0 and 1, and every other leaf is
/// a sum of two leaves.
fn complete_leaves<const L: usize>(leaves: &mut [Leaf<L>; LEAVES]) {
    let [l0, l1, l2, l3, l4, l5, l6, l7, l8] = leaves;
    *l6 = Leaf::sum(l0, l3);
    *l7 = Leaf::sum(l1, l4);
    for (low, high, sum) in [(l0, l1, l2), (l3, l4, l5), (l6, l7, l8)] {
        *sum = Leaf::sum(low, high);
    }
}

/// `acc += a · s` in the point-product domain.
fn add_product<const L: usize>(
    acc: &mut [[u16; L]; PRODUCT_ROWS],
    a: &[u16; N],
    s: &[Leaf<L>; LEAVES],
) {
    let mut quarters = [Leaf::ZERO; 4];
    let [q0, q1, q2, q3] = &mut quarters;
    evaluate(|m| a[m], [q0, q1, q2, q3]);
    add_point_products(acc, &mut quarters, s);
}

/// `acc += a · s` at every point, from the point values of `a` as four quarters of 16 rows
/// (used as scratch space) and the leaves of `s`: two levels of Karatsuba over
/// [`leaf_product`], with level 1 split the same way as [`complete_leaves`] splits `s`.
fn add_point_products<const L: usize>(
    acc: &mut [[u16; L]; PRODUCT_ROWS],
    a: &mut [Leaf<L>; 4],
    s: &[Leaf<L>; LEAVES],
) {
    let [q0, q1, q2, q3] = a;
    let [s0, s1, s2, s3, s4, s5, s6, s7, s8] = s;
    // Scratch for the level-2 products, shared by the three parts (each overwrites all of it).
    let mut part = [[0u16; L]; 4 * LEAF];
    let mut middle = [[0u16; L]; 2 * LEAF];
    add_part_product(acc, 0, q0, q1, [s0, s1, s2], &mut part, &mut middle);
    add_part_product(acc, 1, q2, q3, [s3, s4, s5], &mut part, &mut middle);
    // Part 2 is the sum of the halves; the quarters are no longer needed.
    q0.add_assign(q2);
    q1.add_assign(q3);
    add_part_product(acc, 2, q0, q1, [s6, s7, s8], &mut part, &mut middle);
    // Products with the secret, wiped like the accumulator (as slices: one bulk fill each).
    part.as_flattened_mut().zeroize();
    middle.as_flattened_mut().zeroize();
}

/// Adds level-1 Karatsuba term `g` (see [`add_karatsuba_term`]) of `a · s` into `acc`, where
/// `low` and `high` are the halves of that part of `a`, and `s` its three leaves; `part` and
/// `middle` are scratch space, overwritten entirely.
///
/// Not inlined: three copies would only add code (several KiB on scalar targets).
#[inline(never)]
fn add_part_product<const L: usize>(
    acc: &mut [[u16; L]; PRODUCT_ROWS],
    g: usize,
    low: &Leaf<L>,
    high: &mut Leaf<L>,
    [s_low, s_high, s_sum]: [&Leaf<L>; 3],
    part: &mut [[u16; L]; 4 * LEAF],
    middle: &mut [[u16; L]; 2 * LEAF],
) {
    // Level 2: low·low and high·high go straight to their rows of the part product (63 rows
    // and a zero row)...
    let (part_low, part_high) = part.split_at_mut(2 * LEAF);
    leaf_product(part_low.try_into().unwrap(), low, s_low);
    leaf_product(part_high.try_into().unwrap(), high, s_high);
    // ...and the middle term, of low + high formed in `high`'s place and undone after (exact
    // mod 2^16; a sum of its own was 16 rows more in this frame, on the low-memory peak), is
    // merged in place.
    high.add_assign(low);
    leaf_product(middle, high, s_sum);
    high.sub_assign(low);
    merge_middle(part, middle);
    add_karatsuba_term(acc, part, g);
}

/// Evaluates the polynomial with coefficients `coeff(0..256)` at the seven points: row `i` of
/// quarter `q` holds coefficient `16·q + i` of `A(point)` for every point (lanes beyond the
/// seventh are zero).
#[inline(always)]
fn evaluate<const L: usize>(coeff: impl Fn(usize) -> u16, quarters: [&mut Leaf<L>; 4]) {
    const { assert!(L >= POINTS) };
    let rows = quarters
        .into_iter()
        .flat_map(|quarter| quarter.0.iter_mut());
    for (m, row) in rows.enumerate() {
        let values = evaluate_lane(
            coeff(m),
            coeff(BLOCK + m),
            coeff(2 * BLOCK + m),
            coeff(3 * BLOCK + m),
        );
        row[..POINTS].copy_from_slice(&values);
        row[POINTS..].fill(0);
    }
}

/// The seven point values of `a0 + a1·y + a2·y² + a3·y³`, in the order of the module docs.
#[inline(always)]
fn evaluate_lane(a0: u16, a1: u16, a2: u16, a3: u16) -> [u16; POINTS] {
    let even = a0.wrapping_add(a2);
    let odd = a1.wrapping_add(a3);
    // 8·a0 + 2·a2 and 4·a1 + a3: the even and odd parts of 8·A(±1/2).
    let even_half = (a0 << 3).wrapping_add(a2 << 1);
    let odd_half = (a1 << 2).wrapping_add(a3);
    // a0 + 4·a2 + 2·(a1 + 4·a3) = A(2).
    let at_two = a0
        .wrapping_add(a2 << 2)
        .wrapping_add(a1.wrapping_add(a3 << 2) << 1);
    [
        a0,
        even.wrapping_add(odd),
        even.wrapping_sub(odd),
        at_two,
        even_half.wrapping_add(odd_half),
        even_half.wrapping_sub(odd_half),
        a3,
    ]
}

/// `out = a · s` for two 16-row leaves: 31 rows and a zero row, by schoolbook.
#[inline(always)]
fn leaf_product<const L: usize>(out: &mut [[u16; L]; 2 * LEAF], a: &Leaf<L>, s: &Leaf<L>) {
    if SIMD {
        leaf_product_unrolled(out, a, s);
    } else {
        leaf_product_compact(out, a, s);
    }
}

/// [`leaf_product`] for SIMD targets, where a row is one vector.
///
/// Each output row is one running sum, kept in a register, of the products of operand rows
/// read straight from memory: one multiply and one add per pair of rows, no loop overhead, no
/// stores but the result. The code is written out by macros over constant indices (see
/// [`multiply_add_row`]) rather than left to the optimiser's unrolling heuristics, which
/// proved fragile. About 4.5 KiB of x86-64 code.
#[inline(never)]
fn leaf_product_unrolled<const L: usize>(out: &mut [[u16; L]; 2 * LEAF], a: &Leaf<L>, s: &Leaf<L>) {
    macro_rules! row {
        ($k:literal: $($i:literal)*) => {{
            let mut sum = [0u16; L];
            $(multiply_add_row::<L, $k, $i>(&mut sum, a, s);)*
            out[$k] = sum;
        }};
    }
    macro_rules! rows {
        ($($k:literal)*) => {
            $(row!($k: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);)*
        };
    }
    rows!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30);
    out[2 * LEAF - 1] = [0; L];
}

/// `sum += a[I]·s[K − I]` if both indices are in range, else nothing: row `K` of a leaf
/// product is the sum of these over `I` in `0..16`. `K` and `I` are constants, so the
/// condition costs nothing.
#[inline(always)]
fn multiply_add_row<const L: usize, const K: usize, const I: usize>(
    sum: &mut [u16; L],
    a: &Leaf<L>,
    s: &Leaf<L>,
) {
    if I <= K && K - I < LEAF {
        for ((acc, &x), &y) in sum.iter_mut().zip(&a.0[I]).zip(&s.0[K - I]) {
            *acc = acc.wrapping_add(x.wrapping_mul(y));
        }
    }
}

/// [`leaf_product`] for scalar targets: one point at a time, one output coefficient at a time,
/// in loops. Unrolling the 1,792 multiply-adds of the seven points would cost tens of KiB of
/// code and spill registers, for little gain on an in-order core.
#[inline(never)]
fn leaf_product_compact<const L: usize>(out: &mut [[u16; L]; 2 * LEAF], a: &Leaf<L>, s: &Leaf<L>) {
    for lane in 0..L {
        for (k, row) in out.iter_mut().enumerate() {
            // All i with 0 <= i < 16 and 0 <= k - i < 16; empty for the zero row k = 31.
            let first = k.saturating_sub(LEAF - 1);
            let end = if k < LEAF { k + 1 } else { LEAF };
            // a[i] pairs with s[k - i]: s runs backwards from s[k - first].
            let a_rows = &a.0[first..end];
            let s_rows = &s.0[k + 1 - end..k + 1 - first];
            let mut sum = 0u16;
            for (x, y) in a_rows.iter().zip(s_rows.iter().rev()) {
                sum = sum.wrapping_add(x[lane].wrapping_mul(y[lane]));
            }
            row[lane] = sum;
        }
    }
}

/// Completes a refined Karatsuba recombination in place: `part` holds `low·low` in rows 0..32
/// and `high·high` in rows 32..64; this adds `x^16·(middle − low·low − high·high)`.
///
/// Rows 16..48 receive both a product half and the middle term; with `t = LL_hi − HH_lo`
/// they become `t + M_lo − LL_lo` and `M_hi − t − HH_hi`, so no extra buffer is needed.
#[inline(always)]
fn merge_middle<const L: usize>(part: &mut [[u16; L]; 4 * LEAF], middle: &[[u16; L]; 2 * LEAF]) {
    for r in 0..LEAF {
        for l in 0..L {
            let t = part[LEAF + r][l].wrapping_sub(part[2 * LEAF + r][l]);
            part[LEAF + r][l] = t.wrapping_add(middle[r][l]).wrapping_sub(part[r][l]);
            part[2 * LEAF + r][l] = middle[LEAF + r][l]
                .wrapping_sub(t)
                .wrapping_sub(part[3 * LEAF + r][l]);
        }
    }
}

/// Adds Karatsuba term `which` (0: low·low, 1: high·high, 2: sum·sum) of a split into halves of
/// `M / 2` coefficients into `out[..2M]`, using
/// `(a0 + x^h a1)(b0 + x^h b1) = a0b0 + x^h·((a0+a1)(b0+b1) − a0b0 − a1b1) + x^2h·a1b1`.
#[inline(always)]
fn add_karatsuba_term<const L: usize, const M: usize>(
    out: &mut [[u16; L]],
    term: &[[u16; L]; M],
    which: usize,
) {
    let half = M >> 1;
    let (plus, minus) = match which {
        0 => (0, Some(half)),
        1 => (M, Some(half)),
        _ => (half, None),
    };
    for (o, t) in out[plus..plus + M].iter_mut().zip(term) {
        for (x, &y) in o.iter_mut().zip(t) {
            *x = x.wrapping_add(y);
        }
    }
    if let Some(minus) = minus {
        for (o, t) in out[minus..minus + M].iter_mut().zip(term) {
            for (x, &y) in o.iter_mut().zip(t) {
                *x = x.wrapping_sub(y);
            }
        }
    }
}

/// Interpolates the accumulated point products and reduces by x^256 = −1.
fn interpolate_and_fold<const L: usize>(rows: &[[u16; L]; PRODUCT_ROWS]) -> Poly {
    let mut out = Poly::ZERO;
    // 16 coefficient rows at a time, with a small stack: transpose them to one array per
    // point, interpolate lane-wise (vectorisable), and add each block into a 16-aligned run
    // of the output.
    for (chunk, chunk_rows) in rows.chunks_exact(LEAF).enumerate() {
        let mut points = [[0u16; LEAF]; POINTS];
        for (lane, row) in chunk_rows.iter().enumerate() {
            for (point, &w) in points.iter_mut().zip(row) {
                point[lane] = w;
            }
        }
        let mut blocks = [[0u16; LEAF]; POINTS];
        for lane in 0..LEAF {
            let c = interpolate_lane(core::array::from_fn(|p| points[p][lane]));
            for (block, ck) in blocks.iter_mut().zip(c) {
                block[lane] = ck;
            }
        }
        fold_chunk(&mut out, chunk * LEAF, &blocks);
    }
    out
}

/// Solves for the seven blocks `C0..C6` of `C(y)` from its point values
/// `w = [C(0), C(1), C(-1), C(2), 64·C(1/2), 64·C(-1/2), C6]`, one coefficient lane.
///
/// The results are exact mod 2^13 (see the module docs); the comments give each value as a
/// combination of the unknowns, always an exact integer identity.
#[inline(always)]
fn interpolate_lane(w: [u16; POINTS]) -> [u16; POINTS] {
    let [w0, w1, wm1, w2, wh, wmh, winf] = w;
    let c0 = w0;
    let c6 = winf;
    // Even blocks from the symmetric points.
    let c0_c6 = c0.wrapping_add(c6);
    // 2·C2 + 2·C4
    let even_1 = w1.wrapping_add(wm1).wrapping_sub(c0_c6 << 1);
    // 32·C2 + 8·C4
    let even_half = wh
        .wrapping_add(wmh)
        .wrapping_sub(c0 << 7)
        .wrapping_sub(c6 << 1);
    // 24·C2, divisible by 8 in Z: mod 2^13 after the shift.
    let c2 = (even_half.wrapping_sub(even_1 << 2) >> 3).wrapping_mul(INV3);
    // C2 + C4 (mod 2^15) − C2 (mod 2^13).
    let c4 = (even_1 >> 1).wrapping_sub(c2);
    // Odd blocks. 2·(C1 + C3 + C5)
    let odd_1 = w1.wrapping_sub(wm1);
    // 32·C1 + 8·C3 + 2·C5 (the difference is 64·C1 + 16·C3 + 4·C5; mod 2^15)
    let odd_half = wh.wrapping_sub(wmh) >> 1;
    // 2·C1 + 8·C3 + 32·C5: mod 2^15 since 4·C2 is.
    let odd_2 = w2
        .wrapping_sub(c0)
        .wrapping_sub(c2 << 2)
        .wrapping_sub(c4 << 4)
        .wrapping_sub(c6 << 6);
    // 30·(C1 − C5) mod 2^15 → C1 − C5 mod 2^14.
    let c1_minus_c5 = (odd_half.wrapping_sub(odd_2) >> 1).wrapping_mul(INV15);
    // 34·C1 + 16·C3 + 34·C5 − 8·2·(C1 + C3 + C5) = 18·(C1 + C5) mod 2^15 → C1 + C5 mod 2^14.
    let c1_plus_c5 =
        (odd_half.wrapping_add(odd_2).wrapping_sub(odd_1 << 3) >> 1).wrapping_mul(INV9);
    // 2·C1 mod 2^14 → C1 mod 2^13.
    let c1 = c1_plus_c5.wrapping_add(c1_minus_c5) >> 1;
    let c5 = c1_plus_c5.wrapping_sub(c1);
    let c3 = (odd_1 >> 1).wrapping_sub(c1_plus_c5);
    [c0, c1, c2, c3, c4, c5, c6]
}

/// Adds interpolated lanes `start..start + 16` of the blocks `C0..C6` into the output, reducing
/// `C(x^64) = Σ Ck·x^(64k)` by x^256 = −1: `C4..C6` fold back onto `C0..C2` with a minus sign,
/// and `C3` straddles x^256.
fn fold_chunk(out: &mut Poly, start: usize, blocks: &[[u16; LEAF]; POINTS]) {
    for (k, block) in blocks.iter().enumerate() {
        // Public: depends only on the chunk position.
        let offset = BLOCK * k + start;
        if offset < N {
            for (t, &c) in out.coeffs[offset..][..LEAF].iter_mut().zip(block) {
                *t = t.wrapping_add(c);
            }
        } else {
            for (t, &c) in out.coeffs[offset - N..][..LEAF].iter_mut().zip(block) {
                *t = t.wrapping_sub(c);
            }
        }
    }
}

/// Toom-Cook evaluates the public operand inside [`PolyMul::mul_acc`] together with its Karatsuba
/// sums; caching that evaluation would cost 2 KB per polynomial for ~15% of a product, so the
/// public operand is kept as it is.
impl crate::polymul::PolyMulPublic for ToomCook {
    type PreparedPublic = Poly;

    fn prepare_public(&mut self, a: &Poly) -> Poly {
        a.clone()
    }

    fn mul_acc_prepared(&mut self, acc: &mut ToomCookAccumulator, a: &Poly, s: &ToomCookSecret) {
        self.mul_acc(acc, a, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poly::{Q_MASK, SECRET_BOUND};
    use crate::polymul::Schoolbook;

    /// A small deterministic generator (xorshift32): tests need varied, not secure, data.
    struct TestRng(u32);

    impl TestRng {
        fn next_u16(&mut self) -> u16 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 17;
            self.0 ^= self.0 << 5;
            (self.0 >> 16) as u16
        }

        fn poly(&mut self) -> Poly {
            Poly {
                coeffs: core::array::from_fn(|_| self.next_u16()),
            }
        }

        fn secret(&mut self) -> SecretPoly {
            let width = 2 * SECRET_BOUND as u32 + 1;
            SecretPoly {
                coeffs: core::array::from_fn(|_| {
                    ((self.next_u16() as u32 * width) >> 16) as i8 - SECRET_BOUND
                }),
            }
        }
    }

    fn masked(p: &Poly) -> [u16; N] {
        p.coeffs.map(|c| c & Q_MASK)
    }

    /// Σ a_k·s_k through the generic core with `L` lanes.
    fn sum_of_products<const L: usize>(terms: &[(Poly, SecretPoly)]) -> Poly {
        let mut acc = [[0u16; L]; PRODUCT_ROWS];
        for (a, s) in terms {
            let mut leaves = [Leaf::ZERO; LEAVES];
            prepare_leaves(s, &mut leaves);
            add_product(&mut acc, &a.coeffs, &leaves);
        }
        interpolate_and_fold(&acc)
    }

    fn check_both_layouts(terms: &[(Poly, SecretPoly)]) {
        let mut want = Poly::ZERO;
        for (a, s) in terms {
            want.add_assign(&Schoolbook.mul(a, s));
        }
        assert_eq!(
            masked(&sum_of_products::<7>(terms)),
            masked(&want),
            "7 lanes"
        );
        assert_eq!(
            masked(&sum_of_products::<8>(terms)),
            masked(&want),
            "8 lanes"
        );
    }

    /// Both lane layouts (only one of them is the target's `LANES`) against the oracle.
    /// (The leaf-product variant is the target's; `leaf_products_match_definition` covers the
    /// other.)
    #[test]
    fn both_layouts_match_schoolbook() {
        let mut rng = TestRng(0x5eed_0001);
        let terms: [(Poly, SecretPoly); 4] = core::array::from_fn(|_| (rng.poly(), rng.secret()));
        for count in 1..=4 {
            check_both_layouts(&terms[..count]);
        }
        let mut extreme = Poly::ZERO;
        extreme.coeffs = [4096; N];
        let mut s = SecretPoly::ZERO;
        s.coeffs = [-SECRET_BOUND; N];
        check_both_layouts(&core::array::from_fn::<_, 4, _>(|_| {
            (extreme.clone(), s.clone())
        }));
    }

    fn plain_product(a: &[u16], s: &[u16]) -> [u16; PRODUCT_ROWS] {
        let mut c = [0u16; PRODUCT_ROWS];
        for (i, &x) in a.iter().enumerate() {
            for (j, &y) in s.iter().enumerate() {
                c[i + j] = c[i + j].wrapping_add(x.wrapping_mul(y));
            }
        }
        c
    }

    /// Two levels of Karatsuba give the exact product mod 2^16 in every lane, added to what
    /// the accumulator held.
    #[test]
    fn karatsuba_point_products_are_exact_mod_2_16() {
        let mut rng = TestRng(0x1234_5678);
        let mut quarters = || -> [Leaf<8>; 4] {
            core::array::from_fn(|_| {
                Leaf(core::array::from_fn(|_| {
                    core::array::from_fn(|_| rng.next_u16())
                }))
            })
        };
        for _ in 0..20 {
            let (a, s) = (quarters(), quarters());
            let start: [[u16; 8]; PRODUCT_ROWS] =
                core::array::from_fn(|i| core::array::from_fn(|l| (3 * i + l) as u16));
            let mut acc = start;
            let mut s_leaves = [Leaf::ZERO; LEAVES];
            [s_leaves[0], s_leaves[1], s_leaves[3], s_leaves[4]] = s;
            complete_leaves(&mut s_leaves);
            add_point_products(&mut acc, &mut a.clone(), &s_leaves);
            for lane in 0..8 {
                let column = |q: &[Leaf<8>; 4]| -> [u16; BLOCK] {
                    core::array::from_fn(|m| q[m >> 4].0[m & 15][lane])
                };
                let want = plain_product(&column(&a), &column(&s));
                for i in 0..PRODUCT_ROWS {
                    assert_eq!(
                        acc[i][lane],
                        start[i][lane].wrapping_add(want[i]),
                        "row {i}"
                    );
                }
            }
        }
    }

    type LeafProductFn<const L: usize> = fn(&mut [[u16; L]; 2 * LEAF], &Leaf<L>, &Leaf<L>);

    fn check_leaf_product<const L: usize>(rng: &mut TestRng) {
        let mut leaf = || {
            Leaf::<L>(core::array::from_fn(|_| {
                core::array::from_fn(|_| rng.next_u16())
            }))
        };
        let (a, s) = (leaf(), leaf());
        let variants: [LeafProductFn<L>; 2] = [leaf_product_unrolled, leaf_product_compact];
        for variant in variants {
            // Garbage in the output must be overwritten, not accumulated.
            let mut got = [[0xa5a5u16; L]; 2 * LEAF];
            variant(&mut got, &a, &s);
            for lane in 0..L {
                let want = plain_product(&a.0.map(|r| r[lane]), &s.0.map(|r| r[lane]));
                for k in 0..2 * LEAF {
                    assert_eq!(got[k][lane], want[k], "coefficient {k}, lane {lane}");
                }
            }
        }
    }

    /// Both leaf-product variants (only one of them is the target's) against the definition.
    #[test]
    fn leaf_products_match_definition() {
        let mut rng = TestRng(99);
        for _ in 0..10 {
            check_leaf_product::<1>(&mut rng);
            check_leaf_product::<7>(&mut rng);
            check_leaf_product::<8>(&mut rng);
        }
    }

    /// Interpolation inverts evaluation mod 2^13 for arbitrary 16-bit blocks (including values
    /// that are not 13-bit residues and sums that wrapped), i.e. for any integer polynomial.
    #[test]
    fn interpolation_inverts_evaluation_mod_2_13() {
        let mut rng = TestRng(0xdead_beef);
        for _ in 0..10_000 {
            let c: [u16; POINTS] = core::array::from_fn(|_| rng.next_u16());
            let at = |x: i64, scale: u32| {
                // Σ c_k · x^k · 2^(scale·(6 − k)), evaluated mod 2^16.
                (0..POINTS).fold(0u16, |acc, k| {
                    let factor = x.pow(k as u32) << (scale * (6 - k as u32));
                    acc.wrapping_add(c[k].wrapping_mul(factor as u16))
                })
            };
            let w = [
                c[0],
                at(1, 0),
                at(-1, 0),
                at(2, 0),
                at(1, 1),
                at(-1, 1),
                c[6],
            ];
            let got = interpolate_lane(w);
            for k in 0..POINTS {
                assert_eq!(got[k] & Q_MASK, c[k] & Q_MASK, "block {k} of {c:?}");
            }
        }
    }

    #[test]
    fn evaluation_matches_definition() {
        let (a0, a1, a2, a3) = (3u16, 5, 7, 11);
        let minus_six = 6u16.wrapping_neg();
        assert_eq!(
            evaluate_lane(a0, a1, a2, a3),
            [
                3,
                26,
                minus_six,
                3 + 10 + 28 + 88,
                24 + 20 + 14 + 11,
                24 - 20 + 14 - 11,
                11
            ]
        );
    }

    #[test]
    fn sizes_are_as_documented() {
        let (secret, accumulator) = if SIMD { (2304, 2048) } else { (2016, 1792) };
        assert_eq!(size_of::<ToomCookSecret>(), secret);
        assert_eq!(size_of::<ToomCookAccumulator>(), accumulator);
    }

    #[test]
    fn product_by_x_is_a_negacyclic_shift() {
        let mut a = Poly::ZERO;
        for (i, c) in a.coeffs.iter_mut().enumerate() {
            *c = i as u16 + 1;
        }
        let mut s = SecretPoly::ZERO;
        s.coeffs[1] = 1;
        let got = masked(&ToomCook.mul(&a, &s));
        // x · (1 + 2x + … + 256x^255) = −256 + 1·x + 2x² + … + 255x^255.
        assert_eq!(got[0], 8192 - 256);
        for (i, &c) in got.iter().enumerate().skip(1) {
            assert_eq!(c, i as u16);
        }
    }
}
