//! The one-state driver: one job to completion, or an incremental SHAKE128 stream, on one
//! single-state permutation ([`Single`]), with the sponge engine of [`super::sponge`].

use zeroize::Zeroize;

use super::bits32;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use super::multi::{KeccakX4, MultiState, Permutation, X4};
use super::sponge::{Sponge, Words};
use super::{Function, Job};

/// The 32-bit permutation in this target's variant.
type Bits32 = bits32::ForTarget;

/// One implementation of the single-state functions: which permutation runs the sponge.
#[derive(Clone, Copy, Debug)]
pub struct Single(Permutation1);

#[derive(Clone, Copy, Debug)]
enum Permutation1 {
    /// The `keccak` crate's (the one the `sha3` and `shake` crates run).
    Crates,
    /// The 32-bit one of [`bits32`] in this target's variant.
    Bits32,
    /// One state of a four-way permutation (x86; the other three permuted along, unused).
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    LaneOfX4(KeccakX4),
    /// The 64-bit permutation of [`super::x86_bmi`], with BMI1 and BMI2 (x86).
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Bmi(crate::cpu::BmiToken),
}

impl Single {
    /// The `keccak` crate's permutation, as in the `sha3` and `shake` crates.
    pub fn crates() -> Self {
        Self(Permutation1::Crates)
    }

    /// The fastest for this target and CPU (`BENCHMARKS.md`, `embedded/RESULTS.md`): on x86
    /// CPUs with AVX-512 (within the instruction-set cap), one state of the AVX-512 four-way
    /// permutation, which costs less than one `keccak`-crate permutation; else, with BMI1 and
    /// BMI2 (within the cap: the AVX2 level), the 64-bit permutation compiled for them; on 32-bit
    /// targets the 32-bit permutation; the `keccak` crate's otherwise.
    pub fn fastest() -> Self {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if let Some(keccak) = KeccakX4::avx512() {
            return Self(Permutation1::LaneOfX4(keccak));
        }
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if let Some(token) = crate::cpu::BmiToken::detect() {
            return Self(Permutation1::Bmi(token));
        }
        if cfg!(target_pointer_width = "32") {
            Self(Permutation1::Bits32)
        } else {
            Self::crates()
        }
    }

    /// Every implementation this CPU runs (for tests and benchmarks): the `keccak` crate's, the
    /// 32-bit one, one state of each four-way permutation the CPU runs, and the BMI one.
    #[cfg(any(test, feature = "hazmat"))]
    pub fn all() -> impl Iterator<Item = Self> {
        let base = [Self::crates(), Self(Permutation1::Bits32)];
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        let base = base
            .into_iter()
            .chain(KeccakX4::all().map(|keccak| Self(Permutation1::LaneOfX4(keccak))))
            .chain(crate::cpu::BmiToken::detect().map(|token| Self(Permutation1::Bmi(token))));
        base.into_iter()
    }

    /// `"crates"`, `"bits32"`, `"bmi"`, or `"x4-<path>"` for a state of a four-way permutation.
    #[cfg(any(test, feature = "hazmat"))]
    pub fn name(self) -> &'static str {
        match self.0 {
            Permutation1::Crates => "crates",
            Permutation1::Bits32 => "bits32",
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Permutation1::LaneOfX4(keccak) => match keccak.name() {
                "avx512" => "x4-avx512",
                "avx2" => "x4-avx2",
                _ => "x4-portable",
            },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Permutation1::Bmi(_) => "bmi",
        }
    }

    /// Computes `job` to completion, then its follow-up, if any.
    pub fn run(self, job: Job<'_>) {
        if job.then.is_some() {
            return self.run_chained(job);
        }
        self.hash(job.function, &job.input, job.output);
    }

    /// [`Single::run`] of a job with a follow-up. Not inlined: the job held across its hash
    /// stays out of the frame of `run`, which every hash of the microcontrollers passes through.
    #[inline(never)]
    fn run_chained(self, job: Job<'_>) {
        self.hash(job.function, &job.input, &mut *job.output);
        if let Some(next) = job.into_next() {
            self.run(next);
        }
    }

    /// Finishes `job` on this implementation from where a lane of a multi-way permutation left
    /// it: `sponge` between two permutations, `from` the lane's state, the first `written`
    /// output bytes already out ([`super::Multi::run_or_one_at_a_time`], once the job is the
    /// last one running); then its follow-up, if any.
    pub(super) fn resume(self, job: Job<'_>, sponge: Sponge, from: &impl Words, written: usize) {
        let (input, output) = (&job.input, &mut job.output[written..]);
        match self.0 {
            Permutation1::Crates => resume_on(|| State64::new(Crates), from, sponge, input, output),
            Permutation1::Bits32 => resume_on(Bits32::new, from, sponge, input, output),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Permutation1::LaneOfX4(keccak) => {
                resume_on(|| LaneOfX4::new(keccak), from, sponge, input, output)
            }
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Permutation1::Bmi(token) => {
                resume_on(|| State64::new(token), from, sponge, input, output)
            }
        }
        if let Some(next) = job.into_next() {
            self.run(next);
        }
    }

    /// `function` of the concatenation of `parts` into all of `output`. The state lives in
    /// this call only (in a frame of its own, not inlined into the caller's).
    pub fn hash(self, function: Function, parts: &[&[u8]], output: &mut [u8]) {
        match self.0 {
            Permutation1::Crates => hash_on(|| State64::new(Crates), function, parts, output),
            Permutation1::Bits32 => hash_on(Bits32::new, function, parts, output),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Permutation1::LaneOfX4(keccak) => {
                hash_on(|| LaneOfX4::new(keccak), function, parts, output)
            }
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Permutation1::Bmi(token) => hash_on(|| State64::new(token), function, parts, output),
        }
    }

    /// Starts `stream` as the SHAKE128 output stream of the concatenation of `parts`, where it
    /// is: its words are written in place from constants and absorbed there, never built aside
    /// and copied (in the low-memory mode a stream started this way sits beside the products,
    /// and two 208-byte temporaries in this frame were a peak).
    pub fn start_shake128(self, stream: &mut Shake128Stream, parts: &[&[u8]]) {
        const CRATES: StreamState = StreamState::Crates(State64::new(Crates), 0);
        const BITS32: StreamState = StreamState::Bits32(Bits32::zero_words(), 0);
        stream.0 = match self.0 {
            Permutation1::Crates => CRATES,
            Permutation1::Bits32 => BITS32,
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Permutation1::LaneOfX4(keccak) => StreamState::LaneOfX4(LaneOfX4::new(keccak), 0),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Permutation1::Bmi(token) => StreamState::Bmi(State64::new(token), 0),
        };
        if let StreamState::Bits32(state, _) = &mut stream.0 {
            state.complement_lanes();
        }
        stream.absorb(parts);
    }

    /// A SHAKE128 output stream of the concatenation of `parts`: [`Self::start_shake128`] on a
    /// new stream (the crate starts its streams in place).
    #[cfg(any(test, feature = "hazmat"))]
    pub fn shake128(self, parts: &[&[u8]]) -> Shake128Stream {
        let mut stream = Shake128Stream::UNSTARTED;
        self.start_shake128(&mut stream, parts);
        stream
    }

    /// Applies Keccak-f\[1600\] `times` times to `state` (word `x + 5y` is lane (x, y)) with
    /// this implementation's permutation, converting to and from its layout once (benchmarks
    /// take the cost of one permutation from many).
    #[cfg(any(test, feature = "hazmat"))]
    pub fn permute(self, state: &mut [u64; 25], times: usize) {
        fn on<S: Single1>(mut s: S, state: &mut [u64; 25], times: usize) {
            for (i, &word) in state.iter().enumerate() {
                s.xor_word(i, word);
            }
            for _ in 0..times {
                s.permute();
            }
            for (i, word) in state.iter_mut().enumerate() {
                *word = s.word(i);
            }
        }
        match self.0 {
            Permutation1::Crates => keccak::Keccak::new().with_f1600(|f1600| {
                for _ in 0..times {
                    f1600(state);
                }
            }),
            Permutation1::Bits32 => on(Bits32::new(), state, times),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Permutation1::LaneOfX4(keccak) => on(LaneOfX4::new(keccak), state, times),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Permutation1::Bmi(token) => on(State64::new(token), state, times),
        }
    }
}

/// A single-state permutation with its state, as the driver needs it. Wiped on drop.
trait Single1: Words {
    fn permute(&mut self);
}

/// `function` of `parts` into `output` on the state `make` returns, in a frame of its own.
#[inline(never)]
fn hash_on<S: Single1>(
    make: impl FnOnce() -> S,
    function: Function,
    parts: &[&[u8]],
    output: &mut [u8],
) {
    let mut state = make();
    let mut sponge = Sponge::new(function);
    absorb(&mut state, &mut sponge, parts);
    squeeze(&mut state, &mut sponge, output);
}

/// The rest of a job on the state `make` returns (fresh, all zero), into which the words of
/// `from` are copied first; `sponge` tells where the job stands, `output` is what is left of it.
#[inline(never)]
fn resume_on<S: Single1>(
    make: impl FnOnce() -> S,
    from: &impl Words,
    mut sponge: Sponge,
    input: &[&[u8]],
    output: &mut [u8],
) {
    let mut state = make();
    for index in 0..25 {
        state.xor_word(index, from.word(index));
    }
    absorb(&mut state, &mut sponge, input);
    squeeze(&mut state, &mut sponge, output);
}

/// Absorbs all of `parts` and the padding; the state then holds the first output block.
#[inline(always)]
fn absorb<S: Single1>(state: &mut S, sponge: &mut Sponge, parts: &[&[u8]]) {
    while !sponge.is_squeezing() {
        sponge.absorb_next(state, parts);
        state.permute();
        sponge.permuted();
    }
}

/// The next `out.len()` output bytes.
#[inline(always)]
fn squeeze<S: Single1>(state: &mut S, sponge: &mut Sponge, mut out: &mut [u8]) {
    while !out.is_empty() {
        if sponge.block_read() {
            state.permute();
            sponge.permuted();
        }
        let taken = sponge.squeeze(state, out);
        out = &mut out[taken..];
    }
}

/// A permutation of 25 plain 64-bit words (the state of [`State64`]).
trait Kernel64: Copy {
    fn permute(self, words: &mut [u64; 25]);
}

/// The `keccak` crate's permutation.
#[derive(Clone, Copy)]
struct Crates;

impl Kernel64 for Crates {
    #[inline(always)]
    fn permute(self, words: &mut [u64; 25]) {
        keccak::Keccak::new().with_f1600(|f1600| f1600(words));
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
impl Kernel64 for crate::cpu::BmiToken {
    #[inline(always)]
    fn permute(self, words: &mut [u64; 25]) {
        super::x86_bmi::permute(self, words);
    }
}

/// A state of 25 plain words and the permutation `K` of them (a zero-sized proof or marker).
struct State64<K> {
    words: [u64; 25],
    kernel: K,
}

impl<K> State64<K> {
    const fn new(kernel: K) -> Self {
        Self {
            words: [0; 25],
            kernel,
        }
    }
}

impl<K> Words for State64<K> {
    #[inline(always)]
    fn xor_word(&mut self, index: usize, value: u64) {
        self.words[index] ^= value;
    }

    #[inline(always)]
    fn word(&self, index: usize) -> u64 {
        self.words[index]
    }

    #[inline(always)]
    fn xor_words(&mut self, first: usize, words: &[[u8; 8]]) {
        for (lane, word) in self.words[first..].iter_mut().zip(words) {
            *lane ^= u64::from_le_bytes(*word);
        }
    }

    #[inline(always)]
    fn read_words(&self, first: usize, out: &mut [[u8; 8]]) {
        // A whole SHAKE128 block (the streams' blocks) in thirds of known length, which the
        // compiler writes out: a copy of any length, or of the whole block, is a `memcpy` call.
        const THIRD: usize = 7;
        const { assert!(24 * THIRD == super::SHAKE128_RATE) };
        if let (0, Ok(block)) = (first, <&mut [[u8; 8]; 3 * THIRD]>::try_from(&mut *out)) {
            let words = self.words.as_chunks::<THIRD>().0;
            let thirds = block.as_chunks_mut::<THIRD>().0;
            copy_words(&words[0], &mut thirds[0]);
            copy_words(&words[1], &mut thirds[1]);
            copy_words(&words[2], &mut thirds[2]);
            return;
        }
        copy_words(&self.words[first..], out);
    }
}

/// `words` as little-endian bytes into `out`, as many as both hold.
#[inline(always)]
fn copy_words(words: &[u64], out: &mut [[u8; 8]]) {
    for (lane, word) in words.iter().zip(out) {
        *word = lane.to_le_bytes();
    }
}

impl<K: Kernel64> Single1 for State64<K> {
    /// Not inlined (the crate's permutation would be, with its temporaries, into every frame
    /// that handles a stream of any variant).
    #[inline(never)]
    fn permute(&mut self) {
        self.kernel.permute(&mut self.words);
    }
}

impl<K> Drop for State64<K> {
    fn drop(&mut self) {
        self.words.as_mut_slice().zeroize();
    }
}

impl<const C: bool, const L: bool> Single1 for bits32::State<C, L> {
    #[inline]
    fn permute(&mut self) {
        bits32::State::permute(self);
    }
}

/// State 0 of a four-way state and its permutation.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
struct LaneOfX4 {
    keccak: KeccakX4,
    state: MultiState<X4>,
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
impl LaneOfX4 {
    fn new(keccak: KeccakX4) -> Self {
        Self {
            keccak,
            state: MultiState::new(),
        }
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
impl Words for LaneOfX4 {
    #[inline(always)]
    fn xor_word(&mut self, index: usize, value: u64) {
        self.state.lanes[index][0] ^= value;
    }

    #[inline(always)]
    fn word(&self, index: usize) -> u64 {
        self.state.lanes[index][0]
    }

    #[inline(always)]
    fn xor_words(&mut self, first: usize, words: &[[u8; 8]]) {
        self.state.lane(0).xor_words(first, words);
    }

    #[inline(always)]
    fn read_words(&self, first: usize, out: &mut [[u8; 8]]) {
        for (state, word) in self.state.lanes[first..].iter().zip(out) {
            *word = state[0].to_le_bytes();
        }
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
impl Single1 for LaneOfX4 {
    #[inline]
    fn permute(&mut self) {
        self.keccak.permute(&mut self.state);
    }
}

/// A SHAKE128 output stream from [`Single::shake128`], read in pieces of any length. Wiped on
/// drop. On 32-bit targets no larger than the `shake` crate's reader (a 200-byte state and its
/// position): the low-memory figures count on it, hence the position inside each variant.
pub struct Shake128Stream(StreamState);

impl Shake128Stream {
    /// A stream for [`Single::start_shake128`] to start (before that, the stream of the zero
    /// state).
    pub const UNSTARTED: Self = Self(StreamState::Crates(State64::new(Crates), 0));
}

/// A squeezing state and the bytes of its current block already read.
// One state of the four-way permutation (800 bytes) exists only on x86, where the size is
// immaterial; no boxing, the crate has no allocator.
#[allow(clippy::large_enum_variant)]
enum StreamState {
    Crates(State64<Crates>, u8),
    Bits32(Bits32, u8),
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    LaneOfX4(LaneOfX4, u8),
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Bmi(State64<crate::cpu::BmiToken>, u8),
}

impl Shake128Stream {
    /// Absorbs `parts` and the padding into the fresh stream.
    #[inline(always)]
    fn absorb(&mut self, parts: &[&[u8]]) {
        fn start<S: Single1>(state: &mut S, read: &mut u8, parts: &[&[u8]]) {
            let mut sponge = Sponge::new(Function::Shake128);
            absorb(state, &mut sponge, parts);
            *read = sponge.read_position();
        }
        match &mut self.0 {
            StreamState::Crates(state, read) => start(state, read, parts),
            StreamState::Bits32(state, read) => start(state, read, parts),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            StreamState::LaneOfX4(state, read) => start(state, read, parts),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            StreamState::Bmi(state, read) => start(state, read, parts),
        }
    }

    /// The next `out.len()` bytes of the stream.
    pub fn read(&mut self, out: &mut [u8]) {
        fn on<S: Single1>(state: &mut S, read: &mut u8, out: &mut [u8]) {
            let mut sponge = Sponge::squeezing(Function::Shake128, *read);
            squeeze(state, &mut sponge, out);
            *read = sponge.read_position();
        }
        match &mut self.0 {
            StreamState::Crates(state, read) => on(state, read, out),
            StreamState::Bits32(state, read) => on(state, read, out),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            StreamState::LaneOfX4(state, read) => on(state, read, out),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            StreamState::Bmi(state, read) => on(state, read, out),
        }
    }
}

impl core::fmt::Debug for Shake128Stream {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Shake128Stream(<redacted>)")
    }
}

#[cfg(target_pointer_width = "32")]
const _: () = assert!(
    size_of::<Shake128Stream>() <= size_of::<[u64; 25]>() + 8,
    "the SHAKE128 stream must stay within the shake crate's reader"
);

#[cfg(test)]
mod tests {
    use super::*;
    use sha3::Digest;
    use shake::{ExtendableOutput, Update, XofReader};

    /// Inputs around every block boundary of the three rates, split into two parts at varying
    /// points, against the `sha3` and `shake` crates, on every implementation; the stream read in
    /// uneven pieces.
    #[test]
    fn matches_the_sha3_and_shake_crates() {
        let message: [u8; 700] = core::array::from_fn(|i| (i * 31 + 7) as u8);
        for single in Single::all() {
            let name = single.name();
            for len in (0..300).chain([335, 336, 337, 504, 671, 672, 673, 700]) {
                let input = &message[..len];
                let (head, tail) = input.split_at(len & 0x3F);
                let mut digest = [0u8; 32];
                single.run(Job::sha3_256_of([head, tail], &mut digest));
                assert_eq!(
                    digest[..],
                    sha3::Sha3_256::digest(input)[..],
                    "{name} {len}"
                );
                let mut digest = [0u8; 64];
                single.run(Job::sha3_512_of([head, tail], &mut digest));
                assert_eq!(
                    digest[..],
                    sha3::Sha3_512::digest(input)[..],
                    "{name} {len}"
                );
                let mut expected = [0u8; 600];
                let mut reference = shake::Shake128::default();
                reference.update(input);
                reference.finalize_xof().read(&mut expected);
                let mut whole = [0u8; 600];
                single.run(Job::shake128(input, &mut whole));
                assert_eq!(whole, expected, "{name} shake128 job {len}");
                let mut actual = [0u8; 600];
                let mut stream = Shake128Stream::UNSTARTED;
                single.start_shake128(&mut stream, &[head, tail]);
                let mut done = 0;
                for piece in [1, 0, 167, 168, 2, 169, 93].iter().cycle() {
                    let end = (done + piece).min(actual.len());
                    stream.read(&mut actual[done..end]);
                    done = end;
                    if done == actual.len() {
                        break;
                    }
                }
                assert_eq!(actual, expected, "{name} shake128 stream {len}");
            }
        }
    }

    /// Three or more parts (the hash layer's calls), some empty.
    #[test]
    fn many_parts_are_concatenated() {
        let message: [u8; 300] = core::array::from_fn(|i| (i * 5 + 1) as u8);
        let (a, rest) = message.split_at(7);
        let (b, c) = rest.split_at(150);
        for single in Single::all() {
            let mut digest = [0u8; 32];
            single.hash(Function::Sha3_256, &[a, &[], b, c], &mut digest);
            assert_eq!(
                digest[..],
                sha3::Sha3_256::digest(message)[..],
                "{}",
                single.name()
            );
        }
    }

    /// The permutation of every implementation against the `keccak` crate's, on a state that is
    /// not zero.
    #[test]
    fn every_permutation_matches_the_keccak_crate() {
        let start: [u64; 25] = core::array::from_fn(|i| (i as u64 + 1) * 0x0123_4567_89AB_CDEF);
        let mut want = start;
        keccak::Keccak::new().with_f1600(|f1600| f1600(&mut want));
        for single in Single::all() {
            let mut got = start;
            single.permute(&mut got, 1);
            assert_eq!(got, want, "{}", single.name());
        }
    }

    /// Each target's variant of the 32-bit permutation (the host runs only one as
    /// [`Single`]'s) through the sponge, against the crates.
    #[test]
    fn every_bits32_variant_matches_the_crates() {
        fn check<const C: bool, const L: bool>() {
            let message: [u8; 400] = core::array::from_fn(|i| (i * 3 + 11) as u8);
            for len in [0, 1, 71, 72, 73, 135, 136, 137, 167, 168, 169, 400] {
                let input = &message[..len];
                let mut digest = [0u8; 32];
                hash_on(
                    bits32::State::<C, L>::new,
                    Function::Sha3_256,
                    &[input],
                    &mut digest,
                );
                assert_eq!(
                    digest[..],
                    sha3::Sha3_256::digest(input)[..],
                    "{C} {L} {len}"
                );
                let mut stream = [0u8; 500];
                hash_on(
                    bits32::State::<C, L>::new,
                    Function::Shake128,
                    &[input],
                    &mut stream,
                );
                let mut expected = [0u8; 500];
                let mut reference = shake::Shake128::default();
                reference.update(input);
                reference.finalize_xof().read(&mut expected);
                assert_eq!(stream, expected, "{C} {L} {len}");
            }
        }
        check::<false, false>();
        check::<true, false>();
        check::<false, true>();
    }

    /// Today's `shake` reader is the bound on 32-bit targets (same layout on 64-bit ones).
    #[test]
    fn the_shake_reader_is_a_state_and_a_position() {
        assert_eq!(
            size_of::<shake::Shake128Reader>(),
            size_of::<[u64; 25]>() + 8
        );
    }
}
