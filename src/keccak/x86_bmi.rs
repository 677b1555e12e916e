//! Keccak-f\[1600\] on one state in the general-purpose registers, compiled with BMI1 and BMI2:
//! χ's ¬b ∧ c is one `andn`, and every rotation a `rorx`, which writes a register other than its
//! source (no copy before it). The rounds are the crate's one description
//! ([`super::keccak_f1600`]) on `u64` words; the state is copied into locals, so that the
//! compiler keeps the words in registers (and spill slots) across the rounds, as the `keccak`
//! crate keeps its temporaries.
//!
//! **Safety.** The only `unsafe` is the call of the `#[target_feature(enable = "bmi1,bmi2")]`
//! function from [`permute`], which requires a [`BmiToken`]; a token is only created by
//! [`BmiToken::detect`] after CPUID reported both extensions. The function itself is safe code.
#![allow(unsafe_code)]

use crate::cpu::BmiToken;

/// Keccak-f\[1600\] on `state` (word `x + 5y` is lane (x, y)).
#[inline]
pub(super) fn permute(token: BmiToken, state: &mut [u64; 25]) {
    let _ = token;
    // SAFETY: the token proves that this CPU executes BMI1 and BMI2 instructions.
    unsafe { permute_bmi(state) }
}

#[target_feature(enable = "bmi1,bmi2")]
fn permute_bmi(state: &mut [u64; 25]) {
    rounds(state);
}

#[inline(always)]
fn xor(a: u64, b: u64) -> u64 {
    a ^ b
}

#[inline(always)]
fn xor3(a: u64, b: u64, c: u64) -> u64 {
    a ^ b ^ c
}

/// a ⊕ (¬b ∧ c).
#[inline(always)]
fn chi(a: u64, b: u64, c: u64) -> u64 {
    a ^ (!b & c)
}

#[inline(always)]
fn constant(value: u64) -> u64 {
    value
}

macro_rules! rol {
    ($w:expr, $n:literal) => {
        u64::rotate_left($w, $n)
    };
}

/// The 24 rounds on a local copy of `state`. The same code without the target features is the
/// portable reference the tests compare with (through the `keccak` crate's permutation).
#[inline(always)]
pub(super) fn rounds(state: &mut [u64; 25]) {
    let mut a = *state;
    super::keccak_f1600!(
        a,
        xor = xor,
        xor3 = xor3,
        chi = chi,
        rol = rol,
        constant = constant
    );
    *state = a;
}
