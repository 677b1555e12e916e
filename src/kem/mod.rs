//! Saber.KEM (round-3 spec §2.6): the key, ciphertext and shared-secret types and the
//! one-operation API, on the FO transform of [`fo`].

use core::fmt;

use rand_core::{CryptoRng, TryCryptoRng};
use subtle::{Choice, ConstantTimeEq};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::ct::{ConstantTimeSelect, KeySelect, Wiped};
use crate::encoding::decode_secret;
use crate::error::{Error, check_length};
use crate::hash::Hasher;
use crate::params::{ArrayOf, ByteArray, Variant, sizes};
use crate::pke::{
    self, Backend, Cached, MemoryPlan, OnDemand, PreparedSlice, PublicKeys, SecretKey, packed_p,
};
use crate::poly::{Poly, SecretPoly};
use crate::polymul::{DefaultPolyMul, PolyMulPublic};
use crate::sampling::{MatrixSource, StreamedMatrix};

pub(crate) mod fo;
mod sets;

use fo::KeyInputs;
pub use fo::KeySeeds;
pub use sets::*;

/// Draws 32 bytes.
pub(crate) fn random_seed<R: TryCryptoRng + ?Sized>(
    rng: &mut R,
) -> Result<Wiped<[u8; 32]>, R::Error> {
    let mut seed = Wiped([0u8; 32]);
    rng.try_fill_bytes(&mut seed[..])?;
    Ok(seed)
}

impl KeySeeds {
    /// The seeds of a 96-byte key seed `seed_A ‖ seed_s ‖ z`.
    pub(crate) fn from_bytes(seed: &[u8; KEY_SEED_BYTES]) -> Self {
        let mut seeds = Self::default();
        let (head, z) = seed.split_at(64);
        let (seed_a, seed_s) = head.split_at(32);
        seeds.seed_a.copy_from_slice(seed_a);
        seeds.seed_s.copy_from_slice(seed_s);
        seeds.z.copy_from_slice(z);
        seeds
    }

    /// Fills the three seeds from `rng`, in the order one key generation draws them.
    pub(crate) fn draw<R: TryCryptoRng + ?Sized>(&mut self, rng: &mut R) -> Result<(), R::Error> {
        rng.try_fill_bytes(&mut self.seed_a)?;
        rng.try_fill_bytes(&mut self.seed_s)?;
        rng.try_fill_bytes(&mut self.z)
    }
}

/// Bytes of a key seed: the 32-byte seed_A (before it is hashed), seed_s and z that key generation
/// draws, in that order (the reference's `indcpa_kem_keypair` and `crypto_kem_keypair`).
pub const KEY_SEED_BYTES: usize = 96;

/// The secret range of a set: `[-μ/2, μ/2]` for binomial secrets.
pub(crate) const fn secret_range<V: Variant, const MU: usize>() -> (i32, i32) {
    V::SECRETS.range(MU)
}

/// The ciphertext and shared secret that `encapsulate` writes into zeroed outputs.
pub(crate) fn encapsulation<P: ParameterSet>(
    encapsulate: impl FnOnce(fo::EncapsulationParts<'_>),
) -> (Ciphertext<P>, SharedSecret) {
    let mut ct = Ciphertext::<P>::ZERO;
    let mut ss = SharedSecret([0; 32]);
    encapsulate(fo::EncapsulationParts {
        ct: ct.bytes.as_mut(),
        ss: &mut ss.0,
    });
    (ct, ss)
}

/// The parts of a decapsulation key, borrowed.
pub(crate) struct SecretParts<'a> {
    pub(crate) sk_cpa: &'a [u8],
    pub(crate) pk: &'a [u8],
    pub(crate) hpk: &'a [u8; 32],
    pub(crate) z: &'a [u8; 32],
}

impl<'a> SecretParts<'a> {
    /// The parts of a NIST-layout secret key of the right length.
    #[cfg(feature = "hazmat")]
    fn of_bytes(sk: &'a [u8], cpa: usize, pk_len: usize) -> Self {
        let (sk_cpa, rest) = sk.split_at(cpa);
        let (pk, rest) = rest.split_at(pk_len);
        let (hpk, z) = rest.split_at(32);
        let (Ok(hpk), Ok(z)) = (hpk.try_into(), z.try_into()) else {
            unreachable!("the secret key ends with H(pk) and z")
        };
        Self { sk_cpa, pk, hpk, z }
    }
}

/// The KEM algorithms of a parameter set, on the parts of its keys (slices of this set's
/// lengths, as the key types hold them), written once for every `SaberKem<V, L, MU, ET>`; the
/// sealed supertrait of [`ParameterSet`], whose data the methods that need it require.
pub(crate) trait Algorithms {
    /// The hasher of one operation.
    fn hasher() -> Hasher;
    /// Whether every coefficient of the IND-CPA secret key lies in the set's range. Constant
    /// time.
    fn secret_in_range(sk_cpa: &[u8]) -> Choice;
    /// Key generation into the key types' parts.
    fn keypair<B: Backend>(backend: &mut B, seeds: KeyInputs<'_>, parts: fo::KeyPairParts<'_>)
    where
        Self: ParameterSet;
    /// Key generation into NIST-layout bytes (the plan's scratch reaches into where the copy of
    /// pk goes, so nothing else is needed).
    #[cfg(feature = "hazmat")]
    fn keypair_bytes<B: Backend>(
        backend: &mut B,
        seeds: KeyInputs<'_>,
        pk: &mut [u8],
        sk: &mut [u8],
    ) where
        Self: ParameterSet;
    /// Encapsulation under `pk` with hash `hpk` from the 32 random bytes `m`.
    fn encapsulate<B: Backend>(
        backend: &mut B,
        pk: &[u8],
        hpk: &[u8; 32],
        m: &[u8; 32],
        out: fo::EncapsulationParts<'_>,
    ) where
        Self: ParameterSet;
    /// Decapsulation of `ct` with implicit rejection through `S`.
    fn decapsulate<B: Backend, S: KeySelect>(
        backend: &mut B,
        key: &SecretParts<'_>,
        ct: &[u8],
    ) -> SharedSecret
    where
        Self: ParameterSet;
    /// A and b of `pk` in the backend's domain.
    fn expand<B: PolyMulPublic>(
        backend: &mut B,
        pk: &[u8],
    ) -> (
        <Self as ParameterSet>::Matrix<B::PreparedPublic>,
        <Self as ParameterSet>::Vector<B::PreparedPublic>,
    )
    where
        Self: ParameterSet;
    /// The secret vector of `sk_cpa` in the backend's domain.
    fn prepare_secret<B: PolyMulPublic>(
        backend: &mut B,
        sk_cpa: &[u8],
    ) -> <Self as ParameterSet>::Vector<B::Prepared>
    where
        Self: ParameterSet;
    /// Encapsulation with A and b cached.
    fn encapsulate_cached<B: PolyMulPublic>(
        backend: &mut B,
        cache: (&[B::PreparedPublic], &[B::PreparedPublic]),
        hpk: &[u8; 32],
        m: &[u8; 32],
        out: fo::EncapsulationParts<'_>,
    ) where
        Self: ParameterSet;
    /// Decapsulation with the secret, A and b cached.
    fn decapsulate_cached<B: PolyMulPublic>(
        backend: &mut B,
        secret: &[B::Prepared],
        cache: (&[B::PreparedPublic], &[B::PreparedPublic]),
        key: &SecretParts<'_>,
        ct: &[u8],
    ) -> SharedSecret
    where
        Self: ParameterSet;
}

impl<V: Variant, const L: usize, const MU: usize, const ET: usize> SaberKem<V, L, MU, ET> {
    /// The hasher of an operation on `backend`: with the 90s family's engines it brings, if any.
    fn hasher_for<B: Backend>(backend: &B) -> Hasher {
        Hasher::for_operation(V::SYMMETRIC).with_engines(backend.engines())
    }
}

/// Bytes of the largest key-generation buffer of any plan (FireSaber's four 13-bit sums).
pub(crate) const MAX_KEYGEN_BUFFER: usize = 4 * sizes::packed(13);

impl<V: Variant, const L: usize, const MU: usize, const ET: usize> Algorithms
    for SaberKem<V, L, MU, ET>
{
    fn hasher() -> Hasher {
        Hasher::for_operation(V::SYMMETRIC)
    }

    fn secret_in_range(sk_cpa: &[u8]) -> Choice {
        let mut ok = Choice::from(1);
        let mut poly = SecretPoly::ZERO;
        for bytes in sk_cpa.chunks_exact(sizes::secret_poly::<V>()) {
            ok &= decode_secret::<V>(bytes, secret_range::<V, MU>(), &mut poly);
        }
        ok
    }

    fn keypair<B: Backend>(backend: &mut B, seeds: KeyInputs<'_>, parts: fo::KeyPairParts<'_>)
    where
        Self: ParameterSet,
    {
        let buffer = <B::Plan as MemoryPlan>::keygen_buffer::<V, L>();
        if buffer <= parts.sk_cpa.len() {
            return fo::keygen::<V, B, L, MU, ET, 1>(
                backend,
                &Self::hasher_for(backend),
                core::slice::from_ref(&seeds),
                &mut [Some(parts)],
            );
        }
        // The plan keeps scratch after the IND-CPA secret key.
        let mut scratch = Wiped([0u8; MAX_KEYGEN_BUFFER]);
        let fo::KeyPairParts { pk, sk_cpa, hpk, z } = parts;
        fo::keygen::<V, B, L, MU, ET, 1>(
            backend,
            &Self::hasher_for(backend),
            core::slice::from_ref(&seeds),
            &mut [Some(fo::KeyPairParts {
                pk,
                sk_cpa: &mut scratch[..buffer],
                hpk,
                z,
            })],
        );
        sk_cpa.copy_from_slice(&scratch[..sk_cpa.len()]);
    }

    #[cfg(feature = "hazmat")]
    fn keypair_bytes<B: Backend>(
        backend: &mut B,
        seeds: KeyInputs<'_>,
        pk: &mut [u8],
        sk: &mut [u8],
    ) where
        Self: ParameterSet,
    {
        let cpa = sizes::secret_cpa::<V>(L);
        let (sk_cpa_and_pk, rest) = sk.split_at_mut(cpa + pk.len());
        let (hpk, z) = rest.split_at_mut(32);
        let (Ok(hpk), Ok(z)) = (<&mut [u8; 32]>::try_from(hpk), <&mut [u8; 32]>::try_from(z))
        else {
            unreachable!("the secret key ends with H(pk) and z")
        };
        fo::keygen::<V, B, L, MU, ET, 1>(
            backend,
            &Self::hasher_for(backend),
            core::slice::from_ref(&seeds),
            &mut [Some(fo::KeyPairParts {
                pk: &mut *pk,
                sk_cpa: &mut *sk_cpa_and_pk,
                hpk,
                z,
            })],
        );
        sk_cpa_and_pk[cpa..].copy_from_slice(pk);
    }

    fn encapsulate<B: Backend>(
        backend: &mut B,
        pk: &[u8],
        hpk: &[u8; 32],
        m: &[u8; 32],
        out: fo::EncapsulationParts<'_>,
    ) where
        Self: ParameterSet,
    {
        fo::encapsulate::<B, 1>(
            backend,
            &Self::hasher_for(backend),
            &PublicKeys::<V, <Self as ParameterSet>::MatrixBytes, L, MU, ET, 1>::new(&[pk]),
            &[hpk],
            core::slice::from_ref(m),
            &mut [Some(out)],
        );
    }

    fn decapsulate<B: Backend, S: KeySelect>(
        backend: &mut B,
        key: &SecretParts<'_>,
        ct: &[u8],
    ) -> SharedSecret
    where
        Self: ParameterSet,
    {
        let mut shared = SharedSecret([0; 32]);
        fo::decapsulate::<S, B, 1>(
            backend,
            &Self::hasher_for(backend),
            &PublicKeys::<V, <Self as ParameterSet>::MatrixBytes, L, MU, ET, 1>::new(&[key.pk]),
            &[key.hpk],
            &[key.z],
            &[ct],
            |backend, _| {
                pke::decrypt::<V, B::Mul, L, ET>(
                    backend.mul(),
                    &mut OnDemand(SecretKey::<V>::new(key.sk_cpa)),
                    ct,
                )
            },
            core::iter::once(&mut shared.0),
        );
        shared
    }

    fn expand<B: PolyMulPublic>(
        backend: &mut B,
        pk: &[u8],
    ) -> (
        <Self as ParameterSet>::Matrix<B::PreparedPublic>,
        <Self as ParameterSet>::Vector<B::PreparedPublic>,
    )
    where
        Self: ParameterSet,
    {
        let (packed_b, seed) = pk.split_at(L * sizes::POLY_P_BYTES);
        let mut seed_a = [0u8; 32];
        seed_a.copy_from_slice(seed);
        let mut source = StreamedMatrix::new::<V, L>(&Self::hasher(), &seed_a);
        let mut entry = Poly::ZERO;
        let matrix = ArrayOf::from_fn(|_| {
            source.next_entry(&mut entry);
            backend.prepare_public(&entry)
        });
        let mut b = packed_p(packed_b);
        let public_b = ArrayOf::from_fn(|_| {
            b.next_entry(&mut entry);
            backend.prepare_public(&entry)
        });
        (matrix, public_b)
    }

    fn prepare_secret<B: PolyMulPublic>(
        backend: &mut B,
        sk_cpa: &[u8],
    ) -> <Self as ParameterSet>::Vector<B::Prepared>
    where
        Self: ParameterSet,
    {
        let secret = OnDemand(SecretKey::<V>::new(sk_cpa));
        ArrayOf::from_fn(|i| secret.prepare(backend, i))
    }

    fn encapsulate_cached<B: PolyMulPublic>(
        backend: &mut B,
        (matrix, public_b): (&[B::PreparedPublic], &[B::PreparedPublic]),
        hpk: &[u8; 32],
        m: &[u8; 32],
        out: fo::EncapsulationParts<'_>,
    ) where
        Self: ParameterSet,
    {
        fo::encapsulate::<B, 1>(
            backend,
            &Self::hasher(),
            &Cached::<V, B, L, MU, ET>::new(matrix, public_b),
            &[hpk],
            core::slice::from_ref(m),
            &mut [Some(out)],
        );
    }

    fn decapsulate_cached<B: PolyMulPublic>(
        backend: &mut B,
        secret: &[B::Prepared],
        (matrix, public_b): (&[B::PreparedPublic], &[B::PreparedPublic]),
        key: &SecretParts<'_>,
        ct: &[u8],
    ) -> SharedSecret
    where
        Self: ParameterSet,
    {
        let mut shared = SharedSecret([0; 32]);
        fo::decapsulate::<ConstantTimeSelect, B, 1>(
            backend,
            &Self::hasher(),
            &Cached::<V, B, L, MU, ET>::new(matrix, public_b),
            &[key.hpk],
            &[key.z],
            &[ct],
            |backend, _| pke::decrypt::<V, B, L, ET>(backend, &mut PreparedSlice(secret), ct),
            core::iter::once(&mut shared.0),
        );
        shared
    }
}

impl<V: Variant, const L: usize, const MU: usize, const ET: usize> SaberKem<V, L, MU, ET>
where
    Self: ParameterSet,
{
    /// Generates a key pair with the default backend.
    pub fn generate<R: CryptoRng + ?Sized>(
        rng: &mut R,
    ) -> (DecapsulationKey<Self>, EncapsulationKey<Self>) {
        let Ok(pair) = Self::try_generate_with(&mut DefaultPolyMul::default(), rng);
        pair
    }

    /// Generates a key pair with the default backend; fails only if the RNG fails.
    pub fn try_generate<R: TryCryptoRng + ?Sized>(
        rng: &mut R,
    ) -> Result<(DecapsulationKey<Self>, EncapsulationKey<Self>), R::Error> {
        Self::try_generate_with(&mut DefaultPolyMul::default(), rng)
    }

    /// Generates a key pair with the given backend. Draws 32 + 32 + 32 bytes (seed_A, seed_s,
    /// z), in the reference implementation's order.
    pub fn try_generate_with<B: Backend, R: TryCryptoRng + ?Sized>(
        backend: &mut B,
        rng: &mut R,
    ) -> Result<(DecapsulationKey<Self>, EncapsulationKey<Self>), R::Error> {
        let mut seeds = KeySeeds::default();
        seeds.draw(rng)?;
        Ok(DecapsulationKey::generate_from_seeds(backend, &seeds))
    }

    /// Deterministic key generation from the three 32-byte inputs that
    /// [`try_generate_with`](Self::try_generate_with) draws (seed_A before hashing, seed_s, z):
    /// the key [`DecapsulationKey::from_seed_with`] makes from `seed_A ‖ seed_s ‖ z`. For
    /// known-answer tests and protocols that derive keys; the inputs must be secret and uniformly
    /// random.
    #[cfg(feature = "hazmat")]
    pub fn generate_deterministic_with<B: Backend>(
        backend: &mut B,
        seed_a: &[u8; 32],
        seed_s: &[u8; 32],
        z: &[u8; 32],
    ) -> (DecapsulationKey<Self>, EncapsulationKey<Self>) {
        let seeds = KeySeeds {
            seed_a: *seed_a,
            seed_s: *seed_s,
            z: *z,
        };
        DecapsulationKey::generate_from_seeds(backend, &seeds)
    }

    /// Byte-level deterministic key generation into caller buffers (NIST layouts). Unlike the
    /// typed API it builds no key objects, so stack use is that of the algorithm alone: for
    /// microcontroller measurements and callers that keep keys in their own storage.
    #[cfg(feature = "hazmat")]
    pub fn keypair_into<B: Backend>(
        backend: &mut B,
        seed_a: &[u8; 32],
        seed_s: &[u8; 32],
        z: &[u8; 32],
        pk: &mut [u8],
        sk: &mut [u8],
    ) -> Result<(), Error> {
        check_length(pk, sizes::public_key(L))?;
        check_length(sk, sizes::secret_key::<V>(L))?;
        let seeds = KeyInputs { seed_a, seed_s, z };
        Self::keypair_bytes(backend, seeds, pk, sk);
        Ok(())
    }

    /// Byte-level deterministic encapsulation: writes the ciphertext into `ct`.
    #[cfg(feature = "hazmat")]
    pub fn encapsulate_into<B: Backend>(
        backend: &mut B,
        pk: &[u8],
        m: &[u8; 32],
        ct: &mut [u8],
    ) -> Result<SharedSecret, Error> {
        check_length(pk, sizes::public_key(L))?;
        check_length(ct, sizes::ciphertext(L, ET))?;
        let mut ss = SharedSecret([0; 32]);
        let hpk = Self::hasher().h(&[pk]);
        let out = fo::EncapsulationParts { ct, ss: &mut ss.0 };
        Self::encapsulate(backend, pk, &hpk, m, out);
        Ok(ss)
    }

    /// Byte-level decapsulation of `ct` with the NIST-layout secret key `sk`. The key is not
    /// validated: it must come from key generation or have passed
    /// [`DecapsulationKey::from_bytes`].
    #[cfg(feature = "hazmat")]
    pub fn decapsulate_from<B: Backend>(
        backend: &mut B,
        sk: &[u8],
        ct: &[u8],
    ) -> Result<SharedSecret, Error> {
        check_length(sk, sizes::secret_key::<V>(L))?;
        check_length(ct, sizes::ciphertext(L, ET))?;
        let key = SecretParts::of_bytes(sk, sizes::secret_cpa::<V>(L), sizes::public_key(L));
        Ok(Self::decapsulate::<B, ConstantTimeSelect>(
            backend, &key, ct,
        ))
    }
}

/// A public key: `pack_10(b) ‖ seed_A`, with its hash H(pk) (computed once, when the key is
/// made or decoded). Any byte string of the right length is a valid key.
pub struct EncapsulationKey<P: ParameterSet> {
    pub(crate) bytes: P::PublicKeyBytes,
    pub(crate) hpk: [u8; 32],
}

impl<P: ParameterSet> EncapsulationKey<P> {
    /// All zero (a constant, for results built in place).
    pub(crate) const ZERO: Self = Self {
        bytes: P::PublicKeyBytes::ZERO,
        hpk: [0; 32],
    };

    /// The encoding (NIST layout).
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// The encoding as an owned array.
    pub fn to_bytes(&self) -> P::PublicKeyBytes {
        self.bytes.clone()
    }
}

impl<P: ParameterSet> EncapsulationKey<P> {
    /// Decodes a public key.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut key = Self::ZERO;
        check_length(bytes, key.bytes.as_ref().len())?;
        key.bytes.as_mut().copy_from_slice(bytes);
        key.hpk = P::hasher().h(&[bytes]);
        Ok(key)
    }

    /// Encapsulates a fresh shared secret with the default backend.
    pub fn encapsulate<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> (Ciphertext<P>, SharedSecret) {
        let Ok(out) = self.try_encapsulate_with(&mut DefaultPolyMul::default(), rng);
        out
    }

    /// Encapsulates with the default backend; fails only if the RNG fails.
    pub fn try_encapsulate<R: TryCryptoRng + ?Sized>(
        &self,
        rng: &mut R,
    ) -> Result<(Ciphertext<P>, SharedSecret), R::Error> {
        self.try_encapsulate_with(&mut DefaultPolyMul::default(), rng)
    }

    /// Encapsulates with the given backend. Draws 32 bytes.
    pub fn try_encapsulate_with<B: Backend, R: TryCryptoRng + ?Sized>(
        &self,
        backend: &mut B,
        rng: &mut R,
    ) -> Result<(Ciphertext<P>, SharedSecret), R::Error> {
        let m = random_seed(rng)?;
        Ok(self.encapsulate_from_seed(backend, &m))
    }

    /// Deterministic encapsulation from the 32 bytes
    /// [`try_encapsulate_with`](Self::try_encapsulate_with) draws. For known-answer tests; `m`
    /// must be secret and uniformly random.
    #[cfg(feature = "hazmat")]
    pub fn encapsulate_deterministic_with<B: Backend>(
        &self,
        backend: &mut B,
        m: &[u8; 32],
    ) -> (Ciphertext<P>, SharedSecret) {
        self.encapsulate_from_seed(backend, m)
    }

    fn encapsulate_from_seed<B: Backend>(
        &self,
        backend: &mut B,
        m: &[u8; 32],
    ) -> (Ciphertext<P>, SharedSecret) {
        encapsulation(|out| P::encapsulate(backend, self.as_bytes(), &self.hpk, m, out))
    }
}

impl<P: ParameterSet> Clone for EncapsulationKey<P> {
    fn clone(&self) -> Self {
        Self {
            bytes: self.bytes.clone(),
            hpk: self.hpk,
        }
    }
}

impl<P: ParameterSet> PartialEq for EncapsulationKey<P> {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl<P: ParameterSet> Eq for EncapsulationKey<P> {}

impl<P: ParameterSet> fmt::Debug for EncapsulationKey<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EncapsulationKey<{}>(", P::NAME)?;
        for b in &self.as_bytes()[..8] {
            write!(f, "{b:02x}")?;
        }
        f.write_str("…)")
    }
}

impl<P: ParameterSet> AsRef<[u8]> for EncapsulationKey<P> {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl<P: ParameterSet> TryFrom<&[u8]> for EncapsulationKey<P> {
    type Error = Error;
    fn try_from(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_bytes(bytes)
    }
}

/// A secret key: `sk_cpa ‖ pk ‖ H(pk) ‖ z` in the NIST layout, and the 96-byte seed it was
/// generated from, where it was. Wiped on drop; compared in constant time; its `Debug` output is
/// redacted.
///
/// # Storing a key
///
/// The compact way to store a key is its seed ([`to_seed`](Self::to_seed), 96 bytes for every
/// set, against 1,504 to 3,040 for the NIST encoding; a microcontroller keeps it in flash), and
/// [`from_seed`](Self::from_seed) rebuilds the same key: key generation from a seed is
/// deterministic, and a seed is always valid, so nothing needs checking when it is loaded. The
/// NIST encoding ([`to_bytes`](Self::to_bytes), [`from_bytes`](Self::from_bytes)) is what other
/// Saber implementations exchange; a key decoded from it has no seed. With the `kem` feature the
/// key implements `kem`'s `KeyInit` from the seed (hence `FromSeed` for the set).
pub struct DecapsulationKey<P: ParameterSet> {
    pub(crate) secret: P::SecretCpaBytes,
    pub(crate) ek: EncapsulationKey<P>,
    pub(crate) z: [u8; 32],
    /// seed_A (before hashing) ‖ seed_s where `has_seed` (the key was generated from seeds), zero
    /// otherwise. Not an `Option`: the destructor wipes it without looking at whether it is set.
    pub(crate) seed: [u8; 64],
    pub(crate) has_seed: bool,
}

impl<P: ParameterSet> DecapsulationKey<P> {
    /// All zero (a constant, for results built in place).
    pub(crate) const ZERO: Self = Self {
        secret: P::SecretCpaBytes::ZERO,
        ek: EncapsulationKey::ZERO,
        z: [0; 32],
        seed: [0; 64],
        has_seed: false,
    };

    /// Sets the secret parts from a NIST-layout secret key of the right length (unchecked
    /// contents); the public key must be set already.
    fn fill_from(&mut self, sk: &[u8]) {
        let cpa = self.secret.as_ref().len();
        let pk_len = self.ek.as_bytes().len();
        self.secret.as_mut().copy_from_slice(&sk[..cpa]);
        self.ek
            .hpk
            .copy_from_slice(&sk[cpa + pk_len..cpa + pk_len + 32]);
        self.z.copy_from_slice(&sk[cpa + pk_len + 32..]);
    }

    /// The encoding (NIST layout), in a buffer wiped on drop.
    pub fn to_bytes(&self) -> zeroize::Zeroizing<P::SecretKeyBytes> {
        let mut out = zeroize::Zeroizing::new(P::SecretKeyBytes::ZERO);
        let parts: [&[u8]; 4] = [
            self.secret.as_ref(),
            self.ek.as_bytes(),
            &self.ek.hpk,
            &self.z,
        ];
        let mut rest = out.as_mut();
        for part in parts {
            let (head, tail) = rest.split_at_mut(part.len());
            head.copy_from_slice(part);
            rest = tail;
        }
        out
    }

    /// The matching public key.
    pub fn encapsulation_key(&self) -> &EncapsulationKey<P> {
        &self.ek
    }

    /// The 96-byte seed this key was generated from (`seed_A ‖ seed_s ‖ z`, the bytes key
    /// generation draws, in its order), in a buffer wiped on drop: `Some` for keys made by key
    /// generation or [`from_seed`](Self::from_seed), `None` for keys decoded from the NIST
    /// encoding. The compact way to store a key (see the type's docs); it is as secret as the key.
    pub fn to_seed(&self) -> Option<zeroize::Zeroizing<[u8; KEY_SEED_BYTES]>> {
        if !self.has_seed {
            return None;
        }
        let seed = &self.seed;
        let mut out = zeroize::Zeroizing::new([0u8; KEY_SEED_BYTES]);
        out[..64].copy_from_slice(seed);
        out[64..].copy_from_slice(&self.z);
        Some(out)
    }

    /// Remembers the seeds this key was generated from.
    pub(crate) fn keep_seed(&mut self, seeds: &KeySeeds) {
        self.seed[..32].copy_from_slice(&seeds.seed_a);
        self.seed[32..].copy_from_slice(&seeds.seed_s);
        self.has_seed = true;
    }

    /// The borrowed parts, as the FO transform reads them.
    pub(crate) fn parts(&self) -> SecretParts<'_> {
        SecretParts {
            sk_cpa: self.secret.as_ref(),
            pk: self.ek.as_bytes(),
            hpk: &self.ek.hpk,
            z: &self.z,
        }
    }
}

impl<P: ParameterSet> DecapsulationKey<P> {
    /// Key generation from its three seeds, into the key types.
    pub(crate) fn generate_from_seeds<B: Backend>(
        backend: &mut B,
        seeds: &KeySeeds,
    ) -> (Self, EncapsulationKey<P>) {
        let mut dk = Self::ZERO;
        let ek = &mut dk.ek;
        let parts = fo::KeyPairParts {
            pk: ek.bytes.as_mut(),
            sk_cpa: dk.secret.as_mut(),
            hpk: &mut ek.hpk,
            z: &mut dk.z,
        };
        P::keypair(backend, seeds.inputs(), parts);
        dk.keep_seed(seeds);
        let ek = dk.ek.clone();
        (dk, ek)
    }

    /// The key generated from a 96-byte seed (as [`to_seed`](Self::to_seed) returns it), with
    /// the default backend. Any 96 bytes are a valid seed; they must be secret and uniformly
    /// random, as key generation draws them.
    pub fn from_seed(seed: &[u8; KEY_SEED_BYTES]) -> Self {
        Self::from_seed_with(&mut DefaultPolyMul::default(), seed)
    }

    /// [`from_seed`](Self::from_seed) with the given backend (every backend gives the same key).
    pub fn from_seed_with<B: Backend>(backend: &mut B, seed: &[u8; KEY_SEED_BYTES]) -> Self {
        Self::generate_from_seeds(backend, &KeySeeds::from_bytes(seed)).0
    }

    /// Decodes a secret key, rejecting encodings no key generator produces: a secret coefficient
    /// outside the set's secret range, or a stored H(pk) that does not match the stored pk.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut key = Self::ZERO;
        check_length(bytes, P::SecretKeyBytes::ZERO.as_ref().len())?;
        let cpa = key.secret.as_ref().len();
        let pk_len = key.ek.bytes.as_ref().len();
        key.ek = EncapsulationKey::from_bytes(&bytes[cpa..cpa + pk_len])?;
        let computed = key.ek.hpk;
        key.fill_from(bytes);
        if !bool::from(P::secret_in_range(key.secret.as_ref())) {
            return Err(Error::SecretOutOfRange);
        }
        if !bool::from(computed.ct_eq(&key.ek.hpk)) {
            return Err(Error::PublicKeyHashMismatch);
        }
        Ok(key)
    }

    /// Decapsulates with the default backend. A ciphertext that was not produced by
    /// encapsulation to this key yields a pseudorandom key (implicit rejection), never an error.
    pub fn decapsulate(&self, ct: &Ciphertext<P>) -> SharedSecret {
        self.decapsulate_with(&mut DefaultPolyMul::default(), ct)
    }

    /// Decapsulates with the given backend.
    pub fn decapsulate_with<B: Backend>(
        &self,
        backend: &mut B,
        ct: &Ciphertext<P>,
    ) -> SharedSecret {
        P::decapsulate::<B, ConstantTimeSelect>(backend, &self.parts(), ct.as_bytes())
    }

    /// Test seam: decapsulation with another key selector (`tests/suite/rejection.rs` and
    /// `tests/ct_valgrind.rs` substitute broken ones to prove that they catch them).
    #[cfg(feature = "hazmat")]
    pub fn decapsulate_with_selector<B: Backend, S: KeySelect>(
        &self,
        backend: &mut B,
        ct: &Ciphertext<P>,
    ) -> SharedSecret {
        P::decapsulate::<B, S>(backend, &self.parts(), ct.as_bytes())
    }

    /// Decapsulation of a ciphertext whose length the caller has checked.
    #[cfg(feature = "kem")]
    pub(crate) fn decapsulate_bytes(&self, ct: &[u8]) -> SharedSecret {
        P::decapsulate::<_, ConstantTimeSelect>(&mut DefaultPolyMul::default(), &self.parts(), ct)
    }

    /// Decapsulates a ciphertext given as bytes; wrong lengths are an error.
    pub fn decapsulate_slice(&self, ct: &[u8]) -> Result<SharedSecret, Error> {
        Ok(self.decapsulate(&Ciphertext::from_bytes(ct)?))
    }
}

impl<P: ParameterSet> Drop for DecapsulationKey<P> {
    fn drop(&mut self) {
        // Slices: one bulk fill each.
        self.secret.as_mut().zeroize();
        self.z.as_mut_slice().zeroize();
        self.seed.as_mut_slice().zeroize();
    }
}

impl<P: ParameterSet> ZeroizeOnDrop for DecapsulationKey<P> {}

impl<P: ParameterSet> Clone for DecapsulationKey<P> {
    fn clone(&self) -> Self {
        Self {
            secret: self.secret.clone(),
            ek: self.ek.clone(),
            z: self.z,
            seed: self.seed,
            has_seed: self.has_seed,
        }
    }
}

/// Keys are equal when their NIST encodings are, whether or not they hold their seed.
impl<P: ParameterSet> ConstantTimeEq for DecapsulationKey<P> {
    fn ct_eq(&self, other: &Self) -> Choice {
        self.secret.as_ref().ct_eq(other.secret.as_ref())
            & self.z.ct_eq(&other.z)
            & self.ek.as_bytes().ct_eq(other.ek.as_bytes())
    }
}

impl<P: ParameterSet> PartialEq for DecapsulationKey<P> {
    fn eq(&self, other: &Self) -> bool {
        self.ct_eq(other).into()
    }
}

impl<P: ParameterSet> Eq for DecapsulationKey<P> {}

impl<P: ParameterSet> fmt::Debug for DecapsulationKey<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DecapsulationKey<{}>(<redacted>)", P::NAME)
    }
}

impl<P: ParameterSet> TryFrom<&[u8]> for DecapsulationKey<P> {
    type Error = Error;
    fn try_from(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_bytes(bytes)
    }
}

/// A ciphertext: `pack_10(b') ‖ pack_ET(c_m)`. Any byte string of the right length is accepted.
pub struct Ciphertext<P: ParameterSet> {
    pub(crate) bytes: P::CiphertextBytes,
}

impl<P: ParameterSet> Ciphertext<P> {
    /// All zero (a constant, for results built in place).
    pub(crate) const ZERO: Self = Self {
        bytes: P::CiphertextBytes::ZERO,
    };

    /// Decodes a ciphertext (checks the length only).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut ct = Self::ZERO;
        check_length(bytes, ct.bytes.as_ref().len())?;
        ct.bytes.as_mut().copy_from_slice(bytes);
        Ok(ct)
    }

    /// The encoding.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// The encoding as an owned array.
    pub fn to_bytes(&self) -> P::CiphertextBytes {
        self.bytes.clone()
    }
}

impl<P: ParameterSet> Clone for Ciphertext<P> {
    fn clone(&self) -> Self {
        Self {
            bytes: self.bytes.clone(),
        }
    }
}

impl<P: ParameterSet> PartialEq for Ciphertext<P> {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl<P: ParameterSet> Eq for Ciphertext<P> {}

impl<P: ParameterSet> fmt::Debug for Ciphertext<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Ciphertext<{}>({} bytes)",
            P::NAME,
            self.as_bytes().len()
        )
    }
}

impl<P: ParameterSet> AsRef<[u8]> for Ciphertext<P> {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl<P: ParameterSet> TryFrom<&[u8]> for Ciphertext<P> {
    type Error = Error;
    fn try_from(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_bytes(bytes)
    }
}

/// The 32-byte shared secret. Wiped on drop, compared in constant time, redacted in `Debug`.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct SharedSecret(pub(crate) [u8; 32]);

impl SharedSecret {
    /// The secret bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl ConstantTimeEq for SharedSecret {
    fn ct_eq(&self, other: &Self) -> Choice {
        self.0.ct_eq(&other.0)
    }
}

impl PartialEq for SharedSecret {
    fn eq(&self, other: &Self) -> bool {
        self.ct_eq(other).into()
    }
}

impl Eq for SharedSecret {}

impl fmt::Debug for SharedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedSecret(<redacted>)")
    }
}

impl AsRef<[u8]> for SharedSecret {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::Lanes;
    use crate::params::{Nineties, Plus, Round3, Uniform, UniformNineties};
    use crate::polymul::Karatsuba;

    /// One operation's FO and IND-CPA code with its streams squeezed in advance on each lane
    /// path (what a single operation does on AVX-512 CPUs, reached here on any CPU) gives the
    /// bytes of the streamed path, implicit rejection included.
    fn in_advance_matches_streamed<V: Variant, const L: usize, const MU: usize, const ET: usize>()
    where
        SaberKem<V, L, MU, ET>: ParameterSet,
    {
        type K<V, const L: usize, const MU: usize, const ET: usize> = SaberKem<V, L, MU, ET>;
        let seeds = KeySeeds {
            seed_a: [1; 32],
            seed_s: [2; 32],
            z: [3; 32],
        };
        let m = [4u8; 32];
        let mut results = std::vec::Vec::new();
        for lanes in Lanes::all() {
            let hasher = Hasher::for_group(V::SYMMETRIC, lanes, 1);
            let backend = &mut Karatsuba;
            let mut dk = DecapsulationKey::<K<V, L, MU, ET>>::ZERO;
            let ek = &mut dk.ek;
            let mut parts = [Some(fo::KeyPairParts {
                pk: ek.bytes.as_mut(),
                sk_cpa: dk.secret.as_mut(),
                hpk: &mut ek.hpk,
                z: &mut dk.z,
            })];
            fo::keygen::<V, _, L, MU, ET, 1>(backend, &hasher, &[seeds.inputs()], &mut parts);
            let mut ct = Ciphertext::<K<V, L, MU, ET>>::ZERO;
            let mut ss = [0u8; 32];
            let pks = [dk.ek.as_bytes()];
            let keys =
                PublicKeys::<V, <K<V, L, MU, ET> as ParameterSet>::MatrixBytes, L, MU, ET, 1>::new(
                    &pks,
                );
            fo::encapsulate::<_, 1>(
                backend,
                &hasher,
                &keys,
                &[&dk.ek.hpk],
                &[m],
                &mut [Some(fo::EncapsulationParts {
                    ct: ct.bytes.as_mut(),
                    ss: &mut ss,
                })],
            );
            let mut tampered = ct.clone();
            tampered.bytes.as_mut()[7] ^= 1;
            let mut shared = [[0u8; 32]; 2];
            for (c, out) in [&ct, &tampered].into_iter().zip(shared.iter_mut()) {
                let key = dk.parts();
                fo::decapsulate::<ConstantTimeSelect, _, 1>(
                    backend,
                    &hasher,
                    &keys,
                    &[key.hpk],
                    &[key.z],
                    &[c.as_bytes()],
                    |backend, _| {
                        pke::decrypt::<V, Karatsuba, L, ET>(
                            backend,
                            &mut OnDemand(SecretKey::<V>::new(key.sk_cpa)),
                            c.as_bytes(),
                        )
                    },
                    core::iter::once(out),
                );
            }
            assert_eq!(shared[0], ss, "{}: decapsulation", lanes.name());
            assert_ne!(shared[1], ss, "{}: rejection", lanes.name());
            results.push((
                dk.to_bytes().as_ref().to_vec(),
                ct.as_bytes().to_vec(),
                ss,
                shared[1],
            ));
        }
        assert!(
            results.len() >= 2,
            "the streamed path and at least one lane path"
        );
        assert!(
            results.windows(2).all(|w| w[0] == w[1]),
            "{}",
            K::<V, L, MU, ET>::NAME
        );
    }

    #[test]
    fn squeezing_in_advance_changes_no_byte() {
        in_advance_matches_streamed::<Round3, 2, 10, 3>();
        in_advance_matches_streamed::<Round3, 3, 8, 4>();
        in_advance_matches_streamed::<Round3, 4, 6, 6>();
        in_advance_matches_streamed::<Plus, 2, 10, 3>();
        in_advance_matches_streamed::<Plus, 3, 8, 4>();
        in_advance_matches_streamed::<Plus, 4, 6, 6>();
        in_advance_matches_streamed::<Uniform, 3, 8, 4>();
        in_advance_matches_streamed::<Nineties, 2, 10, 3>();
        in_advance_matches_streamed::<UniformNineties, 4, 6, 6>();
    }
}
