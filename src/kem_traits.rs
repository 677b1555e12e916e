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

use crate::params::{ParameterSet, Variant};
use crate::{DecapsulationKey, EncapsulationKey, SaberKem};

/// Encoding sizes as typenum types, for the `kem` traits.
pub trait KemSizes: ParameterSet {
    /// Public key size.
    type PublicKeySize: ArraySize;
    /// Secret key size.
    type SecretKeySize: ArraySize;
    /// Ciphertext size.
    type CiphertextSize: ArraySize;
}

fn to_array<N: ArraySize>(bytes: &[u8]) -> Array<u8, N> {
    // Sizes agree by construction (compile-time checked in `params`).
    Array::from_fn(|i| bytes[i])
}

impl<V: Variant, const L: usize, const MU: usize, const ET: usize> Kem for SaberKem<V, L, MU, ET>
where
    Self: KemSizes,
{
    type DecapsulationKey = DecapsulationKey<Self>;
    type EncapsulationKey = EncapsulationKey<Self>;
    type SharedKeySize = U32;
    type CiphertextSize = <Self as KemSizes>::CiphertextSize;
}

impl<P: KemSizes> KeySizeUser for EncapsulationKey<P> {
    type KeySize = P::PublicKeySize;
}

impl<P: KemSizes> TryKeyInit for EncapsulationKey<P> {
    fn new(key: &Array<u8, P::PublicKeySize>) -> Result<Self, InvalidKey> {
        Self::from_bytes(key).map_err(|_| InvalidKey)
    }
}

impl<P: KemSizes> KeyExport for EncapsulationKey<P> {
    fn to_bytes(&self) -> Array<u8, P::PublicKeySize> {
        to_array(self.as_bytes())
    }
}

impl<P: KemSizes + Kem<EncapsulationKey = Self, DecapsulationKey = DecapsulationKey<P>>> Encapsulate
    for EncapsulationKey<P>
{
    type Kem = P;

    fn encapsulate_with_rng<R: CryptoRng + ?Sized>(
        &self,
        rng: &mut R,
    ) -> (kem::Ciphertext<P>, kem::SharedKey<P>) {
        let (ct, ss) = self.encapsulate(rng);
        (to_array(ct.as_bytes()), to_array(ss.as_bytes()))
    }
}

impl<P: KemSizes> KeySizeUser for DecapsulationKey<P> {
    type KeySize = P::SecretKeySize;
}

impl<P: KemSizes> TryKeyInit for DecapsulationKey<P> {
    fn new(key: &Array<u8, P::SecretKeySize>) -> Result<Self, InvalidKey> {
        Self::from_bytes(key).map_err(|_| InvalidKey)
    }
}

impl<P: KemSizes> KeyExport for DecapsulationKey<P> {
    fn to_bytes(&self) -> Array<u8, P::SecretKeySize> {
        to_array(self.to_bytes().as_ref())
    }
}

impl<P: KemSizes> Generate for DecapsulationKey<P> {
    fn try_generate_from_rng<R: TryCryptoRng + ?Sized>(rng: &mut R) -> Result<Self, R::Error> {
        crate::kem::try_generate_with::<P, _, _>(&mut crate::DefaultPolyMul::default(), rng)
            .map(|(dk, _)| dk)
    }
}

impl<P: KemSizes + Kem<EncapsulationKey = EncapsulationKey<P>>> Decapsulator
    for DecapsulationKey<P>
{
    type Kem = P;

    fn encapsulation_key(&self) -> &EncapsulationKey<P> {
        DecapsulationKey::encapsulation_key(self)
    }
}

impl<P: KemSizes + Kem<EncapsulationKey = EncapsulationKey<P>>> Decapsulate
    for DecapsulationKey<P>
{
    fn decapsulate(&self, ct: &kem::Ciphertext<P>) -> kem::SharedKey<P> {
        let ss = self.decapsulate_bytes(ct.as_slice());
        to_array(ss.as_bytes())
    }
}
