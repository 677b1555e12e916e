//! Shared test support: the backend list, the NIST DRBG and the KAT record generator.
//! Also included by `examples/genkat.rs` and the benches.
#![allow(dead_code)]

pub mod backends;
pub mod drbg;
pub mod kat;
pub mod operands;

/// Calls `$callback!(test_name, Alias, Variant, L, MU, ET)` for each of the fifteen parameter
/// sets (the twelve round-3 ones, then Saber+).
#[allow(unused_macros)]
macro_rules! for_each_set {
    ($callback:ident) => {
        $callback!(lightsaber, LightSaber, Round3, 2, 10, 3);
        $callback!(saber, Saber, Round3, 3, 8, 4);
        $callback!(firesaber, FireSaber, Round3, 4, 6, 6);
        $callback!(lightsaber_90s, LightSaber90s, Nineties, 2, 10, 3);
        $callback!(saber_90s, Saber90s, Nineties, 3, 8, 4);
        $callback!(firesaber_90s, FireSaber90s, Nineties, 4, 6, 6);
        $callback!(ulightsaber, ULightSaber, Uniform, 2, 10, 3);
        $callback!(usaber, USaber, Uniform, 3, 8, 4);
        $callback!(ufiresaber, UFireSaber, Uniform, 4, 6, 6);
        $callback!(ulightsaber_90s, ULightSaber90s, UniformNineties, 2, 10, 3);
        $callback!(usaber_90s, USaber90s, UniformNineties, 3, 8, 4);
        $callback!(ufiresaber_90s, UFireSaber90s, UniformNineties, 4, 6, 6);
        $callback!(lightsaber_plus, LightSaberPlus, Plus, 2, 10, 3);
        $callback!(saber_plus, SaberPlus, Plus, 3, 8, 4);
        $callback!(firesaber_plus, FireSaberPlus, Plus, 4, 6, 6);
    };
}

#[allow(unused_imports)]
pub(crate) use for_each_set;
