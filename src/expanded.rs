//! Expanded keys: a public or secret key with everything that repeated operations can reuse
//! kept in a backend's domain.
//!
//! Each encapsulation regenerates matrix A from its seed (23 of Saber's 48 Keccak permutations)
//! and hashes the public key (8 more); each decapsulation does the same while re-encrypting,
//! and also decodes and transforms its secret. An expanded key does that work once:
//! - [`ExpandedEncapsulationKey`] caches A and b of the public key (transformed with
//!   [`PolyMulPublic::prepare_public`], e.g. in the NTT domain) and H(pk);
//! - [`ExpandedDecapsulationKey`] adds the prepared secret vector.
//!
//! Results are byte-identical to the plain keys (the KAT records are checked through both).
//! Building one is explicit, and it is tied to one backend type.
//!
//! # Memory
//!
//! For a parameter set with module rank L and a backend whose public and secret domain
//! polynomials take `p` and `s` bytes: the expanded encapsulation key holds the public key,
//! `(L² + L)·p` bytes of cache and 32 bytes of hash; the expanded decapsulation key holds the
//! secret key, that expanded encapsulation key and `L·s` more. `tests/expanded.rs` checks the
//! figures below (x86_64; `size_of` of the types).
//!
//! | backend (p, s) | LightSaber enc / dec | Saber enc / dec | FireSaber enc / dec |
//! |---|---|---|---|
//! | `ToomCook` (512, 2304) | 3,776 / 9,952 | 7,168 / 16,384 | 11,584 / 23,840 |
//!
//! (`ToomCook` keeps public polynomials as they are, so its expanded keys save only the
//! Keccak work; an NTT backend also skips the forward transforms of A and b.)

use core::fmt;

use rand_core::{CryptoRng, TryCryptoRng};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::encoding::unpack_poly;
use crate::kem::{PreparedPublicKey, random_seed};
use crate::params::sizes::POLY_P_BYTES;
use crate::params::{ArrayOf, ParameterSet};
use crate::poly::{EP, Poly};
use crate::polymul::PolyMulPublic;
use crate::sampling::MatrixSource;
use crate::{Ciphertext, DecapsulationKey, EncapsulationKey, SharedSecret};

/// A public key with A, b and H(pk) cached in backend `B`'s domain, for repeated encapsulation.
pub struct ExpandedEncapsulationKey<P: ParameterSet, B: PolyMulPublic> {
    key: EncapsulationKey<P>,
    hpk: [u8; 32],
    matrix: P::Matrix<B::PreparedPublic>,
    public_b: P::Vector<B::PreparedPublic>,
}

impl<P: ParameterSet, B: PolyMulPublic> ExpandedEncapsulationKey<P, B> {
    /// Expands `key`: generates A and transforms A and b once.
    pub fn new(backend: &mut B, key: &EncapsulationKey<P>) -> Self {
        let pk = key.as_bytes();
        let rank = P::Vector::<()>::from_fn(|_| ()).as_ref().len();
        let (packed_b, seed) = pk.split_at(rank * POLY_P_BYTES);
        let mut seed_a = [0u8; 32];
        seed_a.copy_from_slice(seed);
        let mut source = P::matrix_source(&seed_a);
        let mut entry = Poly::ZERO;
        let matrix = P::Matrix::from_fn(|_| {
            source.next_entry(&mut entry);
            backend.prepare_public(&entry)
        });
        let public_b = P::Vector::from_fn(|j| {
            let b = unpack_poly(&packed_b[j * POLY_P_BYTES..(j + 1) * POLY_P_BYTES], EP);
            backend.prepare_public(&b)
        });
        Self {
            key: key.clone(),
            hpk: crate::hash::sha3_256(&[pk]),
            matrix,
            public_b,
        }
    }

    /// The public key this was expanded from.
    pub fn encapsulation_key(&self) -> &EncapsulationKey<P> {
        &self.key
    }

    fn prepared(&self) -> PreparedPublicKey<'_, B> {
        PreparedPublicKey {
            matrix: self.matrix.as_ref(),
            public_b: self.public_b.as_ref(),
            hpk: &self.hpk,
        }
    }

    /// Encapsulates a fresh shared secret; same bytes as
    /// [`EncapsulationKey::try_encapsulate_with`] for the same RNG output.
    pub fn encapsulate<R: CryptoRng + ?Sized>(
        &self,
        backend: &mut B,
        rng: &mut R,
    ) -> (Ciphertext<P>, SharedSecret) {
        let Ok(out) = self.try_encapsulate(backend, rng);
        out
    }

    /// Encapsulates; fails only if the RNG fails. Draws 32 bytes.
    pub fn try_encapsulate<R: TryCryptoRng + ?Sized>(
        &self,
        backend: &mut B,
        rng: &mut R,
    ) -> Result<(Ciphertext<P>, SharedSecret), R::Error> {
        let m = random_seed(rng)?;
        Ok(self.encapsulate_from_seed(backend, &m))
    }

    fn encapsulate_from_seed(
        &self,
        backend: &mut B,
        m: &[u8; 32],
    ) -> (Ciphertext<P>, SharedSecret) {
        let mut ct = <P::CiphertextBytes as crate::params::ByteArray>::ZERO;
        let ss = P::encapsulate_prepared(backend, &self.prepared(), m, ct.as_mut());
        (Ciphertext::from_array(ct), ss)
    }

    /// Deterministic encapsulation from the 32 bytes [`try_encapsulate`](Self::try_encapsulate)
    /// draws. For known-answer tests; `m` must be secret and uniformly random.
    #[cfg(feature = "hazmat")]
    pub fn encapsulate_deterministic(
        &self,
        backend: &mut B,
        m: &[u8; 32],
    ) -> (Ciphertext<P>, SharedSecret) {
        self.encapsulate_from_seed(backend, m)
    }
}

impl<P: ParameterSet, B: PolyMulPublic> fmt::Debug for ExpandedEncapsulationKey<P, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExpandedEncapsulationKey")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// A secret key with its secret vector prepared and its public key expanded in backend `B`'s
/// domain, for repeated decapsulation. The prepared secret is wiped on drop.
pub struct ExpandedDecapsulationKey<P: ParameterSet, B: PolyMulPublic> {
    key: DecapsulationKey<P>,
    public: ExpandedEncapsulationKey<P, B>,
    secret: P::Vector<B::Prepared>,
}

impl<P: ParameterSet, B: PolyMulPublic> ExpandedDecapsulationKey<P, B> {
    /// Expands `key`: prepares its secret and expands its public key.
    pub fn new(backend: &mut B, key: &DecapsulationKey<P>) -> Self {
        let secret = P::Vector::from_fn(|i| {
            let s = P::decode_secret_poly(key.secret.as_ref(), i);
            backend.prepare(&s)
        });
        Self {
            key: key.clone(),
            public: ExpandedEncapsulationKey::new(backend, &key.ek),
            secret,
        }
    }

    /// The secret key this was expanded from.
    pub fn decapsulation_key(&self) -> &DecapsulationKey<P> {
        &self.key
    }

    /// The expanded public key, for encapsulating to oneself.
    pub fn expanded_encapsulation_key(&self) -> &ExpandedEncapsulationKey<P, B> {
        &self.public
    }

    /// Decapsulates; same result as [`DecapsulationKey::decapsulate_with`], including implicit
    /// rejection of tampered ciphertexts.
    pub fn decapsulate(&self, backend: &mut B, ct: &Ciphertext<P>) -> SharedSecret {
        P::decapsulate_prepared(
            backend,
            self.secret.as_ref(),
            &self.public.prepared(),
            &self.key.z,
            ct.as_bytes(),
        )
    }
}

impl<P: ParameterSet, B: PolyMulPublic> Drop for ExpandedDecapsulationKey<P, B> {
    fn drop(&mut self) {
        for s in self.secret.as_mut() {
            s.zeroize();
        }
    }
}

impl<P: ParameterSet, B: PolyMulPublic> ZeroizeOnDrop for ExpandedDecapsulationKey<P, B> {}

impl<P: ParameterSet, B: PolyMulPublic> fmt::Debug for ExpandedDecapsulationKey<P, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ExpandedDecapsulationKey<{}>(<redacted>)", P::NAME)
    }
}
