//! The hand-off from worker 1 to worker 2: a single-producer single-consumer ring of `SLOTS`
//! polynomials (matrix entries, and the outputs worker 1 finished) and a one-shot mailbox for
//! decapsulation's decrypted message, without an allocator and without `unsafe`.
//!
//! Every word of a slot is an `AtomicU32` (two coefficients) written and read with relaxed
//! stores and loads, which compile to plain stores and loads; the two counters are published
//! with release stores and read with acquire loads (Lamport's ring: each side writes only its
//! own counter). So nothing needs an atomic read-modify-write, and the ring builds on cores
//! that have none (RV32IMC, ARMv6-M) as it is: `portable-atomic` is not needed.
//!
//! Each side also has a flag it raises when it stops (on return or while unwinding), so that
//! the other never waits forever for a peer that is gone: a producer facing a stopped consumer
//! stops producing, and a consumer waiting for an entry that a stopped producer will never
//! publish panics (that only happens when the producer panicked, which the join then reports).
//!
//! What crosses may be secret (the decrypted message, the re-encryption's rows): every word is
//! overwritten with zero when the hand-off is dropped, and the message as soon as it is taken.

use core::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

use zeroize::Zeroize;

use crate::poly::{N, Poly};
use crate::sampling::MatrixSource;

/// Words of a slot: two 16-bit coefficients each.
const WORDS: usize = N >> 1;

/// A ring of `SLOTS` matrix entries in flight (a power of two; 512 bytes each), for one
/// operation.
pub(crate) struct Handoff<const SLOTS: usize> {
    slots: [[AtomicU32; WORDS]; SLOTS],
    /// Entries published by the producer.
    published: AtomicUsize,
    /// Entries taken by the consumer.
    taken: AtomicUsize,
    producer_stopped: AtomicBool,
    consumer_stopped: AtomicBool,
    /// Decapsulation's decrypted message, little-endian words.
    message: [AtomicU32; 8],
    message_posted: AtomicBool,
    /// Called on each turn of a wait (the application's [`super::Workers::wait`]).
    wait: fn(),
}

impl<const SLOTS: usize> Handoff<SLOTS> {
    /// An empty ring whose waits call `wait`.
    pub(crate) fn new(wait: fn()) -> Self {
        const { assert!(SLOTS.is_power_of_two(), "SLOTS must be a power of two") };
        Self {
            slots: [const { [const { AtomicU32::new(0) }; WORDS] }; SLOTS],
            published: AtomicUsize::new(0),
            taken: AtomicUsize::new(0),
            producer_stopped: AtomicBool::new(false),
            consumer_stopped: AtomicBool::new(false),
            message: [const { AtomicU32::new(0) }; 8],
            message_posted: AtomicBool::new(false),
            wait,
        }
    }

    /// The producing side; it counts as stopped once the handle is dropped.
    pub(crate) fn producer(&self) -> Producer<'_, SLOTS> {
        Producer(self)
    }

    /// The consuming side, as the matrix source of the IND-CPA core, with the outputs from
    /// `first_elsewhere` on computed by worker 1; it counts as stopped once the handle is
    /// dropped.
    pub(crate) fn consumer(&self, first_elsewhere: usize) -> Consumer<'_, SLOTS> {
        Consumer {
            handoff: self,
            first_elsewhere,
        }
    }

    /// Waits until `ready` (which must read the producer's side with acquire loads).
    ///
    /// # Panics
    ///
    /// If the producer stopped without making it ready (it panicked).
    fn wait_for_producer(&self, ready: impl Fn() -> bool) {
        while !ready() {
            // Ready may have come just before the producer stopped: look again after the flag.
            if self.producer_stopped.load(Ordering::Acquire) && !ready() {
                panic!("the matrix worker stopped before handing over everything");
            }
            (self.wait)();
        }
    }

    /// Posts decapsulation's decrypted message. Not inlined: the emulator harness times the
    /// hand-off points at this function and [`take_message`](Self::take_message).
    #[inline(never)]
    fn post_message(&self, message: &[u8; 32]) {
        for (word, bytes) in self.message.iter().zip(message.chunks_exact(4)) {
            word.store(
                u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
                Ordering::Relaxed,
            );
        }
        self.message_posted.store(true, Ordering::Release);
    }

    /// The message, once posted; its words are overwritten with zero here.
    ///
    /// # Panics
    ///
    /// If the producer stopped before posting it (it panicked).
    #[inline(never)]
    pub(crate) fn take_message(&self) -> [u8; 32] {
        self.wait_for_producer(|| self.message_posted.load(Ordering::Acquire));
        let mut message = [0u8; 32];
        for (bytes, word) in message.chunks_exact_mut(4).zip(self.message.iter()) {
            bytes.copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
            word.store(0, Ordering::Relaxed);
        }
        message
    }

    /// Publishes `entry` once a slot is free. Returns false, publishing nothing, if the
    /// consumer has stopped. Not inlined: the emulator harness (`emu/`) times the hand-off
    /// points at this function and [`take`](Self::take).
    #[inline(never)]
    fn publish(&self, entry: &Poly) -> bool {
        let index = self.published.load(Ordering::Relaxed);
        // The acquire load orders the consumer's reads of the slot before our writes to it.
        while index - self.taken.load(Ordering::Acquire) >= SLOTS {
            if self.consumer_stopped.load(Ordering::Acquire) {
                return false;
            }
            (self.wait)();
        }
        let slot = &self.slots[index & (SLOTS - 1)];
        for (word, pair) in slot.iter().zip(entry.coeffs.chunks_exact(2)) {
            word.store(
                u32::from(pair[0]) | u32::from(pair[1]) << 16,
                Ordering::Relaxed,
            );
        }
        self.published.store(index + 1, Ordering::Release);
        true
    }

    /// Takes the next entry into `out`, waiting until it is published.
    ///
    /// # Panics
    ///
    /// If the producer stopped before publishing it (it panicked).
    #[inline(never)]
    fn take(&self, out: &mut Poly) {
        let index = self.taken.load(Ordering::Relaxed);
        // The acquire load orders the producer's writes of the slot before our reads.
        self.wait_for_producer(|| self.published.load(Ordering::Acquire) != index);
        let slot = &self.slots[index & (SLOTS - 1)];
        for (pair, word) in out.coeffs.chunks_exact_mut(2).zip(slot.iter()) {
            let word = word.load(Ordering::Relaxed);
            pair[0] = word as u16;
            pair[1] = (word >> 16) as u16;
        }
        self.taken.store(index + 1, Ordering::Release);
    }
}

impl<const SLOTS: usize> Drop for Handoff<SLOTS> {
    /// Overwrites the slots that were written (the others still hold zeros) and the message.
    fn drop(&mut self) {
        let written = (*self.published.get_mut()).min(SLOTS);
        for word in self.slots[..written]
            .iter_mut()
            .flatten()
            .chain(&mut self.message)
        {
            word.get_mut().zeroize();
        }
    }
}

/// The producing side of a [`Handoff`].
pub(crate) struct Producer<'h, const SLOTS: usize>(&'h Handoff<SLOTS>);

impl<const SLOTS: usize> Producer<'_, SLOTS> {
    /// Publishes `entry` once a slot is free; false if the consumer has stopped.
    pub(crate) fn push(&self, entry: &Poly) -> bool {
        self.0.publish(entry)
    }

    /// Posts decapsulation's decrypted message (once per operation).
    pub(crate) fn post_message(&self, message: &[u8; 32]) {
        self.0.post_message(message)
    }
}

impl<const SLOTS: usize> Drop for Producer<'_, SLOTS> {
    fn drop(&mut self) {
        self.0.producer_stopped.store(true, Ordering::Release);
    }
}

/// The consuming side of a [`Handoff`]: the entries in the order they were published, then the
/// outputs worker 1 finished.
pub(crate) struct Consumer<'h, const SLOTS: usize> {
    handoff: &'h Handoff<SLOTS>,
    /// Outputs from this index on are worker 1's.
    first_elsewhere: usize,
}

impl<const SLOTS: usize> MatrixSource for Consumer<'_, SLOTS> {
    fn next_entry(&mut self, out: &mut Poly) {
        self.handoff.take(out)
    }

    fn computed_elsewhere(&self, output: usize) -> bool {
        output >= self.first_elsewhere
    }

    fn finished_output(&mut self, consume: &mut dyn FnMut(&mut Poly)) {
        let mut output = Poly::ZERO;
        self.handoff.take(&mut output);
        consume(&mut output);
        output.zeroize();
    }
}

impl<const SLOTS: usize> Drop for Consumer<'_, SLOTS> {
    fn drop(&mut self) {
        self.handoff.consumer_stopped.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entry `k` of a test stream: every coefficient differs between entries and positions.
    fn entry(k: usize) -> Poly {
        let mut poly = Poly::ZERO;
        for (i, c) in poly.coeffs.iter_mut().enumerate() {
            *c = (k.wrapping_mul(40_503) ^ i.wrapping_mul(2_654_435_761)) as u16;
        }
        poly
    }

    /// A wait that yields to the scheduler, and now and then sleeps a little, so that the two
    /// threads interleave differently from one run to the next.
    fn jittery_wait() {
        use std::sync::atomic::AtomicU32;
        static TURN: AtomicU32 = AtomicU32::new(0);
        let turn = TURN.fetch_add(1, Ordering::Relaxed);
        if turn & 63 == 0 {
            std::thread::sleep(std::time::Duration::from_micros(u64::from(turn & 15)));
        } else {
            std::thread::yield_now();
        }
    }

    fn stream_through<const SLOTS: usize>(count: usize, wait: fn()) {
        let ring = Handoff::<SLOTS>::new(wait);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let producer = ring.producer();
                for k in 0..count {
                    assert!(producer.push(&entry(k)));
                }
            });
            let mut consumer = ring.consumer(usize::MAX);
            let mut got = Poly::ZERO;
            for k in 0..count {
                consumer.next_entry(&mut got);
                assert_eq!(got.coeffs, entry(k).coeffs, "entry {k} with {SLOTS} slots");
            }
        });
    }

    /// Every entry arrives whole and in order, whatever the interleaving: many operations'
    /// worth of entries through rings of each size, with spinning and with jittery waits.
    /// (Under Miri, which explores weak-memory orderings, a few hundred entries.)
    #[test]
    fn entries_arrive_whole_and_in_order() {
        let count = if cfg!(miri) { 40 } else { 20_000 };
        stream_through::<1>(count, jittery_wait);
        stream_through::<2>(count, jittery_wait);
        stream_through::<4>(count, jittery_wait);
        stream_through::<2>(count, core::hint::spin_loop);
        stream_through::<16>(count, core::hint::spin_loop);
    }

    /// A ring of L² slots needs no second worker: all entries first, then all takes.
    #[test]
    fn a_ring_of_the_whole_matrix_runs_in_turn() {
        let ring = Handoff::<16>::new(|| unreachable!("nothing waits"));
        let producer = ring.producer();
        for k in 0..16 {
            assert!(producer.push(&entry(k)));
        }
        let mut consumer = ring.consumer(usize::MAX);
        let mut got = Poly::ZERO;
        for k in 0..16 {
            consumer.next_entry(&mut got);
            assert_eq!(got.coeffs, entry(k).coeffs);
        }
    }

    /// A producer facing a consumer that stopped gives up instead of waiting forever.
    #[test]
    fn a_stopped_consumer_releases_the_producer() {
        let ring = Handoff::<1>::new(std::thread::yield_now);
        drop(ring.consumer(usize::MAX));
        let producer = ring.producer();
        assert!(producer.push(&entry(0)));
        assert!(!producer.push(&entry(1)));
    }

    /// A consumer waiting for an entry that a stopped producer never published panics instead
    /// of waiting forever.
    #[test]
    #[should_panic(expected = "the matrix worker stopped")]
    fn a_stopped_producer_releases_the_consumer() {
        let ring = Handoff::<2>::new(std::thread::yield_now);
        {
            let producer = ring.producer();
            assert!(producer.push(&entry(0)));
        }
        let mut consumer = ring.consumer(usize::MAX);
        let mut got = Poly::ZERO;
        consumer.next_entry(&mut got);
        consumer.next_entry(&mut got);
    }
}
