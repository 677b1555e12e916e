//! One operation on two workers: one generates the public matrix A, the other does everything
//! else, for every parameter set and operation (the dual-core split of "Saber on ESP32", Wang,
//! Gu and Yang, ACNS 2020).
//!
//! # Who does what
//!
//! Worker 1 (the *second* worker, started by the application) generates A entry by entry from
//! the XOF, as the one-worker path streams it, and hands each entry over as soon as it is
//! finished. Worker 2 (the calling one) runs the one FO transform and IND-CPA core of the
//! crate with the hand-off as its matrix source: it samples the secret, multiplies each entry as
//! it arrives on the caller's backend (any [`PolyMul`], the ESP32 RSA coprocessor's included:
//! the backend never leaves this worker), packs, and does the FO hashes.
//!
//! | operation | worker 1 | worker 2 |
//! |---|---|---|
//! | key generation | seed_A = XOF(seed), the L² entries of A | seed_A (again: it goes into pk; computing it costs what waiting for it would), GenSecret, `Aᵀ·s`, packing, H(pk) |
//! | encapsulation | the L² entries of A (from pk) | m = H(seed), G, GenSecret, `A·s'`, `bᵀ·s'`, packing, H(c), K |
//! | decapsulation | H(c) of the received ciphertext, then the L² entries of A | decryption, G, the re-encryption (GenSecret, `A·s'`, `bᵀ·s'`, the comparison), implicit rejection; K once both are done |
//!
//! The hand-off is a ring of `SLOTS` polynomials (512 bytes each, 2 by default) in the
//! operation's stack frame: single producer, single consumer, atomic loads and stores only (no
//! read-modify-write, so it builds for RV32IMC and ARMv6-M as it is), no allocator, no
//! `unsafe`. Results are byte-identical to the one-worker path (the KATs of every set run
//! through it in `tests/suite/two_worker.rs`); where the time goes on the ESP32-C3 model is in
//! `docs/esp32-figures.md`.
//!
//! # The workers are the application's
//!
//! The crate starts no threads and no cores: [`Workers::join`] is the application's, and
//! [`ScopedThreads`] (feature `std`) is the implementation on two threads of a
//! `std::thread::scope`. `docs/esp32.md` shows how esp-hal's start of the second core plugs in.
//!
//! ```
//! # #[cfg(feature = "std")] {
//! use saber_kem::Saber;
//! use saber_kem::polymul::DefaultPolyMul;
//! use saber_kem::two_worker::{ScopedThreads, TwoWorkers};
//!
//! let mut workers = TwoWorkers::new(ScopedThreads);
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
//! Only A crosses between the workers, and A is public; worker 1 touches no secret except the
//! key-generation seed it hashes into seed_A (which, like A, ends up public). How long a worker
//! waits depends on how fast the other one is, not on secrets. The split runs the fast memory
//! plan ([`LowMemory`](crate::LowMemory) is for one core's working set; the split is for latency).

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
    self, CiphertextSink, EncryptGroup, Fast, OnDemand, SecretBytes, SecretKey, packed_p,
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
    /// turns, as the emulator measurements do). Then worker 1 hands over the whole matrix
    /// before worker 2 starts, so the ring must hold it: the operations require `SLOTS >= L²`
    /// (16 covers every set; checked at compile time).
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

/// The [`Workers`] and the size of the hand-off: `SLOTS` matrix entries in flight (a power of
/// two; 512 bytes each, in the operation's stack frame). Two let worker 1 stay an entry ahead.
#[derive(Clone, Copy, Debug, Default)]
pub struct TwoWorkers<W, const SLOTS: usize = 2> {
    workers: W,
}

impl<W: Workers> TwoWorkers<W> {
    /// `workers` with a hand-off of two entries.
    pub const fn new(workers: W) -> Self {
        Self { workers }
    }
}

impl<W: Workers, const SLOTS: usize> TwoWorkers<W, SLOTS> {
    /// `workers` with a hand-off of `SLOTS` entries (`TwoWorkers::<_, 4>::with_slots(w)`).
    pub const fn with_slots(workers: W) -> Self {
        Self { workers }
    }

    /// The workers.
    pub fn workers_mut(&mut self) -> &mut W {
        &mut self.workers
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

/// Worker 1's matrix: the L² entries of A(`seed_a`) into the hand-off, row-major, until the
/// consumer stops.
fn produce<V: Variant, const L: usize, const SLOTS: usize>(
    hasher: &Hasher,
    seed_a: &[u8; 32],
    mut producer: Producer<'_, SLOTS>,
) {
    let mut matrix = StreamedMatrix::new::<V, L>(hasher, seed_a);
    let mut entry = Poly::ZERO;
    for _ in 0..L * L {
        matrix.next_entry(&mut entry);
        if !producer.push(&entry) {
            return;
        }
    }
}

/// The public seed of A at the end of a public key.
fn public_seed<const L: usize>(pk: &[u8]) -> [u8; SEED_BYTES] {
    let mut seed = [0u8; SEED_BYTES];
    seed.copy_from_slice(&pk[L * POLY_P_BYTES..]);
    seed
}

/// Encryption under a public key given as bytes whose matrix comes from the hand-off (worker
/// 2's side of the split), for one operation.
struct HandedOff<'a, V, const L: usize, const MU: usize, const ET: usize, const SLOTS: usize> {
    pk: &'a [u8],
    handoff: &'a Handoff<SLOTS>,
    variant: PhantomData<V>,
}

impl<'a, V, const L: usize, const MU: usize, const ET: usize, const SLOTS: usize>
    HandedOff<'a, V, L, MU, ET, SLOTS>
{
    fn new(pk: &'a [u8], handoff: &'a Handoff<SLOTS>) -> Self {
        Self {
            pk,
            handoff,
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
        coins: &[&[u8; 32]],
        sinks: &mut [Option<CiphertextSink<'_>>],
        extra: &mut [Option<crate::hash::Job<'_>>],
    ) {
        hasher.run(extra.iter_mut().filter_map(Option::take));
        let (Some(m), Some(coins), Some(Some(sink))) =
            (messages.first(), coins.first(), sinks.first_mut())
        else {
            return;
        };
        pke::encrypt::<V, Fast, B, L, MU, ET>(
            backend,
            &mut self.handoff.consumer(),
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
    pub fn try_generate_with_workers<W: Workers, B: PolyMul, R, const SLOTS: usize>(
        workers: &mut TwoWorkers<W, SLOTS>,
        backend: &mut B,
        rng: &mut R,
    ) -> Result<KeyPair<Self>, R::Error>
    where
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
    pub fn generate_deterministic_with_workers<W: Workers, B: PolyMul, const SLOTS: usize>(
        workers: &mut TwoWorkers<W, SLOTS>,
        backend: &mut B,
        seed_a: &[u8; 32],
        seed_s: &[u8; 32],
        z: &[u8; 32],
    ) -> KeyPair<Self> {
        let seeds = KeySeeds {
            seed_a: *seed_a,
            seed_s: *seed_s,
            z: *z,
        };
        Self::generate_from_seeds_with_workers(workers, backend, &seeds)
    }

    fn generate_from_seeds_with_workers<W: Workers, B: PolyMul, const SLOTS: usize>(
        workers: &mut TwoWorkers<W, SLOTS>,
        backend: &mut B,
        seeds: &KeySeeds,
    ) -> KeyPair<Self> {
        let hasher = &Self::hasher();
        let handoff = &workers.handoff::<L>();
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
                let mut seed_a = [[0u8; 32]; 1];
                fo::hash_seeds_a(hasher, core::slice::from_ref(seeds), &mut seed_a);
                produce::<V, L, SLOTS>(hasher, &seed_a[0], handoff.producer());
            },
            move || {
                fo::keygen_from_matrix::<V, B, L, MU>(
                    backend,
                    hasher,
                    seeds,
                    &mut handoff.consumer(),
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
    pub fn try_encapsulate_with_workers<W: Workers, B: PolyMul, R, const SLOTS: usize>(
        &self,
        workers: &mut TwoWorkers<W, SLOTS>,
        backend: &mut B,
        rng: &mut R,
    ) -> Result<(Ciphertext<SaberKem<V, L, MU, ET>>, SharedSecret), R::Error>
    where
        R: TryCryptoRng + ?Sized,
    {
        let m = random_seed(rng)?;
        Ok(self.encapsulate_from_seed_with_workers(workers, backend, &m))
    }

    /// Deterministic encapsulation on two workers: the result of
    /// [`encapsulate_deterministic_with`](Self::encapsulate_deterministic_with) for the same
    /// `m`, which must be secret and uniformly random.
    #[cfg(feature = "hazmat")]
    pub fn encapsulate_deterministic_with_workers<W: Workers, B: PolyMul, const SLOTS: usize>(
        &self,
        workers: &mut TwoWorkers<W, SLOTS>,
        backend: &mut B,
        m: &[u8; 32],
    ) -> (Ciphertext<SaberKem<V, L, MU, ET>>, SharedSecret) {
        self.encapsulate_from_seed_with_workers(workers, backend, m)
    }

    fn encapsulate_from_seed_with_workers<W: Workers, B: PolyMul, const SLOTS: usize>(
        &self,
        workers: &mut TwoWorkers<W, SLOTS>,
        backend: &mut B,
        m: &[u8; 32],
    ) -> (Ciphertext<SaberKem<V, L, MU, ET>>, SharedSecret) {
        let hasher = &SaberKem::<V, L, MU, ET>::hasher();
        let handoff = &workers.handoff::<L>();
        let pk = self.as_bytes();
        let seed_a = &public_seed::<L>(pk);
        let keys = &HandedOff::<V, L, MU, ET, SLOTS>::new(pk, handoff);
        encapsulation::<SaberKem<V, L, MU, ET>>(|out| {
            workers.workers.join(
                move || produce::<V, L, SLOTS>(hasher, seed_a, handoff.producer()),
                move || {
                    fo::encapsulate::<B, 1>(
                        backend,
                        hasher,
                        keys,
                        &[&self.hpk],
                        core::slice::from_ref(m),
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
    pub fn decapsulate_with_workers<W: Workers, B: PolyMul, const SLOTS: usize>(
        &self,
        workers: &mut TwoWorkers<W, SLOTS>,
        backend: &mut B,
        ct: &Ciphertext<SaberKem<V, L, MU, ET>>,
    ) -> SharedSecret {
        let hasher = &SaberKem::<V, L, MU, ET>::hasher();
        let handoff = &workers.handoff::<L>();
        let key = self.parts();
        let ct = ct.as_bytes();
        let seed_a = &public_seed::<L>(key.pk);
        let keys = &HandedOff::<V, L, MU, ET, SLOTS>::new(key.pk, handoff);
        let mut kr = Wiped([[[0u8; 32]; 2]; 1]);
        let (ct_hash, ()) = workers.workers.join(
            move || {
                let ct_hash = hasher.h(&[ct]);
                produce::<V, L, SLOTS>(hasher, seed_a, handoff.producer());
                ct_hash
            },
            || {
                fo::decapsulate_to_kr::<ConstantTimeSelect, B, 1>(
                    backend,
                    hasher,
                    keys,
                    &[key.hpk],
                    &[key.z],
                    &[ct],
                    |backend, _| {
                        pke::decrypt::<V, B, L, ET>(
                            backend,
                            &mut OnDemand(SecretKey::<V>::new(key.sk_cpa)),
                            ct,
                        )
                    },
                    None,
                    &mut kr,
                )
            },
        );
        let mut shared = SharedSecret([0; 32]);
        fo::hash_keys(hasher, &kr[..], &[ct_hash], core::iter::once(&mut shared.0));
        shared
    }
}
