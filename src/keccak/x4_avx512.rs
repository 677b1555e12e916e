//! The AVX-512 four-way permutation: the AVX2 layout (one 256-bit register per word, holding that
//! word of the four states) with the AVX-512VL instructions on 256-bit registers:
//! - `vprolq` rotates in one instruction (AVX2: shift, shift, or);
//! - `vpternlogq` computes θ's three-input parities and χ's a ⊕ (¬b ∧ c) in one instruction;
//! - 32 vector registers instead of 16: the 25 words and θ's and ρπ's temporaries stay in
//!   registers, where the AVX2 code moves words to and from the stack every round.
//!
//! Together about three times fewer cycles per permutation than the AVX2 code on the development
//! machine (`BENCHMARKS.md`). The 512-bit registers are not used: an eight-way permutation
//! would need groups of eight operations (see `BENCHMARKS.md` for its measured cost).
//!
//! **Safety.** The AVX-512 instructions run only inside [`permute_avx512`], a
//! `#[target_feature(enable = "avx2,avx512f,avx512vl")]` function reached only through
//! [`permute`], which requires an [`Avx512Token`]; a token is only created by
//! [`Avx512Token::detect`] after CPUID reported AVX-512F and AVX-512VL and the OS saving their
//! registers (`cpufeatures` checks XCR0). AVX-512F implies AVX2. Memory is accessed only through
//! `loadu`/`storeu` on `[u64; 4]` arrays, exactly 32 bytes each.
#![allow(unsafe_code)]

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::LANES;

/// Proof that the CPU executes AVX2, AVX-512F and AVX-512VL instructions. Private field: only
/// [`Avx512Token::detect`] creates one.
#[derive(Clone, Copy, Debug)]
pub(super) struct Avx512Token(());

impl Avx512Token {
    /// Some token if the CPU has AVX-512F and AVX-512VL (CPUID once per process, cached by
    /// `cpufeatures`).
    pub(super) fn detect() -> Option<Self> {
        crate::cpu::has_avx512_f_vl().then_some(Self(()))
    }
}

/// Keccak-f\[1600\] on the four interleaved states.
#[inline]
pub(super) fn permute(token: Avx512Token, state: &mut [[u64; LANES]; 25]) {
    let _ = token;
    // SAFETY: the token proves that this CPU executes AVX2, AVX-512F and AVX-512VL instructions.
    unsafe { permute_avx512(state) }
}

// Word operations. `unsafe fn`s because they execute AVX-512VL instructions: callers must run on
// such a CPU. Always inlined into `permute_avx512`, which is compiled with them enabled.

#[inline(always)]
unsafe fn xor(a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (caller contract).
    unsafe { _mm256_xor_si256(a, b) }
}

/// `vpternlogq` truth tables, indexed by `(a << 2) | (b << 1) | c`.
const XOR3: i32 = 0x96;
/// a ⊕ (¬b ∧ c): set for (a, b, c) = 001, 100, 110, 111.
const CHI: i32 = 0xD2;

#[inline(always)]
unsafe fn xor3(a: __m256i, b: __m256i, c: __m256i) -> __m256i {
    // SAFETY: AVX-512F and AVX-512VL are present (caller contract).
    unsafe { _mm256_ternarylogic_epi64::<XOR3>(a, b, c) }
}

#[inline(always)]
unsafe fn chi(a: __m256i, b: __m256i, c: __m256i) -> __m256i {
    // SAFETY: AVX-512F and AVX-512VL are present (caller contract).
    unsafe { _mm256_ternarylogic_epi64::<CHI>(a, b, c) }
}

#[inline(always)]
unsafe fn constant(value: u64) -> __m256i {
    // SAFETY: AVX is present (caller contract).
    unsafe { _mm256_set1_epi64x(value as i64) }
}

#[inline(always)]
unsafe fn rotate<const LEFT: i32>(a: __m256i) -> __m256i {
    // SAFETY: AVX-512F and AVX-512VL are present (caller contract).
    unsafe { _mm256_rol_epi64::<LEFT>(a) }
}

macro_rules! rol {
    ($w:expr, $n:literal) => {
        rotate::<$n>($w)
    };
}

#[target_feature(enable = "avx2,avx512f,avx512vl")]
unsafe fn permute_avx512(state: &mut [[u64; LANES]; 25]) {
    // SAFETY: this function runs only on CPUs with AVX2, AVX-512F and AVX-512VL (its caller holds
    // an `Avx512Token`), and every load and store covers exactly one `[u64; 4]` (32 bytes).
    unsafe {
        let mut a = [_mm256_setzero_si256(); 25];
        for (v, word) in a.iter_mut().zip(state.iter()) {
            *v = _mm256_loadu_si256(word.as_ptr().cast());
        }
        super::keccak_f1600!(
            a,
            xor = xor,
            xor3 = xor3,
            chi = chi,
            rol = rol,
            constant = constant
        );
        for (word, v) in state.iter_mut().zip(a.iter()) {
            _mm256_storeu_si256(word.as_mut_ptr().cast(), *v);
        }
    }
}
