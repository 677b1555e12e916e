//! The AVX2 four-way permutation: one `__m256i` per word, holding that word of the four states.
//!
//! AVX2 has no 64-bit rotate, so a rotation is two shifts and an OR (CPUs with AVX-512 take
//! `avx512`). With 16 registers for 25 words, the rounds stream the state through memory
//! ([`super::keccak_f1600_streamed`]): each word is loaded twice and stored once per round, D
//! and a plane's words stay in registers.
//!
//! **Safety.** The
//! AVX2 instructions run only inside [`permute_avx2`], a `#[target_feature(enable = "avx2")]`
//! function that is reached only through [`permute`], which requires an [`Avx2Token`]; a token
//! is only created by [`Avx2Token::detect`] after CPUID reported AVX2 (or when the target enables
//! AVX2 at compile time). Memory is accessed only through aligned 32-byte loads and stores of
//! the 25 words of the state (a cache-line aligned [`MultiState`]) and of a scratch copy in the
//! permutation's frame.
#![allow(unsafe_code)]

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use core::mem::MaybeUninit;

use super::multi::{MultiState, X4};

use crate::cpu::Avx2Token;

/// Keccak-f\[1600\] on the four interleaved states.
#[inline]
pub(super) fn permute(token: Avx2Token, state: &mut MultiState<X4>) {
    let _ = token;
    // SAFETY: the token proves that this CPU executes AVX2 instructions.
    unsafe { permute_avx2(state) }
}

// Word operations. `unsafe fn`s because they execute AVX2 instructions: callers must run on an
// AVX2 CPU. Always inlined into `permute_avx2`, which is compiled with AVX2 enabled.

#[inline(always)]
unsafe fn xor(a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe { _mm256_xor_si256(a, b) }
}

/// a ⊕ (¬b ∧ c).
#[inline(always)]
unsafe fn chi(a: __m256i, b: __m256i, c: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe { xor(a, _mm256_andnot_si256(b, c)) }
}

#[inline(always)]
unsafe fn constant(value: u64) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe { _mm256_set1_epi64x(value as i64) }
}

/// Rotation left by `LEFT` bits; `RIGHT` must be `64 − LEFT` (stable Rust cannot compute it
/// from a const parameter, so the `rol!` macro passes both).
#[inline(always)]
unsafe fn rotate<const LEFT: i32, const RIGHT: i32>(a: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe { _mm256_or_si256(_mm256_slli_epi64::<LEFT>(a), _mm256_srli_epi64::<RIGHT>(a)) }
}

macro_rules! rol {
    ($w:expr, $n:literal) => {
        rotate::<$n, { 64 - $n }>($w)
    };
}

/// Word `index` (< 25) of the 25 words at `words`.
#[inline(always)]
unsafe fn load(words: *const __m256i, index: usize) -> __m256i {
    // SAFETY: AVX2 is present and `words` points to 25 initialised 32-byte words (caller
    // contract; `index` < 25).
    unsafe { _mm256_load_si256(words.add(index)) }
}

#[inline(always)]
unsafe fn store(words: *mut __m256i, index: usize, value: __m256i) {
    // SAFETY: AVX2 is present and `words` points to 25 writable 32-byte words (caller contract;
    // `index` < 25).
    unsafe { _mm256_store_si256(words.add(index), value) }
}

#[target_feature(enable = "avx2")]
unsafe fn permute_avx2(state: &mut MultiState<X4>) {
    // The other half of the ping-pong: no zero fill, the first round stores all of it before any
    // load from it.
    let mut scratch = MaybeUninit::<[__m256i; 25]>::uninit();
    let scratch: *mut __m256i = scratch.as_mut_ptr().cast();
    // SAFETY: this function runs only on AVX2 CPUs (its caller holds an `Avx2Token`). `state`'s
    // words are 25 `[u64; 4]`, 32 bytes each, 64-byte aligned (`MultiState` is
    // `repr(C, align(64))`), so they are 25 aligned `__m256i`; `scratch` is 25 aligned `__m256i`
    // of this frame, written entirely by the first round before the second reads it.
    unsafe {
        let words: *mut __m256i = state.lanes.as_mut_ptr().cast();
        super::keccak_f1600_streamed!(
            words,
            scratch,
            load = load,
            store = store,
            xor = xor,
            chi = chi,
            rol = rol,
            constant = constant
        );
        // Round 23's input, secret when the state is.
        for index in 0..25 {
            core::ptr::write_volatile(scratch.add(index), _mm256_setzero_si256());
        }
    }
}
