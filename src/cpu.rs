//! Run-time detection of the x86 instruction-set extensions the SIMD paths use: CPUID (and the
//! OS's register-state support) through `cpufeatures`, once per process per feature set, then a
//! cached load. When the target enables a feature at compile time the answer is constant.
//!
//! The SIMD modules gate their safe entry points on the token types below: a token can only be
//! made by its `detect`, after the check succeeded, so holding one proves the CPU runs those
//! instructions.
//!
//! # Capping the level
//!
//! Tests and benchmarks run every path on one machine by capping the level the library uses
//! below what the CPU has ([`Isa`]: AVX-512 → AVX2 → portable):
//! - at compile time with `--cfg saber_isa="avx2"` or `--cfg saber_isa="portable"` (in
//!   `RUSTFLAGS`), which also bounds the run-time cap;
//! - at run time with [`cap_isa`];
//! - with the `std` and `hazmat` features, from the environment variable `SABER_ISA_CAP`
//!   (`portable` or `avx2`; other values are ignored), read once, at the first detection, as a
//!   bound that [`cap_isa`] cannot lift (as OpenSSL's `OPENSSL_ia32cap`): the test suite runs
//!   each level from one build this way.
//!
//! Every check below and every token respects the cap, so every SIMD path follows it. A value
//! that already holds a token (a backend or Keccak implementation constructed before the cap was
//! lowered) keeps its path: the cap decides what is detected from then on.

use core::sync::atomic::{AtomicU8, Ordering};

cpufeatures::new!(avx2_cpuid, "avx2");
cpufeatures::new!(bmi_cpuid, "bmi1", "bmi2");
cpufeatures::new!(avx512_f_bw_cpuid, "avx512f", "avx512bw");
cpufeatures::new!(avx512_f_vl_cpuid, "avx2", "avx512f", "avx512vl");

/// An x86 instruction-set level the library may use, in increasing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Isa {
    /// No SIMD paths: the portable code, as on every other target.
    Portable = 0,
    /// AVX2 paths (and the scalar BMI1/BMI2 Keccak), no AVX-512 ones.
    Avx2 = 1,
    /// Every path the CPU runs (no cap).
    Avx512 = 2,
}

impl Isa {
    fn from_u8(value: u8) -> Self {
        match value {
            0 => Self::Portable,
            1 => Self::Avx2,
            _ => Self::Avx512,
        }
    }
}

/// The cap chosen at compile time (`--cfg saber_isa="…"`); no cap without it.
const COMPILED_CAP: Isa = if cfg!(saber_isa = "portable") {
    Isa::Portable
} else if cfg!(saber_isa = "avx2") {
    Isa::Avx2
} else {
    Isa::Avx512
};

/// The value of [`CAP`] before the first detection.
const UNREAD: u8 = u8::MAX;

/// The current cap, an [`Isa`] as `u8` (or [`UNREAD`]: set to [`bound`] at the first
/// detection). Relaxed ordering suffices: it is an independent flag that no other memory depends
/// on.
static CAP: AtomicU8 = AtomicU8::new(UNREAD);

/// The bound of the cap: the compile-time cap, lowered by `SABER_ISA_CAP` where it is read.
fn bound() -> Isa {
    #[cfg(all(feature = "std", feature = "hazmat"))]
    {
        extern crate std;
        let from_environment = match std::env::var("SABER_ISA_CAP").as_deref() {
            Ok("portable") => Isa::Portable,
            Ok("avx2") => Isa::Avx2,
            _ => Isa::Avx512,
        };
        COMPILED_CAP.min(from_environment)
    }
    #[cfg(not(all(feature = "std", feature = "hazmat")))]
    COMPILED_CAP
}

/// Caps the instruction-set level every later detection reports at `level` (never above the
/// compile-time cap and `SABER_ISA_CAP`); `Isa::Avx512` lifts a run-time cap. For tests and
/// benchmarks that run every path on one machine: values constructed before the call keep their
/// path. Values in a backend's domain (prepared secrets, accumulators, expanded keys) must go
/// back to a backend constructed under the same cap: the AVX2 NTT lays them out its own way.
#[cfg(any(test, feature = "hazmat"))]
pub fn cap_isa(level: Isa) {
    CAP.store(level.min(bound()) as u8, Ordering::Relaxed);
}

/// The current cap ([`cap_isa`], `saber_isa`, `SABER_ISA_CAP`).
pub fn isa_cap() -> Isa {
    match CAP.load(Ordering::Relaxed) {
        UNREAD => first_cap(),
        cap => Isa::from_u8(cap),
    }
}

/// The cap at the first detection: the bound, unless a [`cap_isa`] call came first.
#[cold]
fn first_cap() -> Isa {
    let _ = CAP.compare_exchange(UNREAD, bound() as u8, Ordering::Relaxed, Ordering::Relaxed);
    Isa::from_u8(CAP.load(Ordering::Relaxed))
}

/// AVX2 (the NTT, packing, sampling and four-way Keccak AVX2 paths), within the cap.
#[inline]
pub(crate) fn has_avx2() -> bool {
    avx2_within(isa_cap())
}

#[inline]
fn avx2_within(cap: Isa) -> bool {
    cap >= Isa::Avx2 && avx2_cpuid::get()
}

/// BMI1 and BMI2 (`andn`, `rorx`: the scalar Keccak), at the AVX2 level of the cap: every CPU
/// with AVX2 has them, and the portable level runs no CPU-specific path at all.
#[inline]
fn bmi_within(cap: Isa) -> bool {
    cap >= Isa::Avx2 && bmi_cpuid::get()
}

#[inline]
fn avx512_f_bw_within(cap: Isa) -> bool {
    cap >= Isa::Avx512 && avx512_f_bw_cpuid::get()
}

#[inline]
fn avx512_f_vl_within(cap: Isa) -> bool {
    cap >= Isa::Avx512 && avx512_f_vl_cpuid::get()
}

/// A proof type for one feature check: private field, created only by `detect`.
macro_rules! token {
    ($(#[$doc:meta])* $name:ident, $check:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub(crate) struct $name(());

        impl $name {
            /// Some token if the check succeeds within the current cap (CPUID cached after the
            /// first call).
            #[inline]
            pub(crate) fn detect() -> Option<Self> {
                Self::detect_within(isa_cap())
            }

            /// Some token if the check succeeds within `cap`.
            #[inline]
            fn detect_within(cap: Isa) -> Option<Self> {
                $check(cap).then_some(Self(()))
            }
        }
    };
}

token!(
    /// Proof that the CPU executes AVX2 instructions.
    Avx2Token,
    avx2_within
);
token!(
    /// Proof that the CPU executes BMI1 and BMI2 instructions.
    BmiToken,
    bmi_within
);
token!(
    /// Proof that the CPU (and the OS) execute AVX-512 F and BW instructions.
    Avx512BwToken,
    avx512_f_bw_within
);
token!(
    /// Proof that the CPU (and the OS) execute AVX2, AVX-512 F and AVX-512 VL instructions.
    Avx512VlToken,
    avx512_f_vl_within
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Under a portable cap no token exists, whatever the CPU has; under an AVX2 cap only the
    /// AVX2 one, if CPUID reports AVX2; uncapped, what CPUID reports. (Checked on the cap as an
    /// argument: the process-wide switch is exercised by `tests/isa_cap.rs`, in a process of its
    /// own, since lowering it here would change what concurrent tests detect.)
    #[test]
    fn capping_to_portable_makes_every_token_none() {
        assert!(Avx2Token::detect_within(Isa::Portable).is_none());
        assert!(BmiToken::detect_within(Isa::Portable).is_none());
        assert_eq!(
            BmiToken::detect_within(Isa::Avx2).is_some(),
            bmi_cpuid::get()
        );
        assert!(Avx512BwToken::detect_within(Isa::Portable).is_none());
        assert!(Avx512VlToken::detect_within(Isa::Portable).is_none());
        assert_eq!(
            Avx2Token::detect_within(Isa::Avx2).is_some(),
            avx2_cpuid::get()
        );
        assert!(Avx512BwToken::detect_within(Isa::Avx2).is_none());
        assert!(Avx512VlToken::detect_within(Isa::Avx2).is_none());
        assert_eq!(
            Avx2Token::detect_within(Isa::Avx512).is_some(),
            avx2_cpuid::get()
        );
        assert_eq!(
            Avx512BwToken::detect_within(Isa::Avx512).is_some(),
            avx512_f_bw_cpuid::get()
        );
        assert_eq!(
            Avx512VlToken::detect_within(Isa::Avx512).is_some(),
            avx512_f_vl_cpuid::get()
        );
    }
}
