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
//! 3. **Prepared secret** ([`NttMerged`]). The first layer's products are exact (|s·ω| <=
//!    5·q'/2 < 2^31, no reduction): below 2.51·q' after it, below 7.7·q' after all six. A
//!    multiplication by 1 (a Barrett reduction, (1)) brings each coefficient into (−0.04·q',
//!    1.04·q'); the ζ-multiples of the unreduced coefficients lie in the same range. Secret
//!    quarters ([`NttLowStack`]): below 11.7·q' (see [`secret_quarter`]), their ζ-multiples
//!    below 1.06·q'.
//! 4. **Base multiplication.** A 4-term dot product is at most 4 · 6.1·q' · 1.04·q' < 25.4·q'^2
//!    ([`NttMerged`]) or 4 · 6.1 · 11.7·q'^2 < 285.5·q'^2 ([`NttLowStack`]), below 2^63 in
//!    `i64`; a Montgomery reduction (R = 2^32) of x is at most |x|/2^32 + q'/2 (q'/2^32 <
//!    0.00977). [`NttMerged`] adds the dot products of up to four products unreduced (below
//!    101.6·q'^2 < 2^58) and reduces each sum once, at the start of the inverse: below 1.5·q'.
//!    [`NttLowStack`] reduces each product: below 3.3·q'.
//! 5. **Inverse**, for inputs below 6.3·q' (so that 8 · 6.3·q' < 2^31). Gentleman–Sande
//!    butterflies double the sums per layer: the first three layers give at most 50.4·q' <
//!    2^31. Between the two halves every coefficient is multiplied by 2^32/2^6 mod q' ((1):
//!    within (−0.25·q', 1.25·q')), which removes the 2^(−32) of (4) and the 2^6 of the
//!    butterflies; the last three layers then give at most 8 · 1.25·q' = 10·q'. A final
//!    multiplication by 1 ((1): within (−0.05·q', 1.05·q')) and one conditional subtraction of q'
//!    give the canonical centred residue, which is the exact coefficient (the bound proof of
//!    [`super`], step 1).
//!
//! # Organisation
//!
//! [`NttMerged`] accumulates in the NTT domain like [`super::NttScalar`] (for the speed mode: a
//! prepared secret of 1,792 B, an accumulator of unreduced `i64` sums of 2 KiB, and 1 KiB for the
//! transform of each public operand while it is multiplied). [`NttLowStack`] finishes every
//! product inside `mul_acc` and needs only the transform of `a` (1 KiB) and a quarter of the
//! secret's (256 B) at a time: after two layers the four quarters of a transform are
//! independent, and for a secret (|s| <= 5) the first two layers are one exact combination of
//! four coefficients with constants, so each quarter is computed from the secret directly. Its
//! secret is the low-memory plan's packed form itself (used where it is,
//! [`PolyMul::with_packed`]), and the public operand is taken in pieces straight into the
//! transform buffer ([`PolyMul::mul_acc_pieces`]: centred, then the first three layers in
//! place), so that it is not held beside the transform either.
//!
//! # Kernels
//!
//! The passes and base multiplications sit behind the private `Kernels` trait: portable Rust
//! (`portable.rs`, every target), ARMv7-M assembly (`armv7m.s`, Cortex-M3/M4/M7/M33) and RV32IM
//! assembly (`rv32.s`), chosen by the `saber_armv7m` / `saber_rv32im` cfgs of `build.rs`. The
//! transforms compute the same values on every path; the base products are equal on ARMv7-M and
//! congruent on RV32 (bounds in `rv32.rs`), so the outputs are identical. [`NttMergedPortable`]
//! and [`NttLowStackPortable`] run the portable kernels on every target, so that `embedded/run`
//! measures and checks both paths under QEMU.

use zeroize::Zeroize;

use super::params::{Q, QINV, inverse_power_of_two, plain_twiddles};
use crate::poly::{N, Poly, SecretPoly, centred};
use crate::polymul::{PackedSecret, PolyMul, pack_secret, packed_secret};

mod portable;

cfg_if::cfg_if! {
    if #[cfg(saber_ntt_asm)] {
        mod asm;
        /// The kernels this target runs: ARMv7-M or RV32IM assembly.
        type Native = asm::Assembly;
    } else {
        /// The kernels this target runs: the portable ones.
        type Native = portable::Portable;
    }
}

/// A constant multiplier with its precomputed quotient ⌊ω·2^32/q'⌉ (this layout, ω first, is
/// what the assembly kernels load as one pair).
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct Twiddle {
    omega: i32,
    pub(crate) quotient: i32,
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

/// The twiddles of one merged group of three layers, in the order the butterflies use them.
type GroupTwiddles = [Twiddle; 7];

/// Forward twiddles in order of use: the first three layers (ζ_1; ζ_2, ζ_3; ζ_4..ζ_7 in the
/// indexing of [`super::params::Params::ZETAS`]), then for each group g of 32 coefficients
/// ζ_(8+g); ζ_(16+2g), ζ_(17+2g); ζ_(32+4g)..ζ_(35+4g).
pub(crate) const FORWARD: [GroupTwiddles; 9] = {
    let z = plain_twiddles(6, false);
    let mut out = [[twiddle(0); 7]; 9];
    out[0] = group_twiddles(&z, 1, 2, 4);
    let mut g = 0;
    while g < 8 {
        out[1 + g] = group_twiddles(&z, 8 + g, 16 + 2 * g, 32 + 4 * g);
        g += 1;
    }
    out
};

/// Inverse twiddles in order of use (the last layer first): for each group g ζ_(32+4g)..
/// ζ_(35+4g); ζ_(16+2g), ζ_(17+2g); ζ_(8+g)·F, then the first three layers ζ_4..ζ_7; ζ_2,
/// ζ_3; ζ_1 (all inverted; F = [`SCALES`]`[0]`, the middle scaling, folded into the differences
/// of the first half's last layer).
pub(crate) const INVERSE: [GroupTwiddles; 9] = {
    let z = plain_twiddles(6, true);
    let f = middle_scale() as i64;
    let mut out = [[twiddle(0); 7]; 9];
    let mut g = 0;
    while g < 8 {
        out[g] = reversed(group_twiddles(&z, 8 + g, 16 + 2 * g, 32 + 4 * g));
        out[g][6] = twiddle(centred_mod(z[8 + g] as i64 * f));
        g += 1;
    }
    out[8] = reversed(group_twiddles(&z, 1, 2, 4));
    out
};

/// The centred residue of x mod q' (compile time).
#[allow(clippy::integer_division_remainder_used)] // compile time, public constants
const fn centred_mod(x: i64) -> i32 {
    let q = Q as i64;
    let x = x.rem_euclid(q);
    (if x > (q - 1) / 2 { x - q } else { x }) as i32
}

const fn group_twiddles(z: &[i32; N], first: usize, second: usize, third: usize) -> GroupTwiddles {
    [
        twiddle(z[first]),
        twiddle(z[second]),
        twiddle(z[second + 1]),
        twiddle(z[third]),
        twiddle(z[third + 1]),
        twiddle(z[third + 2]),
        twiddle(z[third + 3]),
    ]
}

/// The order of use of the Gentleman–Sande butterflies: the four last-layer twiddles, the two
/// middle ones, the first.
const fn reversed(t: GroupTwiddles) -> GroupTwiddles {
    [t[3], t[4], t[5], t[6], t[1], t[2], t[0]]
}

/// The multiplier between the two halves of the inverse, F = 2^32 · 2^(−6) mod q', and
/// multiplication by one (a Barrett reduction), in this order.
pub(crate) const SCALES: [Twiddle; 2] = [twiddle(middle_scale()), twiddle(1)];

/// −q'^(−1) mod 2^32, for Montgomery reductions of the form (x + m·q')/2^32.
pub(crate) const NEG_QINV: i32 = QINV.wrapping_neg();

const fn middle_scale() -> i32 {
    centred_mod((1i64 << 32) * inverse_power_of_two(6) as i64)
}

/// The modulus ζ of block b (x^4 − ζ): the last layer's twiddle of group b/2, negated for odd b.
const fn block_zeta(block: usize) -> i32 {
    let zeta = plain_twiddles(6, false)[32 + (block >> 1)];
    if block & 1 == 0 { zeta } else { -zeta }
}

/// The block moduli as constant multipliers.
pub(crate) const BLOCK_ZETAS: [Twiddle; 64] = {
    let mut out = [twiddle(0); 64];
    let mut b = 0;
    while b < 64 {
        out[b] = twiddle(block_zeta(b));
        b += 1;
    }
    out
};

/// The constants c_1, c_2, c_3 with which quarter Q of the transform after two layers is
/// s_j + c_1·s_(j+64) + c_2·s_(j+128) + c_3·s_(j+192): for Q = 2h + k, c_1 = ±ζ_(2+h) (− for
/// odd k), c_2 = ±ζ_1 (− for odd h), c_3 = c_1·c_2 mod q'.
#[allow(clippy::integer_division_remainder_used)] // compile time, public constants
pub(crate) const QUARTER_COEFFS: [[i32; 3]; 4] = {
    let zetas = plain_twiddles(6, false);
    let mut out = [[0; 3]; 4];
    let mut quarter = 0;
    while quarter < 4 {
        let (h, k) = (quarter >> 1, quarter & 1);
        let c1 = if k == 0 { zetas[2 + h] } else { -zetas[2 + h] } as i64;
        let c2 = if h == 0 { zetas[1] } else { -zetas[1] } as i64;
        out[quarter] = [c1 as i32, c2 as i32, centred_mod(c1 * c2)];
        quarter += 1;
    }
    out
};

/// A secret two coefficients per byte ([`PackedSecret`]), as the low-stack kernels read it.
pub(crate) type Nibbles = PackedSecret;

/// Entries per block of a prepared secret: b_0..b_3 and ζ·b_1, ζ·b_2, ζ·b_3.
pub(crate) const PREPARED_PER_BLOCK: usize = 7;

/// A secret of [`NttMerged`] in the NTT domain, per block (bound 3).
pub(crate) type PreparedBlocks = [i32; PREPARED_PER_BLOCK * 64];

/// The passes of the transforms and the base multiplications, one implementation per
/// instruction set (the same transforms bit for bit; base products congruent within the bounds
/// of the module docs).
pub(crate) trait Kernels: Sized {
    /// An accumulator's unreduced sums as these kernels keep them.
    type Sums: WrittenFirst;
    /// A prepared secret's blocks as these kernels keep them.
    type Blocks: WrittenFirst;
    /// Layers 1–3 of the forward transform of 13-bit residues (centred first): 32 columns of
    /// eight coefficients at stride 32.
    fn forward_first_poly(a: &[u16; N], out: &mut [i32; N]);
    /// Layers 1–3 of the forward transform of a secret.
    fn forward_first_secret(s: &[i8; N], out: &mut [i32; N]);
    /// Layers 1–3 of the forward transform in place, from centred 13-bit residues. Portable
    /// on every target (used once per low-memory product, beside the kernels' other passes).
    fn forward_first_in_place(a: &mut [i32; N]) {
        portable::forward_first_in_place(a);
    }
    /// Layers 4–6 in place in `groups.len()` groups of 32 coefficients, whose twiddles are
    /// `twiddles[0..]`.
    fn forward_last(groups: &mut [[i32; 32]], twiddles: &[GroupTwiddles]);
    /// Calls `f` with the forward transform of `a` in a buffer of this call, and `a` back. The
    /// default zeroes the buffer first; the assembly kernels, which write every word of it
    /// before anything reads it, do not.
    fn with_transform<P: core::borrow::Borrow<Poly>, R>(
        a: P,
        f: impl FnOnce(&mut [i32; N], P) -> R,
    ) -> R {
        let mut w = [0i32; N];
        forward_poly::<Self>(a.borrow(), &mut w);
        f(&mut w, a)
    }
    /// Layer 3 of quarter `quarter` of a secret's transform, from the secret directly (see
    /// [`secret_quarter`]).
    fn secret_quarter_first(s: &Nibbles, quarter: usize, out: &mut [[i32; 32]; 2]);
    /// Layers 6–4 of the inverse transform in place, then the middle scaling.
    fn inverse_first(a: &mut [[i32; 32]; 8]);
    /// Leaves the NTT domain from unreduced sums (bound 4) that a product has stored into:
    /// `out` = the exact sum wrapped to `u16`; wipes `sums` (secret-derived) as it reads them.
    /// Layers 6–4 of the inverse start from the Montgomery reductions of the sums.
    fn finish_wide(sums: &mut Self::Sums, out: &mut [u16; N]);
    /// Layers 3–1 of the inverse transform and the canonical reduction: `out = c` (`add`
    /// false) or `out += c` (wrapping), c the exact coefficient wrapped to `u16`. Wipes `a`
    /// (secret-derived): the assembly stores zeros as it reads, the portable code calls
    /// `zeroize`; neither can be optimised away.
    fn inverse_last(a: &mut [i32; N], out: &mut [u16; N], add: bool);
    /// The prepared blocks of a secret whose transform is in `blocks[0..256]`, in place (from
    /// the last block down, so that no block is overwritten before it is read): per block
    /// b_0..b_3 multiplied by one (reduced) and b_1..b_3 multiplied by the block's ζ.
    fn prepare_blocks(blocks: &mut PreparedBlocks);
    /// The prepared blocks of `s` (its forward transform and ζ-multiples, bounds 2 and 3),
    /// written over all of `out`.
    fn prepare(s: &SecretPoly, out: &mut Self::Blocks);
    /// `acc += â ∘ prepared` (`acc = â ∘ prepared` when `first`; otherwise a product has
    /// stored into `acc` before), unreduced: per output a 4-term dot product of `i64` products.
    fn base_mul_acc(acc: &mut Self::Sums, a_hat: &[i32; N], prepared: &Self::Blocks, first: bool);
    /// `w = ŵ ∘ ŝ` in place for the sixteen blocks of quarter `quarter`, the ζ-multiples of ŝ
    /// computed on the way.
    fn base_mul_quarter(w: &mut [i32; 64], s_hat: &[i32; 64], quarter: usize);
}

/// A buffer that the kernels write whole before they read it (an accumulator's sums, stored by
/// its first product, [`Kernels::base_mul_acc`] with `first`; a prepared secret's blocks,
/// [`Kernels::prepare`]): made without a fill where the kernels allow it.
pub(crate) trait WrittenFirst: Copy + Zeroize {
    /// A buffer for the kernels to write (its values unused).
    fn unwritten() -> Self;
}

/// The portable kernels' sums: zeroed when made (safe Rust reads only initialised words).
impl WrittenFirst for [i64; N] {
    fn unwritten() -> Self {
        [0; N]
    }
}

/// The portable kernels' prepared blocks: zeroed when made.
impl WrittenFirst for PreparedBlocks {
    fn unwritten() -> Self {
        [0; PREPARED_PER_BLOCK * 64]
    }
}

fn as_groups(a: &mut [i32; N]) -> &mut [[i32; 32]; 8] {
    let (groups, rest) = a.as_chunks_mut::<32>();
    debug_assert!(rest.is_empty());
    groups.try_into().expect("256 = 8 · 32")
}

/// [`Kernels::prepare`] from the kernels' passes on initialised blocks.
fn prepare_from_passes<K: Kernels>(s: &SecretPoly, out: &mut PreparedBlocks) {
    let (transform, _) = out.split_first_chunk_mut::<N>().expect("448 >= 256");
    K::forward_first_secret(&s.coeffs, transform);
    K::forward_last(as_groups(transform), &FORWARD[1..]);
    K::prepare_blocks(out);
}

/// The forward transform of a public polynomial (centred from its 13 bits).
fn forward_poly<K: Kernels>(a: &Poly, out: &mut [i32; N]) {
    K::forward_first_poly(&a.coeffs, out);
    K::forward_last(as_groups(out), &FORWARD[1..]);
}

/// `sums += NTT(a) ∘ prepared` in the NTT domain, unreduced (stored into new sums when there
/// are none), the transform of `a` in a buffer of this call (public: not wiped).
fn mul_acc<K: Kernels>(sums: &mut Option<K::Sums>, a: &Poly, prepared: &K::Blocks) {
    let first = sums.is_none();
    let sums = sums.get_or_insert_with(K::Sums::unwritten);
    K::with_transform(a, |a_hat, _| K::base_mul_acc(sums, a_hat, prepared, first));
}

/// Quarter `quarter` of the forward transform of a secret (its blocks 16Q..16Q + 16), from the
/// secret directly: the first two layers as one exact combination with constants (|s| <= 5, so
/// each product is an exact `i32`: |c·s| <= 5·q'/2, the sum below 7.5·q'), then the remaining
/// four layers, each adding less than 1.06·q' (bound 1): |out| < 11.7·q'.
fn secret_quarter<K: Kernels>(s: &Nibbles, quarter: usize, out: &mut [[i32; 32]; 2]) {
    K::secret_quarter_first(s, quarter, out);
    K::forward_last(out, &FORWARD[1 + 2 * quarter..][..2]);
}

/// `acc += a · s`, finished at once: the transform of `a` (1 KiB), the secret's transform one
/// quarter at a time (256 B), the base products in place, the inverse added into `acc`.
/// Bounds 2–5 of the module docs: the base products are reduced to below 3.3·q'.
fn product_into<K: Kernels>(acc: &mut Poly, a: &Poly, s: &Nibbles) {
    K::with_transform(a, |w, _| product_finished::<K>(w, s, acc));
}

/// The rest of [`product_into`] from the transform `w` of the public operand: the secret's
/// transform a quarter at a time, the base products in place, the inverse added into `acc`
/// (`w` is wiped by it).
fn product_finished<K: Kernels>(w: &mut [i32; N], s: &Nibbles, acc: &mut Poly) {
    let mut quarter_hat = [[0i32; 32]; 2];
    for (quarter, w_quarter) in w.as_chunks_mut::<64>().0.iter_mut().enumerate() {
        secret_quarter::<K>(s, quarter, &mut quarter_hat);
        K::base_mul_quarter(
            w_quarter,
            quarter_hat.as_flattened().try_into().expect("64"),
            quarter,
        );
    }
    K::inverse_first(as_groups(w));
    K::inverse_last(w, &mut acc.coeffs, true);
    quarter_hat.as_flattened_mut().zeroize();
}

/// [`product_into`] of the public polynomial that `public` writes in pieces
/// ([`PolyMul::mul_acc_pieces`]), centred straight into the transform buffer: the polynomial is
/// never held beside it. Not inlined: the transform buffer lives only in this call.
#[inline(never)]
fn product_from_pieces<K: Kernels>(
    acc: &mut Poly,
    s: &Nibbles,
    public: impl FnOnce(&mut dyn FnMut(usize, &[u16])),
) {
    let mut w = [0i32; N];
    public(&mut |at, piece| {
        for (out, &c) in w[at..at + piece.len()].iter_mut().zip(piece) {
            *out = centred(c);
        }
    });
    K::forward_first_in_place(&mut w);
    K::forward_last(as_groups(&mut w), &FORWARD[1..]);
    product_finished::<K>(&mut w, s, acc);
}

/// `a ← sum + a · s` ([`PolyMul::mul_add_plain`]), as [`product_into`] with the sum written
/// into `a`'s storage once its transform is taken.
fn product_into_public<K: Kernels>(a: &mut Poly, s: &Nibbles, sum: impl FnOnce(&mut Poly)) {
    K::with_transform(a, |w, a| {
        sum(a);
        product_finished::<K>(w, s, a);
    });
}

/// The two backends over one set of kernels.
macro_rules! merged_backends {
    ($kernels:ty, $merged:ident, $merged_name:literal, $prepared:ident, $accumulator:ident,
     $low_stack:ident, $low_stack_name:literal, $which:literal) => {
        #[doc = concat!(
            "A secret in the NTT domain for [`", stringify!($merged), "`]: per block b_0..b_3 ",
            "and ζ·b_1..ζ·b_3 (1,792 B). Wiped by the caller (the [`PolyMul`] contract)."
        )]
        #[derive(Clone)]
        pub struct $prepared {
            /// Written whole by [`Kernels::prepare`] (not filled before where the kernels allow).
            blocks: <$kernels as Kernels>::Blocks,
        }

        impl Zeroize for $prepared {
            fn zeroize(&mut self) {
                self.blocks.zeroize();
            }
        }

        impl core::fmt::Debug for $prepared {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(concat!(stringify!($prepared), "(<redacted>)"))
            }
        }

        #[doc = concat!(
            "A sum of up to four products in the NTT domain for [`", stringify!($merged), "`]: ",
            "the unreduced `i64` sums of the base products (2 KiB, bound 4), reduced once by the ",
            "inverse transform."
        )]
        #[derive(Clone)]
        pub struct $accumulator {
            /// None for zero (no product since the accumulator was made or finished): the first
            /// product stores into new sums, so that the zero accumulator needs no fill where
            /// the kernels leave new sums unfilled.
            sums: Option<<$kernels as Kernels>::Sums>,
        }

        impl Zeroize for $accumulator {
            fn zeroize(&mut self) {
                if let Some(sums) = &mut self.sums {
                    sums.zeroize();
                }
                self.sums = None;
            }
        }

        impl core::fmt::Debug for $accumulator {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(concat!(stringify!($accumulator), "(<redacted>)"))
            }
        }

        #[doc = concat!(
            "The NTT for cores without SIMD (see the module docs), ", $which, ": NTT-domain ",
            "accumulation like [`super::NttScalar`], with merged layers and precomputed-quotient ",
            "constant products. `Prepared` 1,792 B, `Accumulator` 2 KiB (unreduced sums), and 1 KiB \
             for the transform of each public operand while it is multiplied."
        )]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $merged;

        impl PolyMul for $merged {
            type Prepared = $prepared;
            type Accumulator = $accumulator;
            fn prepares_in_slot(&self) -> bool {
                true
            }

            fn prepare(&mut self, s: &SecretPoly) -> $prepared {
                let mut out = $prepared {
                    blocks: WrittenFirst::unwritten(),
                };
                <$kernels>::prepare(s, &mut out.blocks);
                out
            }

            fn accumulator(&mut self) -> $accumulator {
                $accumulator { sums: None }
            }

            fn mul_acc(&mut self, acc: &mut $accumulator, a: &Poly, s: &$prepared) {
                mul_acc::<$kernels>(&mut acc.sums, a, &s.blocks);
            }

            fn finish(&mut self, acc: &$accumulator) -> Poly {
                let mut out = Poly::ZERO;
                if let Some(mut sums) = acc.sums {
                    <$kernels>::finish_wide(&mut sums, &mut out.coeffs);
                }
                out
            }

            fn prepare_into(&mut self, s: &SecretPoly, out: &mut $prepared) {
                <$kernels>::prepare(s, &mut out.blocks);
            }

            fn prepare_in(&mut self, s: &SecretPoly, slot: &mut Option<$prepared>) {
                let out = slot.get_or_insert_with(|| $prepared {
                    blocks: WrittenFirst::unwritten(),
                });
                <$kernels>::prepare(s, &mut out.blocks);
            }

            fn reset(&mut self, acc: &mut $accumulator) {
                acc.zeroize();
            }

            fn finish_into(&mut self, acc: &mut $accumulator, out: &mut Poly) {
                match &mut acc.sums {
                    Some(sums) => <$kernels>::finish_wide(sums, &mut out.coeffs),
                    None => out.coeffs.fill(0),
                }
                acc.sums = None;
            }

            fn name(&self) -> &'static str {
                $merged_name
            }
        }

        #[doc = concat!(
            "The NTT with a small working set, for the low-memory mode on microcontrollers, ",
            $which, ": each product is finished inside `mul_acc` (forward transform of `a`, the ",
            "secret's transform a quarter at a time, base products in place, inverse transform ",
            "added into a plain accumulator), so `Prepared` is the secret itself (two ",
            "coefficients per byte, 128 B), `Accumulator` the plain sum (512 B), and `mul_acc` ",
            "needs about 1.3 KiB. Costs an ",
            "inverse transform and a secret transform per product."
        )]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $low_stack;

        impl PolyMul for $low_stack {
            type Prepared = Nibbles;
            type Accumulator = Poly;
            const TAKES_PIECES: bool = true;
            fn prepares_in_slot(&self) -> bool {
                true
            }

            fn prepare(&mut self, s: &SecretPoly) -> Nibbles {
                packed_secret(s)
            }

            fn prepare_into(&mut self, s: &SecretPoly, out: &mut Nibbles) {
                pack_secret(s, out);
            }

            fn prepare_in(&mut self, s: &SecretPoly, slot: &mut Option<Nibbles>) {
                pack_secret(s, slot.get_or_insert([0; N >> 1]));
            }

            fn with_packed(&mut self, s: &PackedSecret, f: impl FnOnce(&mut Self, &Nibbles)) {
                f(self, s)
            }

            fn accumulator(&mut self) -> Poly {
                Poly::ZERO
            }

            fn mul_acc(&mut self, acc: &mut Poly, a: &Poly, s: &Nibbles) {
                product_into::<$kernels>(acc, a, s);
            }

            fn mul_acc_pieces(
                &mut self,
                acc: &mut Poly,
                s: &Nibbles,
                public: impl FnOnce(&mut dyn FnMut(usize, &[u16])),
            ) {
                product_from_pieces::<$kernels>(acc, s, public);
            }

            fn finish(&mut self, acc: &Poly) -> Poly {
                acc.clone()
            }

            fn mul_add_plain(
                &mut self,
                a: &mut Poly,
                s: &Nibbles,
                sum: impl FnOnce(&mut Poly),
            ) {
                product_into_public::<$kernels>(a, s, sum);
            }

            fn name(&self) -> &'static str {
                $low_stack_name
            }
        }
    };
}

merged_backends!(
    Native,
    NttMerged,
    "ntt-merged",
    MergedPrepared,
    MergedAccumulator,
    NttLowStack,
    "ntt-lowstack",
    "with this target's kernels (ARMv7-M assembly on Cortex-M3/M4/M7/M33, portable Rust elsewhere)"
);
merged_backends!(
    portable::Portable,
    NttMergedPortable,
    "ntt-merged-portable",
    MergedPreparedPortable,
    MergedAccumulatorPortable,
    NttLowStackPortable,
    "ntt-lowstack-portable",
    "with the portable kernels on every target (the reference the assembly is tested against \
     under QEMU)"
);
