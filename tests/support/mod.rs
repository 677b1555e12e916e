//! Shared test support: the backend list, the NIST DRBG and the KAT record generator.
//! Also included by `examples/genkat.rs` and the benches.
#![allow(dead_code)]

pub mod backends;
pub mod drbg;
pub mod kat;

/// Calls `$callback!(test_name, Alias, Variant, L, MU, ET)` for each of the six parameter sets.
#[allow(unused_macros)]
macro_rules! for_each_set {
    ($callback:ident) => {
        $callback!(lightsaber, LightSaber, Round3, 2, 10, 3);
        $callback!(saber, Saber, Round3, 3, 8, 4);
        $callback!(firesaber, FireSaber, Round3, 4, 6, 6);
        $callback!(lightsaber_plus, LightSaberPlus, Plus, 2, 10, 3);
        $callback!(saber_plus, SaberPlus, Plus, 3, 8, 4);
        $callback!(firesaber_plus, FireSaberPlus, Plus, 4, 6, 6);
    };
}

#[allow(unused_imports)]
pub(crate) use for_each_set;
