//! The Fujisaki–Okamoto transform with implicit rejection (round-3 spec §2.6, Algorithms 4–6),
//! written once for a group of up to `G` operations: one operation (`G = 1`: the single, expanded
//! and low-memory paths) or a group of a batch (`G = 8`). Each stage's hashes are one job list
//! for the whole group, which the [`Hasher`] spreads over lanes where the CPU has them; the
//! IND-CPA steps are the group functions of [`crate::pke`], or the expanded keys' own.

use subtle::Choice;
use zeroize::{Zeroize, ZeroizeOnDrop};

use super::{ParameterSet, SaberKem};
use crate::ct::{KeySelect, Wiped};
use crate::hash::{Hasher, Job};
use crate::params::Variant;
use crate::pke::{self, Backend, CiphertextSink, EncryptGroup, Fast, SecretBytes};
use crate::polymul::PolyMul;
use crate::sampling::MatrixSource;

/// The three 32-byte inputs of one key generation, in the order they are drawn.
#[derive(Clone, Default)]
pub struct KeySeeds {
    /// Hashed with the XOF into the public seed of A.
    pub seed_a: [u8; 32],
    /// The seed of the secret's stream.
    pub seed_s: [u8; 32],
    /// The implicit-rejection secret.
    pub z: [u8; 32],
}

impl Zeroize for KeySeeds {
    fn zeroize(&mut self) {
        // As slices: one bulk fill each (the derive would store each byte with its own volatile
        // write).
        for seed in [&mut self.seed_a, &mut self.seed_s, &mut self.z] {
            seed.as_mut_slice().zeroize();
        }
    }
}

impl Drop for KeySeeds {
    fn drop(&mut self) {
        self.zeroize();
    }
}

impl ZeroizeOnDrop for KeySeeds {}

impl core::fmt::Debug for KeySeeds {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("KeySeeds(<redacted>)")
    }
}

/// The three inputs of one key generation, borrowed: key generation holds no copy of them
/// while its products run.
#[derive(Clone, Copy)]
pub(crate) struct KeyInputs<'a> {
    /// Hashed with the XOF into the public seed of A.
    pub(crate) seed_a: &'a [u8; 32],
    /// The seed of the secret's stream.
    pub(crate) seed_s: &'a [u8; 32],
    /// The implicit-rejection secret.
    pub(crate) z: &'a [u8; 32],
}

impl KeySeeds {
    /// The seeds, borrowed.
    pub(crate) fn inputs(&self) -> KeyInputs<'_> {
        KeyInputs {
            seed_a: &self.seed_a,
            seed_s: &self.seed_s,
            z: &self.z,
        }
    }
}

/// Where one key pair goes.
pub(crate) struct KeyPairParts<'a> {
    /// The public key.
    pub(crate) pk: &'a mut [u8],
    /// The IND-CPA secret key at its front, with the plan's key-generation buffer length.
    pub(crate) sk_cpa: &'a mut [u8],
    /// H(pk), stored with the secret key.
    pub(crate) hpk: &'a mut [u8; 32],
    /// z, stored with the secret key.
    pub(crate) z: &'a mut [u8; 32],
}

/// A public key's `pack_p(b)` part and its seed_A, apart.
fn split_public_key(pk: &mut [u8]) -> (&mut [u8], &mut [u8; 32]) {
    let (b, seed_a) = pk.split_at_mut(pk.len() - 32);
    match seed_a.try_into() {
        Ok(seed_a) => (b, seed_a),
        Err(_) => unreachable!("a public key ends with its 32-byte seed"),
    }
}

/// Saber.KEM.KeyGen (Algorithm 4) for each of `seeds` into `out`.
pub(crate) fn keygen<
    V: Variant,
    Bk: Backend,
    const L: usize,
    const MU: usize,
    const ET: usize,
    const G: usize,
>(
    backend: &mut Bk,
    hasher: &Hasher,
    seeds: &[KeyInputs<'_>],
    out: &mut [Option<KeyPairParts<'_>>],
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let n = seeds.len();
    let seeds_s: [&[u8; 32]; G] =
        core::array::from_fn(|i| seeds.get(i).map_or(&[0; 32], |s| s.seed_s));
    // seed_A goes straight to its place in pk, which the products leave alone.
    hash_seeds_a(
        hasher,
        seeds
            .iter()
            .zip(out.iter_mut().flatten())
            .map(|(s, p)| (s.seed_a, split_public_key(p.pk).1)),
    );
    let mut seeds_a: [&[u8; 32]; G] = [&[0; 32]; G];
    let mut parts = out.iter_mut().flatten();
    let mut targets: [Option<(&mut [u8], &mut [u8])>; G] = core::array::from_fn(|i| {
        parts.next().map(|p| {
            let (b, seed_a) = split_public_key(p.pk);
            seeds_a[i] = seed_a;
            (b, &mut *p.sk_cpa)
        })
    });
    pke::keygen_group::<V, Bk, <SaberKem<V, L, MU, ET> as ParameterSet>::MatrixBytes, L, MU, G>(
        backend,
        hasher,
        &seeds_a[..n],
        &seeds_s[..n],
        &mut targets[..n],
    );
    finish_key_pairs(hasher, seeds, out);
}

/// Saber.KEM.KeyGen of one operation whose matrix A comes from `matrix` instead of being
/// streamed here (the two-worker split, `crate::two_worker`, hands it over entry by entry), under
/// the fast memory plan (`out.sk_cpa` is the IND-CPA secret key itself).
pub(crate) fn keygen_from_matrix<V: Variant, B: PolyMul, const L: usize, const MU: usize>(
    backend: &mut B,
    hasher: &Hasher,
    seeds: KeyInputs<'_>,
    matrix: &mut impl MatrixSource,
    out: KeyPairParts<'_>,
) {
    let (b, seed_a) = split_public_key(&mut *out.pk);
    hash_seeds_a(hasher, core::iter::once((seeds.seed_a, seed_a)));
    pke::keygen::<V, Fast, B, L, MU>(
        backend,
        matrix,
        SecretBytes::Seed(hasher, seeds.seed_s),
        b,
        &mut *out.sk_cpa,
    );
    finish_key_pairs(hasher, core::slice::from_ref(&seeds), &mut [Some(out)]);
}

/// seed_A = XOF(seed) of each `(seed, seed_A)`: raw RNG output never appears in the public key
/// (§2.5.1).
pub(crate) fn hash_seeds_a<'a>(
    hasher: &Hasher,
    seeds: impl Iterator<Item = (&'a [u8; 32], &'a mut [u8; 32])>,
) {
    hasher.run(seeds.map(|(seed, seed_a)| Job::xof([seed, &[]], seed_a)));
}

/// sk = sk_cpa ‖ pk ‖ H(pk) ‖ z: H(pk) and z of each key pair.
fn finish_key_pairs(
    hasher: &Hasher,
    seeds: &[KeyInputs<'_>],
    out: &mut [Option<KeyPairParts<'_>>],
) {
    hasher.run(
        out.iter_mut()
            .flatten()
            .map(|p| Job::h([&*p.pk, &[]], &mut *p.hpk)),
    );
    for (p, seeds) in out.iter_mut().flatten().zip(seeds) {
        p.z.copy_from_slice(seeds.z);
    }
}

/// Where one encapsulation goes.
pub(crate) struct EncapsulationParts<'a> {
    /// The ciphertext.
    pub(crate) ct: &'a mut [u8],
    /// The shared secret.
    pub(crate) ss: &'a mut [u8; 32],
}

/// Saber.KEM.Encaps (Algorithm 5) for each of `seeds`, under the keys of `keys` whose hashes are
/// `hpks`, into `out`: m = H(seed), (K̂, r) = G(m ‖ H(pk)), ct = Enc(m; r), K = H(K̂ ‖ H(ct)).
pub(crate) fn encapsulate<Bk: Backend, const G: usize>(
    backend: &mut Bk,
    hasher: &Hasher,
    keys: &impl EncryptGroup<Bk>,
    hpks: &[&[u8; 32]],
    seeds: &[[u8; 32]],
    out: &mut [Option<EncapsulationParts<'_>>],
) {
    let n = seeds.len();
    // m = H(seed) keeps raw RNG output out of the protocol (§2.6.2).
    let mut messages = Wiped([[0u8; 32]; G]);
    hasher.run(
        seeds
            .iter()
            .zip(messages.iter_mut())
            .map(|(seed, m)| Job::h([seed, &[]], m)),
    );
    let mut kr = Wiped([[[0u8; 32]; 2]; G]);
    {
        let mut parts = out.iter_mut().flatten();
        let mut sinks: [Option<CiphertextSink<'_>>; G] =
            core::array::from_fn(|_| parts.next().map(|p| CiphertextSink::Write(&mut *p.ct)));
        keys.encrypt(
            backend,
            hasher,
            &messages[..n],
            hpks,
            &mut kr[..n],
            &mut sinks,
            &mut [],
        );
    }
    let mut ct_hashes = [[0u8; 32]; G];
    hasher.run(
        out.iter()
            .flatten()
            .zip(ct_hashes.iter_mut())
            .map(|(p, h)| Job::h([&*p.ct, &[]], h)),
    );
    hash_keys(
        hasher,
        &kr[..n],
        &ct_hashes,
        out.iter_mut().flatten().map(|p| &mut *p.ss),
    );
}

/// Saber.KEM.Decaps (Algorithm 6) of each of `cts`, whose decryptions `decrypt(backend, i)`
/// gives, under the keys of `keys` with hashes `hpks` and rejection secrets `zs`, into
/// `shared`: re-encrypts the recovered message and, on any mismatch, replaces K̂ by z without a
/// branch (implicit rejection). `S` is [`ConstantTimeSelect`](crate::ct::ConstantTimeSelect)
/// except in the tests that substitute a broken selector.
#[allow(clippy::too_many_arguments)]
pub(crate) fn decapsulate<'s, S: KeySelect, Bk: Backend, const G: usize>(
    backend: &mut Bk,
    hasher: &Hasher,
    keys: &impl EncryptGroup<Bk>,
    hpks: &[&[u8; 32]],
    zs: &[&[u8; 32]],
    cts: &[&[u8]],
    decrypt: impl FnMut(&mut Bk, usize) -> [u8; 32],
    shared: impl Iterator<Item = &'s mut [u8; 32]>,
) {
    let n = cts.len();
    let mut kr = Wiped([[[0u8; 32]; 2]; G]);
    if hasher.squeezes_in_advance() {
        // H(c) on lanes beside the re-encryption's own hashing.
        let mut ct_hashes = [[0u8; 32]; G];
        decapsulate_to_kr::<S, Bk, G>(
            backend,
            hasher,
            keys,
            hpks,
            zs,
            cts,
            decrypt,
            Some(&mut ct_hashes),
            &mut kr,
        );
        hash_keys(hasher, &kr[..n], &ct_hashes, shared);
    } else {
        // H(c) afterwards, so that no hash is held while the products run.
        decapsulate_to_kr::<S, Bk, G>(backend, hasher, keys, hpks, zs, cts, decrypt, None, &mut kr);
        let mut ct_hashes = [[0u8; 32]; G];
        hasher.run(
            cts.iter()
                .zip(ct_hashes.iter_mut())
                .map(|(ct, h)| Job::h([ct, &[]], h)),
        );
        hash_keys(hasher, &kr[..n], &ct_hashes, shared);
    }
}

/// [`decapsulate`] up to its last hash: each operation's (K̂', r') into `kr`, K̂' replaced by z
/// on a mismatch; H(c) of each received ciphertext into `ct_hashes`, computed beside the
/// re-encryption's own hashing, if given (the two-worker split computes it on its other worker).
#[allow(clippy::too_many_arguments)]
pub(crate) fn decapsulate_to_kr<S: KeySelect, Bk: Backend, const G: usize>(
    backend: &mut Bk,
    hasher: &Hasher,
    keys: &impl EncryptGroup<Bk>,
    hpks: &[&[u8; 32]],
    zs: &[&[u8; 32]],
    cts: &[&[u8]],
    mut decrypt: impl FnMut(&mut Bk, usize) -> [u8; 32],
    ct_hashes: Option<&mut [[u8; 32]; G]>,
    kr: &mut [[[u8; 32]; 2]; G],
) {
    let n = cts.len();
    let mut messages = Wiped([[0u8; 32]; G]);
    for (i, m) in messages.iter_mut().take(n).enumerate() {
        *m = decrypt(backend, i);
    }
    let matches: [Choice; G] = {
        let mut sinks: [Option<CiphertextSink<'_>>; G] =
            core::array::from_fn(|i| cts.get(i).map(|ct| CiphertextSink::compare(ct)));
        let mut encrypt = |extra: &mut [Option<Job<'_>>]| {
            keys.encrypt(
                backend,
                hasher,
                &messages[..n],
                hpks,
                &mut kr[..n],
                &mut sinks,
                extra,
            )
        };
        match ct_hashes {
            Some(hashes) => {
                let mut hashes = hashes.iter_mut();
                let mut extra: [Option<Job<'_>>; G] = core::array::from_fn(|i| {
                    let h = hashes.next()?;
                    cts.get(i).map(|ct| Job::h([ct, &[]], h))
                });
                encrypt(&mut extra)
            }
            // No job list in the frame while the products run.
            None => encrypt(&mut []),
        }
        core::array::from_fn(|i| {
            sinks[i]
                .as_ref()
                .map_or(Choice::from(0), CiphertextSink::matches)
        })
    };
    // Implicit rejection: K̂ = z on any mismatch, selected without a branch.
    for ((kr, z), matches) in kr.iter_mut().zip(zs).zip(matches) {
        S::select_into(&mut kr[0], z, !matches);
    }
}

/// K = H(K̂ ‖ H(c)) into each of `keys`, K̂ the first half of `kr[i]`.
pub(crate) fn hash_keys<'a>(
    hasher: &Hasher,
    kr: &[[[u8; 32]; 2]],
    ct_hashes: &[[u8; 32]],
    keys: impl Iterator<Item = &'a mut [u8; 32]>,
) {
    hasher.run(
        kr.iter()
            .zip(ct_hashes)
            .zip(keys)
            .map(|((kr, h), k)| Job::h([&kr[0], h], k)),
    );
}
