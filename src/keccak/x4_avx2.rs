//! The AVX2 four-way permutation: one `__m256i` per word, holding that word of the four states.
//!
//! AVX2 has no 64-bit rotate, so a rotation is two shifts and an OR (CPUs with AVX-512 take
//! `avx512`). With 16 registers for 25 words, the rounds stream the state through memory
//! ([`super::keccak_f1600_streamed`]): each word is loaded and stored once per round, C and D
//! stay in registers.
//!
//! **Safety.** The
//! AVX2 instructions run only inside [`permute_avx2`], a `#[target_feature(enable = "avx2")]`
//! function that is reached only through [`permute`], which requires an [`Avx2Token`]; a token
//! is only created by [`Avx2Token::detect`] after CPUID reported AVX2 (or when the target enables
//! AVX2 at compile time). Memory is accessed only through `loadu`/`storeu` on `[u64; 4]`
//! references, exactly 32 bytes each.
#![allow(unsafe_code)]

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use zeroize::Zeroize;

use super::multi::X4;

use crate::cpu::Avx2Token;

/// Keccak-f\[1600\] on the four interleaved states.
#[inline]
pub(super) fn permute(token: Avx2Token, state: &mut [[u64; X4]; 25]) {
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

/// One word of the four states.
#[inline(always)]
unsafe fn load(word: &[u64; X4]) -> __m256i {
    // SAFETY: AVX2 is present (caller contract); `word` is exactly 32 bytes.
    unsafe { _mm256_loadu_si256(word.as_ptr().cast()) }
}

#[inline(always)]
unsafe fn store(word: &mut [u64; X4], value: __m256i) {
    // SAFETY: AVX2 is present (caller contract); `word` is exactly 32 bytes.
    unsafe { _mm256_storeu_si256(word.as_mut_ptr().cast(), value) }
}

/// The other half of the ping-pong of the streamed rounds, aligned like the state (no 32-byte
/// access across a cache line).
#[repr(C, align(64))]
struct Scratch([[u64; X4]; 25]);

#[target_feature(enable = "avx2")]
unsafe fn permute_avx2(state: &mut [[u64; X4]; 25]) {
    let mut scratch = Scratch([[0; X4]; 25]);
    // SAFETY: this function runs only on AVX2 CPUs (its caller holds an `Avx2Token`), and every
    // load and store covers exactly one `[u64; 4]` (32 bytes).
    unsafe {
        super::keccak_f1600_streamed!(
            state,
            &mut scratch.0,
            load = load,
            store = store,
            xor = xor,
            chi = chi,
            rol = rol,
            constant = constant
        );
    }
    // Round 23's input, secret when the state is.
    scratch.0.as_flattened_mut().zeroize();
}
