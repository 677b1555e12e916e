//! Expanded keys: a public or secret key with everything that repeated operations can reuse
//! kept in a backend's domain.
//!
//! Each encapsulation regenerates matrix A from its seed (23 of Saber's 48 Keccak permutations);
//! each decapsulation does the same while re-encrypting, and also decodes and transforms its
//! secret. An expanded key does that work once:
//! - [`ExpandedEncapsulationKey`] caches A and b of the public key, transformed with
//!   [`PolyMulPublic::prepare_public`] (e.g. into the NTT domain);
//! - [`ExpandedDecapsulationKey`] adds the prepared secret vector.
//!
//! Results are byte-identical to the plain keys (the KAT records are checked through both): the
//! FO transform and the IND-CPA algorithms are the same code, with the cached operands in place
//! of the ones sampled or unpacked. Building one is explicit, and it is tied to one backend type.
//!
//! # Memory
//!
//! For a parameter set with module rank L and a backend whose public and secret domain
//! polynomials take `p` and `s` bytes: the expanded encapsulation key holds the public key and
//! its hash and `(L² + L)·p` bytes of cache; the expanded decapsulation key holds the secret key,
//! that expanded encapsulation key, `L·s` more and room for the key-generation seed (seed-form
//! keys). `tests/suite/expanded.rs` checks the figures below (x86_64; `size_of` of the types).
//!
//! | backend (p, s) | LightSaber enc / dec | Saber enc / dec | FireSaber enc / dec |
//! |---|---|---|---|
//! | `ToomCook` (512, 2304) | 3,776 / 10,032 | 7,168 / 16,464 | 11,584 / 23,920 |
//!
//! (`ToomCook` keeps public polynomials as they are, so its expanded keys save only the
//! Keccak work; an NTT backend also skips the forward transforms of A and b.)

use core::fmt;

use rand_core::{CryptoRng, TryCryptoRng};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::kem::{ParameterSet, encapsulation, random_seed};
use crate::polymul::PolyMulPublic;
use crate::{Ciphertext, DecapsulationKey, EncapsulationKey, SharedSecret};

/// A public key with A and b cached in backend `B`'s domain, for repeated encapsulation.
pub struct ExpandedEncapsulationKey<P: ParameterSet, B: PolyMulPublic> {
    key: EncapsulationKey<P>,
    matrix: P::Matrix<B::PreparedPublic>,
    public_b: P::Vector<B::PreparedPublic>,
}

impl<P: ParameterSet, B: PolyMulPublic> ExpandedEncapsulationKey<P, B> {
    /// Expands `key`: generates A and transforms A and b once.
    pub fn new(backend: &mut B, key: &EncapsulationKey<P>) -> Self {
        let (matrix, public_b) = P::expand(backend, key.as_bytes());
        Self {
            key: key.clone(),
            matrix,
            public_b,
        }
    }

    /// The public key this was expanded from.
    pub fn encapsulation_key(&self) -> &EncapsulationKey<P> {
        &self.key
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

    fn encapsulate_from_seed(
        &self,
        backend: &mut B,
        m: &[u8; 32],
    ) -> (Ciphertext<P>, SharedSecret) {
        encapsulation(|out| P::encapsulate_cached(backend, self.cache(), &self.key.hpk, m, out))
    }

    /// A row-major and b, in the backend's domain.
    fn cache(&self) -> (&[B::PreparedPublic], &[B::PreparedPublic]) {
        (self.matrix.as_ref(), self.public_b.as_ref())
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
        Self {
            key: key.clone(),
            public: ExpandedEncapsulationKey::new(backend, &key.ek),
            secret: P::prepare_secret(backend, key.secret.as_ref()),
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
        P::decapsulate_cached(
            backend,
            self.secret.as_ref(),
            self.public.cache(),
            &self.key.parts(),
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
