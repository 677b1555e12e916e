//! The NTT prime, its Montgomery constants and the twiddle tables, computed at compile time.
//!
//! Everything here is a public constant: the `/` and `%` below run in `const fn`s during
//! compilation only and never touch secret data.

use crate::poly::N;

/// The prime q' = 41,944,577 = 2^9 · 81,923 + 1: the smallest prime above 2 · 4 · 256 · 4096 · 5
/// = 41,943,040 with 512 | q' − 1 (see the bound proof in [`super`]).
pub(crate) const Q: i32 = 41_944_577;

/// A generator of the multiplicative group mod [`Q`] (3 is a quadratic non-residue, so
/// 3^((q'−1)/2^k) has order exactly 2^k for every 2^k | q' − 1; checked by `primitive_root`).
const GENERATOR: u64 = 3;

/// Parameters of one incomplete (or complete) negacyclic NTT over [`Q`].
///
/// `LAYERS` butterfly layers split x^256 + 1 into `2^LAYERS` blocks x^BLOCK ∓ ζ with
/// BLOCK = 256 / 2^LAYERS.
pub(crate) trait Params {
    /// Number of butterfly layers (2..=8).
    const LAYERS: usize;
    /// Coefficients per block after the transform.
    const BLOCK: usize = N >> Self::LAYERS;
    /// log2 of [`Params::BLOCK`].
    const LOG_BLOCK: usize = 8 - Self::LAYERS;
    /// Forward twiddles: `ZETAS[2^l + g]` is ζ·2^32 mod q' (centred) for group `g` of layer `l`.
    const ZETAS: [i32; N] = twiddles(Self::LAYERS, false);
    /// Inverse twiddles, same indexing: ζ^(−1)·2^32 mod q' (centred).
    const ZETAS_INV: [i32; N] = twiddles(Self::LAYERS, true);
    /// Final factor of the inverse transform: 2^64 / 2^LAYERS mod q' (centred). Montgomery
    /// multiplication by it removes the 2^LAYERS of the Gentleman–Sande butterflies and the 2^−32
    /// of the accumulator's Montgomery reduction.
    const FINAL_SCALE: i32 = final_scale(Self::LAYERS);
}

/// q'^(−1) mod 2^32, as a signed word.
pub(crate) const QINV: i32 = odd_inverse(Q as u32) as i32;
/// 2^32 mod q', centred: Montgomery multiplication by it is the identity map mod q'.
pub(crate) const ONE_MONT: i32 = centred(mont_form(1));
/// (q' − 1) / 2: canonical centred residues lie in [−HALF_Q, HALF_Q].
pub(crate) const HALF_Q: i32 = (Q - 1) >> 1;

/// The transform with `L` layers: 2^L blocks mod x^(256/2^L) ∓ ζ. `L` = 6 is the one the public
/// backends use; 5, 7 and 8 (the complete NTT) exist for the layer-count measurement.
pub(crate) struct LayerCount<const L: usize>;
impl<const L: usize> Params for LayerCount<L> {
    const LAYERS: usize = L;
}

/// The 6-layer transform of the public backends: 64 blocks mod x^4 ∓ ζ.
pub(crate) type Layers6 = LayerCount<6>;

/// base^exp mod q (q' here; the AVX2 path's 16-bit primes too).
#[allow(clippy::integer_division_remainder_used)] // compile time, public constants
pub(super) const fn pow_mod(base: u64, mut exp: u64, q: u64) -> u64 {
    let mut acc = 1u64;
    let mut b = base % q;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = acc * b % q;
        }
        b = b * b % q;
        exp >>= 1;
    }
    acc
}

/// x · 2^32 mod q' for 0 <= x < q'.
#[allow(clippy::integer_division_remainder_used)] // compile time, public constants
const fn mont_form(x: u64) -> u64 {
    (x << 32) % (Q as u64)
}

/// x mod q, centred in [−(q − 1)/2, (q − 1)/2] (q odd; q' here, the AVX2 path's primes too).
pub(super) const fn centred_in(x: i64, q: i64) -> i64 {
    let r = x.rem_euclid(q);
    if r > (q - 1) >> 1 { r - q } else { r }
}

/// x mod q', centred.
const fn centred(x: u64) -> i32 {
    centred_in(x as i64, Q as i64) as i32
}

/// q^(−1) mod 2^32 for odd q (q' here; its low half is the inverse mod 2^16 of the AVX2 path's
/// primes).
pub(super) const fn odd_inverse(q: u32) -> u32 {
    // Newton iteration x ← x(2 − qx) doubles the number of correct low bits; an odd q is its own
    // inverse mod 8 (3 bits), so four steps reach 48 >= 32 bits.
    let mut x = q;
    let mut i = 0;
    while i < 4 {
        x = x.wrapping_mul(2u32.wrapping_sub(q.wrapping_mul(x)));
        i += 1;
    }
    assert!(q.wrapping_mul(x) == 1);
    x
}

/// A root of unity of order exactly 2^(layers+1), the one whose powers the twiddles are.
#[allow(clippy::integer_division_remainder_used)] // compile time, public constants
const fn primitive_root(layers: usize) -> u64 {
    let order = 1u64 << (layers + 1);
    assert!((Q as u64 - 1).is_multiple_of(order));
    let root = pow_mod(GENERATOR, (Q as u64 - 1) / order, Q as u64);
    // Order exactly 2^(layers+1): its 2^layers-th power is −1.
    assert!(pow_mod(root, order >> 1, Q as u64) == Q as u64 - 1);
    root
}

const fn bit_reverse(x: usize, bits: usize) -> usize {
    let mut out = 0;
    let mut i = 0;
    while i < bits {
        out |= ((x >> i) & 1) << (bits - 1 - i);
        i += 1;
    }
    out
}

/// `table[2^l + g]` = root^brv(2^l + g) (Kyber's indexing, generalised to `layers`): group `g`
/// of layer `l` splits x^(2m) − ζ² into (x^m − ζ)(x^m + ζ).
const fn twiddles(layers: usize, inverse: bool) -> [i32; N] {
    let mut table = plain_twiddles(layers, inverse);
    let mut i = 1;
    while i < (1 << layers) {
        let x = table[i];
        table[i] = centred(mont_form(if x < 0 { x + Q } else { x } as u64));
        i += 1;
    }
    table
}

/// The twiddles of [`twiddles`] as plain centred residues (no Montgomery factor), same indexing.
pub(crate) const fn plain_twiddles(layers: usize, inverse: bool) -> [i32; N] {
    let root = primitive_root(layers);
    let order = 1u64 << (layers + 1);
    let mut table = [0i32; N];
    let mut i = 1;
    while i < (1 << layers) {
        let exp = bit_reverse(i, layers) as u64;
        let exp = if inverse { order - exp } else { exp };
        table[i] = centred(pow_mod(root, exp, Q as u64));
        i += 1;
    }
    table
}

/// 2^(−k) mod q', centred.
pub(crate) const fn inverse_power_of_two(k: usize) -> i32 {
    centred(pow_mod((Q as u64).div_ceil(2), k as u64, Q as u64))
}

#[allow(clippy::integer_division_remainder_used)] // compile time, public constants
const fn final_scale(layers: usize) -> i32 {
    let q = Q as u64;
    // 2^−layers = ((q' + 1) / 2)^layers mod q'.
    let inv = pow_mod(q.div_ceil(2), layers as u64, q);
    centred(mont_form(mont_form(inv)))
}

/// ζ·2^32 mod q' of block `block`: x^BLOCK − ζ for even blocks, x^BLOCK + ζ for odd ones,
/// with ζ the twiddle of the last layer's group `block / 2`.
pub(crate) const fn block_zeta<P: Params>(block: usize) -> i32 {
    let zeta = P::ZETAS[(1 << (P::LAYERS - 1)) + (block >> 1)];
    if block & 1 == 0 { zeta } else { -zeta }
}

/// The NTT-domain storage order shared by every path: blocks 4p + 1 and 4p + 2 trade places, so
/// that one AVX2 register holds two blocks that its last butterfly layer produces together.
pub(crate) const fn block_slot(block: usize) -> usize {
    let swap = (block ^ (block >> 1)) & 1;
    block ^ (swap * 3)
}

/// Index of NTT-domain position `d` in the `i64` accumulator: each group of sixteen positions
/// (one AVX-512 register, two AVX2 ones) stores its eight even positions, then its eight odd
/// ones (the two halves of a 32×32→64-bit product on even and odd lanes).
pub(crate) const fn acc_index(d: usize) -> usize {
    (d & !15) | ((d & 1) << 3) | ((d & 15) >> 1)
}

/// Index of column `i`, row `k` of the base-multiplication matrix of the block stored in slot
/// `slot` (see [`block_slot`]): slots are grouped by four (one AVX-512 register of 4-coefficient
/// blocks, two AVX2 ones), and a group stores column `i` of its four blocks next to each other.
pub(crate) const fn prepared_index<P: Params>(slot: usize, i: usize, k: usize) -> usize {
    let b = P::BLOCK;
    (slot >> 2) * 4 * b * b + i * 4 * b + (slot & 3) * b + k
}
