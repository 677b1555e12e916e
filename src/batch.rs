//! Batches: several key generations, encapsulations or decapsulations computed together, with
//! their Keccak work done four states at a time ([`crate::keccak`]).
//!
//! Keccak is 60–70% of an optimised Saber operation (`docs/anchors.md` §5), and within one
//! round-3 operation it is a chain (one SHAKE128 stream for the whole matrix), so the way to
//! spend fewer cycles on it is to run four independent operations side by side: every SHA3-256,
//! SHA3-512 and SHAKE128 call of a batch runs in one lane of the four-way permutation, and the
//! polynomial arithmetic stays on the caller's [`PolyMul`] backend, one operation after the
//! other. Batches of any size `N` are processed in groups of four. Decapsulation, which repeats
//! encryption, is batched too.
//!
//! # Equivalence
//!
//! Every result is byte-identical to the one-at-a-time call with the same inputs (the batch KATs
//! in `tests/batch.rs` run all NIST records through this path, four per batch).
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
//! Saber+ derives every entry of A from its own XOF call (`docs/saber-plus.md` §4.1), so the
//! entries of all operations of a group are squeezed four at a time, regardless of which
//! operation they belong to: even a batch of one gains (its L² entries take ⌈L²/4⌉ four-way
//! calls instead of L²). [`IndexedMatrixX4`] offers the same to the single-operation path as a
//! [`MatrixSource`].
//!
//! # Inside one operation
//!
//! On CPUs where a four-way permutation costs no more than a single one (AVX-512,
//! [`crate::hash`]), the single-operation API uses the same machinery for one operation:
//! `sample_in_lanes` squeezes its matrix, its secret stream and, in decapsulation, H(ct) as
//! jobs of [`crate::keccak::lanes`] (Saber+: each matrix entry is a job), holding the packed
//! matrix whole; [`BatchVariant::matrix_jobs`] says how a variant's matrix comes out of SHAKE128.
//!
//!
//! The squeezed bytes become A and the secrets through the single-operation path's own
//! functions ([`unpack`], [`centred_binomial`], with their AVX2 code where the CPU has it).
//!
//! # When four-way Keccak is used
//!
//! Whenever a group has more than one hash of a kind to compute and the CPU has a vector
//! implementation ([`KeccakX4::is_vectorised`]: AVX-512 or AVX2). Otherwise the hashes run one
//! at a time through the same `sha3`/`shake` code as the single-operation API: the portable
//! four-way permutation is no faster than four single ones (on x86-64 it is slower: four
//! interleaved states need four times the registers; `BENCHMARKS.md`), so it buys nothing there.
//!
//! # Memory
//!
//! A group of four keeps its four matrices packed (4 × L² × 416 bytes: 26.6 KB for FireSaber),
//! secrets and hashes on the stack, and the whole batch's keys or ciphertexts; meant for servers.
//! Microcontrollers should use the one-at-a-time API, which streams A.

use core::ops::{Deref, DerefMut};

use rand_core::{CryptoRng, TryCryptoRng};
use subtle::Choice;
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::ct::{bytes_equal, select_into};
use crate::encoding::unpack;
use crate::hash::{sha3_256, sha3_512, shake128};
use crate::keccak::lanes::{self, Function, Job};
use crate::keccak::{KeccakX4, LANES, Shake128X4, sha3_256_x4, sha3_512_x4};
use crate::kem::{Ciphertext, DecapsulationKey, EncapsulationKey, SaberKem, SharedSecret};
use crate::params::sizes::{self, SEED_BYTES};
use crate::params::{ByteArray, ParameterSet, Plus, Round3, Variant, plus_segments};
use crate::pke;
use crate::poly::{EQ, N, Poly, SecretPoly};
use crate::polymul::{DefaultPolyMul, PolyMul};
use crate::sampling::{MATRIX_ENTRY_BYTES, MatrixSource, SecretSegment, centred_binomial};

/// A key pair, as [`SaberKem::generate`] returns it.
pub type KeyPair<P> = (DecapsulationKey<P>, EncapsulationKey<P>);

/// A decapsulation job: the key and the ciphertext.
pub type DecapsulationJob<'a, P> = (&'a DecapsulationKey<P>, &'a Ciphertext<P>);

/// Largest module rank.
const MAX_RANK: usize = 4;
/// Packed bytes of the largest matrix (FireSaber: 16 entries).
const MAX_MATRIX_BYTES: usize = MAX_RANK * MAX_RANK * MATRIX_ENTRY_BYTES;
/// Longest prefix of a secret stream any variant reads (Saber+ L = 3 and 4: 840 bytes).
const MAX_SECRET_STREAM: usize = 840;

/// The three 32-byte inputs of one key generation, in the order they are drawn.
#[derive(Clone, Default, Zeroize, ZeroizeOnDrop)]
pub struct KeySeeds {
    /// Hashed with SHAKE128 into the public seed of A.
    pub seed_a: [u8; 32],
    /// The secret's SHAKE128 seed.
    pub seed_s: [u8; 32],
    /// The implicit-rejection secret.
    pub z: [u8; 32],
}

impl KeySeeds {
    fn draw<R: TryCryptoRng + ?Sized>(rng: &mut R) -> Result<Self, R::Error> {
        let mut seeds = Self::default();
        rng.try_fill_bytes(&mut seeds.seed_a)?;
        rng.try_fill_bytes(&mut seeds.seed_s)?;
        rng.try_fill_bytes(&mut seeds.z)?;
        Ok(seeds)
    }
}

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

/// Up to four independent hashes of one kind: four-way when that is faster (see the module
/// docs), otherwise one at a time with the single-operation code.
#[derive(Clone, Copy)]
struct Hasher {
    keccak: KeccakX4,
}

/// `inputs` spread over the four lanes; idle lanes repeat the first input (their output is
/// discarded).
fn lanes<'a>(inputs: &[&'a [u8]]) -> [&'a [u8]; LANES] {
    core::array::from_fn(|lane| *inputs.get(lane).unwrap_or(&inputs[0]))
}

impl Hasher {
    fn new() -> Self {
        Self::with(KeccakX4::new())
    }

    fn with(keccak: KeccakX4) -> Self {
        Self { keccak }
    }

    fn four_way(&self, jobs: usize) -> bool {
        jobs > 1 && self.keccak.is_vectorised()
    }

    /// `out[i] = SHA3-256(inputs[i])`, at most four, equal lengths.
    fn sha3_256(&self, inputs: &[&[u8]], out: &mut [[u8; 32]]) {
        if self.four_way(inputs.len()) {
            let digests = Wiped(sha3_256_x4(&self.keccak, lanes(inputs)));
            out.copy_from_slice(&digests[..out.len()]);
        } else {
            for (o, input) in out.iter_mut().zip(inputs) {
                *o = sha3_256(&[input]);
            }
        }
    }

    /// `out[i] = SHA3-512(inputs[i])`, at most four, equal lengths.
    fn sha3_512(&self, inputs: &[&[u8]], out: &mut [[u8; 64]]) {
        if self.four_way(inputs.len()) {
            let digests = Wiped(sha3_512_x4(&self.keccak, lanes(inputs)));
            out.copy_from_slice(&digests[..out.len()]);
        } else {
            for (o, input) in out.iter_mut().zip(inputs) {
                *o = sha3_512(&[input]);
            }
        }
    }

    /// `out[i]` = the first `out[i].len()` bytes of SHAKE128(inputs[i]), at most four, equal
    /// lengths.
    fn shake128(&self, inputs: &[&[u8]], out: &mut [&mut [u8]]) {
        if self.four_way(inputs.len()) {
            Shake128X4::new(&self.keccak, lanes(inputs)).squeeze(out);
        } else {
            for (o, input) in out.iter_mut().zip(inputs) {
                shake::XofReader::read(&mut shake128(&[input]), o);
            }
        }
    }
}

/// The variant-specific parts of the multi-way Keccak paths: how A and the secrets come out of
/// SHAKE128. A supertrait of [`Variant`], implemented for both variants and sealed.
pub trait BatchVariant: crate::params::sealed::Sealed {
    /// Writes the packed matrix (row-major, 416 bytes per entry) of each seed into the
    /// matching output (`rank² · 416` bytes each); at most four seeds.
    #[doc(hidden)]
    fn matrices(keccak: &KeccakX4, seeds: &[[u8; 32]], rank: usize, out: &mut [&mut [u8]]);

    /// The SHAKE128(seed) byte ranges GenSecret reads, in coefficient order.
    #[doc(hidden)]
    fn secret_segments(rank: usize, mu: usize) -> SegmentList;

    /// The lane jobs that write the packed matrix of `seed` (row-major, `rank² · 416` bytes)
    /// into `out`, given to `push` one by one; `indices[k]` is entry k's (row, column).
    #[doc(hidden)]
    fn matrix_jobs<'a>(
        seed: &'a [u8; 32],
        indices: &'a [[u8; 2]; MAX_RANK * MAX_RANK],
        rank: usize,
        out: &'a mut [u8],
        push: impl FnMut(Job<'a>),
    );
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
    /// One SHAKE128(seed_A) stream per operation: the four streams run in the four lanes.
    fn matrices(keccak: &KeccakX4, seeds: &[[u8; 32]], rank: usize, out: &mut [&mut [u8]]) {
        let inputs: [&[u8]; LANES] =
            core::array::from_fn(|lane| &seeds[lane.min(seeds.len() - 1)][..]);
        debug_assert!(
            out.iter()
                .all(|o| o.len() == rank * rank * MATRIX_ENTRY_BYTES)
        );
        Hasher { keccak: *keccak }.shake128(&inputs[..seeds.len()], out);
    }

    /// One stream for the whole matrix.
    fn matrix_jobs<'a>(
        seed: &'a [u8; 32],
        _indices: &'a [[u8; 2]; MAX_RANK * MAX_RANK],
        _rank: usize,
        out: &'a mut [u8],
        mut push: impl FnMut(Job<'a>),
    ) {
        push(Job {
            function: Function::Shake128,
            input: [seed, &[]],
            output: out,
        });
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
    /// A[i][j] = SHAKE128(seed_A ‖ i ‖ j): the `seeds.len() · rank²` entries are independent,
    /// so they are squeezed four at a time in row-major order, operation after operation.
    fn matrices(keccak: &KeccakX4, seeds: &[[u8; 32]], rank: usize, out: &mut [&mut [u8]]) {
        let hasher = Hasher { keccak: *keccak };
        let inputs = seeds.iter().flat_map(|seed| {
            (0..rank).flat_map(move |row| (0..rank).map(move |col| entry_input(seed, row, col)))
        });
        let entries = out
            .iter_mut()
            .flat_map(|matrix| matrix.chunks_exact_mut(MATRIX_ENTRY_BYTES));
        let mut group_inputs = [[0u8; 34]; LANES];
        let mut group_outputs: [Option<&mut [u8]>; LANES] = [None, None, None, None];
        let mut filled = 0;
        for (input, entry) in inputs.zip(entries) {
            group_inputs[filled] = input;
            group_outputs[filled] = Some(entry);
            filled += 1;
            if filled == LANES {
                squeeze_entries(&hasher, &group_inputs, &mut group_outputs);
                filled = 0;
            }
        }
        if filled > 0 {
            squeeze_entries(
                &hasher,
                &group_inputs[..filled],
                &mut group_outputs[..filled],
            );
        }
    }

    /// One stream per entry: SHAKE128(seed_A ‖ i ‖ j).
    fn matrix_jobs<'a>(
        seed: &'a [u8; 32],
        indices: &'a [[u8; 2]; MAX_RANK * MAX_RANK],
        rank: usize,
        out: &'a mut [u8],
        mut push: impl FnMut(Job<'a>),
    ) {
        for (entry, index) in out
            .chunks_exact_mut(MATRIX_ENTRY_BYTES)
            .zip(&indices[..rank * rank])
        {
            push(Job {
                function: Function::Shake128,
                input: [seed, index],
                output: entry,
            });
        }
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

/// The XOF input of Saber+'s A[row][col]: seed_A ‖ row ‖ col.
fn entry_input(seed: &[u8; 32], row: usize, col: usize) -> [u8; 34] {
    let mut input = [0u8; 34];
    input[..32].copy_from_slice(seed);
    // Indices are single bytes in the spec; rank <= 4 keeps them exact.
    input[32] = row as u8;
    input[33] = col as u8;
    input
}

/// Saber+'s matrix A for one operation, squeezed four entries at a time in row-major order: a
/// drop-in [`MatrixSource`] for the single-operation path (`Plus::Matrix`) on CPUs with AVX2,
/// holding up to four packed entries (1.6 KB) where `IndexedMatrix` holds none. Same entries
/// as [`IndexedMatrix`](crate::sampling::IndexedMatrix).
pub struct IndexedMatrixX4 {
    hasher: Hasher,
    seed: [u8; 32],
    rank: usize,
    /// Row and column of the next entry to squeeze.
    row: usize,
    col: usize,
    buffered: [[u8; MATRIX_ENTRY_BYTES]; LANES],
    available: usize,
    used: usize,
}

impl IndexedMatrixX4 {
    /// Row-major iteration over the `rank × rank` matrix for `seed_a`.
    pub fn new(seed_a: &[u8; 32], rank: usize) -> Self {
        Self {
            hasher: Hasher::new(),
            seed: *seed_a,
            rank,
            row: 0,
            col: 0,
            buffered: [[0; MATRIX_ENTRY_BYTES]; LANES],
            available: 0,
            used: 0,
        }
    }

    /// Squeezes the next (up to) four entries.
    fn refill(&mut self) {
        let mut inputs = [[0u8; 34]; LANES];
        let mut count = 0;
        while count < LANES && self.row < self.rank {
            inputs[count] = entry_input(&self.seed, self.row, self.col);
            count += 1;
            self.col += 1;
            if self.col == self.rank {
                self.col = 0;
                self.row += 1;
            }
        }
        let inputs: [&[u8]; LANES] = core::array::from_fn(|lane| &inputs[lane][..]);
        let mut views = self.buffered.each_mut().map(|b| &mut b[..]);
        self.hasher.shake128(&inputs[..count], &mut views[..count]);
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

/// One Saber+ group: up to four matrix entries, each SHAKE128 of its 34-byte input.
fn squeeze_entries(hasher: &Hasher, inputs: &[[u8; 34]], outputs: &mut [Option<&mut [u8]>]) {
    let inputs: [&[u8]; LANES] =
        core::array::from_fn(|lane| &inputs[lane.min(inputs.len() - 1)][..]);
    let mut buffers = [[0u8; MATRIX_ENTRY_BYTES]; LANES];
    let mut views = buffers.each_mut().map(|b| &mut b[..]);
    hasher.shake128(&inputs[..outputs.len()], &mut views[..outputs.len()]);
    for (out, buffer) in outputs.iter_mut().zip(buffers.iter()) {
        if let Some(out) = out.take() {
            out.copy_from_slice(buffer);
        }
    }
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

/// GenSecret for up to four seeds: the streams in the four lanes, then β_μ on each segment.
fn sample_secrets<V: Variant, const L: usize, const MU: usize>(
    hasher: &Hasher,
    seeds: &[&[u8]],
    out: &mut [[SecretPoly; L]],
) {
    let segments = V::secret_segments(L, MU);
    let len = segments.stream_len(MU);
    let mut streams = Wiped([[0u8; MAX_SECRET_STREAM]; LANES]);
    let mut views = streams.each_mut().map(|s| &mut s[..len]);
    hasher.shake128(seeds, &mut views[..seeds.len()]);
    for (secret, stream) in out.iter_mut().zip(streams.iter()) {
        secret_from_stream::<MU>(&segments, stream, secret);
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
    keccak: KeccakX4,
    seed_a: &[u8; 32],
    seed_s: &[u8; 32],
    also: Option<(&[u8], &mut [u8; 32])>,
    matrix: &mut [u8],
    secret: &mut [SecretPoly; L],
) {
    // Entry (row, col) of the row-major matrix is job row·L + col.
    let mut indices = [[0u8; 2]; MAX_RANK * MAX_RANK];
    for row in 0..L {
        for col in 0..L {
            indices[row * L + col] = [row as u8, col as u8];
        }
    }
    let segments = V::secret_segments(L, MU);
    let mut stream = Wiped([[0u8; MAX_SECRET_STREAM]; 1]);
    {
        let mut jobs: [Option<Job<'_>>; MAX_RANK * MAX_RANK + 2] =
            [const { None }; MAX_RANK * MAX_RANK + 2];
        let mut count = 0;
        V::matrix_jobs(seed_a, &indices, L, matrix, |job| {
            jobs[count] = Some(job);
            count += 1;
        });
        jobs[count] = Some(Job {
            function: Function::Shake128,
            input: [seed_s, &[]],
            output: &mut stream[0][..segments.stream_len(MU)],
        });
        if let Some((input, digest)) = also {
            jobs[count + 1] = Some(Job {
                function: Function::Sha3_256,
                input: [input, &[]],
                output: digest,
            });
        }
        lanes::run(keccak, &mut jobs);
    }
    secret_from_stream::<MU>(&segments, &stream[0], secret);
}

/// Saber.PKE.KeyGen with the matrix and secret squeezed together ([`sample_in_lanes`]). Same
/// bytes as [`pke::keygen`].
pub(crate) fn keygen_in_lanes<V: Variant, B: PolyMul, const L: usize, const MU: usize>(
    backend: &mut B,
    keccak: KeccakX4,
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
    keccak: KeccakX4,
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

/// Four secret vectors, wiped on drop (each polynomial is).
fn zero_secrets<const L: usize>() -> [[SecretPoly; L]; LANES] {
    core::array::from_fn(|_| core::array::from_fn(|_| SecretPoly::ZERO))
}

/// The public seed of A at the end of a public key.
fn public_seed(pk: &[u8]) -> [u8; 32] {
    let mut seed = [0u8; 32];
    seed.copy_from_slice(&pk[pk.len() - SEED_BYTES..]);
    seed
}

/// Packed matrices for up to four seeds, in `buffers`.
fn sample_matrices<'b, V: Variant, const L: usize>(
    hasher: &Hasher,
    seeds: &[[u8; 32]],
    buffers: &'b mut [[u8; MAX_MATRIX_BYTES]; LANES],
) -> [&'b [u8]; LANES] {
    let len = L * L * MATRIX_ENTRY_BYTES;
    let mut views = buffers.each_mut().map(|b| &mut b[..len]);
    V::matrices(&hasher.keccak, seeds, L, &mut views[..seeds.len()]);
    views.map(|v| &*v)
}

/// Concatenations `a[i] ‖ b[i]` of 32-byte strings, wiped on drop.
fn concat(a: &[[u8; 32]], b: &[[u8; 32]]) -> Wiped<[u8; 64], LANES> {
    let mut out = Wiped([[0u8; 64]; LANES]);
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        o[..32].copy_from_slice(x);
        o[32..].copy_from_slice(y);
    }
    out
}

fn as_slices<const LEN: usize>(items: &[[u8; LEN]]) -> [&[u8]; LANES] {
    core::array::from_fn(|lane| items.get(lane).map_or(&[][..], |x| &x[..]))
}

/// Key generation for up to four operations.
fn keygen_group<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    hasher: &Hasher,
    seeds: &[KeySeeds],
    pks: &mut [<SaberKem<V, L, MU, ET> as ParameterSet>::PublicKeyBytes],
    sks: &mut [<SaberKem<V, L, MU, ET> as ParameterSet>::SecretKeyBytes],
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let count = seeds.len();
    // seed_A is hashed so that raw RNG output never appears in the public key (§2.5.1).
    let raw_seeds: [&[u8]; LANES] = core::array::from_fn(|i| &seeds[i.min(count - 1)].seed_a[..]);
    let mut seeds_a = [[0u8; 32]; LANES];
    let mut views_a = seeds_a.each_mut().map(|s| &mut s[..]);
    hasher.shake128(&raw_seeds[..count], &mut views_a[..count]);

    let secret_seeds: [&[u8]; LANES] =
        core::array::from_fn(|i| &seeds[i.min(count - 1)].seed_s[..]);
    let mut secrets = zero_secrets::<L>();
    sample_secrets::<V, L, MU>(hasher, &secret_seeds[..count], &mut secrets[..count]);

    let mut matrix_buffers = [[0u8; MAX_MATRIX_BYTES]; LANES];
    let matrices = sample_matrices::<V, L>(hasher, &seeds_a[..count], &mut matrix_buffers);

    let cpa_len = sizes::secret_cpa::<V>(L);
    let pk_len = sizes::public_key(L);
    for i in 0..count {
        let pk = pks[i].as_mut();
        let sk = sks[i].as_mut();
        let (sk_cpa, rest) = sk.split_at_mut(cpa_len);
        let mut matrix = PackedMatrix { bytes: matrices[i] };
        pke::keygen_from::<V, B, _, L>(backend, &mut matrix, &secrets[i], &seeds_a[i], pk, sk_cpa);
        rest[..pk_len].copy_from_slice(pk);
    }

    let pk_views: [&[u8]; LANES] = core::array::from_fn(|i| pks[i.min(count - 1)].as_ref());
    let mut hpk = [[0u8; 32]; LANES];
    hasher.sha3_256(&pk_views[..count], &mut hpk[..count]);
    for ((sk, h), seed) in sks.iter_mut().zip(hpk.iter()).zip(seeds) {
        let tail = &mut sk.as_mut()[cpa_len + pk_len..];
        tail[..32].copy_from_slice(h);
        tail[32..].copy_from_slice(&seed.z);
    }
}

/// Encapsulation for up to four operations; `ms` are the raw 32-byte random inputs.
fn encapsulate_group<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    hasher: &Hasher,
    keys: &[&EncapsulationKey<SaberKem<V, L, MU, ET>>],
    ms: &[[u8; 32]],
    cts: &mut [<SaberKem<V, L, MU, ET> as ParameterSet>::CiphertextBytes],
    shared: &mut [[u8; 32]],
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let count = keys.len();
    // m = H(randomness) keeps raw RNG output out of the protocol (§2.6.2).
    let mut messages = Wiped([[0u8; 32]; LANES]);
    hasher.sha3_256(&as_slices(ms)[..count], &mut messages[..count]);
    let pk_views: [&[u8]; LANES] = core::array::from_fn(|i| keys[i.min(count - 1)].as_bytes());
    let mut hpk = [[0u8; 32]; LANES];
    hasher.sha3_256(&pk_views[..count], &mut hpk[..count]);
    // (K̂, r) = G(m ‖ H(pk))
    let g_inputs = concat(&messages[..count], &hpk[..count]);
    let mut kr = Wiped([[0u8; 64]; LANES]);
    hasher.sha3_512(&as_slices(&g_inputs[..count])[..count], &mut kr[..count]);

    let coins: [&[u8]; LANES] = core::array::from_fn(|i| &kr[i][32..]);
    let mut secrets = zero_secrets::<L>();
    sample_secrets::<V, L, MU>(hasher, &coins[..count], &mut secrets[..count]);
    let seeds_a: [[u8; 32]; LANES] = core::array::from_fn(|i| public_seed(pk_views[i]));
    let mut matrix_buffers = [[0u8; MAX_MATRIX_BYTES]; LANES];
    let matrices = sample_matrices::<V, L>(hasher, &seeds_a[..count], &mut matrix_buffers);

    for i in 0..count {
        let mut matrix = PackedMatrix { bytes: matrices[i] };
        pke::encrypt_from::<B, _, L, ET>(
            backend,
            &mut matrix,
            &secrets[i],
            &messages[i],
            pk_views[i],
            cts[i].as_mut(),
        );
    }
    finish_shared_secrets(hasher, &kr, cts, shared);
}

/// K = H(K̂ ‖ H(ct)) for up to four operations, K̂ the first half of `kr[i]`.
fn finish_shared_secrets<C: ByteArray>(
    hasher: &Hasher,
    kr: &[[u8; 64]; LANES],
    cts: &[C],
    shared: &mut [[u8; 32]],
) {
    let count = cts.len();
    let ct_views: [&[u8]; LANES] = core::array::from_fn(|i| cts[i.min(count - 1)].as_ref());
    let mut hct = [[0u8; 32]; LANES];
    hasher.sha3_256(&ct_views[..count], &mut hct[..count]);
    let mut k_hat = Wiped([[0u8; 32]; LANES]);
    for (k, kr) in k_hat.iter_mut().zip(kr.iter()) {
        k.copy_from_slice(&kr[..32]);
    }
    let final_inputs = concat(&k_hat[..count], &hct[..count]);
    hasher.sha3_256(&as_slices(&final_inputs[..count])[..count], shared);
}

/// Decapsulation for up to four operations.
fn decapsulate_group<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    hasher: &Hasher,
    pairs: &[DecapsulationJob<'_, SaberKem<V, L, MU, ET>>],
    shared: &mut [[u8; 32]],
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let count = pairs.len();
    let mut messages = Wiped([[0u8; 32]; LANES]);
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
    let hpk: [[u8; 32]; LANES] = core::array::from_fn(|i| pairs[i.min(count - 1)].0.hpk);
    let g_inputs = concat(&messages[..count], &hpk[..count]);
    let mut kr = Wiped([[0u8; 64]; LANES]);
    hasher.sha3_512(&as_slices(&g_inputs[..count])[..count], &mut kr[..count]);

    let coins: [&[u8]; LANES] = core::array::from_fn(|i| &kr[i][32..]);
    let mut secrets = zero_secrets::<L>();
    sample_secrets::<V, L, MU>(hasher, &coins[..count], &mut secrets[..count]);
    let pk_views: [&[u8]; LANES] =
        core::array::from_fn(|i| pairs[i.min(count - 1)].0.ek.as_bytes());
    let seeds_a: [[u8; 32]; LANES] = core::array::from_fn(|i| public_seed(pk_views[i]));
    let mut matrix_buffers = [[0u8; MAX_MATRIX_BYTES]; LANES];
    let matrices = sample_matrices::<V, L>(hasher, &seeds_a[..count], &mut matrix_buffers);

    let cts: [<SaberKem<V, L, MU, ET> as ParameterSet>::CiphertextBytes; LANES] =
        core::array::from_fn(|i| pairs[i.min(count - 1)].1.bytes.clone());
    for i in 0..count {
        let mut reencrypted =
            Wiped([<SaberKem<V, L, MU, ET> as ParameterSet>::CiphertextBytes::zeroed()]);
        let reencrypted = &mut reencrypted[0];
        let mut matrix = PackedMatrix { bytes: matrices[i] };
        pke::encrypt_from::<B, _, L, ET>(
            backend,
            &mut matrix,
            &secrets[i],
            &messages[i],
            pk_views[i],
            reencrypted.as_mut(),
        );
        // Implicit rejection: K̂ = z on any mismatch, selected without a branch.
        let mismatch: Choice = !bytes_equal(cts[i].as_ref(), reencrypted.as_ref());
        let mut k_hat = [0u8; 32];
        k_hat.copy_from_slice(&kr[i][..32]);
        select_into(&mut k_hat, &pairs[i].0.z, mismatch);
        kr[i][..32].copy_from_slice(&k_hat);
        k_hat.zeroize();
    }
    finish_shared_secrets(hasher, &kr, &cts[..count], shared);
}

impl<V: Variant, const L: usize, const MU: usize, const ET: usize> SaberKem<V, L, MU, ET>
where
    Self: ParameterSet,
{
    /// Generates `N` key pairs with the default backend, four at a time (see [`crate::batch`]).
    /// Draws the same bytes in the same order as `N` calls of [`generate`](Self::generate).
    pub fn generate_batch<const N: usize>(
        rng: &mut (impl CryptoRng + ?Sized),
    ) -> [KeyPair<Self>; N] {
        let Ok(pairs) = Self::try_generate_batch_with(&mut DefaultPolyMul::default(), rng);
        pairs
    }

    /// Generates `N` key pairs with the given backend, four at a time; fails only if the RNG
    /// fails. Draws seed_A, seed_s, z (32 bytes each) for each operation in turn.
    pub fn try_generate_batch_with<B: PolyMul, const N: usize, R: TryCryptoRng + ?Sized>(
        backend: &mut B,
        rng: &mut R,
    ) -> Result<[KeyPair<Self>; N], R::Error> {
        let mut seeds: [KeySeeds; N] = core::array::from_fn(|_| KeySeeds::default());
        for s in seeds.iter_mut() {
            *s = KeySeeds::draw(rng)?;
        }
        Ok(Self::generate_batch_from_seeds(
            backend,
            &Hasher::new(),
            &seeds,
        ))
    }

    /// Deterministic batch key generation with the given four-way Keccak (tests pick each
    /// path): key pair `i` is the one
    /// [`generate_deterministic_with`](Self::generate_deterministic_with) returns for
    /// `seeds[i]`. The seeds must be secret and uniformly random.
    #[cfg(feature = "hazmat")]
    pub fn generate_batch_deterministic_with<B: PolyMul, const N: usize>(
        backend: &mut B,
        keccak: KeccakX4,
        seeds: &[KeySeeds; N],
    ) -> [KeyPair<Self>; N] {
        Self::generate_batch_from_seeds(backend, &Hasher::with(keccak), seeds)
    }

    fn generate_batch_from_seeds<B: PolyMul, const N: usize>(
        backend: &mut B,
        hasher: &Hasher,
        seeds: &[KeySeeds; N],
    ) -> [KeyPair<Self>; N] {
        let mut pks: [<Self as ParameterSet>::PublicKeyBytes; N] =
            core::array::from_fn(|_| ByteArray::zeroed());
        let mut sks: Wiped<<Self as ParameterSet>::SecretKeyBytes, N> =
            Wiped(core::array::from_fn(|_| ByteArray::zeroed()));
        for ((seeds, pks), sks) in seeds
            .chunks(LANES)
            .zip(pks.chunks_mut(LANES))
            .zip(sks.chunks_mut(LANES))
        {
            keygen_group::<V, B, L, MU, ET>(backend, hasher, seeds, pks, sks);
        }
        core::array::from_fn(|i| {
            let ek = EncapsulationKey {
                bytes: pks[i].clone(),
            };
            let dk = DecapsulationKey::from_parts(sks[i].as_ref(), ek.clone());
            (dk, ek)
        })
    }

    /// Encapsulates to each of `keys` (repeats allowed) with the default backend, four at a
    /// time. Draws the same bytes in the same order as encapsulating to each key in turn.
    pub fn encapsulate_batch<const N: usize>(
        keys: [&EncapsulationKey<Self>; N],
        rng: &mut (impl CryptoRng + ?Sized),
    ) -> [(Ciphertext<Self>, SharedSecret); N] {
        let Ok(out) = Self::try_encapsulate_batch_with(&mut DefaultPolyMul::default(), keys, rng);
        out
    }

    /// Encapsulates to each of `keys` with the given backend, four at a time; fails only if the
    /// RNG fails. Draws 32 bytes for each operation in turn.
    pub fn try_encapsulate_batch_with<B: PolyMul, const N: usize, R: TryCryptoRng + ?Sized>(
        backend: &mut B,
        keys: [&EncapsulationKey<Self>; N],
        rng: &mut R,
    ) -> Result<[(Ciphertext<Self>, SharedSecret); N], R::Error> {
        let mut ms = Wiped([[0u8; 32]; N]);
        for m in ms.iter_mut() {
            rng.try_fill_bytes(m)?;
        }
        Ok(Self::encapsulate_batch_from_seeds(
            backend,
            &Hasher::new(),
            keys,
            &ms,
        ))
    }

    /// Deterministic batch encapsulation with the given four-way Keccak (tests pick each path):
    /// result `i` is the one [`EncapsulationKey::encapsulate_deterministic_with`] returns for
    /// `keys[i]` and `ms[i]`. Each `ms[i]` must be secret and uniformly random.
    #[cfg(feature = "hazmat")]
    pub fn encapsulate_batch_deterministic_with<B: PolyMul, const N: usize>(
        backend: &mut B,
        keccak: KeccakX4,
        keys: [&EncapsulationKey<Self>; N],
        ms: &[[u8; 32]; N],
    ) -> [(Ciphertext<Self>, SharedSecret); N] {
        Self::encapsulate_batch_from_seeds(backend, &Hasher::with(keccak), keys, ms)
    }

    fn encapsulate_batch_from_seeds<B: PolyMul, const N: usize>(
        backend: &mut B,
        hasher: &Hasher,
        keys: [&EncapsulationKey<Self>; N],
        ms: &[[u8; 32]; N],
    ) -> [(Ciphertext<Self>, SharedSecret); N] {
        let mut cts: [<Self as ParameterSet>::CiphertextBytes; N] =
            core::array::from_fn(|_| ByteArray::zeroed());
        let mut shared = Wiped([[0u8; 32]; N]);
        for (((keys, ms), cts), shared) in keys
            .chunks(LANES)
            .zip(ms.chunks(LANES))
            .zip(cts.chunks_mut(LANES))
            .zip(shared.chunks_mut(LANES))
        {
            encapsulate_group::<V, B, L, MU, ET>(backend, hasher, keys, ms, cts, shared);
        }
        core::array::from_fn(|i| {
            (
                Ciphertext {
                    bytes: cts[i].clone(),
                },
                SharedSecret(shared[i]),
            )
        })
    }

    /// Decapsulates each ciphertext with its key (repeats allowed) with the default backend,
    /// four at a time. Same results, including implicit rejection, as
    /// [`DecapsulationKey::decapsulate`] on each pair.
    pub fn decapsulate_batch<const N: usize>(
        pairs: [DecapsulationJob<'_, Self>; N],
    ) -> [SharedSecret; N] {
        Self::decapsulate_batch_with(&mut DefaultPolyMul::default(), pairs)
    }

    /// Decapsulates each ciphertext with its key with the given backend, four at a time.
    pub fn decapsulate_batch_with<B: PolyMul, const N: usize>(
        backend: &mut B,
        pairs: [DecapsulationJob<'_, Self>; N],
    ) -> [SharedSecret; N] {
        Self::decapsulate_batch_on(backend, &Hasher::new(), pairs)
    }

    /// [`decapsulate_batch_with`](Self::decapsulate_batch_with) with the given four-way Keccak
    /// (tests pick each path).
    #[cfg(feature = "hazmat")]
    pub fn decapsulate_batch_with_keccak<B: PolyMul, const N: usize>(
        backend: &mut B,
        keccak: KeccakX4,
        pairs: [DecapsulationJob<'_, Self>; N],
    ) -> [SharedSecret; N] {
        Self::decapsulate_batch_on(backend, &Hasher::with(keccak), pairs)
    }

    fn decapsulate_batch_on<B: PolyMul, const N: usize>(
        backend: &mut B,
        hasher: &Hasher,
        pairs: [DecapsulationJob<'_, Self>; N],
    ) -> [SharedSecret; N] {
        let mut shared = Wiped([[0u8; 32]; N]);
        for (pairs, shared) in pairs.chunks(LANES).zip(shared.chunks_mut(LANES)) {
            decapsulate_group::<V, B, L, MU, ET>(backend, hasher, pairs, shared);
        }
        core::array::from_fn(|i| SharedSecret(shared[i]))
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
