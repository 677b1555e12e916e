//! Batches: several key generations, encapsulations or decapsulations computed together, eight
//! at a time.
//!
//! Keccak is most of an optimised Saber operation (`docs/anchors.md` §5), and within one
//! round-3 operation it is a chain (one XOF stream for the whole matrix), so the way to spend
//! fewer cycles on it is to run independent operations side by side. A batch is processed in
//! groups of eight through the same FO transform and IND-CPA code as single operations
//! (`kem::fo` with a group size of eight instead of one): every stage's hashes for the whole
//! group are one job list, which runs on the lanes of a multi-way Keccak where the CPU has a
//! vector one (eight AVX-512 lanes, or four AVX2 ones), and one job at a time otherwise. The
//! polynomial arithmetic stays on the caller's [`PolyMul`] backend, one operation after the other.
//!
//! # Equivalence
//!
//! Every result is byte-identical to the one-at-a-time call with the same inputs (the batch
//! KATs in `tests/suite/batch.rs` run all NIST records through this path, on every Keccak path),
//! implicit rejection included.
//!
//! # Randomness
//!
//! The RNG is drawn operation by operation, exactly as `N` one-at-a-time calls would draw it:
//! [`generate_batch`](SaberKem::generate_batch) draws 32 bytes each of seed_A, seed_s and z for
//! operation 0, then for operation 1, and so on (three calls per operation);
//! [`encapsulate_batch`](SaberKem::encapsulate_batch) draws the 32-byte m of each operation in
//! order. A seeded RNG therefore gives the same keys and ciphertexts either way.
//!
//! # Saber+
//!
//! Saber+ derives every entry of A from its own XOF call (`docs/saber-plus.md` §4.1), so every
//! entry of every operation of a group is its own job: even a batch of one gains (its L²
//! entries take ⌈L²/8⌉ eight-way calls instead of L²).
//!
//! # The 90s sets
//!
//! SHA-2 and AES have no multi-way implementation here, so the 90s sets' batches hash one
//! operation at a time (`crate::hash`): they give the same bytes as single calls, without the
//! lane speed-up.
//!
//! # Memory
//!
//! Where lanes are used a group holds eight matrices packed (8 × L² × 416 bytes: 13 KB for
//! LightSaber, 30 KB for Saber, 53 KB for FireSaber), eight secret streams and hashes on the
//! stack, and the whole batch's keys or ciphertexts; meant for servers. Microcontrollers should
//! use the one-at-a-time API, which streams A.

use rand_core::{CryptoRng, TryCryptoRng};

use crate::ct::ConstantTimeSelect;
use crate::hash::Hasher;
#[cfg(feature = "hazmat")]
pub use crate::hash::Lanes;
#[cfg(not(feature = "hazmat"))]
use crate::hash::Lanes;
pub use crate::kem::KeySeeds;
use crate::kem::fo::{self, EncapsulationParts, KeyPairParts};
use crate::kem::{Ciphertext, DecapsulationKey, EncapsulationKey, SharedSecret};
use crate::kem::{ParameterSet, SaberKem};
use crate::params::Variant;
use crate::pke::{self, OnDemand, PublicKeys, SecretKey};
use crate::polymul::{DefaultPolyMul, PolyMul};

/// A key pair, as [`SaberKem::generate`] returns it.
pub type KeyPair<P> = (DecapsulationKey<P>, EncapsulationKey<P>);

/// A decapsulation job: the key and the ciphertext.
pub type DecapsulationJob<'a, P> = (&'a DecapsulationKey<P>, &'a Ciphertext<P>);

/// Operations per group: eight, the width of the widest multi-way permutation (AVX-512); the
/// four-way one runs a group's jobs in two rounds of its lanes.
const GROUP: usize = 8;

/// `f(i)` for each operation of a group of `n`, padded to the group size with `f(0)` (only the
/// first `n` are read).
fn per_operation<T>(n: usize, mut f: impl FnMut(usize) -> T) -> [T; GROUP] {
    core::array::from_fn(|i| f(if i < n { i } else { 0 }))
}

impl<V: Variant, const L: usize, const MU: usize, const ET: usize> SaberKem<V, L, MU, ET>
where
    Self: ParameterSet,
{
    /// The all-zero results a batch's array starts from (constants: `[C; N]` builds the array
    /// zeroed where it lies, then the groups write it in place).
    const ZERO_PAIR: KeyPair<Self> = (DecapsulationKey::ZERO, EncapsulationKey::ZERO);
    const ZERO_ENCAPSULATION: (Ciphertext<Self>, SharedSecret) =
        (Ciphertext::ZERO, SharedSecret([0; 32]));

    /// Generates `N` key pairs with the default backend, eight at a time (see [`crate::batch`]).
    /// Draws the same bytes in the same order as `N` calls of [`generate`](Self::generate).
    pub fn generate_batch<const N: usize>(
        rng: &mut (impl CryptoRng + ?Sized),
    ) -> [KeyPair<Self>; N] {
        // Filled where it lies (not through `try_generate_batch_with`, whose `Result` would cost
        // two copies of the whole array).
        let mut pairs = [Self::ZERO_PAIR; N];
        let Ok(()) = Self::generate_batch_into(
            &mut DefaultPolyMul::default(),
            Lanes::fastest(),
            |_, seeds| seeds.draw(rng),
            &mut pairs,
        );
        pairs
    }

    /// Generates `N` key pairs with the given backend, eight at a time; fails only if the RNG
    /// fails. Draws seed_A, seed_s, z (32 bytes each) for each operation in turn.
    pub fn try_generate_batch_with<B: PolyMul, const N: usize, R: TryCryptoRng + ?Sized>(
        backend: &mut B,
        rng: &mut R,
    ) -> Result<[KeyPair<Self>; N], R::Error> {
        let mut pairs = [Self::ZERO_PAIR; N];
        Self::generate_batch_into(
            backend,
            Lanes::fastest(),
            |_, seeds| seeds.draw(rng),
            &mut pairs,
        )?;
        Ok(pairs)
    }

    /// Deterministic batch key generation on the given lanes (tests pick each path): key pair
    /// `i` is the one [`generate_deterministic_with`](Self::generate_deterministic_with) returns
    /// for `seeds[i]`. The seeds must be secret and uniformly random.
    #[cfg(feature = "hazmat")]
    pub fn generate_batch_deterministic_with<B: PolyMul, const N: usize>(
        backend: &mut B,
        lanes: Lanes,
        seeds: &[KeySeeds; N],
    ) -> [KeyPair<Self>; N] {
        let mut pairs = [Self::ZERO_PAIR; N];
        let Ok(()) = Self::generate_batch_into(
            backend,
            lanes,
            |i, out| {
                out.clone_from(&seeds[i]);
                Ok::<_, core::convert::Infallible>(())
            },
            &mut pairs,
        );
        pairs
    }

    /// Key pair `i` into `pairs[i]` (zeroed), from the seeds `next_seeds(i, ..)` writes, asked
    /// for in order, a group at a time; results are written in place (no copies of whole keys).
    fn generate_batch_into<E>(
        backend: &mut impl PolyMul,
        lanes: Lanes,
        mut next_seeds: impl FnMut(usize, &mut KeySeeds) -> Result<(), E>,
        pairs: &mut [KeyPair<Self>],
    ) -> Result<(), E> {
        let mut seeds: [KeySeeds; GROUP] = Default::default();
        for (group, pairs) in pairs.chunks_mut(GROUP).enumerate() {
            let n = pairs.len();
            for (k, operation_seeds) in seeds[..n].iter_mut().enumerate() {
                next_seeds(group * GROUP + k, operation_seeds)?;
            }
            let hasher = Hasher::for_group(V::SYMMETRIC, lanes, n);
            let mut outputs = pairs.iter_mut();
            let mut parts: [Option<KeyPairParts<'_>>; GROUP] = core::array::from_fn(|_| {
                outputs.next().map(|(dk, ek)| KeyPairParts {
                    pk: ek.bytes.as_mut(),
                    sk_cpa: dk.secret.as_mut(),
                    hpk: &mut ek.hpk,
                    z: &mut dk.z,
                })
            });
            let inputs: [fo::KeyInputs<'_>; GROUP] = core::array::from_fn(|i| seeds[i].inputs());
            fo::keygen::<V, _, L, MU, ET, GROUP>(backend, &hasher, &inputs[..n], &mut parts[..n]);
            for ((dk, ek), seeds) in pairs.iter_mut().zip(&seeds) {
                dk.ek.clone_from(ek);
                dk.keep_seed(seeds);
            }
        }
        Ok(())
    }

    /// Encapsulates to each of `keys` (repeats allowed) with the default backend, eight at a
    /// time. Draws the same bytes in the same order as encapsulating to each key in turn.
    pub fn encapsulate_batch<const N: usize>(
        keys: [&EncapsulationKey<Self>; N],
        rng: &mut (impl CryptoRng + ?Sized),
    ) -> [(Ciphertext<Self>, SharedSecret); N] {
        // Filled where it lies, as in `generate_batch`.
        let mut out = [Self::ZERO_ENCAPSULATION; N];
        let Ok(()) = Self::encapsulate_batch_into(
            &mut DefaultPolyMul::default(),
            Lanes::fastest(),
            &keys,
            |_, m| rng.try_fill_bytes(m),
            &mut out,
        );
        out
    }

    /// Encapsulates to each of `keys` with the given backend, eight at a time; fails only if the
    /// RNG fails. Draws 32 bytes for each operation in turn.
    pub fn try_encapsulate_batch_with<B: PolyMul, const N: usize, R: TryCryptoRng + ?Sized>(
        backend: &mut B,
        keys: [&EncapsulationKey<Self>; N],
        rng: &mut R,
    ) -> Result<[(Ciphertext<Self>, SharedSecret); N], R::Error> {
        let mut out = [Self::ZERO_ENCAPSULATION; N];
        Self::encapsulate_batch_into(
            backend,
            Lanes::fastest(),
            &keys,
            |_, m| rng.try_fill_bytes(m),
            &mut out,
        )?;
        Ok(out)
    }

    /// Deterministic batch encapsulation on the given lanes (tests pick each path): result `i`
    /// is the one [`EncapsulationKey::encapsulate_deterministic_with`] returns for `keys[i]` and
    /// `ms[i]`. Each `ms[i]` must be secret and uniformly random.
    #[cfg(feature = "hazmat")]
    pub fn encapsulate_batch_deterministic_with<B: PolyMul, const N: usize>(
        backend: &mut B,
        lanes: Lanes,
        keys: [&EncapsulationKey<Self>; N],
        ms: &[[u8; 32]; N],
    ) -> [(Ciphertext<Self>, SharedSecret); N] {
        let mut out = [Self::ZERO_ENCAPSULATION; N];
        let Ok(()) = Self::encapsulate_batch_into(
            backend,
            lanes,
            &keys,
            |i, m| {
                *m = ms[i];
                Ok::<_, core::convert::Infallible>(())
            },
            &mut out,
        );
        out
    }

    /// Encapsulation `i` to `keys[i]` into `out[i]` (zeroed), with the 32 random bytes
    /// `next_m(i, ..)` writes, asked for in order, a group at a time.
    fn encapsulate_batch_into<E>(
        backend: &mut impl PolyMul,
        lanes: Lanes,
        keys: &[&EncapsulationKey<Self>],
        mut next_m: impl FnMut(usize, &mut [u8; 32]) -> Result<(), E>,
        out: &mut [(Ciphertext<Self>, SharedSecret)],
    ) -> Result<(), E> {
        let mut ms = crate::ct::Wiped([[0u8; 32]; GROUP]);
        for (group, (keys, out)) in keys.chunks(GROUP).zip(out.chunks_mut(GROUP)).enumerate() {
            let n = keys.len();
            for (k, m) in ms[..n].iter_mut().enumerate() {
                next_m(group * GROUP + k, m)?;
            }
            let pks = per_operation(n, |i| keys[i].as_bytes());
            let hpks = per_operation(n, |i| &keys[i].hpk);
            let mut outputs = out.iter_mut();
            let mut parts: [Option<EncapsulationParts<'_>>; GROUP] = core::array::from_fn(|_| {
                outputs.next().map(|(ct, ss)| EncapsulationParts {
                    ct: ct.bytes.as_mut(),
                    ss: &mut ss.0,
                })
            });
            fo::encapsulate::<_, GROUP>(
                backend,
                &Hasher::for_group(V::SYMMETRIC, lanes, n),
                &PublicKeys::<V, <Self as ParameterSet>::MatrixBytes, L, MU, ET, GROUP>::new(
                    &pks[..n],
                ),
                &hpks[..n],
                &ms[..n],
                &mut parts[..n],
            );
        }
        Ok(())
    }

    /// Decapsulates each ciphertext with its key (repeats allowed) with the default backend,
    /// eight at a time. Same results, including implicit rejection, as
    /// [`DecapsulationKey::decapsulate`] on each pair.
    pub fn decapsulate_batch<const N: usize>(
        pairs: [DecapsulationJob<'_, Self>; N],
    ) -> [SharedSecret; N] {
        Self::decapsulate_batch_on(&mut DefaultPolyMul::default(), Lanes::fastest(), pairs)
    }

    /// Decapsulates each ciphertext with its key with the given backend, eight at a time.
    pub fn decapsulate_batch_with<B: PolyMul, const N: usize>(
        backend: &mut B,
        pairs: [DecapsulationJob<'_, Self>; N],
    ) -> [SharedSecret; N] {
        Self::decapsulate_batch_on(backend, Lanes::fastest(), pairs)
    }

    /// [`decapsulate_batch_with`](Self::decapsulate_batch_with) on the given lanes (tests pick
    /// each path).
    #[cfg(feature = "hazmat")]
    pub fn decapsulate_batch_with_lanes<B: PolyMul, const N: usize>(
        backend: &mut B,
        lanes: Lanes,
        pairs: [DecapsulationJob<'_, Self>; N],
    ) -> [SharedSecret; N] {
        Self::decapsulate_batch_on(backend, lanes, pairs)
    }

    fn decapsulate_batch_on<B: PolyMul, const N: usize>(
        backend: &mut B,
        lanes: Lanes,
        pairs: [DecapsulationJob<'_, Self>; N],
    ) -> [SharedSecret; N] {
        let mut shared: [SharedSecret; N] = [const { SharedSecret([0; 32]) }; N];
        for (pairs, shared) in pairs.chunks(GROUP).zip(shared.chunks_mut(GROUP)) {
            let n = pairs.len();
            let pks = per_operation(n, |i| pairs[i].0.ek.as_bytes());
            let hpks = per_operation(n, |i| &pairs[i].0.ek.hpk);
            let zs = per_operation(n, |i| &pairs[i].0.z);
            let cts = per_operation(n, |i| pairs[i].1.as_bytes());
            fo::decapsulate::<ConstantTimeSelect, B, GROUP>(
                backend,
                &Hasher::for_group(V::SYMMETRIC, lanes, n),
                &PublicKeys::<V, <Self as ParameterSet>::MatrixBytes, L, MU, ET, GROUP>::new(
                    &pks[..n],
                ),
                &hpks[..n],
                &zs[..n],
                &cts[..n],
                |backend, i| {
                    pke::decrypt::<V, B, L, ET>(
                        backend,
                        &mut OnDemand(SecretKey::<V>::new(pairs[i].0.secret.as_ref())),
                        cts[i],
                    )
                },
                shared.iter_mut().map(|k| &mut k.0),
            );
        }
        shared
    }
}
