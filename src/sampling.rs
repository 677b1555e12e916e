//! Deterministic sampling from the XOF: the public matrix A (round-3 spec §2.4.1, GenMatrix) and
//! the secret vectors (§2.4.2, GenSecret with the centred binomial distribution β_μ, or uSaber's
//! uniform distribution on [−2, 1]), for every
//! variant from its description in [`crate::params`]: one segment walker over the secret stream,
//! one table of Saber+'s entry indices, and matrix sources that stream A or read it squeezed in
//! advance.
//!
//! Bytes come from a [`ByteStream`]: an XOF read as it goes, or bytes squeezed in advance (on
//! lanes shared with other streams, `crate::hash`). Both give the same coefficients.

use zeroize::Zeroize;

use crate::encoding::unpack;
use crate::hash::{Hasher, Job, Xof};
use crate::params::{MatrixDerivation, SecretLayout, Secrets, Segment, Variant, sizes};
use crate::poly::{N, Poly, SecretPoly};

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx2;

/// Largest module rank.
pub(crate) const MAX_RANK: usize = 4;

/// Bytes read in order: an XOF stream, or bytes squeezed in advance.
pub(crate) trait ByteStream {
    /// The next `buf.len()` bytes: read into `buf`, or borrowed from the stream itself.
    fn next<'a>(&'a mut self, buf: &'a mut [u8]) -> &'a [u8];

    /// The next `count` runs of `buf.len()` bytes in order, each handed to `take(run, bytes)`
    /// (for streams with a cost per read, paid once here).
    fn next_runs(&mut self, buf: &mut [u8], count: usize, take: &mut dyn FnMut(usize, &[u8])) {
        for run in 0..count {
            take(run, self.next(buf));
        }
    }

    /// The next `len` bytes borrowed whole where the stream holds them already (squeezed in
    /// advance); `None`, with nothing read, where it would have to read them into a buffer.
    fn next_held(&mut self, _len: usize) -> Option<&[u8]> {
        None
    }
}

impl ByteStream for Xof {
    fn next<'a>(&'a mut self, buf: &'a mut [u8]) -> &'a [u8] {
        self.read(buf);
        buf
    }

    fn next_runs(&mut self, buf: &mut [u8], count: usize, take: &mut dyn FnMut(usize, &[u8])) {
        self.read_runs(buf, count, take);
    }
}

/// Bytes squeezed in advance, read front to back without copies.
pub(crate) struct Squeezed<'s>(pub(crate) &'s [u8]);

impl<'s> Squeezed<'s> {
    /// The next `len` bytes, borrowed.
    fn take(&mut self, len: usize) -> &'s [u8] {
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        head
    }
}

impl ByteStream for Squeezed<'_> {
    fn next<'a>(&'a mut self, buf: &'a mut [u8]) -> &'a [u8] {
        self.take(buf.len())
    }

    fn next_held(&mut self, len: usize) -> Option<&[u8]> {
        Some(self.take(len))
    }
}

// --- Secrets ---------------------------------------------------------------------------------

/// Bits of the secret stream per coefficient.
const fn bits_per_coefficient<V: Variant, const MU: usize>() -> usize {
    V::SECRETS.stream_bits(MU)
}

/// The runs of the secret stream GenSecret reads, in coefficient order (at most four).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segments {
    items: [Segment; MAX_RANK],
    len: usize,
}

impl Segments {
    /// The runs of variant `V` at rank `L`, from its [`SecretLayout`].
    pub(crate) const fn of<V: Variant, const L: usize, const MU: usize>() -> Self {
        let mut items = [Segment {
            offset: 0,
            coeffs: 0,
        }; MAX_RANK];
        let mut len = 0;
        match V::SECRET_LAYOUT {
            SecretLayout::Contiguous => {
                while len < L {
                    items[len] = Segment {
                        offset: (len * N * bits_per_coefficient::<V, MU>()) >> 3,
                        coeffs: N,
                    };
                    len += 1;
                }
            }
            SecretLayout::Runs(table) => {
                let runs = table[L - 2];
                while len < runs.len() {
                    items[len] = runs[len];
                    len += 1;
                }
            }
        }
        Self { items, len }
    }

    fn as_slice(&self) -> &[Segment] {
        &self.items[..self.len]
    }

    /// Bytes of the stream up to the end of the last run.
    pub(crate) const fn stream_len<V: Variant, const MU: usize>(&self) -> usize {
        let last = self.items[self.len - 1];
        last.offset + ((last.coeffs * bits_per_coefficient::<V, MU>()) >> 3)
    }
}

/// Longest prefix of a secret stream any variant reads (Saber+ L = 3 and 4: 840 bytes).
pub(crate) const MAX_SECRET_STREAM: usize = 840;

/// The coefficients of one piece of the stream.
fn sample<V: Variant, const MU: usize>(bytes: &[u8], out: &mut [i8]) {
    match V::SECRETS {
        Secrets::Binomial => centred_binomial(bytes, MU as u32, out),
        Secrets::Uniform => uniform(bytes, out),
    }
}

/// The walk of GenSecret over the secret stream: the pieces of `2^PIECE_LOG` coefficients of
/// the variant's runs (run lengths are multiples of 128) in order, calling `sample_piece(first
/// coefficient, its stream bytes)` for each, which samples them where they go (no piece buffer
/// to copy from); bytes between runs are read and discarded. `buf` holds a piece's bytes and is
/// wiped at the end.
fn walk<V: Variant, const L: usize, const MU: usize, const PIECE_LOG: u32>(
    stream: &mut impl ByteStream,
    buf: &mut [u8],
    mut sample_piece: impl FnMut(usize, &[u8]),
) {
    let segments = Segments::of::<V, L, MU>();
    let piece_bytes = (bits_per_coefficient::<V, MU>() << PIECE_LOG) >> 3;
    let mut position = 0;
    let mut coeff = 0;
    for segment in segments.as_slice() {
        while position < segment.offset {
            let skip = (segment.offset - position).min(buf.len());
            stream.next(&mut buf[..skip]);
            position += skip;
        }
        for _ in 0..segment.coeffs >> PIECE_LOG {
            sample_piece(coeff, stream.next(&mut buf[..piece_bytes]));
            position += piece_bytes;
            coeff += 1 << PIECE_LOG;
        }
    }
    // As a slice: one fill and an optimisation barrier.
    buf.zeroize();
}

/// GenSecret into `out`, 128 coefficients per read.
pub(crate) fn gen_secret<V: Variant, const L: usize, const MU: usize>(
    stream: &mut impl ByteStream,
    out: &mut [SecretPoly; L],
) {
    const PIECE_LOG: u32 = 7;
    // 128 coefficients of at most 10 bits.
    let mut buf = [0u8; 160];
    walk::<V, L, MU, PIECE_LOG>(stream, &mut buf, |coeff, bytes| {
        // N = 256: polynomial index and offset are the high and low bits.
        let start = coeff & (N - 1);
        sample::<V, MU>(
            bytes,
            &mut out[coeff >> 8].coeffs[start..][..1 << PIECE_LOG],
        );
    });
}

/// GenSecret, streaming: hands each secret polynomial to `take(index, poly)` as soon as it is
/// complete. Memory: one polynomial and a 40-byte buffer, whatever the rank.
pub(crate) fn gen_secret_with<V: Variant, const L: usize, const MU: usize>(
    stream: &mut impl ByteStream,
    mut take: impl FnMut(usize, &SecretPoly),
) {
    const PIECE_LOG: u32 = 5;
    // 32 coefficients of at most 10 bits.
    let mut buf = [0u8; 40];
    let mut poly = SecretPoly::ZERO;
    walk::<V, L, MU, PIECE_LOG>(stream, &mut buf, |coeff, bytes| {
        let start = coeff & (N - 1);
        sample::<V, MU>(bytes, &mut poly.coeffs[start..][..1 << PIECE_LOG]);
        if (coeff + (1 << PIECE_LOG)) & (N - 1) == 0 {
            take(coeff >> 8, &poly);
        }
    });
}

/// Where an operation's secret stream comes from.
pub(crate) enum SecretSeed<'a> {
    /// XOF(seed): key generation's seed_s.
    Seed(&'a [u8; 32]),
    /// XOF(r) of the (K̂, r) that this G job computes (the FO transform's coins, Algorithms 5
    /// and 6), G being the first step of the stream's job.
    AfterG(Job<'a>),
}

impl<'a> SecretSeed<'a> {
    /// The stream as a job: its first `out.len()` bytes.
    fn job(self, out: &'a mut [u8]) -> Job<'a> {
        match self {
            Self::Seed(seed) => Job::xof([seed, &[]], out),
            Self::AfterG(g) => g.then_xof(32, out),
        }
    }
}

// --- The matrix ------------------------------------------------------------------------------

/// Entries of the public matrix A, delivered in row-major order (`A[0][0]`, `A[0][1]`, …).
///
/// Row-major order is the order of round-3 Saber's single XOF stream, so a source never has to
/// buffer the matrix: callers that need `A[i][j]` only once can stream it just in time.
pub(crate) trait MatrixSource {
    /// Writes the next entry (coefficients in `[0, q)`).
    fn next_entry(&mut self, out: &mut Poly);

    /// Whether output `i` of the products with this matrix (row i of `A·s'` in encryption,
    /// column i of `Aᵀ·s` in key generation) is computed by another worker (the two-worker
    /// split, `crate::two_worker`): its products are skipped here and the finished output is
    /// taken with [`finished_output`](Self::finished_output). Fixed by the split's schedule,
    /// never by data.
    fn computed_elsewhere(&self, _output: usize) -> bool {
        false
    }

    /// Hands the next output computed elsewhere to `consume` (outputs in increasing index, after
    /// every entry multiplied here). A source whose outputs are all computed here has none.
    fn finished_output(&mut self, _consume: &mut dyn FnMut(&mut Poly)) {}

    /// Hands the next entry to `take(first coefficient, coefficients)` in pieces, in order (for
    /// [`PolyMul::mul_acc_pieces`](crate::polymul::PolyMul::mul_acc_pieces)). The default
    /// writes it whole first.
    fn next_entry_pieces(&mut self, take: &mut dyn FnMut(usize, &[u16])) {
        let mut entry = Poly::ZERO;
        self.next_entry(&mut entry);
        take(0, &entry.coeffs);
    }
}

impl<M: MatrixSource + ?Sized> MatrixSource for &mut M {
    fn next_entry(&mut self, out: &mut Poly) {
        (**self).next_entry(out)
    }

    fn computed_elsewhere(&self, output: usize) -> bool {
        (**self).computed_elsewhere(output)
    }

    fn finished_output(&mut self, consume: &mut dyn FnMut(&mut Poly)) {
        (**self).finished_output(consume)
    }

    fn next_entry_pieces(&mut self, take: &mut dyn FnMut(usize, &[u16])) {
        (**self).next_entry_pieces(take)
    }
}

/// Polynomials of `bits`-bit coefficients read one after the other from a byte stream: A from
/// one XOF stream or squeezed in advance, b or b' from their packed bytes.
pub(crate) struct PolyStream<S> {
    bytes: S,
    bits: u32,
}

impl<S: ByteStream> PolyStream<S> {
    /// Polynomials of `bits`-bit coefficients from `bytes`.
    pub(crate) fn new(bytes: S, bits: u32) -> Self {
        Self { bytes, bits }
    }
}

/// Read per call: a quarter polynomial. Reading an entry in pieces keeps the buffer (on the
/// stack beside the multiplication in the low-memory mode) at a quarter of an entry.
const PIECE_COEFFS: usize = N >> 2;
const PIECES: usize = 4;

/// Coefficients per piece handed over by [`MatrixSource::next_entry_pieces`]: an eighth of a
/// polynomial, so that its buffers stay small beside the transform buffer that takes them.
const SMALL_PIECE_COEFFS: usize = N >> 3;
const SMALL_PIECES: usize = 8;

impl<S: ByteStream> MatrixSource for PolyStream<S> {
    /// Not inlined: its buffer lives only in this call, not beside a stream that a caller builds
    /// for the entry (Saber+'s per-entry XOF, whose construction is the low-memory peak).
    #[inline(never)]
    fn next_entry(&mut self, out: &mut Poly) {
        let bits = self.bits;
        // Bytes held already are unpacked whole: one call, not one per piece.
        if let Some(bytes) = self.bytes.next_held((N * bits as usize) >> 3) {
            return unpack(bytes, bits, &mut out.coeffs);
        }
        let mut buf = [0u8; (PIECE_COEFFS * 13) >> 3];
        let len = (PIECE_COEFFS * bits as usize) >> 3;
        self.bytes
            .next_runs(&mut buf[..len], PIECES, &mut |k, bytes| {
                unpack(
                    bytes,
                    bits,
                    &mut out.coeffs[k * PIECE_COEFFS..][..PIECE_COEFFS],
                )
            });
    }

    /// Not inlined: its buffers live only in this call, not in the frame that receives the
    /// pieces.
    #[inline(never)]
    fn next_entry_pieces(&mut self, take: &mut dyn FnMut(usize, &[u16])) {
        let mut buf = [0u8; (SMALL_PIECE_COEFFS * 13) >> 3];
        let mut piece = [0u16; SMALL_PIECE_COEFFS];
        let len = (SMALL_PIECE_COEFFS * self.bits as usize) >> 3;
        let bits = self.bits;
        self.bytes
            .next_runs(&mut buf[..len], SMALL_PIECES, &mut |k, bytes| {
                unpack(bytes, bits, &mut piece);
                take(k * SMALL_PIECE_COEFFS, &piece);
            });
    }
}

/// `ENTRY_INDICES[rank][k]` = (row, column) of entry k of a row-major `rank × rank` matrix, as
/// the two index bytes of Saber+'s XOF input (`docs/saber-plus.md` §4.1).
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

/// The XOF jobs that squeeze the packed matrix of `seed` (row-major, `L² · poly_q` bytes) into
/// `out`: one stream, or one job per entry.
pub(crate) fn matrix_jobs<'a, V: Variant, const L: usize>(
    seed: &'a [u8; 32],
    out: &'a mut [u8],
) -> impl Iterator<Item = Job<'a>> {
    let (one, per_entry) = match V::MATRIX {
        MatrixDerivation::OneStream => (Some(Job::xof([seed, &[]], out)), None),
        MatrixDerivation::PerEntry => (
            None,
            Some(
                out.chunks_exact_mut(sizes::poly_q::<V>())
                    .zip(&ENTRY_INDICES[L][..L * L])
                    .map(move |(entry, index)| Job::xof([seed, index], entry)),
            ),
        ),
    };
    one.into_iter().chain(per_entry.into_iter().flatten())
}

/// Matrix A streamed from the XOF as it is used.
// One per operation, on the stack and never in a collection (and there is no allocator to box
// into): the size of the per-entry buffer on x86 is the point of that variant.
#[allow(clippy::large_enum_variant)]
pub(crate) enum StreamedMatrix<'a> {
    /// Round 3: one stream.
    OneStream(PolyStream<Xof>),
    /// Saber+: entries from their own XOF calls.
    PerEntry(EntryMatrix<'a>),
}

impl<'a> StreamedMatrix<'a> {
    /// A of `seed_a` for variant `V` at rank `L`.
    pub(crate) fn new<V: Variant, const L: usize>(hasher: &Hasher, seed_a: &'a [u8; 32]) -> Self {
        match V::MATRIX {
            MatrixDerivation::OneStream => {
                Self::OneStream(PolyStream::new(hasher.xof(&[seed_a]), V::EQ))
            }
            MatrixDerivation::PerEntry => Self::PerEntry(EntryMatrix::new::<V, L>(hasher, seed_a)),
        }
    }
}

impl MatrixSource for StreamedMatrix<'_> {
    fn next_entry(&mut self, out: &mut Poly) {
        match self {
            Self::OneStream(stream) => stream.next_entry(out),
            Self::PerEntry(entries) => entries.next_entry(out),
        }
    }

    fn next_entry_pieces(&mut self, take: &mut dyn FnMut(usize, &[u16])) {
        match self {
            Self::OneStream(stream) => stream.next_entry_pieces(take),
            Self::PerEntry(entries) => entries.next_entry_pieces(take),
        }
    }
}

/// Runs `f` on A of `seed_a` streamed from the XOF as variant `V` derives it. Only that
/// derivation's state is on the stack (Saber+'s per-entry source holds no stream, and a
/// [`StreamedMatrix`] is as large as its larger variant); the derivation is a constant of `V`,
/// so the call through `dyn` has one target.
pub(crate) fn with_streamed_matrix<V: Variant, const L: usize, R>(
    hasher: &Hasher,
    seed_a: &[u8; 32],
    f: impl FnOnce(&mut dyn MatrixSource) -> R,
) -> R {
    match V::MATRIX {
        MatrixDerivation::OneStream => f(&mut PolyStream::new(hasher.xof(&[seed_a]), V::EQ)),
        MatrixDerivation::PerEntry => f(&mut EntryMatrix::new::<V, L>(hasher, seed_a)),
    }
}

/// Saber+'s matrix: `A[i][j]` = XOF(seed_A ‖ i ‖ j), first `poly_q` bytes, in row-major order.
///
/// On x86/x86_64 entries are squeezed four at a time (on the lanes of the multi-way Keccak where
/// the CPU has a vector one), holding up to four packed entries (1.6 KB). Elsewhere (the 32-bit
/// embedded cores) each entry's stream is read a quarter entry at a time, buffering nothing.
pub(crate) struct EntryMatrix<'a> {
    hasher: Hasher,
    /// seed_A, where the caller keeps it (a copy beside the products was 28 bytes more stack).
    seed: &'a [u8; 32],
    /// The row-major (row, column) index bytes of each entry.
    indices: &'static [[u8; 2]],
    bits: u32,
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    buffered: Buffered,
}

/// Entries squeezed ahead, at most four.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
struct Buffered {
    entries: [[u8; MAX_POLY_Q]; 4],
    available: usize,
    used: usize,
}

/// Bytes of the largest packed polynomial mod q.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
const MAX_POLY_Q: usize = sizes::packed(13);

impl<'a> EntryMatrix<'a> {
    fn new<V: Variant, const L: usize>(hasher: &Hasher, seed_a: &'a [u8; 32]) -> Self {
        // On x86 the entries take their own lanes (see the type's docs).
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        let _ = hasher;
        Self {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            hasher: Hasher::for_group(V::SYMMETRIC, crate::hash::Lanes::fastest(), 4),
            #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
            hasher: *hasher,
            seed: seed_a,
            indices: &ENTRY_INDICES[L][..L * L],
            bits: V::EQ,
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            buffered: Buffered {
                entries: [[0; MAX_POLY_Q]; 4],
                available: 0,
                used: 0,
            },
        }
    }
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
impl EntryMatrix<'_> {
    /// Calls `read` with the next entry's XOF stream, started where it is kept: the stream lives
    /// in the caller's frame, the absorbing in [`Hasher::start_xof`]'s.
    #[inline(always)]
    fn with_next_stream(&mut self, read: impl FnOnce(&mut PolyStream<Xof>)) {
        let (index, later) = self.indices.split_at(1);
        self.indices = later;
        let mut stream = PolyStream::new(Xof::UNSTARTED, self.bits);
        self.hasher
            .start_xof(&[self.seed, &index[0]], &mut stream.bytes);
        read(&mut stream);
    }
}

impl MatrixSource for EntryMatrix<'_> {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    fn next_entry(&mut self, out: &mut Poly) {
        let len = sizes::packed(self.bits);
        let buffered = &mut self.buffered;
        if buffered.used == buffered.available {
            let count = self.indices.len().min(4);
            let (now, later) = self.indices.split_at(count);
            let seed = self.seed;
            self.hasher.run(
                buffered
                    .entries
                    .iter_mut()
                    .zip(now)
                    .map(|(entry, index)| Job::xof([seed, index], &mut entry[..len])),
            );
            self.indices = later;
            buffered.available = count;
            buffered.used = 0;
        }
        unpack(
            &buffered.entries[buffered.used][..len],
            self.bits,
            &mut out.coeffs,
        );
        buffered.used += 1;
    }

    // Not inlined: the entry's XOF state (about 200 bytes) then lives in this call only, not in
    // the frame of a caller that goes on to multiply (low-memory mode).
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    #[inline(never)]
    fn next_entry(&mut self, out: &mut Poly) {
        self.with_next_stream(|stream| stream.next_entry(out));
    }

    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    #[inline(never)]
    fn next_entry_pieces(&mut self, take: &mut dyn FnMut(usize, &[u16])) {
        self.with_next_stream(|stream| stream.next_entry_pieces(take));
    }
}

// --- Squeezed in advance ----------------------------------------------------------------------

/// The XOF outputs of up to `G` operations squeezed together in advance, as lane jobs: each
/// operation's secret stream and its packed matrix (`M`: L² entries; up to 6.5 KB each). For
/// CPUs where lanes are (nearly) free (`Hasher::squeezes_in_advance`).
pub(crate) struct InAdvance<M, const G: usize> {
    secrets: crate::ct::Wiped<[[u8; MAX_SECRET_STREAM]; G]>,
    secret_len: usize,
    matrices: [M; G],
    /// Bits per matrix coefficient (EQ).
    bits: u32,
}

impl<M: crate::params::ByteArray, const G: usize> InAdvance<M, G> {
    /// Empty buffers (constants: zeroed in place, not built aside and copied).
    pub(crate) fn new() -> Self {
        Self {
            secrets: crate::ct::Wiped([[0; MAX_SECRET_STREAM]; G]),
            secret_len: 0,
            matrices: [const { M::ZERO }; G],
            bits: 0,
        }
    }

    /// Squeezes the secret stream of each of `secret_seeds` and the matrix of each of
    /// `matrix_seeds` (operation by operation), and runs `extra` beside them: the short secret
    /// streams first, then the matrices, so lanes stay busy until the end.
    pub(crate) fn squeeze<'a, V: Variant, const L: usize, const MU: usize>(
        &'a mut self,
        hasher: &Hasher,
        secret_seeds: impl IntoIterator<Item = SecretSeed<'a>>,
        matrix_seeds: impl IntoIterator<Item = &'a [u8; 32]>,
        extra: &'a mut [Option<Job<'_>>],
    ) {
        self.secret_len = Segments::of::<V, L, MU>().stream_len::<V, MU>();
        self.bits = V::EQ;
        let secret_len = self.secret_len;
        hasher.run(
            secret_seeds
                .into_iter()
                .zip(self.secrets.iter_mut())
                .map(|(seed, stream)| seed.job(&mut stream[..secret_len]))
                .chain(
                    extra
                        .iter_mut()
                        .filter_map(|job| -> Option<Job<'a>> { job.take() }),
                )
                .chain(
                    matrix_seeds
                        .into_iter()
                        .zip(self.matrices.iter_mut())
                        .flat_map(|(seed, matrix)| matrix_jobs::<V, L>(seed, matrix.as_mut())),
                ),
        );
    }

    /// Operation `i`'s secret stream.
    pub(crate) fn secret(&self, i: usize) -> &[u8] {
        &self.secrets[i][..self.secret_len]
    }

    /// Operation `i`'s matrix, entry by entry.
    pub(crate) fn matrix(&self, i: usize) -> PolyStream<Squeezed<'_>> {
        PolyStream::new(Squeezed(self.matrices[i].as_ref()), self.bits)
    }
}

// --- Uniform sampling ------------------------------------------------------------------------

/// uSaber's secrets: every 2-bit field of `bytes` (least significant first) as a two's-complement
/// number in [−2, 1]; `bytes` holds `out.len() / 4` bytes. No branch or index depends on the bytes.
pub fn uniform(bytes: &[u8], out: &mut [i8]) {
    debug_assert_eq!(bytes.len() * 4, out.len());
    for (coeffs, &byte) in out.chunks_exact_mut(4).zip(bytes) {
        for (k, c) in coeffs.iter_mut().enumerate() {
            // The field moved to the top two bits, then an arithmetic shift sign-extends it.
            *c = ((byte << (6 - 2 * k)) as i8) >> 6;
        }
    }
}

// --- Binomial sampling -----------------------------------------------------------------------

/// β_μ: coefficient = popcount(low μ/2 bits) − popcount(high μ/2 bits) of each μ-bit field.
///
/// `bytes` holds `out.len() · μ / 8` bytes. No branch or index depends on the bytes.
///
/// μ = 6, 8, 10 (the Saber parameters), with `out.len()` a multiple of 8, take
/// `binomial_words` (and AVX2 where available); other arguments the per-coefficient loop.
pub fn centred_binomial(bytes: &[u8], mu: u32, out: &mut [i8]) {
    debug_assert_eq!(bytes.len() * 8, out.len() * mu as usize);
    if out.len() & 7 != 0 {
        return binomial_per_coefficient(bytes, mu, out);
    }
    match mu {
        6 => binomial_fast::<6>(bytes, out),
        8 => binomial_fast::<8>(bytes, out),
        10 => binomial_fast::<10>(bytes, out),
        _ => binomial_per_coefficient(bytes, mu, out),
    }
}

/// β_MU with an AVX2 path for most of the coefficients where the CPU has it
/// (`sampling/avx2.rs`), [`binomial_words`] for the rest; [`binomial_words32`] on 32-bit
/// targets, where every 64-bit operation is two or more.
fn binomial_fast<const MU: usize>(bytes: &[u8], out: &mut [i8]) {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    let done = avx2::binomial::<MU>(bytes, out);
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    let done = 0;
    let (bytes, out) = (&bytes[(done * MU) >> 3..], &mut out[done..]);
    if cfg!(target_pointer_width = "32") {
        binomial_words32::<MU>(bytes, out);
    } else {
        binomial_words::<MU>(bytes, out);
    }
}

/// Sets the low `width` bits of every whole `period`-bit field of a `word_bits`-bit word.
const fn field_mask_in(word_bits: usize, period: usize, width: usize) -> u64 {
    let mut mask = 0u64;
    let mut at = 0;
    while at + period <= word_bits {
        mask |= ((1u64 << width) - 1) << at;
        at += period;
    }
    mask
}

/// [`field_mask_in`] of a 64-bit word.
const fn field_mask(period: usize, width: usize) -> u64 {
    field_mask_in(64, period, width)
}

/// β_MU on whole words: a word holds `8` coefficients (`4` for μ = 10, so that their `4μ` bits
/// are whole bytes), i.e. up to `2·8` half-fields of `h = μ/2` bits.
///
/// 1. The popcount of every half-field at once: for `v < 2^h`,
///    `popcount(v) = v − Σ_{k=1}^{h−1} ⌊v / 2^k⌋`, and `(word >> k) & M_k`, where `M_k` keeps the
///    low `h − k` bits of each half-field, is `⌊v / 2^k⌋` in every half-field. The partial
///    differences never go below `popcount(v) >= 0`, so no half-field borrows from its
///    neighbour, and counts (at most `h`) fit in their half-field.
/// 2. Per μ-bit field, `low count + h − high count`, in `[0, 2h]`: the sum `low + h <= 2h` fits
///    in the field and the difference does not go below 0, so fields stay independent again.
/// 3. Each coefficient is its field minus `h`; for μ = 8 the fields are the bytes, and the eight
///    subtractions are one: `((d | 0x80…) − 0x04…) ^ 0x80…` subtracts 4 from every byte `d < 0x80`
///    without borrows, leaving two's-complement bytes.
///
/// The words stay in registers; the caller wipes the byte buffer.
fn binomial_words<const MU: usize>(bytes: &[u8], out: &mut [i8]) {
    const { assert!(MU == 6 || MU == 8 || MU == 10) };
    let half = MU >> 1;
    let per_word: usize = if MU == 10 { 4 } else { 8 };
    let word_bytes = (per_word * MU) >> 3;
    let low_halves = field_mask(MU, half);
    let biases = field_mask(MU, 1) * half as u64;
    let field = (1u64 << MU) - 1;
    for (coeffs, chunk) in out
        .chunks_exact_mut(per_word)
        .zip(bytes.chunks_exact(word_bytes))
    {
        let mut word = 0u64;
        for (k, &b) in chunk.iter().enumerate() {
            word |= u64::from(b) << (8 * k);
        }
        let mut counts = word;
        for k in 1..half {
            counts -= (word >> k) & field_mask(half, half - k);
        }
        let shifted = (counts & low_halves) + biases - ((counts >> half) & low_halves);
        if MU == 8 {
            let high_bits = 0x8080_8080_8080_8080u64;
            let centred = ((shifted | high_bits) - biases) ^ high_bits;
            for (c, b) in coeffs.iter_mut().zip(centred.to_le_bytes()) {
                *c = b as i8;
            }
        } else {
            for (i, c) in coeffs.iter_mut().enumerate() {
                *c = ((shifted >> (i * MU)) & field) as i8 - half as i8;
            }
        }
    }
}

/// [`field_mask_in`] of a 32-bit word.
const fn field_mask32(period: usize, width: usize) -> u32 {
    field_mask_in(32, period, width) as u32
}

/// Steps 1 and 2 of [`binomial_words`] on a 32-bit word of whole μ-bit fields (its bits above the
/// last field zero): every field becomes `low count + μ/2 − high count`, in `[0, μ]`.
#[inline(always)]
fn binomial_fields32<const MU: usize>(word: u32) -> u32 {
    let half = MU >> 1;
    let mut counts = word;
    for k in 1..half {
        counts -= (word >> k) & field_mask32(half, half - k);
    }
    let low_halves = field_mask32(MU, half);
    (counts & low_halves) + field_mask32(MU, 1) * half as u32 - ((counts >> half) & low_halves)
}

/// β_MU as [`binomial_words`] does it, on 32-bit words: four fields per word for μ = 6 and 8
/// (three and four bytes; for μ = 8 the fields are the bytes, centred at once); for μ = 10, ten
/// bytes (eight coefficients) at a time, as three words: the low 30 bits of bytes 0–3 and of
/// bytes 5–8 (three fields each), and the two fields that straddle bytes 3–4 and 8–9. The words
/// stay in registers; the caller wipes the byte buffer.
fn binomial_words32<const MU: usize>(bytes: &[u8], out: &mut [i8]) {
    const { assert!(MU == 6 || MU == 8 || MU == 10) };
    let half = MU as i8 >> 1;
    let field = (1u32 << MU) - 1;
    let le32 = |b: &[u8]| b.iter().rev().fold(0u32, |w, &x| (w << 8) | u32::from(x));
    let put = |coeffs: &mut [i8], fields: u32| {
        for (i, c) in coeffs.iter_mut().enumerate() {
            *c = ((fields >> (i * MU)) & field) as i8 - half;
        }
    };
    if MU == 10 {
        for (coeffs, chunk) in out.chunks_exact_mut(8).zip(bytes.chunks_exact(10)) {
            let (first, second) = (le32(&chunk[..4]), le32(&chunk[5..9]));
            let low30 = (1u32 << 30) - 1;
            let straddling = (first >> 30)
                | (u32::from(chunk[4]) << 2)
                | ((second >> 30) << 10)
                | (u32::from(chunk[9]) << 12);
            put(&mut coeffs[..3], binomial_fields32::<MU>(first & low30));
            put(&mut coeffs[4..7], binomial_fields32::<MU>(second & low30));
            let last = binomial_fields32::<MU>(straddling);
            coeffs[3] = (last & field) as i8 - half;
            coeffs[7] = ((last >> MU) & field) as i8 - half;
        }
    } else if MU == 8 {
        // Step 3 of `binomial_words` for bytes: four subtractions in one.
        let (high_bits, biases) = (0x8080_8080u32, 0x0404_0404u32);
        for (coeffs, chunk) in out.chunks_exact_mut(4).zip(bytes.chunks_exact(4)) {
            let fields = binomial_fields32::<MU>(le32(chunk));
            let centred = ((fields | high_bits) - biases) ^ high_bits;
            for (c, b) in coeffs.iter_mut().zip(centred.to_le_bytes()) {
                *c = b as i8;
            }
        }
    } else {
        for (coeffs, chunk) in out.chunks_exact_mut(4).zip(bytes.chunks_exact(3)) {
            put(coeffs, binomial_fields32::<MU>(le32(chunk)));
        }
    }
}

/// β_μ one coefficient at a time (any μ <= 16, any length).
fn binomial_per_coefficient(bytes: &[u8], mu: u32, out: &mut [i8]) {
    let half_mask = (1u32 << (mu >> 1)) - 1;
    let mut acc = 0u64;
    let mut bits = 0u32;
    let mut input = bytes.iter();
    for c in out.iter_mut() {
        while bits < mu {
            acc |= u64::from(input.next().copied().unwrap_or(0)) << bits;
            bits += 8;
        }
        let field = acc as u32;
        let plus = (field & half_mask).count_ones() as i8;
        let minus = ((field >> (mu >> 1)) & half_mask).count_ones() as i8;
        *c = plus - minus;
        acc >>= mu;
        bits -= mu;
    }
    acc.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_counts_bits() {
        // μ = 8: low nibble 0b1111 (+4), high nibble 0b0001 (−1) → 3.
        let mut out = [0i8; 4];
        centred_binomial(&[0x1F, 0x00, 0xF0, 0xFF], 8, &mut out);
        assert_eq!(out, [3, 0, -4, 0]);
        // μ = 6, fields LSB-first across bytes.
        let mut out = [0i8; 4];
        centred_binomial(&[0b0000_0111, 0, 0], 6, &mut out);
        assert_eq!(out, [3, 0, 0, 0]);
    }

    /// The word-parallel sampler against the per-coefficient one, on every byte value in every
    /// position (pseudo-random buffers), for the three μ of Saber.
    #[test]
    fn words_match_per_coefficient() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        // Every round takes every path; Miri (~1000× slower) runs three.
        let rounds = if cfg!(miri) { 3 } else { 50 };
        for _ in 0..rounds {
            let mut bytes = [0u8; 320];
            for b in bytes.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            for mu in [6u32, 8, 10] {
                let len = (N * mu as usize) >> 3;
                let (mut fast, mut slow) = ([0i8; N], [0i8; N]);
                centred_binomial(&bytes[..len], mu, &mut fast);
                binomial_per_coefficient(&bytes[..len], mu, &mut slow);
                assert_eq!(fast, slow, "mu {mu}");
                let mut words = [0i8; N];
                match mu {
                    6 => binomial_words::<6>(&bytes[..len], &mut words),
                    8 => binomial_words::<8>(&bytes[..len], &mut words),
                    _ => binomial_words::<10>(&bytes[..len], &mut words),
                }
                assert_eq!(words, slow, "mu {mu}, words");
                let mut words32 = [0i8; N];
                match mu {
                    6 => binomial_words32::<6>(&bytes[..len], &mut words32),
                    8 => binomial_words32::<8>(&bytes[..len], &mut words32),
                    _ => binomial_words32::<10>(&bytes[..len], &mut words32),
                }
                assert_eq!(words32, slow, "mu {mu}, 32-bit words");
                // Pieces of 16 · 2^k coefficients (the SIMD steps, their tails).
                for log_pieces in 0..5 {
                    let (count, piece_bytes) = (N >> log_pieces, len >> log_pieces);
                    let mut pieces = [0i8; N];
                    for (o, b) in pieces
                        .chunks_exact_mut(count)
                        .zip(bytes[..len].chunks_exact(piece_bytes))
                    {
                        centred_binomial(b, mu, o);
                    }
                    assert_eq!(pieces, slow, "mu {mu}, 2^{log_pieces} pieces");
                }
                // Streaming callers sample 32 coefficients at a time.
                centred_binomial(&bytes[..(32 * mu as usize) >> 3], mu, &mut fast[..32]);
                assert_eq!(fast[..32], slow[..32], "mu {mu}, piece");
            }
        }
        // Extremes: all ones is +μ/2 − μ/2 = 0; low halves only is +μ/2.
        let mut out = [0i8; 8];
        centred_binomial(&[0x1F, 0x7C, 0xF0, 0xC1, 0x07], 10, &mut out[..4]);
        assert_eq!(out[..4], [5, 5, 5, 5]);
        centred_binomial(&[0xFF; 6], 6, &mut out);
        assert_eq!(out, [0; 8]);
    }

    /// The fast sampler (128 coefficients per read, straight into the output) and the streaming
    /// one (32 per read, a polynomial at a time) read the same bytes the same way, from the XOF
    /// and from the stream squeezed in advance, for every variant and rank.
    #[test]
    fn fast_and_streaming_samplers_agree() {
        use crate::params::{Nineties, Plus, Round3, Uniform, UniformNineties};
        fn check<V: Variant, const L: usize, const MU: usize>() {
            let hasher = Hasher::for_operation(V::SYMMETRIC);
            let seed = [7u8; 32];
            let mut fast = [const { SecretPoly::ZERO }; L];
            gen_secret::<V, L, MU>(&mut hasher.xof(&[&seed]), &mut fast);
            let mut stream = [0u8; MAX_SECRET_STREAM];
            let len = Segments::of::<V, L, MU>().stream_len::<V, MU>();
            hasher.xof(&[&seed]).read(&mut stream[..len]);
            let mut squeezed = [const { SecretPoly::ZERO }; L];
            gen_secret::<V, L, MU>(&mut Squeezed(&stream[..len]), &mut squeezed);
            let mut count = 0;
            gen_secret_with::<V, L, MU>(&mut hasher.xof(&[&seed]), |i, poly| {
                assert_eq!(poly.coeffs, fast[i].coeffs, "L {L}, polynomial {i}");
                assert_eq!(poly.coeffs, squeezed[i].coeffs, "L {L}, polynomial {i}");
                count += 1;
            });
            assert_eq!(count, L);
        }
        check::<Round3, 2, 10>();
        check::<Round3, 3, 8>();
        check::<Round3, 4, 6>();
        check::<Plus, 2, 10>();
        check::<Plus, 3, 8>();
        check::<Plus, 4, 6>();
        check::<Uniform, 2, 10>();
        check::<Uniform, 4, 6>();
        check::<Nineties, 3, 8>();
        check::<UniformNineties, 3, 8>();
    }

    /// Polynomials held whole (squeezed in advance: one `unpack` each) equal the same stream's
    /// read from the XOF a quarter at a time, at the widths read this way (13 and 12 bits: A;
    /// 10 bits: b and b').
    #[test]
    fn held_and_streamed_matrix_entries_agree() {
        use crate::params::Symmetric;
        let hasher = Hasher::for_operation(Symmetric::Sha3);
        let seed = [9u8; 32];
        for bits in [13u32, 12, 10] {
            let entry_len = (N * bits as usize) >> 3;
            let mut bytes = [0u8; 4 * 416];
            hasher.xof(&[&seed]).read(&mut bytes[..4 * entry_len]);
            let mut held = PolyStream::new(Squeezed(&bytes[..4 * entry_len]), bits);
            let mut streamed = PolyStream::new(hasher.xof(&[&seed]), bits);
            for entry in 0..4 {
                let (mut whole, mut pieces) = (Poly::ZERO, Poly::ZERO);
                held.next_entry(&mut whole);
                streamed.next_entry(&mut pieces);
                assert_eq!(whole.coeffs, pieces.coeffs, "{bits} bits, entry {entry}");
                assert!(whole.coeffs.iter().any(|&c| c >> (bits - 1) != 0));
            }
        }
    }

    #[test]
    fn uniform_reads_two_bit_fields() {
        // 0b11_10_01_00: fields 0, 1, 2 (= −2), 3 (= −1), lowest first.
        let mut out = [0i8; 8];
        uniform(&[0b1110_0100, 0b0001_1011], &mut out);
        assert_eq!(out, [0, 1, -2, -1, -1, -2, 1, 0]);
        // Against the reference's formula ((field ^ 2) − 2) on every byte.
        for byte in 0..=255u8 {
            let mut got = [0i8; 4];
            uniform(&[byte], &mut got);
            let want: [i8; 4] = core::array::from_fn(|k| (((byte >> (2 * k)) & 3) ^ 2) as i8 - 2);
            assert_eq!(got, want, "byte {byte:#04x}");
        }
    }

    /// Saber+'s runs skip stream bytes: its third polynomial at rank 3 is β_8 of stream bytes
    /// 584..840 (`docs/saber-plus.md` §4.3).
    #[test]
    fn gapped_runs_skip_stream_bytes() {
        use crate::params::{Plus, Symmetric};
        let hasher = Hasher::for_operation(Symmetric::Sha3);
        let seed = [42u8; 32];
        let mut whole = [0u8; 840];
        hasher.xof(&[&seed]).read(&mut whole);
        let mut want = SecretPoly::ZERO;
        centred_binomial(&whole[584..840], 8, &mut want.coeffs);
        let mut got = [const { SecretPoly::ZERO }; 3];
        gen_secret::<Plus, 3, 8>(&mut hasher.xof(&[&seed]), &mut got);
        assert_eq!(got[2].coeffs, want.coeffs);
    }
}
