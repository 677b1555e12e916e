//! The RustCrypto [`kem`] 0.3 traits for every parameter set (feature `kem`, on by default).
//!
//! Encapsulation keys load from and export to the NIST byte encoding, so keys made by other Saber
//! implementations work unchanged. Decapsulation keys initialise from their 96-byte seed
//! (`KeyInit`, hence `kem::FromSeed` for every set), as `kem` recommends for keys with a seed
//! form; their NIST encoding goes through [`DecapsulationKey::from_bytes`] and
//! [`DecapsulationKey::to_bytes`]. `KeyExport` is not implemented for them: a key decoded from
//! the NIST encoding has no seed to export, and the export cannot fail
//! ([`DecapsulationKey::to_seed`] returns an `Option` instead).

use hybrid_array::{
    Array, ArraySize,
    typenum::{U32, U96},
};
use kem::{
    Decapsulate, Decapsulator, Encapsulate, Generate, InvalidKey, Kem, KeyExport, KeyInit,
    KeySizeUser, TryKeyInit,
};
use rand_core::{CryptoRng, TryCryptoRng};

use crate::kem::{ParameterSet, SaberKem};
use crate::params::Variant;
use crate::{DecapsulationKey, DefaultPolyMul, EncapsulationKey};

fn to_array<N: ArraySize>(bytes: &[u8]) -> Array<u8, N> {
    // Sizes agree by construction (compile-time checked in `params`).
    Array::from_fn(|i| bytes[i])
}

impl<V: Variant, const L: usize, const MU: usize, const ET: usize> Kem for SaberKem<V, L, MU, ET>
where
    Self: ParameterSet,
{
    type DecapsulationKey = DecapsulationKey<Self>;
    type EncapsulationKey = EncapsulationKey<Self>;
    type SharedKeySize = U32;
    type CiphertextSize = <Self as ParameterSet>::CiphertextSize;
}

impl<P: ParameterSet> KeySizeUser for EncapsulationKey<P> {
    type KeySize = P::PublicKeySize;
}

impl<P: ParameterSet> TryKeyInit for EncapsulationKey<P> {
    fn new(key: &Array<u8, Self::KeySize>) -> Result<Self, InvalidKey> {
        Self::from_bytes(key).map_err(|_| InvalidKey)
    }
}

impl<P: ParameterSet> KeyExport for EncapsulationKey<P> {
    fn to_bytes(&self) -> Array<u8, P::PublicKeySize> {
        to_array(self.as_bytes())
    }
}

impl<P: ParameterSet + Kem<EncapsulationKey = Self>> Encapsulate for EncapsulationKey<P> {
    type Kem = P;

    fn encapsulate_with_rng<R: CryptoRng + ?Sized>(
        &self,
        rng: &mut R,
    ) -> (kem::Ciphertext<Self::Kem>, kem::SharedKey<Self::Kem>) {
        let (ct, ss) = self.encapsulate(rng);
        (to_array(ct.as_bytes()), to_array(ss.as_bytes()))
    }
}

const _: () = assert!(
    <U96 as hybrid_array::typenum::Unsigned>::USIZE == crate::KEY_SEED_BYTES,
    "the seed size as a type"
);

/// The key is its 96-byte seed (`seed_A ‖ seed_s ‖ z`).
impl<P: ParameterSet> KeySizeUser for DecapsulationKey<P> {
    type KeySize = U96;
}

/// The key generated from a 96-byte seed ([`DecapsulationKey::from_seed`]).
impl<P: ParameterSet> KeyInit for DecapsulationKey<P> {
    fn new(seed: &Array<u8, U96>) -> Self {
        Self::from_seed(&seed.0)
    }
}

impl<P: ParameterSet> Generate for DecapsulationKey<P> {
    fn try_generate_from_rng<R: TryCryptoRng + ?Sized>(rng: &mut R) -> Result<Self, R::Error> {
        let mut seeds = crate::kem::KeySeeds::default();
        seeds.draw(rng)?;
        Ok(Self::generate_from_seeds(&mut DefaultPolyMul::default(), &seeds).0)
    }
}

impl<P: ParameterSet + Kem<EncapsulationKey = EncapsulationKey<P>>> Decapsulator
    for DecapsulationKey<P>
{
    type Kem = P;

    fn encapsulation_key(&self) -> &EncapsulationKey<Self::Kem> {
        DecapsulationKey::encapsulation_key(self)
    }
}

impl<P: ParameterSet + Kem<EncapsulationKey = EncapsulationKey<P>>> Decapsulate
    for DecapsulationKey<P>
{
    fn decapsulate(&self, ct: &kem::Ciphertext<Self::Kem>) -> kem::SharedKey<Self::Kem> {
        let ss = self.decapsulate_bytes(ct.as_slice());
        to_array(ss.as_bytes())
    }
}
