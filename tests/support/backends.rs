//! The one list of backends that tests, benches and examples iterate over.
//!
//! `for_each_backend!(callback)` expands `callback!(ident, "name", constructor_expr)` once per
//! backend, as items or as statements. Add a backend here and every KAT, differential test and
//! bench picks it up.

#[allow(unused_macros)]
macro_rules! for_each_backend {
    ($callback:ident) => {
        $callback!(schoolbook, "schoolbook", saber_kem::polymul::Schoolbook);
        $callback!(ntt, "ntt", saber_kem::polymul::Ntt::new());
        $callback!(ntt_scalar, "ntt-scalar", saber_kem::polymul::NttScalar);
        $callback!(
            ntt_avx2,
            "ntt-avx2",
            match saber_kem::polymul::NttAvx2::new() {
                Some(backend) => backend,
                None => return $crate::support::backends::skip("ntt-avx2: CPU without AVX2"),
            }
        );
    };
}

#[allow(unused_imports)]
pub(crate) use for_each_backend;

/// What a test returns when its backend cannot run on this machine: `()` or `Ok(())`.
///
/// A constructor in the list may `return skip(..)` from the enclosing test (a `fn` or closure
/// returning `()` or `Result<(), _>`), after printing why.
#[allow(dead_code)]
pub fn skip<T: Skipped>(reason: &str) -> T {
    std::eprintln!("skipped: {reason}");
    T::skipped()
}

/// Return types of skippable tests.
pub trait Skipped {
    /// The value that reports success without running anything.
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
