//! Batches: several key generations, encapsulations or decapsulations computed together, with
//! their Keccak work spread over the lanes of a multi-way permutation (`crate::keccak`).
//!
//! Keccak is 60–70% of an optimised Saber operation (`docs/anchors.md` §5), and within one
//! round-3 operation it is a chain (one SHAKE128 stream for the whole matrix), so the way to
//! spend fewer cycles on it is to run independent operations side by side: the SHA3-256,
//! SHA3-512 and SHAKE128 calls of a group of eight operations are jobs of the lane runner
//! (`crate::keccak::Multi`), eight lanes at a time on AVX-512 (`Multi::x8`), four with
//! AVX2, and the polynomial arithmetic stays on the caller's [`PolyMul`] backend, one operation
//! after the other. Batches of any size `N` are processed in groups of eight. Decapsulation,
//! which repeats encryption, is batched too.
//!
//! # Equivalence
//!
//! Every result is byte-identical to the one-at-a-time call with the same inputs (the batch KATs
//! in `tests/batch.rs` run all NIST records through this path, on every Keccak path).
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
//! entries take ⌈L²/8⌉ eight-way calls instead of L²). [`IndexedMatrixX4`] offers the same,
//! four entries at a time, to the single-operation path as a [`MatrixSource`].
//!
//! # Inside one operation
//!
//! On CPUs where a four-way permutation costs no more than a single one (AVX-512,
//! [`crate::hash`]), the single-operation API uses the same runner for one operation:
//! `sample_in_lanes` squeezes its matrix, its secret stream and, in decapsulation, H(ct) as
//! jobs on the four-way permutation (Saber+: each matrix entry is a job), holding the packed
//! matrix whole; [`BatchVariant::matrix_jobs`] says how a variant's matrix comes out of SHAKE128.
//! Four lanes, not eight: one operation has at most three streams at a time, and a four-way
//! permutation costs less than an eight-way one.
//!
//! The squeezed bytes become A and the secrets through the single-operation path's own
//! functions ([`unpack`], [`centred_binomial`], with their AVX2 code where the CPU has it).
//!
//! # When multi-way Keccak is used
//!
//! Whenever the CPU has a vector implementation (`Multi::x8`, `Multi::x4`: AVX-512 or
//! AVX2). Otherwise the hashes run one at a time through the same `sha3`/`shake` code as the
//! single-operation API: the portable four-way permutation is no faster than four single ones
//! (on x86-64 it is slower: four interleaved states need four times the registers;
//! `BENCHMARKS.md`), so it buys nothing there.
//!
//! # Memory
//!
//! A batch keeps eight matrices packed (8 × L² × 416 bytes: 13 KB for LightSaber, 30 KB for
//! Saber, 53 KB for FireSaber), eight secret vectors and hashes on the stack, and the whole
//! batch's keys or ciphertexts; meant for servers.
//! Microcontrollers should use the one-at-a-time API, which streams A.

use core::ops::{Deref, DerefMut};

use rand_core::{CryptoRng, TryCryptoRng};
use subtle::Choice;
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::ct::{bytes_equal, select_into};
use crate::encoding::unpack;
use crate::keccak::{Function, Job, Multi, Single};
use crate::kem::{Ciphertext, DecapsulationKey, EncapsulationKey, SaberKem, SharedSecret};
use crate::params::sizes::SEED_BYTES;
use crate::params::{ByteArray, ParameterSet, Plus, Round3, Variant, plus_segments};
use crate::pke;
use crate::poly::{EQ, N, Poly, SecretPoly};
use crate::polymul::{DefaultPolyMul, PolyMul};
use crate::sampling::{MATRIX_ENTRY_BYTES, MatrixSource, SecretSegment, centred_binomial};

/// A key pair, as [`SaberKem::generate`] returns it.
pub type KeyPair<P> = (DecapsulationKey<P>, EncapsulationKey<P>);

/// A decapsulation job: the key and the ciphertext.
pub type DecapsulationJob<'a, P> = (&'a DecapsulationKey<P>, &'a Ciphertext<P>);

/// Operations per group: eight, the width of the widest multi-way permutation (AVX-512); the
/// four-way one runs a group's jobs in two rounds of its lanes.
const GROUP: usize = 8;
/// Largest module rank.
const MAX_RANK: usize = 4;
/// Packed bytes of the largest matrix (FireSaber: 16 entries).
const MAX_MATRIX_BYTES: usize = MAX_RANK * MAX_RANK * MATRIX_ENTRY_BYTES;
/// Longest prefix of a secret stream any variant reads (Saber+ L = 3 and 4: 840 bytes).
const MAX_SECRET_STREAM: usize = 840;

/// The three 32-byte inputs of one key generation, in the order they are drawn.
#[derive(Clone, Default)]
pub struct KeySeeds {
    /// Hashed with SHAKE128 into the public seed of A.
    pub seed_a: [u8; 32],
    /// The secret's SHAKE128 seed.
    pub seed_s: [u8; 32],
    /// The implicit-rejection secret.
    pub z: [u8; 32],
}

impl KeySeeds {
    /// Fills the three seeds from `rng`, in the order one key generation draws them.
    fn draw<R: TryCryptoRng + ?Sized>(&mut self, rng: &mut R) -> Result<(), R::Error> {
        rng.try_fill_bytes(&mut self.seed_a)?;
        rng.try_fill_bytes(&mut self.seed_s)?;
        rng.try_fill_bytes(&mut self.z)
    }
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

/// Byte buffers wiped on drop with one bulk fill each (`zeroize` on a slice: a fill and an
/// optimisation barrier). `Zeroizing` of an array would store each byte with its own volatile
/// write: for a batch's secret keys, secret streams and re-encryptions, ~2,800 stores per Saber
/// operation (callgrind).
struct Wiped<T: AsMut<[u8]>, const K: usize>([T; K]);

impl<T: AsMut<[u8]>, const K: usize> Deref for Wiped<T, K> {
    type Target = [T; K];
    fn deref(&self) -> &[T; K] {
        &self.0
    }
}

impl<T: AsMut<[u8]>, const K: usize> DerefMut for Wiped<T, K> {
    fn deref_mut(&mut self) -> &mut [T; K] {
        &mut self.0
    }
}

impl<T: AsMut<[u8]>, const K: usize> Drop for Wiped<T, K> {
    fn drop(&mut self) {
        for buffer in self.0.iter_mut() {
            buffer.as_mut().zeroize();
        }
    }
}

/// Runs hash jobs: on the lanes of a vector multi-way permutation, otherwise one at a time with
/// the single-operation code (see the module docs).
#[derive(Clone, Copy)]
struct Hasher {
    keccak: Option<Multi>,
}

/// The states of the four-way permutation.
const LANES: usize = 4;

impl Hasher {
    fn new() -> Self {
        Self {
            keccak: Multi::x8().or_else(Multi::x4),
        }
    }

    fn with(keccak: Multi) -> Self {
        Self {
            keccak: Some(keccak),
        }
    }

    /// The hasher for a group of `count` operations: four AVX-512 lanes instead of eight for
    /// groups of up to four (an eight-way permutation costs more than a four-way one, and its
    /// extra lanes would idle).
    fn for_group(self, count: usize) -> Self {
        match (self.keccak, Multi::x4()) {
            (Some(keccak), Some(x4)) if keccak.ways() == 8 && count <= LANES => Self::with(x4),
            _ => self,
        }
    }

    fn run<'a>(&self, jobs: impl IntoIterator<Item = Job<'a>>) {
        match self.keccak {
            Some(keccak) => keccak.run(jobs),
            None => {
                let single = Single::fastest();
                jobs.into_iter().for_each(|job| single.run(job));
            }
        }
    }
}

/// The variant-specific parts of the multi-way Keccak paths: how A and the secrets come out of
/// SHAKE128. A supertrait of [`Variant`], implemented for both variants and sealed.
pub trait BatchVariant: crate::params::sealed::Sealed {
    /// The lane jobs that write the packed matrix of `seed` (row-major, `rank² · 416` bytes)
    /// into `out`.
    #[doc(hidden)]
    fn matrix_jobs<'a>(
        seed: &'a [u8; 32],
        rank: usize,
        out: &'a mut [u8],
    ) -> impl Iterator<Item = Job<'a>>;

    /// The SHAKE128(seed) byte ranges GenSecret reads, in coefficient order.
    #[doc(hidden)]
    fn secret_segments(rank: usize, mu: usize) -> SegmentList;
}

/// At most four [`SecretSegment`]s.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct SegmentList {
    items: [SecretSegment; MAX_RANK],
    len: usize,
}

impl SegmentList {
    fn as_slice(&self) -> &[SecretSegment] {
        &self.items[..self.len]
    }

    /// Bytes of the stream up to the end of the last segment.
    fn stream_len(&self, mu: usize) -> usize {
        self.as_slice()
            .last()
            .map_or(0, |s| s.offset + ((s.coeffs * mu) >> 3))
    }
}

impl BatchVariant for Round3 {
    /// One stream for the whole matrix.
    fn matrix_jobs<'a>(
        seed: &'a [u8; 32],
        _rank: usize,
        out: &'a mut [u8],
    ) -> impl Iterator<Item = Job<'a>> {
        core::iter::once(Job::shake128(seed, out))
    }

    /// Polynomial i reads bytes [i·32μ, (i+1)·32μ) (spec §2.4.2).
    fn secret_segments(rank: usize, mu: usize) -> SegmentList {
        let mut items = [SecretSegment {
            offset: 0,
            coeffs: N,
        }; MAX_RANK];
        for (i, segment) in items.iter_mut().enumerate() {
            segment.offset = (i * N * mu) >> 3;
        }
        SegmentList { items, len: rank }
    }
}

impl BatchVariant for Plus {
    /// One stream per entry: A[i][j] = SHAKE128(seed_A ‖ i ‖ j) (`docs/saber-plus.md` §4.1).
    fn matrix_jobs<'a>(
        seed: &'a [u8; 32],
        rank: usize,
        out: &'a mut [u8],
    ) -> impl Iterator<Item = Job<'a>> {
        out.chunks_exact_mut(MATRIX_ENTRY_BYTES)
            .zip(&ENTRY_INDICES[rank][..rank * rank])
            .map(move |(entry, index)| Job {
                function: Function::Shake128,
                input: [seed, index],
                output: entry,
            })
    }

    fn secret_segments(rank: usize, _mu: usize) -> SegmentList {
        let table = plus_segments(rank);
        let mut items = [SecretSegment {
            offset: 0,
            coeffs: 0,
        }; MAX_RANK];
        items[..table.len()].copy_from_slice(table);
        SegmentList {
            items,
            len: table.len(),
        }
    }
}

/// `ENTRY_INDICES[rank][k]` = (row, column) of entry k of a row-major `rank × rank` matrix, as
/// the two index bytes of Saber+'s XOF input.
const ENTRY_INDICES: [[[u8; 2]; MAX_RANK * MAX_RANK]; MAX_RANK + 1] = {
    let mut table = [[[0u8; 2]; MAX_RANK * MAX_RANK]; MAX_RANK + 1];
    let mut rank = 1;
    while rank <= MAX_RANK {
        let mut row = 0;
        while row < rank {
            let mut col = 0;
            while col < rank {
                // Indices are single bytes in the spec; rank <= 4 keeps them exact.
                table[rank][row * rank + col] = [row as u8, col as u8];
                col += 1;
            }
            row += 1;
        }
        rank += 1;
    }
    table
};

/// Saber+'s matrix A for one operation, squeezed four entries at a time in row-major order: a
/// drop-in [`MatrixSource`] for the single-operation path (`Plus::Matrix`) on x86 CPUs,
/// holding up to four packed entries (1.6 KB) where `IndexedMatrix` holds none. Same entries
/// as [`IndexedMatrix`](crate::sampling::IndexedMatrix).
pub struct IndexedMatrixX4 {
    hasher: Hasher,
    seed: [u8; 32],
    rank: usize,
    /// Index of the next entry to squeeze (row-major).
    next: usize,
    buffered: [[u8; MATRIX_ENTRY_BYTES]; LANES],
    available: usize,
    used: usize,
}

impl IndexedMatrixX4 {
    /// Row-major iteration over the `rank × rank` matrix for `seed_a`.
    pub fn new(seed_a: &[u8; 32], rank: usize) -> Self {
        Self {
            hasher: Hasher {
                keccak: Multi::x4(),
            },
            seed: *seed_a,
            rank,
            next: 0,
            buffered: [[0; MATRIX_ENTRY_BYTES]; LANES],
            available: 0,
            used: 0,
        }
    }

    /// Squeezes the next (up to) four entries.
    fn refill(&mut self) {
        let count = (self.rank * self.rank - self.next).min(LANES);
        let indices = &ENTRY_INDICES[self.rank][self.next..self.next + count];
        let seed = &self.seed;
        self.hasher.run(
            self.buffered
                .iter_mut()
                .zip(indices)
                .map(|(entry, index)| Job {
                    function: Function::Shake128,
                    input: [seed, index],
                    output: entry,
                }),
        );
        self.next += count;
        self.available = count;
        self.used = 0;
    }
}

impl MatrixSource for IndexedMatrixX4 {
    fn next_entry(&mut self, out: &mut Poly) {
        if self.used == self.available {
            self.refill();
        }
        unpack(&self.buffered[self.used], EQ, &mut out.coeffs);
        self.used += 1;
    }
}

/// All-zero keys and ciphertexts, for the batches' zeroed result arrays.
impl<P: ParameterSet> EncapsulationKey<P> {
    const ZERO: Self = Self {
        bytes: P::PublicKeyBytes::ZERO,
    };
}

impl<P: ParameterSet> DecapsulationKey<P> {
    const ZERO: Self = Self {
        secret: P::SecretCpaBytes::ZERO,
        ek: EncapsulationKey::ZERO,
        hpk: [0; 32],
        z: [0; 32],
    };
}

impl<P: ParameterSet> Ciphertext<P> {
    const ZERO: Self = Self {
        bytes: P::CiphertextBytes::ZERO,
    };
}

/// A matrix held packed (row-major, 416 bytes per entry), read entry by entry.
struct PackedMatrix<'a> {
    bytes: &'a [u8],
}

impl MatrixSource for PackedMatrix<'_> {
    fn next_entry(&mut self, out: &mut Poly) {
        let (entry, rest) = self.bytes.split_at(MATRIX_ENTRY_BYTES);
        unpack(entry, EQ, &mut out.coeffs);
        self.bytes = rest;
    }
}

/// β_μ on each segment of one squeezed GenSecret stream.
fn secret_from_stream<const MU: usize>(
    segments: &SegmentList,
    stream: &[u8],
    secret: &mut [SecretPoly],
) {
    let mut coeff = 0;
    for segment in segments.as_slice() {
        let bytes = &stream[segment.offset..segment.offset + ((segment.coeffs * MU) >> 3)];
        // N = 256: polynomial index and offset are the high and low bits.
        let start = coeff & (N - 1);
        let poly = &mut secret[coeff >> 8].coeffs;
        centred_binomial(bytes, MU as u32, &mut poly[start..start + segment.coeffs]);
        coeff += segment.coeffs;
    }
    debug_assert_eq!(coeff, secret.len() * N);
}

/// The XOF outputs of one operation squeezed together in the four lanes of `keccak`, for CPUs
/// where four lanes cost one permutation ([`crate::hash`]): the packed matrix of `seed_a` into
/// `matrix` (`L² · 416` bytes, held whole: up to 6.5 KB), the secret vector of `seed_s` into
/// `secret`, and, when `also = (x, h)` is given, h = SHA3-256(x) alongside (decapsulation's
/// H(ct)). Same bytes as the one-at-a-time calls.
fn sample_in_lanes<V: Variant, const L: usize, const MU: usize>(
    keccak: Multi,
    seed_a: &[u8; 32],
    seed_s: &[u8; 32],
    also: Option<(&[u8], &mut [u8; 32])>,
    matrix: &mut [u8],
    secret: &mut [SecretPoly; L],
) {
    let segments = V::secret_segments(L, MU);
    let mut stream = Wiped([[0u8; MAX_SECRET_STREAM]; 1]);
    keccak.run(
        V::matrix_jobs(seed_a, L, matrix)
            .chain([Job::shake128(
                seed_s,
                &mut stream[0][..segments.stream_len(MU)],
            )])
            .chain(also.map(|(input, digest)| Job::sha3_256(input, digest))),
    );
    secret_from_stream::<MU>(&segments, &stream[0], secret);
}

/// Saber.PKE.KeyGen with the matrix and secret squeezed together ([`sample_in_lanes`]). Same
/// bytes as [`pke::keygen`].
pub(crate) fn keygen_in_lanes<V: Variant, B: PolyMul, const L: usize, const MU: usize>(
    backend: &mut B,
    keccak: Multi,
    seed_a: &[u8; 32],
    seed_s: &[u8; 32],
    pk: &mut [u8],
    sk_cpa: &mut [u8],
) {
    let mut matrix = [0u8; MAX_MATRIX_BYTES];
    let matrix = &mut matrix[..L * L * MATRIX_ENTRY_BYTES];
    let mut secret = pke::zero_secret::<L>();
    sample_in_lanes::<V, L, MU>(keccak, seed_a, seed_s, None, matrix, &mut secret);
    let mut source = PackedMatrix { bytes: matrix };
    pke::keygen_from::<V, B, _, L>(backend, &mut source, &secret, seed_a, pk, sk_cpa);
}

/// Saber.PKE.Enc with the matrix, the secret and optionally SHA3-256(`also.0`) squeezed together
/// ([`sample_in_lanes`]). Same bytes as [`pke::encrypt`].
pub(crate) fn encrypt_in_lanes<
    V: Variant,
    B: PolyMul,
    const L: usize,
    const MU: usize,
    const ET: usize,
>(
    backend: &mut B,
    keccak: Multi,
    m: &[u8; 32],
    coins: &[u8; 32],
    pk: &[u8],
    ct: &mut [u8],
    also: Option<(&[u8], &mut [u8; 32])>,
) {
    let mut matrix = [0u8; MAX_MATRIX_BYTES];
    let matrix = &mut matrix[..L * L * MATRIX_ENTRY_BYTES];
    let mut secret = pke::zero_secret::<L>();
    sample_in_lanes::<V, L, MU>(keccak, &public_seed(pk), coins, also, matrix, &mut secret);
    let mut source = PackedMatrix { bytes: matrix };
    pke::encrypt_from::<B, _, L, ET>(backend, &mut source, &secret, m, pk, ct);
}

/// The public seed of A at the end of a public key.
fn public_seed(pk: &[u8]) -> [u8; 32] {
    let mut seed = [0u8; 32];
    seed.copy_from_slice(&pk[pk.len() - SEED_BYTES..]);
    seed
}

/// The XOF outputs a group's PKE steps need: each operation's secret vector and packed matrix
/// (`P::MatrixBytes`: L² entries of 416 bytes, 8 × 6.5 KB for FireSaber). One per batch call,
/// refilled by each group.
struct Sampled<P: ParameterSet, const L: usize> {
    secrets: [[SecretPoly; L]; GROUP],
    matrices: [P::MatrixBytes; GROUP],
}

impl<P: ParameterSet, const L: usize> Sampled<P, L> {
    fn new() -> Self {
        // Constants: zeroed in place (`core::array::from_fn` would build the arrays aside and
        // copy them, several KB per batch).
        Self {
            secrets: [const { pke::zero_secret::<L>() }; GROUP],
            matrices: [const { P::MatrixBytes::ZERO }; GROUP],
        }
    }

    /// Operation i's secret from SHAKE128(`secret_seeds[i]`) and matrix from
    /// SHAKE128(`matrix_seeds[i]`), squeezed in one job list: the short secret streams first,
    /// then the matrices, so lanes stay busy until the end.
    fn fill<V: Variant, const MU: usize>(
        &mut self,
        hasher: &Hasher,
        secret_seeds: &[&[u8]],
        matrix_seeds: &[[u8; 32]],
    ) {
        let segments = V::secret_segments(L, MU);
        let stream_len = segments.stream_len(MU);
        let mut streams = Wiped([[0u8; MAX_SECRET_STREAM]; GROUP]);
        hasher.run(
            secret_seeds
                .iter()
                .zip(streams.iter_mut())
                .map(|(seed, stream)| Job::shake128(seed, &mut stream[..stream_len]))
                .chain(
                    matrix_seeds
                        .iter()
                        .zip(self.matrices.iter_mut())
                        .flat_map(|(seed, matrix)| V::matrix_jobs(seed, L, matrix.as_mut())),
                ),
        );
        for (secret, stream) in self
            .secrets
            .iter_mut()
            .zip(streams.iter())
            .take(secret_seeds.len())
        {
            secret_from_stream::<MU>(&segments, stream, secret);
        }
    }

    /// Operation `i`'s matrix, as the PKE reads it.
    fn matrix(&self, i: usize) -> PackedMatrix<'_> {
        PackedMatrix {
            bytes: self.matrices[i].as_ref(),
        }
    }
}

/// Key generation for up to [`GROUP`] operations, into `pairs` (one per seed).
fn keygen_group<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    hasher: &Hasher,
    sampled: &mut Sampled<SaberKem<V, L, MU, ET>, L>,
    seeds: &[KeySeeds],
    pairs: &mut [KeyPair<SaberKem<V, L, MU, ET>>],
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let hasher = hasher.for_group(seeds.len());
    // seed_A is hashed so that raw RNG output never appears in the public key (§2.5.1).
    let mut seeds_a = [[0u8; 32]; GROUP];
    hasher.run(
        seeds
            .iter()
            .zip(seeds_a.iter_mut())
            .map(|(seeds, out)| Job::shake128(&seeds.seed_a, out)),
    );
    let secret_seeds: [&[u8]; GROUP] =
        core::array::from_fn(|i| seeds.get(i).map_or(&[][..], |s| &s.seed_s[..]));
    sampled.fill::<V, MU>(
        &hasher,
        &secret_seeds[..seeds.len()],
        &seeds_a[..seeds.len()],
    );
    for (i, (dk, ek)) in pairs.iter_mut().enumerate() {
        pke::keygen_from::<V, B, _, L>(
            backend,
            &mut sampled.matrix(i),
            &sampled.secrets[i],
            &seeds_a[i],
            ek.bytes.as_mut(),
            dk.secret.as_mut(),
        );
        dk.ek.bytes.as_mut().copy_from_slice(ek.bytes.as_ref());
    }
    // The rest of sk: H(pk) and z.
    hasher.run(
        pairs
            .iter_mut()
            .map(|(dk, ek)| Job::sha3_256(ek.bytes.as_ref(), &mut dk.hpk)),
    );
    for ((dk, _), seeds) in pairs.iter_mut().zip(seeds) {
        dk.z = seeds.z;
    }
}

/// Encapsulation for up to [`GROUP`] operations, into `out` (one per key); `ms` are the raw
/// 32-byte random inputs.
fn encapsulate_group<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    hasher: &Hasher,
    sampled: &mut Sampled<SaberKem<V, L, MU, ET>, L>,
    keys: &[&EncapsulationKey<SaberKem<V, L, MU, ET>>],
    ms: &[[u8; 32]],
    out: &mut [(Ciphertext<SaberKem<V, L, MU, ET>>, SharedSecret)],
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let count = keys.len();
    let hasher = hasher.for_group(count);
    // m = H(randomness) keeps raw RNG output out of the protocol (§2.6.2).
    let mut messages = Wiped([[0u8; 32]; GROUP]);
    let mut hpk = [[0u8; 32]; GROUP];
    hasher.run(
        keys.iter()
            .zip(hpk.iter_mut())
            .map(|(key, h)| Job::sha3_256(key.as_bytes(), h))
            .chain(
                ms.iter()
                    .zip(messages.iter_mut())
                    .map(|(m, out)| Job::sha3_256(m, out)),
            ),
    );
    // (K̂, r) = G(m ‖ H(pk))
    let mut kr = Wiped([[0u8; 64]; GROUP]);
    hasher.run(
        messages
            .iter()
            .zip(&hpk)
            .zip(kr.iter_mut())
            .take(count)
            .map(|((m, h), kr)| Job::sha3_512_of([m, h], kr)),
    );

    let coins: [&[u8]; GROUP] = core::array::from_fn(|i| &kr[i][32..]);
    let seeds_a: [[u8; 32]; GROUP] =
        core::array::from_fn(|i| keys.get(i).map_or([0; 32], |k| public_seed(k.as_bytes())));
    sampled.fill::<V, MU>(&hasher, &coins[..count], &seeds_a[..count]);
    for (i, (key, (ct, _))) in keys.iter().zip(out.iter_mut()).enumerate() {
        pke::encrypt_from::<B, _, L, ET>(
            backend,
            &mut sampled.matrix(i),
            &sampled.secrets[i],
            &messages[i],
            key.as_bytes(),
            ct.bytes.as_mut(),
        );
    }
    let mut hct = [[0u8; 32]; GROUP];
    hasher.run(
        out.iter()
            .zip(hct.iter_mut())
            .map(|((ct, _), h)| Job::sha3_256(ct.as_bytes(), h)),
    );
    finish_shared_secrets(
        &hasher,
        &kr,
        &hct,
        out.iter_mut().map(|(_, shared)| &mut shared.0),
    );
}

/// K = H(K̂ ‖ H(ct)) into each of `shared`, K̂ the first half of `kr[i]`.
fn finish_shared_secrets<'a>(
    hasher: &Hasher,
    kr: &[[u8; 64]; GROUP],
    hct: &[[u8; 32]; GROUP],
    shared: impl Iterator<Item = &'a mut [u8; 32]>,
) {
    hasher.run(
        kr.iter()
            .zip(hct)
            .zip(shared)
            .map(|((kr, h), k)| Job::sha3_256_of([&kr[..32], h], k)),
    );
}

/// Decapsulation for up to [`GROUP`] operations, into `shared` (one per pair).
fn decapsulate_group<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    hasher: &Hasher,
    sampled: &mut Sampled<SaberKem<V, L, MU, ET>, L>,
    pairs: &[DecapsulationJob<'_, SaberKem<V, L, MU, ET>>],
    shared: &mut [SharedSecret],
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let hasher = hasher.for_group(pairs.len());
    let mut messages = Wiped([[0u8; 32]; GROUP]);
    for ((dk, ct), message) in pairs.iter().zip(messages.iter_mut()) {
        let mut s = pke::zero_secret::<L>();
        for (s_i, bytes) in s
            .iter_mut()
            .zip(dk.secret.as_ref().chunks_exact(V::SECRET_POLY_BYTES))
        {
            // Range validity was checked when the key was built.
            let _ = V::decode_secret(bytes, MU, s_i);
        }
        *message = pke::decrypt::<B, L, ET>(backend, &s, ct.as_bytes());
    }
    // (K̂', r') = G(m' ‖ H(pk)), and H(c) of the received ciphertext for the final hash.
    let mut kr = Wiped([[0u8; 64]; GROUP]);
    let mut hct = [[0u8; 32]; GROUP];
    hasher.run(
        pairs
            .iter()
            .zip(hct.iter_mut())
            .map(|((_, ct), h)| Job::sha3_256(ct.as_bytes(), h))
            .chain(
                pairs
                    .iter()
                    .zip(messages.iter())
                    .zip(kr.iter_mut())
                    .map(|(((dk, _), m), kr)| Job::sha3_512_of([m, &dk.hpk], kr)),
            ),
    );

    let coins: [&[u8]; GROUP] = core::array::from_fn(|i| &kr[i][32..]);
    let seeds_a: [[u8; 32]; GROUP] = core::array::from_fn(|i| {
        pairs
            .get(i)
            .map_or([0; 32], |(dk, _)| public_seed(dk.ek.as_bytes()))
    });
    sampled.fill::<V, MU>(&hasher, &coins[..pairs.len()], &seeds_a[..pairs.len()]);

    for (i, (dk, ct)) in pairs.iter().enumerate() {
        let mut reencrypted =
            Wiped([<SaberKem<V, L, MU, ET> as ParameterSet>::CiphertextBytes::ZERO]);
        let reencrypted = &mut reencrypted[0];
        pke::encrypt_from::<B, _, L, ET>(
            backend,
            &mut sampled.matrix(i),
            &sampled.secrets[i],
            &messages[i],
            dk.ek.as_bytes(),
            reencrypted.as_mut(),
        );
        // Implicit rejection: K̂ = z on any mismatch, selected without a branch.
        let mismatch: Choice = !bytes_equal(ct.as_bytes(), reencrypted.as_ref());
        let mut k_hat = [0u8; 32];
        k_hat.copy_from_slice(&kr[i][..32]);
        select_into(&mut k_hat, &dk.z, mismatch);
        kr[i][..32].copy_from_slice(&k_hat);
        k_hat.zeroize();
    }
    finish_shared_secrets(&hasher, &kr, &hct, shared.iter_mut().map(|k| &mut k.0));
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
            &Hasher::new(),
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
            &Hasher::new(),
            |_, seeds| seeds.draw(rng),
            &mut pairs,
        )?;
        Ok(pairs)
    }

    /// Deterministic batch key generation with the given multi-way Keccak (tests pick each
    /// path): key pair `i` is the one
    /// [`generate_deterministic_with`](Self::generate_deterministic_with) returns for
    /// `seeds[i]`. The seeds must be secret and uniformly random.
    #[cfg(feature = "hazmat")]
    pub fn generate_batch_deterministic_with<B: PolyMul, const N: usize>(
        backend: &mut B,
        keccak: Multi,
        seeds: &[KeySeeds; N],
    ) -> [KeyPair<Self>; N] {
        let mut pairs = [Self::ZERO_PAIR; N];
        let Ok(()) = Self::generate_batch_into(
            backend,
            &Hasher::with(keccak),
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
        hasher: &Hasher,
        mut next_seeds: impl FnMut(usize, &mut KeySeeds) -> Result<(), E>,
        pairs: &mut [KeyPair<Self>],
    ) -> Result<(), E> {
        let mut seeds: [KeySeeds; GROUP] = Default::default();
        let mut sampled = Sampled::new();
        for (group, pairs) in pairs.chunks_mut(GROUP).enumerate() {
            let seeds = &mut seeds[..pairs.len()];
            for (k, operation_seeds) in seeds.iter_mut().enumerate() {
                next_seeds(group * GROUP + k, operation_seeds)?;
            }
            keygen_group::<V, _, L, MU, ET>(backend, hasher, &mut sampled, seeds, pairs);
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
            &Hasher::new(),
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
            &Hasher::new(),
            &keys,
            |_, m| rng.try_fill_bytes(m),
            &mut out,
        )?;
        Ok(out)
    }

    /// Deterministic batch encapsulation with the given multi-way Keccak (tests pick each path):
    /// result `i` is the one [`EncapsulationKey::encapsulate_deterministic_with`] returns for
    /// `keys[i]` and `ms[i]`. Each `ms[i]` must be secret and uniformly random.
    #[cfg(feature = "hazmat")]
    pub fn encapsulate_batch_deterministic_with<B: PolyMul, const N: usize>(
        backend: &mut B,
        keccak: Multi,
        keys: [&EncapsulationKey<Self>; N],
        ms: &[[u8; 32]; N],
    ) -> [(Ciphertext<Self>, SharedSecret); N] {
        let mut out = [Self::ZERO_ENCAPSULATION; N];
        let Ok(()) = Self::encapsulate_batch_into(
            backend,
            &Hasher::with(keccak),
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
        hasher: &Hasher,
        keys: &[&EncapsulationKey<Self>],
        mut next_m: impl FnMut(usize, &mut [u8; 32]) -> Result<(), E>,
        out: &mut [(Ciphertext<Self>, SharedSecret)],
    ) -> Result<(), E> {
        let mut ms = Wiped([[0u8; 32]; GROUP]);
        let mut sampled = Sampled::new();
        for (group, (keys, out)) in keys.chunks(GROUP).zip(out.chunks_mut(GROUP)).enumerate() {
            let ms = &mut ms[..keys.len()];
            for (k, m) in ms.iter_mut().enumerate() {
                next_m(group * GROUP + k, m)?;
            }
            encapsulate_group::<V, _, L, MU, ET>(backend, hasher, &mut sampled, keys, ms, out);
        }
        Ok(())
    }

    /// Decapsulates each ciphertext with its key (repeats allowed) with the default backend,
    /// eight at a time. Same results, including implicit rejection, as
    /// [`DecapsulationKey::decapsulate`] on each pair.
    pub fn decapsulate_batch<const N: usize>(
        pairs: [DecapsulationJob<'_, Self>; N],
    ) -> [SharedSecret; N] {
        Self::decapsulate_batch_with(&mut DefaultPolyMul::default(), pairs)
    }

    /// Decapsulates each ciphertext with its key with the given backend, eight at a time.
    pub fn decapsulate_batch_with<B: PolyMul, const N: usize>(
        backend: &mut B,
        pairs: [DecapsulationJob<'_, Self>; N],
    ) -> [SharedSecret; N] {
        Self::decapsulate_batch_on(backend, &Hasher::new(), pairs)
    }

    /// [`decapsulate_batch_with`](Self::decapsulate_batch_with) with the given multi-way Keccak
    /// (tests pick each path).
    #[cfg(feature = "hazmat")]
    pub fn decapsulate_batch_with_keccak<B: PolyMul, const N: usize>(
        backend: &mut B,
        keccak: Multi,
        pairs: [DecapsulationJob<'_, Self>; N],
    ) -> [SharedSecret; N] {
        Self::decapsulate_batch_on(backend, &Hasher::with(keccak), pairs)
    }

    fn decapsulate_batch_on<B: PolyMul, const N: usize>(
        backend: &mut B,
        hasher: &Hasher,
        pairs: [DecapsulationJob<'_, Self>; N],
    ) -> [SharedSecret; N] {
        let mut shared: [SharedSecret; N] = [const { SharedSecret([0; 32]) }; N];
        let mut sampled = Sampled::new();
        for (pairs, shared) in pairs.chunks(GROUP).zip(shared.chunks_mut(GROUP)) {
            decapsulate_group::<V, B, L, MU, ET>(backend, hasher, &mut sampled, pairs, shared);
        }
        shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_way_indexed_matrix_matches_the_single_one() {
        use crate::sampling::IndexedMatrix;
        for rank in 2..=4 {
            let seed = [rank as u8; 32];
            let mut single = IndexedMatrix::new(&seed, rank);
            let mut four_way = IndexedMatrixX4::new(&seed, rank);
            let (mut want, mut got) = (Poly::ZERO, Poly::ZERO);
            for _ in 0..rank * rank {
                single.next_entry(&mut want);
                four_way.next_entry(&mut got);
                assert_eq!(got, want, "rank {rank}");
            }
        }
    }
}
