//! The one list of backends that tests, benches and examples iterate over.
//!
//! `for_each_backend!(callback)` expands `callback!(ident, "name", constructor_expr)` once per
//! backend, as items or as statements. Add a backend here and every KAT, differential test and
//! bench picks it up.

#[allow(unused_macros)]
macro_rules! for_each_backend {
    ($callback:ident) => {
        $callback!(schoolbook, "schoolbook", saber_kem::polymul::Schoolbook);
        $callback!(toom_cook, "toom-cook", saber_kem::polymul::ToomCook);
        $callback!(karatsuba, "karatsuba", saber_kem::polymul::Karatsuba);
    };
}

#[allow(unused_imports)]
pub(crate) use for_each_backend;
