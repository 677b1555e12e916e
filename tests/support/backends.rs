//! The one list of backends that tests, benches and examples iterate over.
//!
//! `for_each_backend!(callback)` expands `callback!(ident, "name", constructor_expr)` once per
//! backend, as items or as statements. Add a backend here and every KAT, differential test and
//! bench picks it up.

#[allow(unused_macros)]
macro_rules! for_each_backend {
    ($callback:ident) => {
        $callback!(schoolbook, "schoolbook", saber_kem::polymul::Schoolbook);
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
    };
}

#[allow(unused_imports)]
pub(crate) use for_each_backend;
