//! The one list of backends that tests, benches and examples iterate over.
//!
//! `for_each_backend!(callback)` expands `callback!(ident, "name", constructor_expr)` once per
//! backend, as items or as statements. Add a backend here and every KAT, differential test and
//! bench picks it up.

/// The backend in `option`, or a skip: returns "nothing ran" from the enclosing test, bench or
/// example (whose return type is `()`, `Result<(), E>` or `ExitCode`) after saying why. Exported
/// to the including crate's root so that `for_each_backend!` can name it from any module.
#[macro_export]
macro_rules! or_skip {
    ($option:expr, $why:expr) => {
        match $option {
            Some(backend) => backend,
            None => {
                trait Skipped {
                    fn skipped() -> Self;
                }
                impl Skipped for () {
                    fn skipped() -> Self {}
                }
                impl<E> Skipped for Result<(), E> {
                    fn skipped() -> Self {
                        Ok(())
                    }
                }
                impl Skipped for std::process::ExitCode {
                    fn skipped() -> Self {
                        std::process::ExitCode::FAILURE
                    }
                }
                std::eprintln!("skipped: {}", $why);
                return Skipped::skipped();
            }
        }
    };
}

#[allow(unused_macros)]
macro_rules! for_each_backend {
    ($callback:ident) => {
        $callback!(schoolbook, "schoolbook", saber_kem::polymul::Schoolbook);
        $callback!(ntt, "ntt", saber_kem::polymul::Ntt::new());
        $callback!(ntt_scalar, "ntt-scalar", saber_kem::polymul::NttScalar);
        $callback!(ntt_merged, "ntt-merged", saber_kem::polymul::NttMerged);
        $callback!(
            ntt_lowstack,
            "ntt-lowstack",
            saber_kem::polymul::NttLowStack
        );
        // The portable kernels of the two above; on ARMv7-M those run assembly, and these the
        // Rust they are checked against.
        $callback!(
            ntt_merged_portable,
            "ntt-merged-portable",
            saber_kem::polymul::ntt::NttMergedPortable
        );
        $callback!(
            ntt_lowstack_portable,
            "ntt-lowstack-portable",
            saber_kem::polymul::ntt::NttLowStackPortable
        );
        $callback!(
            ntt_avx2,
            "ntt-avx2",
            $crate::or_skip!(
                saber_kem::polymul::NttAvx2::new(),
                "ntt-avx2 (this CPU has no AVX2)"
            )
        );
        $callback!(
            ntt_avx512,
            "ntt-avx512",
            $crate::or_skip!(
                saber_kem::polymul::ntt::NttAvx512::new(),
                "ntt-avx512 (this CPU has no AVX-512 F and BW)"
            )
        );
        $callback!(toom_cook, "toom-cook", saber_kem::polymul::ToomCook);
        $callback!(
            kronecker,
            "kronecker",
            saber_kem::polymul::KroneckerSoft::default()
        );
        // The ESP32 RSA driver on the host model of each register generation.
        $callback!(
            kronecker_esp32_model,
            "kronecker-esp32",
            saber_kem::hw::esp32_model::kronecker_on_model::<saber_kem::hw::esp32_rsa::Esp32>()
        );
        $callback!(
            kronecker_esp32s3_model,
            "kronecker-esp32s3",
            saber_kem::hw::esp32_model::kronecker_on_model::<saber_kem::hw::esp32_rsa::Esp32S3>()
        );
        $callback!(
            kronecker_esp32c3_model,
            "kronecker-esp32c3",
            saber_kem::hw::esp32_model::kronecker_on_model::<saber_kem::hw::esp32_rsa::Esp32C3>()
        );
        $callback!(karatsuba, "karatsuba", saber_kem::polymul::Karatsuba);
    };
}

#[allow(unused_imports)]
pub(crate) use for_each_backend;

/// The backends that implement `PolyMulPublic` (expanded keys), in the same callback form.
#[allow(unused_macros)]
macro_rules! for_each_public_backend {
    ($callback:ident) => {
        $callback!(schoolbook, "schoolbook", saber_kem::polymul::Schoolbook);
        $callback!(ntt, "ntt", saber_kem::polymul::Ntt::new());
        $callback!(ntt_scalar, "ntt-scalar", saber_kem::polymul::NttScalar);
        $callback!(toom_cook, "toom-cook", saber_kem::polymul::ToomCook);
    };
}

#[allow(unused_imports)]
pub(crate) use for_each_public_backend;
