//! Run-time detection of the x86 instruction-set extensions the SIMD paths use: CPUID (and the
//! OS's register-state support) through `cpufeatures`, once per process per feature set, then a
//! cached load. When the target enables a feature at compile time the answer is constant.

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

/// AVX2 and AVX-512 F and VL (the AVX-512 four-way Keccak on 256-bit registers).
#[inline]
pub(crate) fn has_avx512_f_vl() -> bool {
    avx512_f_vl_cpuid::get()
}
