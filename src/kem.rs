//! Saber.KEM: the Fujisaki–Okamoto transform with implicit rejection (round-3 spec §2.6,
//! Algorithms 4–6), and the key, ciphertext and shared-secret types.

use core::fmt;
use core::marker::PhantomData;

use rand_core::{CryptoRng, TryCryptoRng};
use subtle::{Choice, ConstantTimeEq};
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::ct::{ConstantTimeSelect, KeySelect, bytes_equal};
use crate::error::{Error, check_length};
use crate::hash::{sha3_256, sha3_512};
use crate::lowmem;
use crate::params::sizes::{self, SEED_BYTES};
use crate::params::{ByteArray, ParameterSet, Variant};
use crate::pke;
use crate::poly::SecretPoly;
use crate::polymul::{DefaultPolyMul, PolyMul, PolyMulPublic};
use crate::sampling::MatrixSource;

/// A Saber KEM instance: variant `V`, module rank `L`, binomial parameter `MU`, ciphertext
/// exponent `ET`. Use the aliases ([`crate::LightSaber`], [`crate::Saber`], …).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SaberKem<V: Variant, const L: usize, const MU: usize, const ET: usize>(PhantomData<V>);

/// Length of the largest ciphertext (FireSaber).
const MAX_CIPHERTEXT: usize = sizes::ciphertext(4, 6);

/// The KEM algorithms on byte slices, implemented once for every `SaberKem<V, L, MU, ET>`.
/// Slices have exactly this parameter set's lengths (checked by the typed API).
#[doc(hidden)]
pub trait Operations {
    /// Key generation from its three random inputs (in reference order).
    fn keypair<B: PolyMul>(
        backend: &mut B,
        seed_a: &[u8; 32],
        seed_s: &[u8; 32],
        z: &[u8; 32],
        pk: &mut [u8],
        sk: &mut [u8],
    );
    /// Encapsulation from its random input: writes `ct`, returns the shared secret.
    fn encapsulate<B: PolyMul>(
        backend: &mut B,
        pk: &[u8],
        m: &[u8; 32],
        ct: &mut [u8],
    ) -> SharedSecret;
    /// Decapsulation with implicit rejection.
    /// Decapsulation with implicit rejection; `S` is [`ConstantTimeSelect`] outside tests.
    fn decapsulate<B: PolyMul, S: KeySelect>(
        backend: &mut B,
        dk: &SecretParts<'_>,
        ct: &[u8],
    ) -> SharedSecret;
    /// Whether `sk_cpa` decodes to a secret in range.
    fn secret_in_range(sk_cpa: &[u8]) -> Choice;
    /// Encapsulation against a public key in the backend's domain.
    fn encapsulate_prepared<B: PolyMulPublic>(
        backend: &mut B,
        public: &PreparedPublicKey<'_, B>,
        m: &[u8; 32],
        ct: &mut [u8],
    ) -> SharedSecret;
    /// Decapsulation with the secret and the public key in the backend's domain.
    fn decapsulate_prepared<B: PolyMulPublic>(
        backend: &mut B,
        secret: &[B::Prepared],
        public: &PreparedPublicKey<'_, B>,
        z: &[u8; 32],
        ct: &[u8],
    ) -> SharedSecret;
    /// The row-major source of matrix A for `seed_a`.
    fn matrix_source(seed_a: &[u8; 32]) -> impl MatrixSource;
    /// Secret polynomial `index` of an encoded IND-CPA secret key.
    fn decode_secret_poly(sk_cpa: &[u8], index: usize) -> SecretPoly;
}

/// A public key in a backend's domain, borrowed: A row-major, b, and H(pk).
#[doc(hidden)]
pub struct PreparedPublicKey<'a, B: PolyMulPublic> {
    pub(crate) matrix: &'a [B::PreparedPublic],
    pub(crate) public_b: &'a [B::PreparedPublic],
    pub(crate) hpk: &'a [u8; 32],
}

/// The parts of a decapsulation key, borrowed.
#[doc(hidden)]
pub struct SecretParts<'a> {
    secret: &'a [u8],
    pk: &'a [u8],
    hpk: &'a [u8; 32],
    z: &'a [u8; 32],
}

impl<V: Variant, const L: usize, const MU: usize, const ET: usize> Operations
    for SaberKem<V, L, MU, ET>
{
    fn keypair<B: PolyMul>(
        backend: &mut B,
        seed_a: &[u8; 32],
        seed_s: &[u8; 32],
        z: &[u8; 32],
        pk: &mut [u8],
        sk: &mut [u8],
    ) {
        let hashed_seed = hash_seed_a(seed_a);
        let cpa = sizes::secret_cpa::<V>(L);
        if B::STREAMING {
            // Needs all of `sk` as scratch for its partial sums of b.
            lowmem::keygen::<V, B, L, MU>(backend, &hashed_seed, seed_s, pk, sk);
        } else if let Some(keccak) = crate::hash::four_way() {
            // The matrix and secret streams squeezed together (see `encrypt`).
            crate::batch::keygen_in_lanes::<V, B, L, MU>(
                backend,
                keccak,
                &hashed_seed,
                seed_s,
                pk,
                &mut sk[..cpa],
            );
        } else {
            pke::keygen::<V, B, L, MU>(backend, &hashed_seed, seed_s, pk, &mut sk[..cpa]);
        }
        let (sk_pk, rest) = sk[cpa..].split_at_mut(pk.len());
        sk_pk.copy_from_slice(pk);
        let (sk_hpk, sk_z) = rest.split_at_mut(SEED_BYTES);
        sk_hpk.copy_from_slice(&sha3_256(&[pk]));
        sk_z.copy_from_slice(z);
    }

    fn encapsulate<B: PolyMul>(
        backend: &mut B,
        pk: &[u8],
        m: &[u8; 32],
        ct: &mut [u8],
    ) -> SharedSecret {
        fo_encapsulate(&sha3_256(&[pk]), m, ct, |message, coins, ct| {
            Self::encrypt(backend, message, coins, pk, ct, None)
        })
    }

    fn decapsulate<B: PolyMul, S: KeySelect>(
        backend: &mut B,
        dk: &SecretParts<'_>,
        ct: &[u8],
    ) -> SharedSecret {
        let message = Zeroizing::new(Self::decrypt(backend, dk.secret, ct));
        fo_decapsulate::<S>(&message, dk.hpk, dk.z, ct, |message, coins| {
            Self::encrypts_to(backend, message, coins, dk.pk, ct)
        })
    }

    fn encapsulate_prepared<B: PolyMulPublic>(
        backend: &mut B,
        public: &PreparedPublicKey<'_, B>,
        m: &[u8; 32],
        ct: &mut [u8],
    ) -> SharedSecret {
        fo_encapsulate(public.hpk, m, ct, |message, coins, ct| {
            pke::encrypt_prepared::<V, B, L, MU, ET>(
                backend,
                public.matrix,
                public.public_b,
                message,
                coins,
                ct,
            )
        })
    }

    fn decapsulate_prepared<B: PolyMulPublic>(
        backend: &mut B,
        secret: &[B::Prepared],
        public: &PreparedPublicKey<'_, B>,
        z: &[u8; 32],
        ct: &[u8],
    ) -> SharedSecret {
        let message = Zeroizing::new(pke::decrypt_prepared::<B, L, ET>(backend, secret, ct));
        fo_decapsulate::<ConstantTimeSelect>(&message, public.hpk, z, ct, |message, coins| {
            let matches = reencryption_matches(ct, |out| {
                pke::encrypt_prepared::<V, B, L, MU, ET>(
                    backend,
                    public.matrix,
                    public.public_b,
                    message,
                    coins,
                    out,
                )
            });
            (matches, None)
        })
    }

    fn matrix_source(seed_a: &[u8; 32]) -> impl MatrixSource {
        V::matrix(seed_a, L)
    }

    fn decode_secret_poly(sk_cpa: &[u8], index: usize) -> SecretPoly {
        let mut s = SecretPoly::ZERO;
        pke::decode_secret_poly::<V, MU>(sk_cpa, index, &mut s);
        s
    }

    fn secret_in_range(sk_cpa: &[u8]) -> Choice {
        let mut ok = Choice::from(1);
        let mut poly = SecretPoly::ZERO;
        for bytes in sk_cpa.chunks_exact(V::SECRET_POLY_BYTES) {
            ok &= V::decode_secret(bytes, MU, &mut poly);
        }
        ok
    }
}

// The IND-CPA steps of the FO transform in the backend's memory organisation: the fast one
// (`pke`) or, for `LowMemory` backends, the streaming one (`lowmem`). Only these differ between
// the two; the transform itself (`fo_encapsulate`, `fo_decapsulate`) is shared.
impl<V: Variant, const L: usize, const MU: usize, const ET: usize> SaberKem<V, L, MU, ET> {
    /// Saber.PKE.Enc(m; coins) under `pk` into `ct`; with `also = (x, h)`, h = SHA3-256(x) too.
    /// On CPUs where four Keccak lanes cost one permutation (`hash::four_way`), the fast
    /// organisation squeezes the matrix, the secret stream and SHA3-256(x) together
    /// ([`batch::encrypt_in_lanes`](crate::batch)).
    fn encrypt<B: PolyMul>(
        backend: &mut B,
        m: &[u8; 32],
        coins: &[u8; 32],
        pk: &[u8],
        ct: &mut [u8],
        also: Option<(&[u8], &mut [u8; 32])>,
    ) {
        if let (false, Some(keccak)) = (B::STREAMING, crate::hash::four_way()) {
            return crate::batch::encrypt_in_lanes::<V, B, L, MU, ET>(
                backend, keccak, m, coins, pk, ct, also,
            );
        }
        if let Some((input, digest)) = also {
            *digest = sha3_256(&[input]);
        }
        if B::STREAMING {
            lowmem::encrypt::<V, B, L, MU, ET>(backend, m, coins, pk, ct);
        } else {
            pke::encrypt::<V, B, L, MU, ET>(backend, m, coins, pk, ct);
        }
    }

    /// Whether Saber.PKE.Enc(m; coins) under `pk` is `ct`, in constant time, and H(ct) when the
    /// encryption computed it alongside: the streaming organisation compares as it encrypts,
    /// the fast one encrypts into a buffer first.
    fn encrypts_to<B: PolyMul>(
        backend: &mut B,
        m: &[u8; 32],
        coins: &[u8; 32],
        pk: &[u8],
        ct: &[u8],
    ) -> (Choice, Option<[u8; 32]>) {
        if B::STREAMING {
            (
                lowmem::encrypts_to::<V, B, L, MU, ET>(backend, m, coins, pk, ct),
                None,
            )
        } else {
            let mut ct_hash = [0u8; 32];
            let matches = reencryption_matches(ct, |out| {
                Self::encrypt(backend, m, coins, pk, out, Some((ct, &mut ct_hash)))
            });
            (matches, Some(ct_hash))
        }
    }

    /// Saber.PKE.Dec of `ct` with the encoded secret `sk_cpa`: decoded whole for the fast
    /// organisation, one polynomial at a time for the streaming one.
    fn decrypt<B: PolyMul>(backend: &mut B, sk_cpa: &[u8], ct: &[u8]) -> [u8; 32] {
        if B::STREAMING {
            lowmem::decrypt::<V, B, L, MU, ET>(backend, sk_cpa, ct)
        } else {
            Self::decrypt_decoded(backend, sk_cpa, ct)
        }
    }

    /// The fast Saber.PKE.Dec after decoding the whole secret. Not inlined, so that the
    /// decoded secret is not in the caller's frame during the re-encryption.
    #[inline(never)]
    fn decrypt_decoded<B: PolyMul>(backend: &mut B, sk_cpa: &[u8], ct: &[u8]) -> [u8; 32] {
        let mut s = pke::zero_secret::<L>();
        for (i, s_i) in s.iter_mut().enumerate() {
            pke::decode_secret_poly::<V, MU>(sk_cpa, i, s_i);
        }
        pke::decrypt::<B, L, ET>(backend, &s, ct)
    }
}

/// seed_A = SHAKE128(random seed), so that raw RNG output never appears in the public key
/// (§2.5.1). Not inlined, so that the XOF state never sits in the caller's frame.
#[inline(never)]
fn hash_seed_a(seed_a: &[u8; 32]) -> [u8; 32] {
    let mut hashed = [0u8; 32];
    shake::XofReader::read(&mut crate::hash::shake128(&[seed_a]), &mut hashed);
    hashed
}

/// The FO encapsulation around an encryption routine (spec Algorithm 5): m = H(seed),
/// (K̂, r) = G(m ‖ H(pk)), ct = Enc(m; r), K = H(K̂ ‖ H(ct)).
fn fo_encapsulate(
    hpk: &[u8; 32],
    seed: &[u8; 32],
    ct: &mut [u8],
    encrypt: impl FnOnce(&[u8; 32], &[u8; 32], &mut [u8]),
) -> SharedSecret {
    // m = H(randomness) keeps raw RNG output out of the protocol (§2.6.2).
    let message = Zeroizing::new(sha3_256(&[seed]));
    let mut kr = WipedBytes(sha3_512(&[&message[..], hpk]));
    let (k, coins) = split_kr(&mut kr.0);
    encrypt(&message, coins, ct);
    SharedSecret(sha3_256(&[k, &sha3_256(&[ct])]))
}

/// The FO decapsulation after decryption (spec Algorithm 6): re-encrypts the recovered message
/// (`reencrypts_to_ct(m, r)`: whether Enc(m; r) is `ct`, in constant time, and H(ct) if it
/// computed that alongside its own hashing) and, on any mismatch, replaces K̂ by z without a
/// branch (implicit rejection). `S` is [`ConstantTimeSelect`] except in the tests that
/// substitute a broken selector.
fn fo_decapsulate<S: KeySelect>(
    message: &[u8; 32],
    hpk: &[u8; 32],
    z: &[u8; 32],
    ct: &[u8],
    reencrypts_to_ct: impl FnOnce(&[u8; 32], &[u8; 32]) -> (Choice, Option<[u8; 32]>),
) -> SharedSecret {
    let mut kr = WipedBytes(sha3_512(&[message, hpk]));
    let (k, coins) = split_kr(&mut kr.0);
    let (matches, ct_hash) = reencrypts_to_ct(message, coins);
    S::select_into(k, z, !matches);
    let ct_hash = ct_hash.unwrap_or_else(|| sha3_256(&[ct]));
    SharedSecret(sha3_256(&[k, &ct_hash]))
}

/// Whether `encrypt` writes exactly `ct`: into a buffer, then compared in constant time.
/// Not inlined, so that the buffer is never in a streaming caller's frame.
#[inline(never)]
fn reencryption_matches(ct: &[u8], encrypt: impl FnOnce(&mut [u8])) -> Choice {
    let mut reencrypted = WipedBytes([0u8; MAX_CIPHERTEXT]);
    let reencrypted = &mut reencrypted.0[..ct.len()];
    encrypt(reencrypted);
    bytes_equal(ct, reencrypted)
}

/// A byte buffer wiped on drop in one bulk fill (`zeroize` on a slice: a fill and an optimisation
/// barrier). `Zeroizing` of an array would store each byte with its own volatile write, which
/// for a ciphertext or a secret key costs more than the rest of the buffer's handling.
struct WipedBytes<T: AsMut<[u8]>>(T);

impl<T: AsMut<[u8]>> Drop for WipedBytes<T> {
    fn drop(&mut self) {
        self.0.as_mut().zeroize();
    }
}

/// (K̂, r) = the two halves of G's output, borrowed in place: no copies to wipe (`Zeroizing`
/// copies cost a volatile store per byte and, on 32-bit cores, a frame of spilled bytes).
fn split_kr(kr: &mut [u8; 64]) -> (&mut [u8; 32], &[u8; 32]) {
    let (k, r) = kr.split_at_mut(32);
    match (<&mut [u8; 32]>::try_from(k), <&[u8; 32]>::try_from(&*r)) {
        (Ok(k), Ok(r)) => (k, r),
        _ => unreachable!("G's output is two 32-byte halves"),
    }
}

/// Draws 32 bytes.
pub(crate) fn random_seed<R: TryCryptoRng + ?Sized>(
    rng: &mut R,
) -> Result<Zeroizing<[u8; 32]>, R::Error> {
    let mut seed = Zeroizing::new([0u8; 32]);
    rng.try_fill_bytes(&mut seed[..])?;
    Ok(seed)
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
    pub fn try_generate_with<B: PolyMul, R: TryCryptoRng + ?Sized>(
        backend: &mut B,
        rng: &mut R,
    ) -> Result<(DecapsulationKey<Self>, EncapsulationKey<Self>), R::Error> {
        try_generate_with(backend, rng)
    }

    /// Deterministic key generation from the three 32-byte inputs that
    /// [`try_generate_with`](Self::try_generate_with) draws (seed_A before hashing, seed_s, z).
    /// For known-answer tests and protocols that derive keys; the inputs must be secret and
    /// uniformly random.
    #[cfg(feature = "hazmat")]
    pub fn generate_deterministic_with<B: PolyMul>(
        backend: &mut B,
        seed_a: &[u8; 32],
        seed_s: &[u8; 32],
        z: &[u8; 32],
    ) -> (DecapsulationKey<Self>, EncapsulationKey<Self>) {
        keypair_from_seeds(backend, seed_a, seed_s, z)
    }

    /// Byte-level deterministic key generation into caller buffers (NIST layouts). Unlike the
    /// typed API it builds no key objects, so stack use is that of the algorithm alone: for
    /// microcontroller measurements and callers that keep keys in their own storage.
    #[cfg(feature = "hazmat")]
    pub fn keypair_into<B: PolyMul>(
        backend: &mut B,
        seed_a: &[u8; 32],
        seed_s: &[u8; 32],
        z: &[u8; 32],
        pk: &mut [u8],
        sk: &mut [u8],
    ) -> Result<(), Error> {
        check_length(pk, encoding_lengths::<Self>().0)?;
        check_length(sk, encoding_lengths::<Self>().1)?;
        Self::keypair(backend, seed_a, seed_s, z, pk, sk);
        Ok(())
    }

    /// Byte-level deterministic encapsulation: writes the ciphertext into `ct`.
    #[cfg(feature = "hazmat")]
    pub fn encapsulate_into<B: PolyMul>(
        backend: &mut B,
        pk: &[u8],
        m: &[u8; 32],
        ct: &mut [u8],
    ) -> Result<SharedSecret, Error> {
        check_length(pk, encoding_lengths::<Self>().0)?;
        check_length(ct, encoding_lengths::<Self>().2)?;
        Ok(Self::encapsulate(backend, pk, m, ct))
    }

    /// Byte-level decapsulation of `ct` with the NIST-layout secret key `sk`. The key is not
    /// validated: it must come from key generation or have passed
    /// [`DecapsulationKey::from_bytes`].
    #[cfg(feature = "hazmat")]
    pub fn decapsulate_from<B: PolyMul>(
        backend: &mut B,
        sk: &[u8],
        ct: &[u8],
    ) -> Result<SharedSecret, Error> {
        let (pk_len, sk_len, ct_len) = encoding_lengths::<Self>();
        check_length(sk, sk_len)?;
        check_length(ct, ct_len)?;
        let cpa = sizes::secret_cpa::<V>(L);
        let (secret, rest) = sk.split_at(cpa);
        let (pk, rest) = rest.split_at(pk_len);
        let (hpk, z) = rest.split_at(SEED_BYTES);
        let parts = SecretParts {
            secret,
            pk,
            hpk: hpk.try_into().map_err(|_| Error::InvalidLength {
                expected: sk_len,
                actual: sk.len(),
            })?,
            z: z.try_into().map_err(|_| Error::InvalidLength {
                expected: sk_len,
                actual: sk.len(),
            })?,
        };
        Ok(Self::decapsulate::<B, ConstantTimeSelect>(
            backend, &parts, ct,
        ))
    }
}

/// (public key, secret key, ciphertext) lengths of a parameter set.
#[cfg(feature = "hazmat")]
fn encoding_lengths<P: ParameterSet>() -> (usize, usize, usize) {
    (
        size_of::<P::PublicKeyBytes>(),
        size_of::<P::SecretKeyBytes>(),
        size_of::<P::CiphertextBytes>(),
    )
}

/// Key generation for any parameter set, drawing its seeds from `rng`.
pub(crate) fn try_generate_with<P: ParameterSet, B: PolyMul, R: TryCryptoRng + ?Sized>(
    backend: &mut B,
    rng: &mut R,
) -> Result<(DecapsulationKey<P>, EncapsulationKey<P>), R::Error> {
    let seed_a = random_seed(rng)?;
    let seed_s = random_seed(rng)?;
    let z = random_seed(rng)?;
    Ok(keypair_from_seeds(backend, &seed_a, &seed_s, &z))
}

fn keypair_from_seeds<P: ParameterSet, B: PolyMul>(
    backend: &mut B,
    seed_a: &[u8; 32],
    seed_s: &[u8; 32],
    z: &[u8; 32],
) -> (DecapsulationKey<P>, EncapsulationKey<P>) {
    let mut pk = P::PublicKeyBytes::ZERO;
    let mut sk = WipedBytes(P::SecretKeyBytes::ZERO);
    P::keypair(backend, seed_a, seed_s, z, pk.as_mut(), sk.0.as_mut());
    let ek = EncapsulationKey { bytes: pk };
    let dk = DecapsulationKey::from_parts(sk.0.as_ref(), ek.clone());
    (dk, ek)
}

/// A public key: `pack_10(b) ‖ seed_A`. Any byte string of the right length is a valid key.
pub struct EncapsulationKey<P: ParameterSet> {
    pub(crate) bytes: P::PublicKeyBytes,
}

impl<P: ParameterSet> EncapsulationKey<P> {
    /// Decodes a public key.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut key = P::PublicKeyBytes::ZERO;
        check_length(bytes, key.as_ref().len())?;
        key.as_mut().copy_from_slice(bytes);
        Ok(Self { bytes: key })
    }

    /// The encoding (NIST layout).
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// The encoding as an owned array.
    pub fn to_bytes(&self) -> P::PublicKeyBytes {
        self.bytes.clone()
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
    pub fn try_encapsulate_with<B: PolyMul, R: TryCryptoRng + ?Sized>(
        &self,
        backend: &mut B,
        rng: &mut R,
    ) -> Result<(Ciphertext<P>, SharedSecret), R::Error> {
        let m = random_seed(rng)?;
        Ok(self.encapsulate_from_seed(backend, &m))
    }

    pub(crate) fn encapsulate_from_seed<B: PolyMul>(
        &self,
        backend: &mut B,
        m: &[u8; 32],
    ) -> (Ciphertext<P>, SharedSecret) {
        let mut ct = P::CiphertextBytes::ZERO;
        let ss = P::encapsulate(backend, self.bytes.as_ref(), m, ct.as_mut());
        (Ciphertext { bytes: ct }, ss)
    }

    /// Deterministic encapsulation from the 32 bytes [`try_encapsulate_with`](Self::try_encapsulate_with)
    /// draws. For known-answer tests; `m` must be secret and uniformly random.
    #[cfg(feature = "hazmat")]
    pub fn encapsulate_deterministic_with<B: PolyMul>(
        &self,
        backend: &mut B,
        m: &[u8; 32],
    ) -> (Ciphertext<P>, SharedSecret) {
        self.encapsulate_from_seed(backend, m)
    }
}

impl<P: ParameterSet> Clone for EncapsulationKey<P> {
    fn clone(&self) -> Self {
        Self {
            bytes: self.bytes.clone(),
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

/// A secret key: `sk_cpa ‖ pk ‖ H(pk) ‖ z` in the NIST layout. Wiped on drop; compared in
/// constant time; its `Debug` output is redacted.
pub struct DecapsulationKey<P: ParameterSet> {
    pub(crate) secret: P::SecretCpaBytes,
    pub(crate) ek: EncapsulationKey<P>,
    pub(crate) hpk: [u8; 32],
    pub(crate) z: [u8; 32],
}

impl<P: ParameterSet> DecapsulationKey<P> {
    /// Splits a secret key of the right length (unchecked contents).
    pub(crate) fn from_parts(sk: &[u8], ek: EncapsulationKey<P>) -> Self {
        let mut secret = P::SecretCpaBytes::ZERO;
        let cpa = secret.as_ref().len();
        let pk_len = ek.as_bytes().len();
        secret.as_mut().copy_from_slice(&sk[..cpa]);
        let mut hpk = [0u8; 32];
        hpk.copy_from_slice(&sk[cpa + pk_len..cpa + pk_len + 32]);
        let mut z = [0u8; 32];
        z.copy_from_slice(&sk[cpa + pk_len + 32..]);
        Self { secret, ek, hpk, z }
    }

    /// Decodes a secret key, rejecting encodings no key generator produces: a secret coefficient
    /// outside `[-μ/2, μ/2]`, or a stored H(pk) that does not match the stored pk.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        check_length(bytes, P::SecretKeyBytes::ZERO.as_ref().len())?;
        let cpa = P::SecretCpaBytes::ZERO.as_ref().len();
        let pk_len = P::PublicKeyBytes::ZERO.as_ref().len();
        let ek = EncapsulationKey::from_bytes(&bytes[cpa..cpa + pk_len])?;
        let key = Self::from_parts(bytes, ek);
        if !bool::from(P::secret_in_range(key.secret.as_ref())) {
            return Err(Error::SecretOutOfRange);
        }
        if sha3_256(&[key.ek.as_bytes()]) != key.hpk {
            return Err(Error::PublicKeyHashMismatch);
        }
        Ok(key)
    }

    /// The encoding (NIST layout), in a buffer wiped on drop.
    pub fn to_bytes(&self) -> Zeroizing<P::SecretKeyBytes> {
        let mut out = Zeroizing::new(P::SecretKeyBytes::ZERO);
        let parts: [&[u8]; 4] = [self.secret.as_ref(), self.ek.as_bytes(), &self.hpk, &self.z];
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

    /// Decapsulates with the default backend. A ciphertext that was not produced by
    /// encapsulation to this key yields a pseudorandom key (implicit rejection), never an error.
    pub fn decapsulate(&self, ct: &Ciphertext<P>) -> SharedSecret {
        self.decapsulate_with(&mut DefaultPolyMul::default(), ct)
    }

    /// Decapsulates with the given backend.
    pub fn decapsulate_with<B: PolyMul>(
        &self,
        backend: &mut B,
        ct: &Ciphertext<P>,
    ) -> SharedSecret {
        self.decapsulate_bytes_with(backend, ct.as_bytes())
    }

    /// Decapsulation of a ciphertext whose length the caller has checked.
    #[cfg(feature = "kem")]
    pub(crate) fn decapsulate_bytes(&self, ct: &[u8]) -> SharedSecret {
        self.decapsulate_bytes_with(&mut DefaultPolyMul::default(), ct)
    }

    fn decapsulate_bytes_with<B: PolyMul>(&self, backend: &mut B, ct: &[u8]) -> SharedSecret {
        self.decapsulate_selecting::<B, ConstantTimeSelect>(backend, ct)
    }

    /// Test seam: decapsulation with another key selector (`tests/rejection.rs` and
    /// `tests/ct_valgrind.rs` substitute broken ones to prove that they catch them).
    #[cfg(feature = "hazmat")]
    #[doc(hidden)]
    pub fn decapsulate_with_selector<B: PolyMul, S: KeySelect>(
        &self,
        backend: &mut B,
        ct: &Ciphertext<P>,
    ) -> SharedSecret {
        self.decapsulate_selecting::<B, S>(backend, ct.as_bytes())
    }

    fn decapsulate_selecting<B: PolyMul, S: KeySelect>(
        &self,
        backend: &mut B,
        ct: &[u8],
    ) -> SharedSecret {
        let parts = SecretParts {
            secret: self.secret.as_ref(),
            pk: self.ek.as_bytes(),
            hpk: &self.hpk,
            z: &self.z,
        };
        P::decapsulate::<B, S>(backend, &parts, ct)
    }

    /// Decapsulates a ciphertext given as bytes; wrong lengths are an error.
    pub fn decapsulate_slice(&self, ct: &[u8]) -> Result<SharedSecret, Error> {
        Ok(self.decapsulate(&Ciphertext::from_bytes(ct)?))
    }
}

impl<P: ParameterSet> Drop for DecapsulationKey<P> {
    fn drop(&mut self) {
        // Slices: one bulk fill each (see `WipedBytes`).
        self.secret.as_mut().zeroize();
        self.z.as_mut_slice().zeroize();
    }
}

impl<P: ParameterSet> ZeroizeOnDrop for DecapsulationKey<P> {}

impl<P: ParameterSet> Clone for DecapsulationKey<P> {
    fn clone(&self) -> Self {
        Self {
            secret: self.secret.clone(),
            ek: self.ek.clone(),
            hpk: self.hpk,
            z: self.z,
        }
    }
}

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
    /// Decodes a ciphertext (checks the length only).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut ct = P::CiphertextBytes::ZERO;
        check_length(bytes, ct.as_ref().len())?;
        ct.as_mut().copy_from_slice(bytes);
        Ok(Self { bytes: ct })
    }

    /// The encoding.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    pub(crate) fn from_array(bytes: P::CiphertextBytes) -> Self {
        Self { bytes }
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
