//! Expanded keys: the KAT records through expanded encapsulation and decapsulation on every
//! backend that can cache public operands, implicit rejection, and the documented memory cost.

use crate::support;

use saber_kem::polymul::{Ntt, NttScalar, Schoolbook, ToomCook};
use saber_kem::{
    ExpandedDecapsulationKey, ExpandedEncapsulationKey, Nineties, Plus, Round3, Uniform,
    UniformNineties,
};
use support::kat::{check, records_expanded};

macro_rules! expanded_kats {
    ($($test:ident: $backend:expr, $name:literal, $alias:ident, $v:ty, $l:literal, $mu:literal, $et:literal;)*) => {$(
        #[test]
        fn $test() {
            let recs = records_expanded::<$v, _, $l, $mu, $et>(&mut $backend);
            check::<saber_kem::$alias>(concat!("expanded ", $name), &recs);
        }
    )*};
}

expanded_kats! {
    toom_lightsaber: ToomCook, "toom-cook", LightSaber, Round3, 2, 10, 3;
    toom_saber: ToomCook, "toom-cook", Saber, Round3, 3, 8, 4;
    toom_firesaber: ToomCook, "toom-cook", FireSaber, Round3, 4, 6, 6;
    toom_saber_plus: ToomCook, "toom-cook", SaberPlus, Plus, 3, 8, 4;
    schoolbook_lightsaber: Schoolbook, "schoolbook", LightSaber, Round3, 2, 10, 3;
    ntt_lightsaber: Ntt::new(), "ntt", LightSaber, Round3, 2, 10, 3;
    ntt_saber: Ntt::new(), "ntt", Saber, Round3, 3, 8, 4;
    ntt_firesaber: Ntt::new(), "ntt", FireSaber, Round3, 4, 6, 6;
    ntt_saber_plus: Ntt::new(), "ntt", SaberPlus, Plus, 3, 8, 4;
    ntt_scalar_saber: NttScalar, "ntt-scalar", Saber, Round3, 3, 8, 4;
    schoolbook_firesaber_plus: Schoolbook, "schoolbook", FireSaberPlus, Plus, 4, 6, 6;
    ntt_lightsaber_90s: Ntt::new(), "ntt", LightSaber90s, Nineties, 2, 10, 3;
    ntt_saber_90s: Ntt::new(), "ntt", Saber90s, Nineties, 3, 8, 4;
    ntt_firesaber_90s: Ntt::new(), "ntt", FireSaber90s, Nineties, 4, 6, 6;
    ntt_ulightsaber: Ntt::new(), "ntt", ULightSaber, Uniform, 2, 10, 3;
    ntt_usaber: Ntt::new(), "ntt", USaber, Uniform, 3, 8, 4;
    ntt_ufiresaber: Ntt::new(), "ntt", UFireSaber, Uniform, 4, 6, 6;
    ntt_ulightsaber_90s: Ntt::new(), "ntt", ULightSaber90s, UniformNineties, 2, 10, 3;
    ntt_usaber_90s: Ntt::new(), "ntt", USaber90s, UniformNineties, 3, 8, 4;
    ntt_ufiresaber_90s: Ntt::new(), "ntt", UFireSaber90s, UniformNineties, 4, 6, 6;
    toom_saber_90s: ToomCook, "toom-cook", Saber90s, Nineties, 3, 8, 4;
    toom_ufiresaber: ToomCook, "toom-cook", UFireSaber, Uniform, 4, 6, 6;
    toom_ulightsaber_90s: ToomCook, "toom-cook", ULightSaber90s, UniformNineties, 2, 10, 3;
    schoolbook_usaber: Schoolbook, "schoolbook", USaber, Uniform, 3, 8, 4;
    ntt_scalar_firesaber_90s: NttScalar, "ntt-scalar", FireSaber90s, Nineties, 4, 6, 6;
}

#[test]
fn tampered_ciphertexts_are_rejected_through_expanded_keys() {
    use saber_kem::{Ciphertext, Saber};
    let mut rng = support::drbg::NistDrbg::new(&[3; 48]);
    let mut backend = ToomCook;
    let (dk, ek) = Saber::try_generate_with(&mut backend, &mut rng).unwrap();
    let expanded = ExpandedDecapsulationKey::new(&mut backend, &dk);
    let (ct, ss) = ek.encapsulate(&mut rng);
    assert_eq!(expanded.decapsulate(&mut backend, &ct), ss);
    let mut bytes = ct.as_bytes().to_vec();
    bytes[100] ^= 0x10;
    let tampered = Ciphertext::<Saber>::from_bytes(&bytes).unwrap();
    assert_eq!(
        expanded.decapsulate(&mut backend, &tampered),
        dk.decapsulate_with(&mut backend, &tampered)
    );
}

/// The table in the `expanded` module docs.
#[cfg(target_pointer_width = "64")]
#[test]
fn documented_memory_cost() {
    use core::mem::size_of;
    use saber_kem::{FireSaber, LightSaber, Saber};
    let toom = [
        size_of::<ExpandedEncapsulationKey<LightSaber, ToomCook>>(),
        size_of::<ExpandedDecapsulationKey<LightSaber, ToomCook>>(),
        size_of::<ExpandedEncapsulationKey<Saber, ToomCook>>(),
        size_of::<ExpandedDecapsulationKey<Saber, ToomCook>>(),
        size_of::<ExpandedEncapsulationKey<FireSaber, ToomCook>>(),
        size_of::<ExpandedDecapsulationKey<FireSaber, ToomCook>>(),
    ];
    assert_eq!(
        toom,
        [3776, 10032, 7168, 16464, 11584, 23920],
        "update the table in src/expanded.rs"
    );
}
