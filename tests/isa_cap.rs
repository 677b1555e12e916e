//! The instruction-set cap (`cap_isa`, `--cfg saber_isa`, issue 17): capped to portable, no SIMD
//! path is detected (Keccak, NTT); capped to AVX2, no AVX-512 path; lifted, what the CPU has
//! within the compile-time cap and `SABER_ISA_CAP`. One test in a process of its own: the cap
//! is process-wide, and other tests would see it.
#![cfg(any(target_arch = "x86", target_arch = "x86_64"))]

use saber_kem::PolyMul;
use saber_kem::hazmat::keccak::{Multi, Single};
use saber_kem::hazmat::{Isa, cap_isa, isa_cap};
use saber_kem::polymul::{Ntt, NttAvx2};

/// The cap this build was compiled with (`--cfg saber_isa="…"`, none by default).
const COMPILED: Isa = if cfg!(saber_isa = "portable") {
    Isa::Portable
} else if cfg!(saber_isa = "avx2") {
    Isa::Avx2
} else {
    Isa::Avx512
};

/// The bound of the cap in this process: the compiled one, lowered by `SABER_ISA_CAP` (which
/// `.ci/run` sets to run the suite at each level: a value the library would ignore fails here).
fn bound() -> Isa {
    let from_environment = match std::env::var("SABER_ISA_CAP").as_deref() {
        Err(std::env::VarError::NotPresent) => Isa::Avx512,
        Ok("portable") => Isa::Portable,
        Ok("avx2") => Isa::Avx2,
        other => panic!("SABER_ISA_CAP = {other:?}: not `portable` or `avx2`"),
    };
    COMPILED.min(from_environment)
}

#[test]
fn every_path_follows_the_cap() {
    let bound = bound();
    let avx2 = std::is_x86_feature_detected!("avx2") && bound >= Isa::Avx2;
    let avx512 = std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512vl")
        && bound >= Isa::Avx512;
    let bmi = std::is_x86_feature_detected!("bmi1")
        && std::is_x86_feature_detected!("bmi2")
        && bound >= Isa::Avx2;
    assert_eq!(isa_cap(), bound);

    // Built before the cap: keeps its path.
    let before = Multi::x4();

    cap_isa(Isa::Portable);
    assert_eq!(isa_cap(), Isa::Portable);
    assert!(Multi::x4().is_none());
    assert!(Multi::x8().is_none());
    assert_eq!(Single::fastest().name(), "crates");
    assert!(Multi::all().all(|k| k.name() == "portable"));
    assert!(NttAvx2::new().is_none());
    assert_eq!(Ntt::new().name(), "ntt-scalar");
    assert_eq!(
        before.is_some(),
        avx2,
        "a value built before the cap keeps its path"
    );

    cap_isa(Isa::Avx2);
    assert_eq!(isa_cap(), Isa::Avx2.min(bound));
    assert_eq!(Multi::x4().map(Multi::name), avx2.then_some("avx2"));
    assert!(Multi::x8().is_none());
    assert_eq!(Single::fastest().name(), if bmi { "bmi" } else { "crates" });
    assert_eq!(NttAvx2::new().is_some(), avx2);
    assert_eq!(
        Ntt::new().name(),
        if avx2 { "ntt-avx2" } else { "ntt-scalar" }
    );

    // Lifting the run-time cap never goes beyond the compile-time and environment bound.
    cap_isa(Isa::Avx512);
    assert_eq!(isa_cap(), bound);
    assert_eq!(Multi::x8().is_some(), avx512);
    let fastest = match (avx512, bmi) {
        (true, _) => "x4-avx512",
        (false, true) => "bmi",
        (false, false) => "crates",
    };
    assert_eq!(Single::fastest().name(), fastest);
}
