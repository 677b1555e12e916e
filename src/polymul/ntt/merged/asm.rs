//! The kernels in assembly, one entry point per kernel with the same C signature on each
//! instruction set; every entry point reads and writes only the arrays its wrapper here passes
//! (lengths fixed by the wrapper's types), uses the stack below its caller's and follows the
//! platform's C calling convention.
//!
//! - **ARMv7-M** (`armv7m.s`; Cortex-M3/M4/M7/M33): the portable kernels' arithmetic (Shoup
//!   products as `smull`, `mul`, `mls`; base products as `smull`/`smlal` chains, the
//!   [`NttMerged`](super::NttMerged) ones into 64-bit sums) with the coefficients of a merged
//!   group in registers and its twiddles on the stack. Same values as [`super::portable`], bit
//!   for bit.
//! - **RV32IM** (`rv32.s`): the coefficients of a merged group and its seven twiddles in
//!   registers (Shoup products as `mulh`, `mul`, `mul`, `sub`); the transforms compute the
//!   portable values bit for bit. The base products of [`NttLowStack`](super::NttLowStack)
//!   reduce each of their four terms by a Montgomery reduction (RV32 has no 64-bit accumulate;
//!   the factor q'^(−1) of each operand is multiplied in once per block, so a term is five
//!   instructions), which gives congruent values with these bounds (terms at most |x·y|/2^32 +
//!   q'/2, bound 4 of the module docs): a block product below 4 · (6.1 · 11.7 · 0.00977 +
//!   0.5)·q' < 4.8·q', within the inverse's input bound 6.3·q' (bound 5). The 64-bit sums of
//!   [`NttMerged`](super::NttMerged) and the first half of their inverse are the portable
//!   kernels'.
//!
//! Under QEMU `embedded/run` compares the KEM's bytes with the host's (portable) build, and the
//! `*-portable` backends run the portable kernels on the same target.
#![allow(unsafe_code)]

#[cfg(saber_armv7m)]
use super::WrittenFirst;
#[cfg(not(saber_armv7m))]
use super::portable::{Portable, inverse_first_wide};
#[cfg(not(saber_armv7m))]
use super::prepare_from_passes;
use super::{
    BLOCK_ZETAS, FORWARD, GroupTwiddles, INVERSE, Kernels, Nibbles, PreparedBlocks, QUARTER_COEFFS,
    SCALES, Twiddle, as_groups,
};
use crate::poly::{N, Poly, SecretPoly};
use core::mem::MaybeUninit;
#[cfg(saber_armv7m)]
use zeroize::Zeroize;

#[cfg(saber_armv7m)]
core::arch::global_asm!(include_str!("armv7m.s"), options(raw));
#[cfg(saber_rv32im)]
core::arch::global_asm!(include_str!("rv32.s"), options(raw));

#[cfg(saber_armv7m)]
unsafe extern "C" {
    fn saber_kem_merged_inv_first_wide(
        sums: *mut i64,
        out: *mut i32,
        twiddles: *const Twiddle,
        scale: *const Twiddle,
    );
    fn saber_kem_merged_base_mul_store(acc: *mut i64, a_hat: *const i32, prepared: *const i32);
    fn saber_kem_merged_base_mul_add(acc: *mut i64, a_hat: *const i32, prepared: *const i32);
}

unsafe extern "C" {
    fn saber_kem_merged_fwd_first_u13(a: *const u16, out: *mut i32, twiddles: *const Twiddle);
    fn saber_kem_merged_fwd_first_s8(s: *const i8, out: *mut i32, twiddles: *const Twiddle);
    fn saber_kem_merged_fwd_last(groups: *mut i32, count: usize, twiddles: *const Twiddle);
    fn saber_kem_merged_inv_first(a: *mut i32, twiddles: *const Twiddle, scale: *const Twiddle);
    fn saber_kem_merged_inv_last_store(
        a: *const i32,
        out: *mut u16,
        twiddles: *const Twiddle,
        one: *const Twiddle,
    );
    fn saber_kem_merged_inv_last_add(
        a: *const i32,
        out: *mut u16,
        twiddles: *const Twiddle,
        one: *const Twiddle,
    );
    fn saber_kem_merged_prepare_blocks(blocks: *mut i32, zetas: *const Twiddle, one_quotient: i32);
    fn saber_kem_merged_base_mul_quarter(w: *mut i32, s_hat: *const i32, zetas: *const Twiddle);
    fn saber_kem_merged_secret_quarter_first(
        s: *const u8,
        out: *mut i32,
        twiddle: *const Twiddle,
        coeffs: *const i32,
    );
}

// The tables as statics: one address each for the assembly.
static FORWARD_TABLE: [GroupTwiddles; 9] = FORWARD;
static INVERSE_TABLE: [GroupTwiddles; 9] = INVERSE;
static SCALES_TABLE: [Twiddle; 2] = SCALES;
static BLOCK_ZETAS_TABLE: [Twiddle; 64] = BLOCK_ZETAS;
static QUARTER_COEFFS_TABLE: [[i32; 3]; 4] = QUARTER_COEFFS;

/// A buffer on ARMv7-M that the assembly writes whole before anything reads it (an accumulator's
/// sums: the first product, `saber_kem_merged_base_mul_store`; a prepared secret's blocks:
/// [`Kernels::prepare`]), not filled when made. Only the assembly reads and writes it.
#[cfg(saber_armv7m)]
#[derive(Clone, Copy)]
pub(crate) struct Unfilled<T: Copy>(MaybeUninit<T>);

#[cfg(saber_armv7m)]
impl<T: Copy> WrittenFirst for Unfilled<T> {
    fn unwritten() -> Self {
        Self(MaybeUninit::uninit())
    }
}

#[cfg(saber_armv7m)]
impl<T: Copy> Zeroize for Unfilled<T> {
    /// In place (as a slice: `MaybeUninit`'s own `zeroize` writes a zeroed copy over it).
    fn zeroize(&mut self) {
        core::slice::from_mut(&mut self.0).zeroize();
    }
}

/// The assembly kernels of this target.
pub(crate) struct Assembly;

impl Kernels for Assembly {
    #[cfg(saber_armv7m)]
    type Sums = Unfilled<[i64; N]>;
    #[cfg(saber_armv7m)]
    type Blocks = Unfilled<PreparedBlocks>;
    /// RV32: the portable base products' sums and blocks.
    #[cfg(not(saber_armv7m))]
    type Sums = [i64; N];
    #[cfg(not(saber_armv7m))]
    type Blocks = PreparedBlocks;

    fn forward_first_poly(a: &[u16; N], out: &mut [i32; N]) {
        // SAFETY: reads a[0..256] and the 7 twiddles of FORWARD[0], writes out[0..256].
        unsafe {
            saber_kem_merged_fwd_first_u13(a.as_ptr(), out.as_mut_ptr(), FORWARD_TABLE[0].as_ptr())
        }
    }

    fn forward_first_secret(s: &[i8; N], out: &mut [i32; N]) {
        // SAFETY: reads s[0..256] and the 7 twiddles of FORWARD[0], writes out[0..256].
        unsafe {
            saber_kem_merged_fwd_first_s8(s.as_ptr(), out.as_mut_ptr(), FORWARD_TABLE[0].as_ptr())
        }
    }

    fn forward_last(groups: &mut [[i32; 32]], twiddles: &[GroupTwiddles]) {
        let count = groups.len().min(twiddles.len());
        // SAFETY: reads and writes groups[0..count] (32 words each), reads 7 twiddles per group
        // from twiddles[0..count]; `count` is at most both lengths.
        unsafe {
            saber_kem_merged_fwd_last(groups.as_mut_ptr().cast(), count, twiddles.as_ptr().cast())
        }
    }

    fn with_transform<P: core::borrow::Borrow<Poly>, R>(
        a: P,
        f: impl FnOnce(&mut [i32; N], P) -> R,
    ) -> R {
        let mut w = MaybeUninit::<[i32; N]>::uninit();
        // SAFETY: reads a[0..256] and the 7 twiddles of FORWARD[0] and writes every word of w
        // (32 columns of 8), so that w is initialised when it is taken as such.
        let w = unsafe {
            saber_kem_merged_fwd_first_u13(
                a.borrow().coeffs.as_ptr(),
                w.as_mut_ptr().cast(),
                FORWARD_TABLE[0].as_ptr(),
            );
            w.assume_init_mut()
        };
        Self::forward_last(as_groups(w), &FORWARD[1..]);
        f(w, a)
    }

    fn secret_quarter_first(s: &Nibbles, quarter: usize, out: &mut [[i32; 32]; 2]) {
        let quarter = quarter & 3;
        // SAFETY: reads s[0..128], one twiddle and three constants, writes out (64 words).
        unsafe {
            saber_kem_merged_secret_quarter_first(
                s.as_ptr(),
                out.as_mut_ptr().cast(),
                &FORWARD_TABLE[0][3 + quarter],
                QUARTER_COEFFS_TABLE[quarter].as_ptr(),
            )
        }
    }

    fn inverse_first(a: &mut [[i32; 32]; 8]) {
        // SAFETY: reads and writes a (256 words), reads the 56 twiddles of INVERSE[0..8] and
        // SCALES[0].
        unsafe {
            saber_kem_merged_inv_first(
                a.as_mut_ptr().cast(),
                INVERSE_TABLE.as_ptr().cast(),
                &SCALES_TABLE[0],
            )
        }
    }

    fn inverse_last(a: &mut [i32; N], out: &mut [u16; N], add: bool) {
        let twiddles = INVERSE_TABLE[8].as_ptr();
        if add {
            // SAFETY: reads a[0..256], the 7 twiddles of INVERSE[8] and SCALES[1], reads and
            // writes out[0..256].
            unsafe {
                saber_kem_merged_inv_last_add(
                    a.as_ptr(),
                    out.as_mut_ptr(),
                    twiddles,
                    &SCALES_TABLE[1],
                )
            }
        } else {
            // SAFETY: reads a[0..256], the 7 twiddles of INVERSE[8] and SCALES[1], writes
            // out[0..256].
            unsafe {
                saber_kem_merged_inv_last_store(
                    a.as_ptr(),
                    out.as_mut_ptr(),
                    twiddles,
                    &SCALES_TABLE[1],
                )
            }
        }
    }

    fn prepare_blocks(blocks: &mut PreparedBlocks) {
        // SAFETY: reads and writes blocks[0..448] and reads the 64 block twiddles.
        unsafe {
            saber_kem_merged_prepare_blocks(
                blocks.as_mut_ptr(),
                BLOCK_ZETAS_TABLE.as_ptr(),
                SCALES_TABLE[1].quotient,
            )
        }
    }

    #[cfg(saber_armv7m)]
    fn prepare(s: &SecretPoly, out: &mut Unfilled<PreparedBlocks>) {
        let blocks = out.0.as_mut_ptr().cast::<i32>();
        // SAFETY: reads s[0..256] and the 7 twiddles of FORWARD[0] and writes blocks[0..256];
        // then reads and writes those 256 words (8 groups) with the 56 twiddles of FORWARD[1..9];
        // then reads blocks[0..256] and the 64 block twiddles and writes every word of
        // blocks[0..448] (from the last block down): all of `out` is written, nothing read first.
        unsafe {
            saber_kem_merged_fwd_first_s8(s.coeffs.as_ptr(), blocks, FORWARD_TABLE[0].as_ptr());
            saber_kem_merged_fwd_last(blocks, 8, FORWARD_TABLE[1..].as_ptr().cast());
            saber_kem_merged_prepare_blocks(
                blocks,
                BLOCK_ZETAS_TABLE.as_ptr(),
                SCALES_TABLE[1].quotient,
            );
        }
    }

    #[cfg(not(saber_armv7m))]
    fn prepare(s: &SecretPoly, out: &mut PreparedBlocks) {
        prepare_from_passes::<Self>(s, out);
    }

    #[cfg(saber_armv7m)]
    fn base_mul_acc(
        acc: &mut Unfilled<[i64; N]>,
        a_hat: &[i32; N],
        prepared: &Unfilled<PreparedBlocks>,
        first: bool,
    ) {
        let acc = acc.0.as_mut_ptr().cast::<i64>();
        let (a_hat, prepared) = (a_hat.as_ptr(), prepared.0.as_ptr().cast::<i32>());
        if first {
            // SAFETY: writes every word of acc[0..256], reads a_hat[0..256] and prepared[0..448]
            // (written whole by `prepare`).
            unsafe { saber_kem_merged_base_mul_store(acc, a_hat, prepared) }
        } else {
            // SAFETY: reads and writes acc[0..256], which a first product has stored (the
            // contract of `first`), reads a_hat[0..256] and prepared[0..448] (written whole by
            // `prepare`).
            unsafe { saber_kem_merged_base_mul_add(acc, a_hat, prepared) }
        }
    }

    /// RV32 has no 64-bit multiply-accumulate: the portable kernel.
    #[cfg(not(saber_armv7m))]
    fn base_mul_acc(acc: &mut [i64; N], a_hat: &[i32; N], prepared: &PreparedBlocks, first: bool) {
        Portable::base_mul_acc(acc, a_hat, prepared, first);
    }

    #[cfg(saber_armv7m)]
    fn finish_wide(sums: &mut Unfilled<[i64; N]>, out: &mut [u16; N]) {
        let mut w = MaybeUninit::<[i32; N]>::uninit();
        // SAFETY: reads and wipes sums (256 words of 64 bits, stored by a first product: the
        // contract of `finish_wide`), reads the 56 twiddles of INVERSE[0..8] and SCALES[0], and
        // writes every word of w (32 columns of 8), so that w is initialised when it is taken as
        // such.
        let w = unsafe {
            saber_kem_merged_inv_first_wide(
                sums.0.as_mut_ptr().cast(),
                w.as_mut_ptr().cast(),
                INVERSE_TABLE.as_ptr().cast(),
                &SCALES_TABLE[0],
            );
            w.assume_init_mut()
        };
        Self::inverse_last(w, out, false);
    }

    /// RV32 (see [`Self::base_mul_acc`]): the portable first half.
    #[cfg(not(saber_armv7m))]
    fn finish_wide(sums: &mut [i64; N], out: &mut [u16; N]) {
        let mut w = [0i32; N];
        inverse_first_wide(sums, as_groups(&mut w));
        Self::inverse_last(&mut w, out, false);
    }

    fn base_mul_quarter(w: &mut [i32; 64], s_hat: &[i32; 64], quarter: usize) {
        let zetas = &BLOCK_ZETAS_TABLE[16 * (quarter & 3)..][..16];
        // SAFETY: reads and writes w[0..64], reads s_hat[0..64] and 16 twiddles of `zetas`.
        unsafe { saber_kem_merged_base_mul_quarter(w.as_mut_ptr(), s_hat.as_ptr(), zetas.as_ptr()) }
    }
}
