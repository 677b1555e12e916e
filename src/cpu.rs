//! Run-time detection of the x86 instruction-set extensions the SIMD paths use: CPUID (and the
//! OS's register-state support) through `cpufeatures`, once per process per feature set, then a
//! cached load. When the target enables a feature at compile time the answer is constant.
//!
//! The SIMD modules gate their safe entry points on the token types below: a token can only be
//! made by its `detect`, after the check succeeded, so holding one proves the CPU runs those
//! instructions.

cpufeatures::new!(avx2_cpuid, "avx2");
cpufeatures::new!(avx512_f_bw_cpuid, "avx512f", "avx512bw");
cpufeatures::new!(avx512_f_vl_cpuid, "avx2", "avx512f", "avx512vl");

/// AVX2 (the NTT, packing, sampling and four-way Keccak AVX2 paths).
#[inline]
pub(crate) fn has_avx2() -> bool {
    avx2_cpuid::get()
}

/// AVX-512 F and BW (the AVX-512 NTT).
#[inline]
pub(crate) fn has_avx512_f_bw() -> bool {
    avx512_f_bw_cpuid::get()
}

/// AVX2 and AVX-512 F and VL (the AVX-512 Keccak, four- and eight-way).
#[inline]
pub(crate) fn has_avx512_f_vl() -> bool {
    avx512_f_vl_cpuid::get()
}

/// A proof type for one feature check: private field, created only by `detect`.
macro_rules! token {
    ($(#[$doc:meta])* $name:ident, $check:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub(crate) struct $name(());

        impl $name {
            /// Some token if the check succeeds (cached after the first call).
            pub(crate) fn detect() -> Option<Self> {
                $check().then_some(Self(()))
            }
        }
    };
}

token!(
    /// Proof that the CPU executes AVX2 instructions.
    Avx2Token,
    has_avx2
);
token!(
    /// Proof that the CPU (and the OS) execute AVX-512 F and BW instructions.
    Avx512BwToken,
    has_avx512_f_bw
);
token!(
    /// Proof that the CPU (and the OS) execute AVX2, AVX-512 F and AVX-512 VL instructions.
    Avx512VlToken,
    has_avx512_f_vl
);
