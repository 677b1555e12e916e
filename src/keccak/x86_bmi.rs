//! Keccak-f\[1600\] on one state in the general-purpose registers, compiled with BMI1 and BMI2:
//! χ's ¬b ∧ c is one `andn`, and every rotation a `rorx`, which writes a register other than its
//! source (no copy before it). The rounds stream the state through memory as the AVX2 four-way
//! permutation does ([`super::keccak_f1600_streamed`]): 25 words do not fit in 15 registers, and
//! a plane at a time needs only D, the plane's five words and a temporary; every word is loaded
//! twice a round (θ's parity, then ρ) and stored once, with no other spill traffic.
//!
//! **Safety.** The only `unsafe` is the call of the `#[target_feature(enable = "bmi1,bmi2")]`
//! function from [`permute`], which requires a [`BmiToken`]; a token is only created by
//! [`BmiToken::detect`] after CPUID reported both extensions. The function itself is safe code.
#![allow(unsafe_code)]

use zeroize::Zeroize;

use crate::cpu::BmiToken;

/// Keccak-f\[1600\] on `state` (word `x + 5y` is lane (x, y)).
#[inline]
pub(super) fn permute(token: BmiToken, state: &mut [u64; 25]) {
    let _ = token;
    // SAFETY: the token proves that this CPU executes BMI1 and BMI2 instructions.
    unsafe { permute_bmi(state) }
}

macro_rules! rol {
    ($w:expr, $n:literal) => {
        u64::rotate_left($w, $n)
    };
}

#[target_feature(enable = "bmi1,bmi2")]
fn permute_bmi(state: &mut [u64; 25]) {
    let mut scratch = [0u64; 25];
    super::keccak_f1600_streamed!(
        &mut *state,
        &mut scratch,
        load = load,
        store = store,
        xor = xor,
        chi = chi,
        rol = rol,
        constant = constant
    );
    // Round 23's input, secret when the state is.
    scratch.zeroize();
}

#[inline(always)]
fn load(words: &mut [u64; 25], index: usize) -> u64 {
    words[index]
}

#[inline(always)]
fn store(words: &mut [u64; 25], index: usize, value: u64) {
    words[index] = value;
}

#[inline(always)]
fn xor(a: u64, b: u64) -> u64 {
    a ^ b
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
