//! The RustCrypto [`kem`] 0.3 traits for every parameter set (feature `kem`, on by default).
//!
//! Keys load from and export to the NIST byte encodings, so keys made by other Saber
//! implementations work unchanged.

use hybrid_array::{Array, ArraySize, typenum::U32};
use kem::{
    Decapsulate, Decapsulator, Encapsulate, Generate, InvalidKey, Kem, KeyExport, KeySizeUser,
    TryKeyInit,
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

impl<P: ParameterSet> KeySizeUser for DecapsulationKey<P> {
    type KeySize = P::SecretKeySize;
}

impl<P: ParameterSet> TryKeyInit for DecapsulationKey<P> {
    fn new(key: &Array<u8, Self::KeySize>) -> Result<Self, InvalidKey> {
        Self::from_bytes(key).map_err(|_| InvalidKey)
    }
}

impl<P: ParameterSet> KeyExport for DecapsulationKey<P> {
    fn to_bytes(&self) -> Array<u8, P::SecretKeySize> {
        to_array(self.to_bytes().as_ref())
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
