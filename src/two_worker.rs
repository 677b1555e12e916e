//! One operation on two workers, for every parameter set and operation: the dual-core split of
//! "Saber on ESP32" (Wang, Gu and Yang, ACNS 2020), balanced by a [`Schedule`] of outputs.
//!
//! # Who does what
//!
//! Worker 1 (the *second* worker, started by the application) generates A entry by entry from
//! the XOF, as the one-worker path streams it, and hands the entries of worker 2's products over
//! as they are finished. It also computes the last outputs of the products itself, as the
//! schedule says (one by default), on a backend of its own (`M`, e.g. a software backend while
//! worker 2 keeps the ESP32's RSA coprocessor: the peripheral is never shared), sampling the
//! secret from the same seed as worker 2 does, and hands those outputs over finished. Worker 2
//! (the calling one) runs the one FO transform and IND-CPA core of the crate with the hand-off
//! as its matrix source: it samples the secret, multiplies the entries it is handed on the
//! caller's backend, takes worker 1's outputs finished, packs, and does the FO hashes.
//!
//! | operation | worker 1 | worker 2 |
//! |---|---|---|
//! | key generation | seed_A = XOF(seed), GenSecret, the L² entries of A; its columns of `Aᵀ·s` | seed_A (again: it goes into pk), GenSecret, its columns of `Aᵀ·s`, packing, H(pk) |
//! | encapsulation | m = H(seed), G (again, for the coins), GenSecret, A; its rows of `A·s'` | m, G, GenSecret, its rows of `A·s'`, `bᵀ·s'`, packing, H(c), K |
//! | decapsulation | decryption (handed over: the message), G, GenSecret, A; its rows of the re-encryption's `A·s'` | H(c), G, GenSecret, its rows, `bᵀ·s'`, the comparison, implicit rejection; K once both are done |
//!
//! Each side reads the hand-off in one fixed order (worker 2's entries row-major, then the
//! finished outputs), so the bytes are the one-worker path's whatever the timing.
//!
//! The hand-off is a ring of `SLOTS` polynomials (512 bytes each, 2 by default) in the
//! operation's stack frame, plus a 32-byte mailbox: single producer, single consumer, atomic
//! loads and stores only (no read-modify-write, so it builds for RV32IMC and ARMv6-M as it is),
//! no allocator, no `unsafe`. Results are byte-identical to the one-worker path (the KATs of
//! every set run through it in `tests/suite/two_worker.rs`); where the time goes on the
//! ESP32-C3 model is in `docs/esp32-figures.md`.
//!
//! # The workers are the application's
//!
//! The crate starts no threads and no cores: [`Workers::join`] is the application's, and
//! `ScopedThreads` (feature `std`) is the implementation on two threads of a
//! `std::thread::scope`. `docs/esp32.md` shows how esp-hal's start of the second core plugs in.
//!
//! ```
//! # #[cfg(feature = "std")] {
//! use saber_kem::Saber;
//! use saber_kem::polymul::DefaultPolyMul;
//! use saber_kem::two_worker::{ScopedThreads, TwoWorkers};
//!
//! let mut workers = TwoWorkers::new(ScopedThreads, DefaultPolyMul::default());
//! let mut backend = DefaultPolyMul::default();
//! let mut rng = getrandom::SysRng;
//! let (dk, ek) = Saber::try_generate_with_workers(&mut workers, &mut backend, &mut rng).unwrap();
//! let (ct, ss) = ek.try_encapsulate_with_workers(&mut workers, &mut backend, &mut rng).unwrap();
//! assert_eq!(dk.decapsulate_with_workers(&mut workers, &mut backend, &ct), ss);
//! # }
//! ```
//!
//! # Constant time and memory
//!
//! What crosses between the workers is A and the outputs of worker 1 (public: rows of the
//! public key and of the ciphertext), and in decapsulation the decrypted message and the
//! re-encryption's rows, which are secret: the hand-off overwrites them with zeros when the
//! operation ends (the message as soon as it is taken). Each worker wipes its own copies of
//! the secret as the one-worker path does. Which worker computes what is fixed by the schedule;
//! how long a worker waits depends on how fast the other one is, not on secrets. The split runs
//! the fast memory plan ([`LowMemory`](crate::LowMemory) is for one core's working set; the
//! split is for latency).

use core::marker::PhantomData;

use rand_core::TryCryptoRng;

use crate::ct::{ConstantTimeSelect, Wiped};
use crate::hash::Hasher;
use crate::kem::fo::{self, KeyPairParts, KeySeeds};
use crate::kem::{
    Algorithms, Ciphertext, DecapsulationKey, EncapsulationKey, ParameterSet, SaberKem,
    SharedSecret, encapsulation, random_seed,
};
use crate::params::sizes::POLY_P_BYTES;
use crate::params::{SEED_BYTES, Variant};
use crate::pke::{
    self, CiphertextSink, EncryptGroup, Fast, MemoryPlan, OnDemand, SecretBytes, SecretKey,
    SecretOperands, SecretWork, packed_p,
};
use crate::poly::Poly;
use crate::polymul::PolyMul;
use crate::sampling::{MatrixSource, StreamedMatrix};

mod handoff;

#[cfg(feature = "std")]
extern crate std;

use handoff::{Handoff, Producer};

/// A second worker, supplied by the application: a thread, a second core, a task.
pub trait Workers {
    /// Whether [`join`](Self::join) runs `second` to completion before `here` (one core taking
    /// turns, as the emulator measurements do). Then worker 1 hands over everything before
    /// worker 2 starts, so the ring must hold the whole matrix: the operations require
    /// `SLOTS >= L²` (16 covers every set; checked at compile time).
    const IN_TURN: bool = false;

    /// Runs `second` on the second worker and `here` on the calling one, and returns both
    /// results once both have returned. Unless [`IN_TURN`](Self::IN_TURN), the two must run at
    /// the same time: each waits for the other at the hand-off.
    fn join<A, RA, B, RB>(&mut self, second: A, here: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        RA: Send,
        B: FnOnce() -> RB;

    /// Called on each turn of a wait at the hand-off. The default is a spin-loop hint; an
    /// application on an RTOS (or on a host with more threads than cores) can yield instead.
    fn wait() {
        core::hint::spin_loop();
    }
}

/// One worker taking turns: `second` to completion, then `here`, on the calling thread. It
/// needs a hand-off of the whole matrix (`TwoWorkers::<InTurn, _, 16>`); it gains nothing, but
/// runs the split where there is no second worker: the tests and the emulator measurements,
/// which time each worker on its own.
#[derive(Clone, Copy, Debug, Default)]
pub struct InTurn;

impl Workers for InTurn {
    const IN_TURN: bool = true;

    fn join<A, RA, B, RB>(&mut self, second: A, here: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        RA: Send,
        B: FnOnce() -> RB,
    {
        let second = second();
        (second, here())
    }
}

/// How many of an operation's L outputs worker 1 computes on its own backend: the last ones,
/// i.e. columns of `b = Aᵀ·s` in key generation, rows of `b' = A·s'` in encapsulation and in
/// decapsulation's re-encryption. Counts above L mean all L.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Key generation.
    pub keygen: usize,
    /// Encapsulation.
    pub encapsulation: usize,
    /// Decapsulation's re-encryption.
    pub decapsulation: usize,
}

impl Schedule {
    /// Worker 1 generates A (and decrypts, in decapsulation) but multiplies nothing else.
    pub const MATRIX_ONLY: Self = Self {
        keygen: 0,
        encapsulation: 0,
        decapsulation: 0,
    };

    /// One output of every operation on worker 1: the default, for a worker 2 whose products
    /// cost more than generating A (the ESP32 RSA coprocessor's Kronecker backend: a critical
    /// path of 0.53–0.69 of one worker on the ESP32-C3 model, `docs/esp32-figures.md`).
    pub const ONE_OUTPUT: Self = Self {
        keygen: 1,
        encapsulation: 1,
        decapsulation: 1,
    };

    /// For a worker 2 whose products are cheap (the NTT on a microcontroller): worker 1 computes
    /// an output only in decapsulation, where the decryption it does first gives it the time
    /// (0.62–0.77 of one worker on the ESP32-C3 model).
    pub const CHEAP_PRODUCTS: Self = Self {
        keygen: 0,
        encapsulation: 0,
        decapsulation: 1,
    };
}

impl Default for Schedule {
    fn default() -> Self {
        Self::ONE_OUTPUT
    }
}

/// The [`Workers`], worker 1's backend `M`, the [`Schedule`], and the size of the hand-off:
/// `SLOTS` polynomials in flight (a power of two; 512 bytes each, in the operation's stack
/// frame). Two let worker 1 stay an entry ahead.
#[derive(Clone, Copy, Debug)]
pub struct TwoWorkers<W, M, const SLOTS: usize = 2> {
    workers: W,
    second: M,
    schedule: Schedule,
}

impl<W: Workers, M: PolyMul + Send> TwoWorkers<W, M> {
    /// `workers`, with `second` as worker 1's backend, a hand-off of two entries and the default
    /// schedule.
    pub fn new(workers: W, second: M) -> Self {
        Self::with_slots(workers, second)
    }
}

impl<W: Workers, M: PolyMul + Send, const SLOTS: usize> TwoWorkers<W, M, SLOTS> {
    /// `workers` and worker 1's backend with a hand-off of `SLOTS` entries
    /// (`TwoWorkers::<_, _, 4>::with_slots(w, m)`) and the default schedule.
    pub fn with_slots(workers: W, second: M) -> Self {
        Self {
            workers,
            second,
            schedule: Schedule::default(),
        }
    }

    /// The same with `schedule`.
    pub fn with_schedule(self, schedule: Schedule) -> Self {
        Self { schedule, ..self }
    }

    /// The workers.
    pub fn workers_mut(&mut self) -> &mut W {
        &mut self.workers
    }

    /// Worker 1's backend.
    pub fn second_backend_mut(&mut self) -> &mut M {
        &mut self.second
    }

    /// An empty hand-off for an operation at rank `L`.
    fn handoff<const L: usize>(&self) -> Handoff<SLOTS> {
        const {
            assert!(
                !W::IN_TURN || SLOTS >= L * L,
                "workers that take turns need a hand-off of L² entries"
            )
        };
        Handoff::new(W::wait)
    }
}

/// Two threads of one `std::thread::scope`: worker 1 on a thread spawned for the operation,
/// worker 2 on the calling thread; waits yield the thread. A panic on either is resumed on the
/// caller once both have stopped.
#[cfg(feature = "std")]
#[derive(Clone, Copy, Debug, Default)]
pub struct ScopedThreads;

#[cfg(feature = "std")]
impl Workers for ScopedThreads {
    fn join<A, RA, B, RB>(&mut self, second: A, here: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        RA: Send,
        B: FnOnce() -> RB,
    {
        std::thread::scope(|scope| {
            let worker = scope.spawn(second);
            let here = here();
            match worker.join() {
                Ok(second) => (second, here),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }

    fn wait() {
        std::thread::yield_now();
    }
}

/// Worker 1's view of A: streamed from the XOF in row-major order; the entries of worker 2's
/// outputs go into the hand-off as they come, the others to worker 1's own products.
struct Tee<'a, const L: usize, const SLOTS: usize> {
    matrix: StreamedMatrix<'a>,
    producer: &'a Producer<'a, SLOTS>,
    /// Row and column of the next entry of the XOF.
    row: usize,
    column: usize,
    /// Outputs from this index on are worker 1's.
    first_own: usize,
    /// Whether an entry's output is its column (`Aᵀ·s`) rather than its row (`A·s'`).
    transposed: bool,
}

impl<'a, const L: usize, const SLOTS: usize> Tee<'a, L, SLOTS> {
    fn new<V: Variant>(
        hasher: &Hasher,
        seed_a: &'a [u8; 32],
        producer: &'a Producer<'a, SLOTS>,
        own: usize,
        transposed: bool,
    ) -> Self {
        Self {
            matrix: StreamedMatrix::new::<V, L>(hasher, seed_a),
            producer,
            row: 0,
            column: 0,
            first_own: L - own.min(L),
            transposed,
        }
    }

    /// The next entry of the XOF and the output it goes to, or None after the last one.
    fn read(&mut self, out: &mut Poly) -> Option<usize> {
        if self.row == L {
            return None;
        }
        self.matrix.next_entry(out);
        let output = if self.transposed {
            self.column
        } else {
            self.row
        };
        self.column += 1;
        if self.column == L {
            (self.row, self.column) = (self.row + 1, 0);
        }
        Some(output)
    }

    /// Hands over the entries left (all worker 2's, once worker 1's products are done).
    fn flush(&mut self) {
        let mut entry = Poly::ZERO;
        while self.read(&mut entry).is_some() {
            if !self.producer.push(&entry) {
                return;
            }
        }
    }
}

impl<const L: usize, const SLOTS: usize> MatrixSource for Tee<'_, L, SLOTS> {
    /// The next of worker 1's entries, handing over worker 2's on the way.
    fn next_entry(&mut self, out: &mut Poly) {
        while let Some(output) = self.read(out) {
            if output >= self.first_own {
                return;
            }
            self.producer.push(out);
        }
    }

    /// Worker 2's outputs: worker 1 skips their products (their entries go into the hand-off).
    fn computed_elsewhere(&self, output: usize) -> bool {
        output < self.first_own
    }
}

/// Worker 1's rows of `A·s'` (the last `own` of them), with the secret sampled here as worker 2
/// samples it, from the coins of G(`m` ‖ `hpk`), handed over finished after worker 2's entries.
#[allow(clippy::too_many_arguments)]
fn rows_on_worker_1<V: Variant, M: PolyMul, const L: usize, const MU: usize, const SLOTS: usize>(
    backend: &mut M,
    hasher: &Hasher,
    seed_a: &[u8; 32],
    m: &[u8; 32],
    hpk: &[u8; 32],
    own: usize,
    producer: &Producer<'_, SLOTS>,
) {
    let mut matrix = Tee::<L, SLOTS>::new::<V>(hasher, seed_a, producer, own, false);
    if own > 0 {
        let mut kr = Wiped([[[0u8; 32]; 2]; 1]);
        pke::hash_kr(hasher, core::slice::from_ref(m), &[hpk], &mut kr[..]);
        let s = Fast::sample::<V, L, MU>(SecretBytes::Seed(hasher, &kr[0][1]));
        let rows = OwnRows {
            matrix: &mut matrix,
            producer,
        };
        Fast::with_encryption_secret::<M, L>(backend, &s, rows);
    }
    matrix.flush();
}

/// Worker 1's rows of `A·s'`, each handed over as it is finished ([`rows_on_worker_1`]).
struct OwnRows<'a, 'h, const L: usize, const SLOTS: usize> {
    matrix: &'a mut Tee<'h, L, SLOTS>,
    producer: &'a Producer<'h, SLOTS>,
}

impl<B: PolyMul, const L: usize, const SLOTS: usize> SecretWork<B> for OwnRows<'_, '_, L, SLOTS> {
    fn run(self, backend: &mut B, s: &mut impl SecretOperands<B>) {
        pke::matrix_rows::<B, L>(backend, self.matrix, s, |_, row| {
            self.producer.push(row);
        });
    }
}

/// The public seed of A at the end of a public key.
fn public_seed<const L: usize>(pk: &[u8]) -> [u8; SEED_BYTES] {
    let mut seed = [0u8; SEED_BYTES];
    seed.copy_from_slice(&pk[L * POLY_P_BYTES..]);
    seed
}

/// Encryption under a public key given as bytes whose matrix comes from the hand-off (worker
/// 2's side of the split), for one operation; the rows from `first_elsewhere` on come finished.
struct HandedOff<'a, V, const L: usize, const MU: usize, const ET: usize, const SLOTS: usize> {
    pk: &'a [u8],
    handoff: &'a Handoff<SLOTS>,
    first_elsewhere: usize,
    variant: PhantomData<V>,
}

impl<'a, V, const L: usize, const MU: usize, const ET: usize, const SLOTS: usize>
    HandedOff<'a, V, L, MU, ET, SLOTS>
{
    fn new(pk: &'a [u8], handoff: &'a Handoff<SLOTS>, on_worker_1: usize) -> Self {
        Self {
            pk,
            handoff,
            first_elsewhere: L - on_worker_1.min(L),
            variant: PhantomData,
        }
    }
}

impl<B: PolyMul, V: Variant, const L: usize, const MU: usize, const ET: usize, const SLOTS: usize>
    EncryptGroup<B> for HandedOff<'_, V, L, MU, ET, SLOTS>
{
    fn encrypt(
        &self,
        backend: &mut B,
        hasher: &Hasher,
        messages: &[[u8; 32]],
        hpks: &[&[u8; 32]],
        kr: &mut [[[u8; 32]; 2]],
        sinks: &mut [Option<CiphertextSink<'_>>],
        extra: &mut [Option<crate::hash::Job<'_>>],
    ) {
        hasher.run(extra.iter_mut().filter_map(Option::take));
        pke::hash_kr(hasher, messages, hpks, kr);
        let (Some(m), Some([_, coins]), Some(Some(sink))) =
            (messages.first(), kr.first(), sinks.first_mut())
        else {
            return;
        };
        pke::encrypt::<V, Fast, B, L, MU, ET>(
            backend,
            &mut self.handoff.consumer(self.first_elsewhere),
            &mut packed_p(&self.pk[..L * POLY_P_BYTES]),
            SecretBytes::Seed(hasher, coins),
            m,
            sink,
        );
    }
}

/// A key pair, as [`SaberKem::generate`] returns it.
type KeyPair<P> = (DecapsulationKey<P>, EncapsulationKey<P>);

impl<V: Variant, const L: usize, const MU: usize, const ET: usize> SaberKem<V, L, MU, ET>
where
    Self: ParameterSet,
{
    /// Generates a key pair on two workers (see [`crate::two_worker`]) with the given backend
    /// on the calling one; fails only if the RNG fails. Draws what
    /// [`try_generate_with`](Self::try_generate_with) draws, in the same order, and returns
    /// the same keys.
    pub fn try_generate_with_workers<W, M, B, R, const SLOTS: usize>(
        workers: &mut TwoWorkers<W, M, SLOTS>,
        backend: &mut B,
        rng: &mut R,
    ) -> Result<KeyPair<Self>, R::Error>
    where
        W: Workers,
        M: PolyMul + Send,
        B: PolyMul,
        R: TryCryptoRng + ?Sized,
    {
        let mut seeds = KeySeeds::default();
        seeds.draw(rng)?;
        Ok(Self::generate_from_seeds_with_workers(
            workers, backend, &seeds,
        ))
    }

    /// Deterministic key generation on two workers: the keys of
    /// [`generate_deterministic_with`](Self::generate_deterministic_with) for the same seeds,
    /// which must be secret and uniformly random.
    #[cfg(feature = "hazmat")]
    pub fn generate_deterministic_with_workers<W, M, B, const SLOTS: usize>(
        workers: &mut TwoWorkers<W, M, SLOTS>,
        backend: &mut B,
        seed_a: &[u8; 32],
        seed_s: &[u8; 32],
        z: &[u8; 32],
    ) -> KeyPair<Self>
    where
        W: Workers,
        M: PolyMul + Send,
        B: PolyMul,
    {
        let seeds = KeySeeds {
            seed_a: *seed_a,
            seed_s: *seed_s,
            z: *z,
        };
        Self::generate_from_seeds_with_workers(workers, backend, &seeds)
    }

    fn generate_from_seeds_with_workers<W, M, B, const SLOTS: usize>(
        workers: &mut TwoWorkers<W, M, SLOTS>,
        backend: &mut B,
        seeds: &KeySeeds,
    ) -> KeyPair<Self>
    where
        W: Workers,
        M: PolyMul + Send,
        B: PolyMul,
    {
        let hasher = &Self::hasher();
        let handoff = &workers.handoff::<L>();
        let own = workers.schedule.keygen.min(L);
        let second = &mut workers.second;
        let mut dk = DecapsulationKey::<Self>::ZERO;
        let ek = &mut dk.ek;
        let parts = KeyPairParts {
            pk: ek.bytes.as_mut(),
            sk_cpa: dk.secret.as_mut(),
            hpk: &mut ek.hpk,
            z: &mut dk.z,
        };
        workers.workers.join(
            move || {
                let producer = &handoff.producer();
                let mut seed_a = [0u8; 32];
                fo::hash_seeds_a(hasher, core::iter::once((&seeds.seed_a, &mut seed_a)));
                let mut matrix = Tee::<L, SLOTS>::new::<V>(hasher, &seed_a, producer, own, true);
                if own > 0 {
                    let s = Fast::sample::<V, L, MU>(SecretBytes::Seed(hasher, &seeds.seed_s));
                    pke::transposed_products::<V, Fast, M, L>(
                        second,
                        &mut matrix,
                        &s,
                        &mut [],
                        |_, b| {
                            producer.push(b);
                        },
                    );
                }
                matrix.flush();
            },
            move || {
                fo::keygen_from_matrix::<V, B, L, MU>(
                    backend,
                    hasher,
                    seeds.inputs(),
                    &mut handoff.consumer(L - own),
                    parts,
                )
            },
        );
        let ek = dk.ek.clone();
        (dk, ek)
    }
}

impl<V: Variant, const L: usize, const MU: usize, const ET: usize>
    EncapsulationKey<SaberKem<V, L, MU, ET>>
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    /// Encapsulates on two workers (see [`crate::two_worker`]) with the given backend on the
    /// calling one; fails only if the RNG fails. Draws 32 bytes, as
    /// [`try_encapsulate_with`](Self::try_encapsulate_with) does, and returns what it returns.
    pub fn try_encapsulate_with_workers<W, M, B, R, const SLOTS: usize>(
        &self,
        workers: &mut TwoWorkers<W, M, SLOTS>,
        backend: &mut B,
        rng: &mut R,
    ) -> Result<(Ciphertext<SaberKem<V, L, MU, ET>>, SharedSecret), R::Error>
    where
        W: Workers,
        M: PolyMul + Send,
        B: PolyMul,
        R: TryCryptoRng + ?Sized,
    {
        let m = random_seed(rng)?;
        Ok(self.encapsulate_from_seed_with_workers(workers, backend, &m))
    }

    /// Deterministic encapsulation on two workers: the result of
    /// [`encapsulate_deterministic_with`](Self::encapsulate_deterministic_with) for the same
    /// `m`, which must be secret and uniformly random.
    #[cfg(feature = "hazmat")]
    pub fn encapsulate_deterministic_with_workers<W, M, B, const SLOTS: usize>(
        &self,
        workers: &mut TwoWorkers<W, M, SLOTS>,
        backend: &mut B,
        m: &[u8; 32],
    ) -> (Ciphertext<SaberKem<V, L, MU, ET>>, SharedSecret)
    where
        W: Workers,
        M: PolyMul + Send,
        B: PolyMul,
    {
        self.encapsulate_from_seed_with_workers(workers, backend, m)
    }

    fn encapsulate_from_seed_with_workers<W, M, B, const SLOTS: usize>(
        &self,
        workers: &mut TwoWorkers<W, M, SLOTS>,
        backend: &mut B,
        seed: &[u8; 32],
    ) -> (Ciphertext<SaberKem<V, L, MU, ET>>, SharedSecret)
    where
        W: Workers,
        M: PolyMul + Send,
        B: PolyMul,
    {
        let hasher = &SaberKem::<V, L, MU, ET>::hasher();
        let handoff = &workers.handoff::<L>();
        let own = workers.schedule.encapsulation.min(L);
        let second = &mut workers.second;
        let pk = self.as_bytes();
        let hpk = &self.hpk;
        let seed_a = &public_seed::<L>(pk);
        let keys = &HandedOff::<V, L, MU, ET, SLOTS>::new(pk, handoff, own);
        encapsulation::<SaberKem<V, L, MU, ET>>(|out| {
            workers.workers.join(
                move || {
                    // m = H(seed) as worker 2 computes it, for the coins (only if needed).
                    let m = Wiped(if own > 0 { hasher.h(&[seed]) } else { [0; 32] });
                    rows_on_worker_1::<V, M, L, MU, SLOTS>(
                        second,
                        hasher,
                        seed_a,
                        &m,
                        hpk,
                        own,
                        &handoff.producer(),
                    );
                },
                move || {
                    fo::encapsulate::<B, 1>(
                        backend,
                        hasher,
                        keys,
                        &[hpk],
                        core::slice::from_ref(seed),
                        &mut [Some(out)],
                    )
                },
            );
        })
    }
}

impl<V: Variant, const L: usize, const MU: usize, const ET: usize>
    DecapsulationKey<SaberKem<V, L, MU, ET>>
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    /// Decapsulates on two workers (see [`crate::two_worker`]) with the given backend on the
    /// calling one: the shared secret of [`decapsulate_with`](Self::decapsulate_with), implicit
    /// rejection included.
    pub fn decapsulate_with_workers<W, M, B, const SLOTS: usize>(
        &self,
        workers: &mut TwoWorkers<W, M, SLOTS>,
        backend: &mut B,
        ct: &Ciphertext<SaberKem<V, L, MU, ET>>,
    ) -> SharedSecret
    where
        W: Workers,
        M: PolyMul + Send,
        B: PolyMul,
    {
        let hasher = &SaberKem::<V, L, MU, ET>::hasher();
        let handoff = &workers.handoff::<L>();
        let own = workers.schedule.decapsulation.min(L);
        let second = &mut workers.second;
        let key = self.parts();
        let (sk_cpa, hpk) = (key.sk_cpa, key.hpk);
        let ct = ct.as_bytes();
        let seed_a = &public_seed::<L>(key.pk);
        let keys = &HandedOff::<V, L, MU, ET, SLOTS>::new(key.pk, handoff, own);
        let mut kr = Wiped([[[0u8; 32]; 2]; 1]);
        let ((), ct_hash) = workers.workers.join(
            move || {
                let producer = &handoff.producer();
                let m = Wiped([pke::decrypt::<V, M, L, ET>(
                    second,
                    &mut OnDemand(SecretKey::<V>::new(sk_cpa)),
                    ct,
                )]);
                producer.post_message(&m[0]);
                rows_on_worker_1::<V, M, L, MU, SLOTS>(
                    second, hasher, seed_a, &m[0], hpk, own, producer,
                );
            },
            || {
                let ct_hash = hasher.h(&[ct]);
                fo::decapsulate_to_kr::<ConstantTimeSelect, B, 1>(
                    backend,
                    hasher,
                    keys,
                    &[hpk],
                    &[key.z],
                    &[ct],
                    |_, _| handoff.take_message(),
                    None,
                    &mut kr,
                );
                ct_hash
            },
        );
        let mut shared = SharedSecret([0; 32]);
        fo::hash_keys(hasher, &kr[..], &[ct_hash], core::iter::once(&mut shared.0));
        shared
    }
}
