//! The parameter sets: the type of a KEM instance, the [`ParameterSet`] trait and the aliases
//! of every set (round-3 spec Table 1, its uSaber and Saber-90s variants; `docs/saber-plus.md`
//! §2). The one list of sets.

use core::fmt::Debug;
use core::hash::Hash;
use core::marker::PhantomData;

use super::Algorithms;
use crate::params::sealed::Sealed;
use crate::params::{
    ArrayOf, ByteArray, Nineties, Plus, Round3, Uniform, UniformNineties, Variant, sizes,
};

/// A Saber KEM instance: variant `V`, module rank `L`, binomial parameter `MU`, ciphertext
/// exponent `ET`. Use the aliases ([`crate::LightSaber`], [`crate::Saber`], …).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SaberKem<V: Variant, const L: usize, const MU: usize, const ET: usize>(PhantomData<V>);

/// A parameter set: its name, its encoding sizes as types, and (through a sealed supertrait)
/// its algorithms. Implemented for the aliases below, and only for them.
// The sealed-supertrait pattern: the algorithms are the crate's.
#[allow(private_bounds)]
pub trait ParameterSet:
    Copy + Clone + Debug + Default + Eq + Ord + Hash + Send + Sync + 'static + Algorithms + Sealed
{
    /// "LightSaber", "Saber+", …
    const NAME: &'static str;
    /// Encoded public (encapsulation) key.
    type PublicKeyBytes: ByteArray;
    /// Encoded secret (decapsulation) key, NIST layout.
    type SecretKeyBytes: ByteArray;
    /// The IND-CPA secret part of the secret key.
    type SecretCpaBytes: ByteArray;
    /// Encoded ciphertext.
    type CiphertextBytes: ByteArray;
    /// L values of `T`.
    type Vector<T>: ArrayOf<T>;
    /// L·L values of `T`, row-major.
    type Matrix<T>: ArrayOf<T>;
    /// The matrix A packed (L·L entries of EQ-bit coefficients, row-major), as it is held when it
    /// is squeezed in advance.
    type MatrixBytes: ByteArray;
    /// The public-key size as a type (the `kem` traits).
    #[cfg(feature = "kem")]
    type PublicKeySize: hybrid_array::ArraySize;
    /// The secret-key size as a type.
    #[cfg(feature = "kem")]
    type SecretKeySize: hybrid_array::ArraySize;
    /// The ciphertext size as a type.
    #[cfg(feature = "kem")]
    type CiphertextSize: hybrid_array::ArraySize;
}

macro_rules! parameter_sets {
    ($( $(#[$doc:meta])* $alias:ident = ($v:ty, $l:literal, $mu:literal, $et:literal), $name:literal,
        pk $pk:literal $pk_t:ident, sk $sk:literal $sk_t:ident, cpa $cpa:literal, ct $ct:literal $ct_t:ident; )*) => {
        $(
            $(#[$doc])*
            pub type $alias = SaberKem<$v, $l, $mu, $et>;

            impl Sealed for $alias {}

            impl ParameterSet for $alias {
                const NAME: &'static str = $name;
                type PublicKeyBytes = [u8; $pk];
                type SecretKeyBytes = [u8; $sk];
                type SecretCpaBytes = [u8; $cpa];
                type CiphertextBytes = [u8; $ct];
                type Vector<T> = [T; $l];
                type Matrix<T> = [T; $l * $l];
                type MatrixBytes = [u8; $l * $l * sizes::poly_q::<$v>()];
                #[cfg(feature = "kem")]
                type PublicKeySize = hybrid_array::sizes::$pk_t;
                #[cfg(feature = "kem")]
                type SecretKeySize = hybrid_array::sizes::$sk_t;
                #[cfg(feature = "kem")]
                type CiphertextSize = hybrid_array::sizes::$ct_t;
            }

            // The sizes written above are the ones the spec's formulas give, the typenum sizes
            // included.
            const _: () = {
                assert!($pk == sizes::public_key($l));
                assert!($sk == sizes::secret_key::<$v>($l));
                assert!($cpa == sizes::secret_cpa::<$v>($l));
                assert!($ct == sizes::ciphertext($l, $et));
                assert!(names_agree(
                    $name,
                    <$v as Variant>::PREFIX,
                    rank_name($l),
                    <$v as Variant>::SUFFIX
                ));
                #[cfg(feature = "kem")]
                {
                    use hybrid_array::typenum::Unsigned;
                    assert!(<hybrid_array::sizes::$pk_t as Unsigned>::USIZE == $pk);
                    assert!(<hybrid_array::sizes::$sk_t as Unsigned>::USIZE == $sk);
                    assert!(<hybrid_array::sizes::$ct_t as Unsigned>::USIZE == $ct);
                }
            };
        )*
    };
}

/// The name of the main set of rank `l`.
const fn rank_name(l: usize) -> &'static str {
    match l {
        2 => "LightSaber",
        3 => "Saber",
        _ => "FireSaber",
    }
}

/// Whether `name` is `prefix ‖ rank ‖ suffix` (the names written below follow the variants' data).
const fn names_agree(name: &str, prefix: &str, rank: &str, suffix: &str) -> bool {
    let (name, parts) = (
        name.as_bytes(),
        [prefix.as_bytes(), rank.as_bytes(), suffix.as_bytes()],
    );
    let mut at = 0;
    let mut part = 0;
    while part < parts.len() {
        let mut i = 0;
        while i < parts[part].len() {
            if at >= name.len() || name[at] != parts[part][i] {
                return false;
            }
            at += 1;
            i += 1;
        }
        part += 1;
    }
    at == name.len()
}

parameter_sets! {
    /// LightSaber (NIST level 1): L = 2, μ = 10, ε_T = 3.
    LightSaber = (Round3, 2, 10, 3), "LightSaber",
        pk 672 U672, sk 1568 U1568, cpa 832, ct 736 U736;
    /// Saber (NIST level 3): L = 3, μ = 8, ε_T = 4.
    Saber = (Round3, 3, 8, 4), "Saber",
        pk 992 U992, sk 2304 U2304, cpa 1248, ct 1088 U1088;
    /// FireSaber (NIST level 5): L = 4, μ = 6, ε_T = 6.
    FireSaber = (Round3, 4, 6, 6), "FireSaber",
        pk 1312 U1312, sk 3040 U3040, cpa 1664, ct 1472 U1472;
    /// LightSaber-90s: LightSaber on SHA-2 and AES-256-CTR ([`Nineties`](crate::Nineties)).
    LightSaber90s = (Nineties, 2, 10, 3), "LightSaber-90s",
        pk 672 U672, sk 1568 U1568, cpa 832, ct 736 U736;
    /// Saber-90s: Saber on SHA-2 and AES-256-CTR.
    Saber90s = (Nineties, 3, 8, 4), "Saber-90s",
        pk 992 U992, sk 2304 U2304, cpa 1248, ct 1088 U1088;
    /// FireSaber-90s: FireSaber on SHA-2 and AES-256-CTR.
    FireSaber90s = (Nineties, 4, 6, 6), "FireSaber-90s",
        pk 1312 U1312, sk 3040 U3040, cpa 1664, ct 1472 U1472;
    /// uLightSaber: LightSaber with q = 2^12 and uniform secrets in [−2, 1]
    /// ([`Uniform`](crate::Uniform)).
    ULightSaber = (Uniform, 2, 10, 3), "uLightSaber",
        pk 672 U672, sk 1504 U1504, cpa 768, ct 736 U736;
    /// uSaber: Saber with q = 2^12 and uniform secrets in [−2, 1].
    USaber = (Uniform, 3, 8, 4), "uSaber",
        pk 992 U992, sk 2208 U2208, cpa 1152, ct 1088 U1088;
    /// uFireSaber: FireSaber with q = 2^12 and uniform secrets in [−2, 1].
    UFireSaber = (Uniform, 4, 6, 6), "uFireSaber",
        pk 1312 U1312, sk 2912 U2912, cpa 1536, ct 1472 U1472;
    /// uLightSaber-90s: uLightSaber on SHA-2 and AES-256-CTR
    /// ([`UniformNineties`](crate::UniformNineties)).
    ULightSaber90s = (UniformNineties, 2, 10, 3), "uLightSaber-90s",
        pk 672 U672, sk 1504 U1504, cpa 768, ct 736 U736;
    /// uSaber-90s: uSaber on SHA-2 and AES-256-CTR.
    USaber90s = (UniformNineties, 3, 8, 4), "uSaber-90s",
        pk 992 U992, sk 2208 U2208, cpa 1152, ct 1088 U1088;
    /// uFireSaber-90s: uFireSaber on SHA-2 and AES-256-CTR.
    UFireSaber90s = (UniformNineties, 4, 6, 6), "uFireSaber-90s",
        pk 1312 U1312, sk 2912 U2912, cpa 1536, ct 1472 U1472;
    /// LightSaber+: LightSaber parameters with the Saber+ generators and 4-bit secret keys.
    LightSaberPlus = (Plus, 2, 10, 3), "LightSaber+",
        pk 672 U672, sk 992 U992, cpa 256, ct 736 U736;
    /// Saber+: Saber parameters with the Saber+ generators and 4-bit secret keys.
    SaberPlus = (Plus, 3, 8, 4), "Saber+",
        pk 992 U992, sk 1440 U1440, cpa 384, ct 1088 U1088;
    /// FireSaber+: FireSaber parameters with the Saber+ generators and 4-bit secret keys.
    FireSaberPlus = (Plus, 4, 6, 6), "FireSaber+",
        pk 1312 U1312, sk 1888 U1888, cpa 512, ct 1472 U1472;
}
