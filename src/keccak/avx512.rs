//! The AVX-512 permutations: four states on 256-bit registers (AVX-512VL) and eight states on
//! 512-bit registers (AVX-512F), one register per word holding that word of every state, as in
//! the AVX2 code, with:
//! - `vprolq` rotating in one instruction (AVX2: shift, shift, or);
//! - `vpternlogq` computing θ's three-input parities and χ's a ⊕ (¬b ∧ c) in one instruction;
//! - 32 vector registers instead of 16: the 25 words and θ's and ρπ's temporaries stay in
//!   registers, where the AVX2 code moves words to and from the stack every round.
//!
//! The four-way one costs about a third of the AVX2 one; the eight-way one costs about 1.2–1.35×
//! less per state than the four-way one, for batches that fill its eight lanes
//! (`BENCHMARKS.md`).
//!
//! **Safety.** The AVX-512 instructions run only inside the `permute_unchecked` functions of
//! the modules `x4` and `x8`, `#[target_feature(enable = "avx2,avx512f,avx512vl")]` functions
//! reached only through their module's safe `permute`, which requires an [`Avx512Token`]; a token
//! is only created by [`Avx512Token::detect`] after CPUID reported AVX-512F and AVX-512VL and the OS
//! saving their registers (`cpufeatures` checks XCR0). AVX-512F implies AVX2. Memory is accessed
//! only through `loadu`/`storeu` of one register from one `[u64; width]` array, exactly the
//! register's size.
#![allow(unsafe_code)]

use crate::cpu::Avx512VlToken as Avx512Token;

/// `vpternlogq` truth tables, indexed by `(a << 2) | (b << 1) | c`.
const XOR3: i32 = 0x96;
/// a ⊕ (¬b ∧ c): set for (a, b, c) = 001, 100, 110, 111.
const CHI: i32 = 0xD2;

/// A module with `permute(token, &mut [[u64; $width]; 25])` on registers of type `$vector`, given
/// the width's intrinsics. The word operations are `unsafe fn`s because they execute AVX-512
/// instructions (callers must run on such a CPU); they are always inlined into `permute`, which
/// is compiled with those instructions enabled.
macro_rules! permutation {
    (
        $module:ident,
        width = $width:literal,
        vector = $vector:ident,
        xor = $xor:ident,
        ternary = $ternary:ident,
        rotate = $rotate:ident,
        splat = $splat:ident,
        zero = $zero:ident,
        load = $load:ident,
        store = $store:ident
    ) => {
        pub(super) mod $module {
            #[cfg(target_arch = "x86")]
            use core::arch::x86::*;
            #[cfg(target_arch = "x86_64")]
            use core::arch::x86_64::*;

            #[inline(always)]
            unsafe fn xor(a: $vector, b: $vector) -> $vector {
                // SAFETY: AVX-512F is present (caller contract).
                unsafe { $xor(a, b) }
            }

            #[inline(always)]
            unsafe fn xor3(a: $vector, b: $vector, c: $vector) -> $vector {
                // SAFETY: AVX-512F and AVX-512VL are present (caller contract).
                unsafe { $ternary::<{ super::XOR3 }>(a, b, c) }
            }

            #[inline(always)]
            unsafe fn chi(a: $vector, b: $vector, c: $vector) -> $vector {
                // SAFETY: AVX-512F and AVX-512VL are present (caller contract).
                unsafe { $ternary::<{ super::CHI }>(a, b, c) }
            }

            #[inline(always)]
            unsafe fn constant(value: u64) -> $vector {
                // SAFETY: AVX-512F is present (caller contract).
                unsafe { $splat(value as i64) }
            }

            #[inline(always)]
            unsafe fn rotate<const LEFT: i32>(a: $vector) -> $vector {
                // SAFETY: AVX-512F and AVX-512VL are present (caller contract).
                unsafe { $rotate::<LEFT>(a) }
            }

            macro_rules! rol {
                ($w:expr, $n:literal) => {
                    rotate::<$n>($w)
                };
            }

            /// Keccak-f\[1600\] on the interleaved states.
            #[inline]
            pub(in super::super) fn permute(
                token: super::Avx512Token,
                state: &mut [[u64; $width]; 25],
            ) {
                let _ = token;
                // SAFETY: the token proves that this CPU executes AVX2, AVX-512F and AVX-512VL
                // instructions.
                unsafe { permute_unchecked(state) }
            }

            #[target_feature(enable = "avx2,avx512f,avx512vl")]
            unsafe fn permute_unchecked(state: &mut [[u64; $width]; 25]) {
                // SAFETY: this function runs only on CPUs with AVX2, AVX-512F and AVX-512VL (its
                // caller holds an `Avx512Token`), and every load and store covers exactly one
                // `[u64; $width]`, the size of one register.
                unsafe {
                    let mut a = [$zero(); 25];
                    for (v, word) in a.iter_mut().zip(state.iter()) {
                        *v = $load(word.as_ptr().cast());
                    }
                    super::super::keccak_f1600!(
                        a,
                        xor = xor,
                        xor3 = xor3,
                        chi = chi,
                        rol = rol,
                        constant = constant
                    );
                    for (word, v) in state.iter_mut().zip(a.iter()) {
                        $store(word.as_mut_ptr().cast(), *v);
                    }
                }
            }
        }
    };
}

permutation!(
    x4,
    width = 4,
    vector = __m256i,
    xor = _mm256_xor_si256,
    ternary = _mm256_ternarylogic_epi64,
    rotate = _mm256_rol_epi64,
    splat = _mm256_set1_epi64x,
    zero = _mm256_setzero_si256,
    load = _mm256_loadu_si256,
    store = _mm256_storeu_si256
);

permutation!(
    x8,
    width = 8,
    vector = __m512i,
    xor = _mm512_xor_si512,
    ternary = _mm512_ternarylogic_epi64,
    rotate = _mm512_rol_epi64,
    splat = _mm512_set1_epi64,
    zero = _mm512_setzero_si512,
    load = _mm512_loadu_si512,
    store = _mm512_storeu_si512
);
