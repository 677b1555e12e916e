//! Kronecker substitution: polynomial products as big-integer products, on any engine that
//! multiplies integers of a bounded size (software, or an RSA coprocessor).
//!
//! # Method
//!
//! A product of polynomials with integer coefficients `f·g` is read off the integer product
//! `f(2^w)·g(2^w)` when every coefficient of `f·g` fits a `w`-bit slot (Kronecker; Harvey's
//! "KS1"). The engines this backend targets multiply operands of at most 2048 bits (ESP32,
//! ESP32-S2/S3) or 1536 bits (ESP32-C3/C6/H2), while a whole 256-coefficient Saber product needs
//! 256·24 bits. So the product is split first:
//!
//! 1. **Toom-Cook-4** (`algorithms.md` §3, §4.2): `a = a0 + a1·y + a2·y² + a3·y³` with `y = x^64`,
//!    evaluated at the seven points 0, 1, −1, 2, −2, ½ (scaled by 8) and ∞. Each point needs one
//!    product of two 64-coefficient polynomials.
//! 2. Each **point product** is one engine multiplication (KS1, slot width `l`) when `64·l` bits fit
//!    the engine, or two multiplications at `±2^b` with `b = ⌈l/2⌉` (Harvey's "KS2": `h(2^b) ±
//!    h(−2^b)` separates the even and odd coefficients into `2b`-bit slots) when they do not.
//! 3. The seven point products are **accumulated** (evaluation domain, exact `i32` sums), and
//!    `finish` interpolates once and folds negacyclically (`x^256 = −1`).
//!
//! The secret side (evaluation and packing) is done once in `prepare`.
//!
//! # Bounds (why every step is exact)
//!
//! Inputs: `a` centred to `[−4096, 4095]` by `poly::centred` (|a| ≤ 2^12), `s` signed with
//! `|s| ≤ 5` ([`crate::poly::SECRET_BOUND`], the largest of the three parameter sets; LightSaber
//! attains it). The gain `g` of a Toom point is the sum of the absolute weights of its
//! evaluation: 1 at 0 and ∞, 4 at ±1, 15 at ±2 and at ½ scaled by 8 (8 + 4 + 2 + 1).
//!
//! - Evaluated coefficients: `|a(p)| ≤ 4096·g ≤ 61,440 < 2^16`, `|s(p)| ≤ 5·g ≤ 75`.
//! - A point product coefficient is a sum of at most 64 terms:
//!   `|c| ≤ B_p = 64·4096·g·5·g`: 1,310,720 < 2^21 (g = 1), 20,971,520 < 2^25 (g = 4),
//!   294,912,000 < 2^29 (g = 15). Signed slots of `l = 22, 26, 30` bits hold them exactly.
//!   The backend does not know the parameter set, so it uses the LightSaber bound (|s| ≤ 5) for
//!   all three; per variant (η = μ/2) the single-product bounds and minimal signed slot widths
//!   are:
//!
//!   | variant | η | g = 1 | g = 4 | g = 15 |
//!   |---|---|---|---|---|
//!   | LightSaber | 5 | 1,310,720 (22 bit) | 20,971,520 (26 bit) | 294,912,000 (30 bit) |
//!   | Saber | 4 | 1,048,576 (22 bit) | 16,777,216 (26 bit) | 235,929,600 (29 bit) |
//!   | FireSaber | 3 | 786,432 (21 bit) | 12,582,912 (25 bit) | 176,947,200 (29 bit) |
//!
//!   The inner products with `b` and `b'` (10-bit values, which centring leaves in [0, 1023])
//!   stay inside the same bounds.
//! - Each product is decoded before it is accumulated, so slots never see sums. The accumulated
//!   point values of L ≤ 4 products stay below `4·294,912,000 = 1,179,648,000 < 2^31`: `i32` sums
//!   are exact (the PolyMul contract allows at most 4 products before `finish`).
//! - Operand size: an operand `F = Σ f_i·2^{w·i}` (64 digits, `|f_i| < 2^{cb}`, `cb` = bit length of
//!   `4096·g`) satisfies `|F| < 2^{63w + cb + 1}`, so `63w + cb + 2` bits hold it in two's
//!   complement. The product of two such operands fits twice that width with a spare bit, which
//!   also covers `h(2^b) ± h(−2^b)` in KS2.
//! - Resulting plans: a 2048-bit engine needs 7 multiplications per product (44-, 52- and
//!   60-word operands); a 1536-bit engine uses KS1 at 0 and ∞ (44 words) and KS2 elsewhere (27 and
//!   31 words), 12 multiplications per product.
//! - Interpolation divides exactly by 2, 4, 3 and 5 in `i64` (values stay below 2^38):
//!   powers of two by arithmetic shifts, 3 and 5 by multiplication with their inverses mod 2^64,
//!   which is exact because the divisions are exact over the integers.
//!
//! # Signs
//!
//! Digits are signed; operands are packed as two's-complement integers with a borrow chain
//! (digit `d_i + borrow` is split into its low `w` bits and a new borrow). Engines multiply
//! unsigned integers, so the product of the two's-complement encodings `F_u·G_u` is corrected to
//! `F·G mod 2^{64n}` by subtracting `G_u` (when `F < 0`) and `F_u` (when `G < 0`) from its upper
//! half, with masks instead of branches. Signed digits are then read back from the bottom with a
//! carry (each `|c_k| < 2^{l−1}` determines the next carry).
//!
//! # Constant time
//!
//! Every loop bound, shift and index depends only on the engine's public plan; signs are handled
//! with masks; the exact divisions are multiplications. The software engine
//! ([`SoftwareBigMul`]) is a fixed-length schoolbook multiplication without allocation.
//!
//! Sources: `algorithms.md` §4 (Kronecker substitution, Harvey 2009 KS1/KS2, Saber on ESP32),
//! §4.3 (slot widths); the Toom-4 interpolation sequence here is derived for these seven points
//! (see `interpolate` in the source).

use zeroize::Zeroize;

use crate::poly::{N, Poly, SecretPoly, centred};
use crate::polymul::PolyMul;

pub mod software;

pub use software::SoftwareBigMul;

/// An engine that multiplies two non-negative integers of equal length.
///
/// Integers are little-endian arrays of 32-bit words (word 0 least significant), as in the ESP32
/// RSA peripheral's operand memories.
pub trait BigMul {
    /// Largest operand length, in 32-bit words, the engine multiplies (64 = 2048 bits,
    /// 48 = 1536 bits). Operands longer than 64 words are never requested.
    const MAX_OPERAND_WORDS: usize;
    /// Operand lengths must be a multiple of this many words (16 on the original ESP32, whose
    /// plain multiplication takes 512-bit multiples only).
    const OPERAND_WORDS_GRANULE: usize = 1;
    /// Name of the Kronecker backend running on this engine (used by [`PolyMul::name`]).
    const BACKEND_NAME: &'static str;

    /// `product = x · y`, where `x.len() == y.len() = n` with `n ≤ MAX_OPERAND_WORDS` a multiple
    /// of `OPERAND_WORDS_GRANULE`, and `product.len() == 2n`.
    fn mul(&mut self, x: &[u32], y: &[u32], product: &mut [u32]);
}

/// Coefficients per Toom-Cook piece.
const PIECE: usize = N >> 2;
/// Coefficients of a product of two pieces.
const PIECE_PRODUCT: usize = 2 * PIECE - 1;
/// Toom-Cook-4 evaluation points: 0, 1, −1, 2, −2, ½ (scaled by 8), ∞.
const POINTS: usize = 7;
/// Longest operand any plan uses, in words (the arrays are sized for it).
const MAX_WORDS: usize = 64;
/// Widest product slot (KS1 `l` or KS2 `2b`) the packing and unpacking support; the plans use
/// at most 30.
const MAX_SLOT_BITS: u32 = 30;
/// Gain of each evaluation point (sum of the absolute evaluation weights).
const POINT_GAIN: [u32; POINTS] = [1, 4, 4, 15, 15, 15, 1];
/// Largest |a| after centring.
const A_BOUND: u64 = 1 << 12;
/// Largest |s| ([`crate::poly::SECRET_BOUND`]).
const S_BOUND: u64 = crate::poly::SECRET_BOUND as u64;

/// How one point product is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointMethod {
    /// One multiplication of the operands evaluated at `2^l`.
    Ks1,
    /// Two multiplications, at `2^b` and `−2^b` (Harvey's KS2).
    Ks2,
}

/// The public multiplication plan of one Toom-Cook point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointPlan {
    /// KS1 or KS2.
    pub method: PointMethod,
    /// Digit width of the packed operands: `l` for KS1, `b` for KS2 (the product slots are `l`
    /// or `2b` bits wide).
    pub digit_bits: u32,
    /// Operand length in words given to the engine (products are twice as long).
    pub operand_words: usize,
    /// Where this point's prepared operand(s) start in a prepared secret, in words.
    pub prepared_offset: usize,
}

/// Number of bits of `x` (position of its highest set bit, plus one).
const fn bit_length(x: u64) -> u32 {
    u64::BITS - x.leading_zeros()
}

/// The multiplication plan for an engine of `max_words` words with the given granule.
///
/// Panics (at compile time, when used in a constant) if the engine is too small even for KS2.
pub const fn plan(max_words: usize, granule: usize) -> [PointPlan; POINTS] {
    let max_words = if max_words < MAX_WORDS {
        max_words
    } else {
        MAX_WORDS
    };
    let mut plans = [PointPlan {
        method: PointMethod::Ks1,
        digit_bits: 0,
        operand_words: 0,
        prepared_offset: 0,
    }; 7];
    let mut prepared_offset = 0;
    let mut p = 0;
    while p < POINTS {
        let gain = POINT_GAIN[p] as u64;
        let coefficient_bound = PIECE as u64 * A_BOUND * gain * S_BOUND * gain;
        // Signed slots: |c| ≤ B < 2^(l−1).
        let slot_bits = bit_length(coefficient_bound) + 1;
        assert!(
            slot_bits <= MAX_SLOT_BITS,
            "slot wider than the unpacking supports"
        );
        let digit_max_bits = bit_length(A_BOUND * gain);
        let ks1_words = operand_words(slot_bits, digit_max_bits, granule);
        plans[p] = if ks1_words <= max_words {
            PointPlan {
                method: PointMethod::Ks1,
                digit_bits: slot_bits,
                operand_words: ks1_words,
                prepared_offset,
            }
        } else {
            let half = slot_bits.div_ceil(2);
            assert!(
                2 * half <= MAX_SLOT_BITS,
                "KS2 slot wider than the unpacking supports"
            );
            let ks2_words = operand_words(half, digit_max_bits, granule);
            assert!(ks2_words <= max_words, "engine too small for Kronecker KS2");
            PointPlan {
                method: PointMethod::Ks2,
                digit_bits: half,
                operand_words: ks2_words,
                prepared_offset,
            }
        };
        prepared_offset += plans[p].operand_words
            * match plans[p].method {
                PointMethod::Ks1 => 1,
                PointMethod::Ks2 => 2,
            };
        p += 1;
    }
    assert!(
        prepared_offset <= PREPARED_WORDS,
        "prepared operands do not fit"
    );
    plans
}

/// Words of a two's-complement operand with 64 digits at `digit_bits` spacing and |digit| <
/// 2^`digit_max_bits`: `63·w + cb + 2` bits (module docs), rounded up to the granule.
const fn operand_words(digit_bits: u32, digit_max_bits: u32, granule: usize) -> usize {
    let bits = (PIECE as u32 - 1) * digit_bits + digit_max_bits + 2;
    (bits.div_ceil(32) as usize).next_multiple_of(granule)
}

/// Number of engine multiplications per polynomial product under `plans`.
pub const fn multiplications_per_product(plans: &[PointPlan; POINTS]) -> usize {
    let mut count = 0;
    let mut p = 0;
    while p < POINTS {
        count += match plans[p].method {
            PointMethod::Ks1 => 1,
            PointMethod::Ks2 => 2,
        };
        p += 1;
    }
    count
}

/// Words a prepared secret can occupy (seven points of at most 64 words; KS2 points need two
/// operands of about half that).
const PREPARED_WORDS: usize = POINTS * MAX_WORDS;

/// A secret evaluated at the Toom points and packed as engine operands (for KS2: at `+2^b` and
/// `−2^b`). Wiped by the caller (it is plain data, see the PolyMul docs).
#[derive(Clone, Zeroize)]
pub struct KroneckerPrepared {
    /// The operands of all points back to back, at [`PointPlan::prepared_offset`].
    words: [u32; PREPARED_WORDS],
}

impl KroneckerPrepared {
    const ZERO: Self = Self {
        words: [0; PREPARED_WORDS],
    };
}

/// Exact sums of the point products (coefficients of the seven 64×64 products), up to four
/// products (bound in the module docs).
#[derive(Clone, Zeroize)]
pub struct KroneckerAccumulator {
    points: [[i32; PIECE_PRODUCT]; POINTS],
}

/// Operand and product buffers of one `mul_acc` (secret-derived: wiped afterwards).
#[derive(Zeroize)]
struct Scratch {
    operand: [u32; MAX_WORDS],
    product: [u32; 2 * MAX_WORDS],
    other: [u32; 2 * MAX_WORDS],
}

/// The Kronecker-substitution backend over a big-integer engine `E`.
///
/// `Kronecker<SoftwareBigMul>` (alias [`KroneckerSoft`]) runs anywhere;
/// `Kronecker<Esp32Rsa<…>>` drives the ESP32 RSA accelerator (see [`crate::hw`]).
#[derive(Clone, Debug, Default)]
pub struct Kronecker<E: BigMul = SoftwareBigMul> {
    engine: E,
}

/// The software Kronecker backend.
pub type KroneckerSoft = Kronecker<SoftwareBigMul>;

impl<E: BigMul> Kronecker<E> {
    /// The plan used on this engine (public: depends only on the engine type).
    pub const PLAN: [PointPlan; POINTS] = plan(E::MAX_OPERAND_WORDS, E::OPERAND_WORDS_GRANULE);
    /// Engine multiplications per polynomial product.
    pub const MULTIPLICATIONS_PER_PRODUCT: usize = multiplications_per_product(&Self::PLAN);

    /// The backend on `engine`.
    pub fn new(engine: E) -> Self {
        Self { engine }
    }

    /// The engine.
    pub fn engine(&self) -> &E {
        &self.engine
    }

    /// The engine, mutably (e.g. to read a hardware model's counters).
    pub fn engine_mut(&mut self) -> &mut E {
        &mut self.engine
    }

    /// Gives the engine back (e.g. the hardware peripheral handle).
    pub fn into_engine(self) -> E {
        self.engine
    }

    /// `acc_point += f·g` for the point `p`, where `f` is the public side's evaluation and
    /// `g` the prepared operands.
    fn point_product(
        &mut self,
        p: usize,
        f: &[i32; PIECE],
        g: &[u32; PREPARED_WORDS],
        acc_point: &mut [i32; PIECE_PRODUCT],
        scratch: &mut Scratch,
    ) {
        let plan = Self::PLAN[p];
        let n = plan.operand_words;
        let w = plan.digit_bits;
        let g = &g[plan.prepared_offset..];
        // Every stage writes the whole range it uses, so the scratch needs no clearing in between.
        let x = &mut scratch.operand[..n];
        let product = &mut scratch.product[..2 * n];
        match plan.method {
            PointMethod::Ks1 => {
                pack(f, w, false, x);
                self.signed_mul(x, &g[..n], product);
                unpack_add(product, 0, w, acc_point, (0, 1, PIECE_PRODUCT));
            }
            PointMethod::Ks2 => {
                let other = &mut scratch.other[..2 * n];
                pack(f, w, false, x);
                self.signed_mul(x, &g[..n], product);
                pack(f, w, true, x);
                self.signed_mul(x, &g[n..2 * n], other);
                // product ← h(2^b) − h(−2^b) = 2^(b+1)·h_odd(2^2b), other ← h(2^b) + h(−2^b) =
                // 2·h_even(2^2b); both exact in 2n words (module docs).
                sum_and_difference(other, product);
                unpack_add(other, 1, 2 * w, acc_point, (0, 2, PIECE));
                unpack_add(product, w as usize + 1, 2 * w, acc_point, (1, 2, PIECE - 1));
            }
        }
    }

    /// `product = x·y` for two's-complement `x`, `y` of `n` words, as a two's-complement number
    /// of `2n` words (exact: |x·y| < 2^(64n−1) by the operand sizing).
    fn signed_mul(&mut self, x: &[u32], y: &[u32], product: &mut [u32]) {
        self.engine.mul(x, y, product);
        let n = x.len();
        let x_negative = sign_mask(x);
        let y_negative = sign_mask(y);
        // (x + 2^32n·[x<0])·(y + 2^32n·[y<0]) ≡ x·y + 2^32n·(x_u·[y<0] + y_u·[x<0]) mod 2^64n.
        let high = &mut product[n..];
        sub_masked(high, x, y_negative);
        sub_masked(high, y, x_negative);
    }
}

/// All-ones if the two's-complement number `words` is negative, else zero.
fn sign_mask(words: &[u32]) -> u32 {
    0u32.wrapping_sub(words[words.len() - 1] >> 31)
}

/// `acc −= value & mask` over equal lengths, mod 2^(32·len).
fn sub_masked(acc: &mut [u32], value: &[u32], mask: u32) {
    let mut borrow = 0u64;
    for (a, &v) in acc.iter_mut().zip(value) {
        let t = (*a as u64)
            .wrapping_sub((v & mask) as u64)
            .wrapping_sub(borrow);
        *a = t as u32;
        borrow = (t >> 63) & 1;
    }
}

/// `(sum, difference) ← (sum + difference, difference_before − sum_before)`, i.e. with
/// `sum = h⁻`, `difference = h⁺` on entry: `sum = h⁺ + h⁻`, `difference = h⁺ − h⁻`.
fn sum_and_difference(sum: &mut [u32], difference: &mut [u32]) {
    let mut carry = 0u64;
    let mut borrow = 0u64;
    for (minus, plus) in sum.iter_mut().zip(difference.iter_mut()) {
        let s = (*plus as u64) + (*minus as u64) + carry;
        let d = (*plus as u64)
            .wrapping_sub(*minus as u64)
            .wrapping_sub(borrow);
        carry = s >> 32;
        borrow = (d >> 63) & 1;
        *minus = s as u32;
        *plus = d as u32;
    }
}

/// Packs `Σ d_i·2^(w·i)` (with `d_i = (−1)^i·digits[i]` when `alternate`) as a two's-complement
/// integer filling `out`.
fn pack(digits: &[i32; PIECE], w: u32, alternate: bool, out: &mut [u32]) {
    out.fill(0);
    // |digit| < 2^16 and the borrow stays small, so i32 holds every intermediate (w ≤ 30).
    let field_mask = (1u32 << w) - 1;
    let odd_sign = if alternate { -1i32 } else { 1 };
    let mut borrow = 0i32;
    let mut sign = 1i32;
    for (i, &d) in digits.iter().enumerate() {
        let value = sign * d + borrow;
        // value = field + 2^w·borrow, field ∈ [0, 2^w).
        let field = value as u32 & field_mask;
        borrow = value >> w;
        or_bits(out, i * w as usize, field);
        sign *= odd_sign;
    }
    // The remaining (small, signed) borrow sits above the last digit, sign-extended to the top.
    let offset = PIECE * w as usize;
    let mut word = offset >> 5;
    let mut rest = (borrow as i64) << (offset & 31);
    while word < out.len() {
        out[word] |= rest as u32;
        rest >>= 32;
        word += 1;
    }
}

/// ORs a field of at most 32 bits into `out` at bit `offset`.
fn or_bits(out: &mut [u32], offset: usize, field: u32) {
    let word = offset >> 5;
    let shifted = (field as u64) << (offset & 31);
    out[word] |= shifted as u32;
    if word + 1 < out.len() {
        out[word + 1] |= (shifted >> 32) as u32;
    }
}

/// Adds the `count` signed `slot`-bit digits of `words`, starting at bit `offset`, to
/// `acc[first], acc[first + stride], …` (stride 2 when decoding one KS2 half, else 1).
///
/// Precondition: the number equals `Σ c_k·2^(offset + slot·k)` (plus higher digits) with
/// `|c_k| < 2^(slot−1)`, and the bits below `offset` are zero. Slots are at most
/// [`MAX_SLOT_BITS`] wide, so a digit lies within two consecutive words and every intermediate
/// fits `i32` (the carry is 0 or 1).
fn unpack_add(
    words: &[u32],
    offset: usize,
    slot: u32,
    acc: &mut [i32; PIECE_PRODUCT],
    (first, stride, count): (usize, usize, usize),
) {
    let sign_fill = sign_mask(words);
    let word = |i: usize| words.get(i).copied().unwrap_or(sign_fill);
    let mask = (1u32 << slot) - 1;
    let mut carry = 0i32;
    for k in 0..count {
        let bit = offset + k * slot as usize;
        let window = word(bit >> 5) as u64 | (word((bit >> 5) + 1) as u64) << 32;
        let field = ((window >> (bit & 31)) as u32 & mask) as i32;
        let t = field + carry;
        // Sign-extend the low `slot` bits of t: the digit; the rest is carried upwards.
        let digit = (t << (32 - slot)) >> (32 - slot);
        carry = (t - digit) >> slot;
        let index = first + k * stride;
        acc[index] = acc[index].wrapping_add(digit);
    }
}

/// Toom-Cook-4 evaluation at the seven points of the polynomial whose coefficient k is
/// `coeff(k)` (read where it is: no widened copy beside the evaluation).
fn evaluate(coeff: impl Fn(usize) -> i32) -> [[i32; PIECE]; POINTS] {
    let mut out = [[0i32; PIECE]; POINTS];
    for j in 0..PIECE {
        let c0 = coeff(j);
        let c1 = coeff(PIECE + j);
        let c2 = coeff(2 * PIECE + j);
        let c3 = coeff(3 * PIECE + j);
        let even = c0 + c2;
        let odd = c1 + c3;
        let even2 = c0 + 4 * c2;
        let odd2 = 2 * c1 + 8 * c3;
        let values = [
            c0,
            even + odd,
            even - odd,
            even2 + odd2,
            even2 - odd2,
            8 * c0 + 4 * c1 + 2 * c2 + c3,
            c3,
        ];
        for (point, value) in out.iter_mut().zip(values) {
            point[j] = value;
        }
    }
    out
}

/// Inverse of 3 mod 2^64.
const INVERSE_3: u64 = 0xAAAA_AAAA_AAAA_AAAB;
/// Inverse of 5 mod 2^64.
const INVERSE_5: u64 = 0xCCCC_CCCC_CCCC_CCCD;

/// `x / d` for `d` odd and `x` a multiple of `d` (exact over the integers), as a multiplication.
fn exact_div_odd(x: i64, inverse: u64) -> i64 {
    (x as u64).wrapping_mul(inverse) as i64
}

/// Toom-Cook-4 interpolation of the accumulated point values, then the negacyclic fold.
///
/// With `c(y) = Σ c_i y^i` (degree 6) and point values `r0 = c(0)`, `r1 = c(1)`, `r2 = c(−1)`,
/// `r3 = c(2)`, `r4 = c(−2)`, `r5 = 64·c(½)`, `r6 = c_6`:
/// - `c0 = r0`, `c6 = r6`;
/// - `e1 = (r1 + r2)/2 = c0 + c2 + c4 + c6`, `o1 = (r1 − r2)/2 = c1 + c3 + c5`;
/// - `e2 = (r3 + r4)/2 = c0 + 4c2 + 16c4 + 64c6`, `o2 = (r3 − r4)/4 = c1 + 4c3 + 16c5`;
/// - `p = e1 − c0 − c6 = c2 + c4`, `q = (e2 − c0 − 64c6)/4 = c2 + 4c4`: `c4 = (q − p)/3`,
///   `c2 = p − c4`;
/// - `h = (r5 − 64c0 − 16c2 − 4c4 − c6)/2 = 16c1 + 4c3 + c5`;
/// - `u = (o2 − o1)/3 = c3 + 5c5`, `v = (16·o1 − h)/3 = 4c3 + 5c5`: `c3 = (v − u)/3`,
///   `c5 = (u − c3)/5`, `c1 = o1 − c3 − c5`.
///
/// Every division is exact over the integers; the values stay far below 2^63.
// Coefficient j of all seven points at once: an index loop reads clearest.
#[allow(clippy::needless_range_loop)]
fn interpolate(acc: &KroneckerAccumulator) -> Poly {
    let r = &acc.points;
    let mut full = [0u16; 2 * N];
    for j in 0..PIECE_PRODUCT {
        let [r0, r1, r2, r3, r4, r5, r6] = [0, 1, 2, 3, 4, 5, 6].map(|p| r[p][j] as i64);
        let c0 = r0;
        let c6 = r6;
        let e1 = (r1 + r2) >> 1;
        let o1 = (r1 - r2) >> 1;
        let e2 = (r3 + r4) >> 1;
        let o2 = (r3 - r4) >> 2;
        let p = e1 - c0 - c6;
        let q = (e2 - c0 - 64 * c6) >> 2;
        let c4 = exact_div_odd(q - p, INVERSE_3);
        let c2 = p - c4;
        let h = (r5 - 64 * c0 - 16 * c2 - 4 * c4 - c6) >> 1;
        let u = exact_div_odd(o2 - o1, INVERSE_3);
        let v = exact_div_odd(16 * o1 - h, INVERSE_3);
        let c3 = exact_div_odd(v - u, INVERSE_3);
        let c5 = exact_div_odd(u - c3, INVERSE_5);
        let c1 = o1 - c3 - c5;
        for (i, c) in [c0, c1, c2, c3, c4, c5, c6].into_iter().enumerate() {
            let k = i * PIECE + j;
            full[k] = full[k].wrapping_add(c as u16);
        }
    }
    let mut out = Poly::ZERO;
    for (k, o) in out.coeffs.iter_mut().enumerate() {
        // x^256 = −1.
        *o = full[k].wrapping_sub(full[k + N]);
    }
    full.zeroize();
    out
}

impl<E: BigMul> PolyMul for Kronecker<E> {
    type Prepared = KroneckerPrepared;
    type Accumulator = KroneckerAccumulator;

    /// Built in the slot (no prepared value beside the transform's buffers).
    fn prepares_in_slot(&self) -> bool {
        true
    }

    fn prepare(&mut self, s: &SecretPoly) -> KroneckerPrepared {
        let mut prepared = KroneckerPrepared::ZERO;
        self.prepare_into(s, &mut prepared);
        prepared
    }

    /// Every plan writes the same words, so a slot prepared before needs no clearing.
    fn prepare_into(&mut self, s: &SecretPoly, out: &mut KroneckerPrepared) {
        let mut evaluated = evaluate(|k| s.coeffs[k] as i32);
        for (plan, digits) in Self::PLAN.iter().zip(evaluated.iter()) {
            let n = plan.operand_words;
            let operands = &mut out.words[plan.prepared_offset..];
            pack(digits, plan.digit_bits, false, &mut operands[..n]);
            if plan.method == PointMethod::Ks2 {
                pack(digits, plan.digit_bits, true, &mut operands[n..2 * n]);
            }
        }
        evaluated.zeroize();
    }

    fn prepare_in(&mut self, s: &SecretPoly, slot: &mut Option<KroneckerPrepared>) {
        let prepared = slot.get_or_insert(KroneckerPrepared::ZERO);
        self.prepare_into(s, prepared);
    }

    fn accumulator(&mut self) -> KroneckerAccumulator {
        KroneckerAccumulator {
            points: [[0; PIECE_PRODUCT]; POINTS],
        }
    }

    fn mul_acc(&mut self, acc: &mut KroneckerAccumulator, a: &Poly, s: &KroneckerPrepared) {
        let mut evaluated = evaluate(|k| centred(a.coeffs[k]));
        let mut scratch = Scratch {
            operand: [0; MAX_WORDS],
            product: [0; 2 * MAX_WORDS],
            other: [0; 2 * MAX_WORDS],
        };
        for (p, (f, sums)) in evaluated.iter().zip(acc.points.iter_mut()).enumerate() {
            self.point_product(p, f, &s.words, sums, &mut scratch);
        }
        scratch.zeroize();
        evaluated.zeroize();
    }

    fn finish(&mut self, acc: &KroneckerAccumulator) -> Poly {
        interpolate(acc)
    }

    fn name(&self) -> &'static str {
        E::BACKEND_NAME
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_match_the_documented_sizes() {
        let wide = plan(64, 1);
        assert_eq!(wide.map(|p| p.operand_words), [44, 52, 52, 60, 60, 60, 44]);
        assert!(wide.iter().all(|p| p.method == PointMethod::Ks1));
        assert_eq!(multiplications_per_product(&wide), 7);
        let esp32 = plan(64, 16);
        assert_eq!(esp32.map(|p| p.operand_words), [48, 64, 64, 64, 64, 64, 48]);
        let narrow = plan(48, 1);
        assert_eq!(
            narrow.map(|p| p.operand_words),
            [44, 27, 27, 31, 31, 31, 44]
        );
        assert_eq!(
            narrow.map(|p| p.method == PointMethod::Ks2),
            [false, true, true, true, true, true, false]
        );
        assert_eq!(multiplications_per_product(&narrow), 12);
    }

    #[test]
    fn pack_and_unpack_round_trip_signed_digits() {
        let mut digits = [0i32; PIECE];
        for (i, d) in digits.iter_mut().enumerate() {
            *d = if i & 3 == 0 {
                -61_440
            } else {
                61_439 - i as i32 * 977
            };
        }
        let mut words = [0u32; 64];
        pack(&digits, 30, false, &mut words[..60]);
        let mut acc = [0i32; PIECE_PRODUCT];
        unpack_add(&words[..60], 0, 30, &mut acc, (0, 1, PIECE));
        assert_eq!(&acc[..PIECE], &digits[..]);
    }

    #[test]
    fn interpolation_inverts_evaluation_of_a_product() {
        // Evaluate a known degree-6 polynomial in y at the points and interpolate it back.
        let c: [i64; 7] = [5, -17, 123_456, -99, 7, 1_000_001, -3];
        let mut acc = KroneckerAccumulator {
            points: [[0; PIECE_PRODUCT]; POINTS],
        };
        let eval = |t_num: i64, t_den_log2: u32| -> i64 {
            // 2^(6·log) · c(t_num / 2^log)
            (0..7)
                .map(|i| (c[i] * t_num.pow(i as u32)) << (t_den_log2 * (6 - i as u32)))
                .sum()
        };
        let values = [
            c[0],
            eval(1, 0),
            eval(-1, 0),
            eval(2, 0),
            eval(-2, 0),
            eval(1, 1),
            c[6],
        ];
        for (point, value) in acc.points.iter_mut().zip(values) {
            point[0] = value as i32;
        }
        let out = interpolate(&acc);
        for i in 0..4 {
            assert_eq!(
                out.coeffs[i * PIECE],
                (c[i] - if i < 3 { c[i + 4] } else { 0 }) as u16
            );
        }
    }

    /// All three plan shapes (KS1 only, mixed, KS2 only) against the schoolbook oracle on the
    /// extreme inputs and on pseudo-random ones, with four accumulated products.
    fn check_engine<E: BigMul + Default>() {
        use crate::polymul::Schoolbook;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut cases: [(Poly, SecretPoly); 4] = Default::default();
        for round in 0..6 {
            for (i, (a, s)) in cases.iter_mut().enumerate() {
                for (ac, sc) in a.coeffs.iter_mut().zip(s.coeffs.iter_mut()) {
                    let r = next();
                    (*ac, *sc) = match round {
                        0 => (4096, 5),
                        1 => (4096, -5),
                        2 => (
                            if i & 1 == 0 { 4095 } else { 4096 },
                            if i & 1 == 0 { 5 } else { -5 },
                        ),
                        _ => (r as u16, ((((r >> 16) & 0xffff) * 11) >> 16) as i8 - 5),
                    };
                }
            }
            let mut backend = Kronecker::<E>::default();
            let mut oracle = Schoolbook;
            let mut acc = backend.accumulator();
            let mut want = oracle.accumulator();
            for (a, s) in &cases {
                let prepared = backend.prepare(s);
                backend.mul_acc(&mut acc, a, &prepared);
                let prepared = oracle.prepare(s);
                oracle.mul_acc(&mut want, a, &prepared);
            }
            let got = backend.finish(&acc).coeffs.map(|c| c & 0x1fff);
            assert_eq!(got, want.coeffs.map(|c| c & 0x1fff), "round {round}");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "hundreds of full products: minutes under Miri")]
    fn every_plan_shape_matches_schoolbook() {
        check_engine::<SoftwareBigMul<64>>();
        check_engine::<SoftwareBigMul<48>>();
        check_engine::<SoftwareBigMul<32>>();
    }
}
