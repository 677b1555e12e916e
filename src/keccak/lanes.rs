//! The lane runner: independent jobs spread over the states of a multi-way permutation
//! ([`Multi`]). Where all lanes of a permutation cost about as much as one (vector
//! implementations), `W` independent hashes take as many permutations as the longest of them
//! instead of their sum: the matrix stream, G and the secret stream, and H(ct) of one
//! decapsulation, or every hash of a batch.
//!
//! Each state runs one job at a time on the sponge engine ([`super::sponge`]); a state whose job
//! is done takes that job's follow-up ([`super::Then`]: the secret stream from G's output), else
//! the next job, cleared first. The schedule depends only on the jobs' lengths, which are
//! public.

use super::Job;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use super::multi::KeccakX8;
use super::multi::{KeccakX4, MultiState, Permutation, X4};
use super::sponge::Sponge;

/// Several states at once: one multi-way permutation and the lane runner on it.
#[derive(Clone, Copy, Debug)]
pub struct Multi(Ways);

#[derive(Clone, Copy, Debug)]
enum Ways {
    // Off x86 only the portable four-way permutation exists, which only tests and benchmarks
    // run (`Multi::all`).
    #[cfg_attr(
        not(any(test, feature = "hazmat", target_arch = "x86", target_arch = "x86_64")),
        allow(dead_code)
    )]
    X4(KeccakX4),
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    X8(KeccakX8),
}

impl Multi {
    /// The fastest vector four-way permutation on this CPU (AVX-512VL, else AVX2, within the
    /// instruction-set cap); `None` without one (the portable four-way permutation is no faster
    /// than four single ones).
    pub fn x4() -> Option<Self> {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if let Some(keccak) = KeccakX4::avx512().or_else(KeccakX4::avx2) {
            return Some(Self(Ways::X4(keccak)));
        }
        None
    }

    /// The four-way permutation when its four lanes cost no more than one single-state
    /// permutation: the AVX-512 one (within the cap); `None` elsewhere. Then even one operation's
    /// independent streams gain from sharing lanes.
    pub fn x4_at_single_cost() -> Option<Self> {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if let Some(keccak) = KeccakX4::avx512() {
            return Some(Self(Ways::X4(keccak)));
        }
        None
    }

    /// The four-way permutation for the independent jobs of one operation: the AVX-512 one
    /// (four lanes at the cost of one state: sharing always pays), else the AVX2 one, whose four
    /// lanes cost more than one single-state permutation but less than two, so that
    /// [`Multi::run_or_one_at_a_time`] shares them only while two jobs or more run (within the
    /// instruction-set cap); `None` without a vector four-way permutation.
    pub fn x4_for_operation() -> Option<Self> {
        Self::x4_at_single_cost().or_else(Self::x4)
    }

    /// Runs every job as [`Multi::run`] does, or, where that takes fewer permutations' time, one
    /// at a time on `single`. Where all lanes cost more than one single-state permutation (AVX2:
    /// `c` of them, 1 < `c` < 2), the lanes run only while two jobs or more are left: the last one
    /// finishes on `single` (one busy lane of a Saber matrix stream would cost `c` per block).
    /// Lanes then cost `c` per permutation of all lanes plus the last job's remaining
    /// permutations, one at a time the sum of the jobs' permutations. Decided on the first
    /// `JOBS_WEIGHED` (8) jobs (more always share lanes) from their public lengths alone.
    #[inline]
    pub fn run_or_one_at_a_time<'a>(
        self,
        single: super::Single,
        jobs: impl IntoIterator<Item = Job<'a>>,
    ) {
        self.run_or_one_at_a_time_jobs(single, &mut jobs.into_iter());
    }

    /// [`Multi::run_or_one_at_a_time`] on jobs behind `dyn` [`Jobs`].
    fn run_or_one_at_a_time_jobs<'a>(self, single: super::Single, jobs: &mut dyn Jobs<'a>) {
        let Some((times, per)) = self.lane_cost() else {
            // At single cost: lanes always pay, to the last job.
            return self.run_jobs(jobs, None);
        };
        let Some(job) = jobs.next_job() else {
            return;
        };
        let Some(second) = jobs.next_job() else {
            // One job: nothing to share the lanes with (most of an operation's hash calls).
            return single.run(job);
        };
        let mut first: [Option<Job<'a>>; JOBS_WEIGHED] = [const { None }; JOBS_WEIGHED];
        (first[0], first[1]) = (Some(job), Some(second));
        for slot in first.iter_mut().skip(2) {
            *slot = jobs.next_job();
        }
        let weighed = first.iter().flatten().map(Job::permutations);
        if first[JOBS_WEIGHED - 1].is_none() && !lanes_pay((times, per), weighed) {
            first.into_iter().flatten().for_each(|job| single.run(job));
        } else {
            let rest = core::iter::from_fn(|| jobs.next_job());
            self.run_jobs(&mut first.into_iter().flatten().chain(rest), Some(single));
        }
    }

    /// What one permutation of all lanes costs in single-state permutations, as `(times, per)`
    /// = times / per; `None` where it is one (AVX-512, eight-way). AVX2: 4/3 (BENCHMARKS.md,
    /// "x86 without AVX-512": 1.3× on a Zen-class core, 1.9× on a Sapphire Rapids-class one
    /// against the streamed BMI permutation); for two or three jobs any cost below 2 gives the
    /// same schedule (lanes until one job is left), so the figure need not be exact. The
    /// portable four-way permutation (tests only): 4.
    fn lane_cost(self) -> Option<(usize, usize)> {
        match self.0 {
            Ways::X4(KeccakX4::Portable) => Some((4, 1)),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Ways::X4(KeccakX4::Avx2(_)) => Some((4, 3)),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Ways::X4(KeccakX4::Avx512(_)) | Ways::X8(_) => None,
        }
    }

    /// The eight-way permutation (AVX-512), if this CPU has it within the cap.
    pub fn x8() -> Option<Self> {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if let Some(keccak) = KeccakX8::avx512() {
            return Some(Self(Ways::X8(keccak)));
        }
        None
    }

    /// Every multi-way permutation this CPU runs, the portable four-way one first (for tests and
    /// benchmarks).
    #[cfg(any(test, feature = "hazmat"))]
    pub fn all() -> impl Iterator<Item = Self> {
        let all = KeccakX4::all().map(|keccak| Self(Ways::X4(keccak)));
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        let all = all.chain(Self::x8());
        all
    }

    /// The number of states permuted together.
    pub fn ways(self) -> usize {
        match self.0 {
            Ways::X4(_) => X4,
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Ways::X8(_) => 8,
        }
    }

    /// `"portable"`, `"avx2"`, `"avx512"` (four-way) or `"avx512x8"`.
    #[cfg(any(test, feature = "hazmat"))]
    pub fn name(self) -> &'static str {
        match self.0 {
            Ways::X4(keccak) => keccak.name(),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Ways::X8(_) => "avx512x8",
        }
    }

    /// Runs every job on the lanes; on return each output holds its hash. The schedule depends
    /// only on the jobs' (public) lengths.
    #[cfg(any(test, feature = "hazmat"))]
    #[inline]
    pub fn run<'a>(self, jobs: impl IntoIterator<Item = Job<'a>>) {
        self.run_jobs(&mut jobs.into_iter(), None);
    }

    /// [`Multi::run`] on jobs behind `dyn` [`Jobs`]; the last job left finishes on `last`, if
    /// given.
    fn run_jobs<'a>(self, jobs: &mut dyn Jobs<'a>, last: Option<super::Single>) {
        match self.0 {
            Ways::X4(keccak) => run_on::<X4, _>(keccak, jobs, last),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Ways::X8(keccak) => run_on::<8, _>(keccak, jobs, last),
        }
    }

    /// Applies the permutation `times` times to each of `states` (`ways()` of them: fewer are
    /// completed with zero states, more are left alone), converting to and from the lanes once,
    /// so that benchmarks can take the cost of one permutation from many.
    #[cfg(any(test, feature = "hazmat"))]
    pub fn permute(self, states: &mut [[u64; 25]], times: usize) {
        fn on<const W: usize>(keccak: impl Permutation<W>, states: &mut [[u64; 25]], times: usize) {
            let mut multi = MultiState::<W>::new();
            for (lane, state) in states.iter().enumerate().take(W) {
                for (word, &value) in multi.lanes.iter_mut().zip(state) {
                    word[lane] = value;
                }
            }
            for _ in 0..times {
                keccak.permute(&mut multi);
            }
            for (lane, state) in states.iter_mut().enumerate().take(W) {
                for (word, value) in multi.lanes.iter().zip(state) {
                    *value = word[lane];
                }
            }
        }
        match self.0 {
            Ways::X4(keccak) => on(keccak, states, times),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Ways::X8(keccak) => on(keccak, states, times),
        }
    }
}

/// The jobs of one run, taken one at a time through `dyn`: the runner is then compiled once, not
/// once per caller's iterator type (the callers are generic over the parameter set and the
/// backend, and so are their iterators; a copy per type was a third of the test binaries' code).
/// One method, not `dyn Iterator`, whose vtable would instantiate `nth`, `advance_by` and
/// `size_hint` per type as well.
trait Jobs<'a> {
    fn next_job(&mut self) -> Option<Job<'a>>;
}

impl<'a, I: Iterator<Item = Job<'a>>> Jobs<'a> for I {
    #[inline]
    fn next_job(&mut self) -> Option<Job<'a>> {
        self.next()
    }
}

/// How many jobs [`Multi::run_or_one_at_a_time`] weighs (one operation has at most three lane
/// jobs; a batch's group more).
const JOBS_WEIGHED: usize = 8;

/// Whether at most `JOBS_WEIGHED` jobs of these permutation counts take less time on four lanes
/// that cost `times / per` single-state permutations, the last job left finishing on a single
/// state (as [`run_on`] schedules them), than one at a time.
fn lanes_pay((times, per): (usize, usize), permutations: impl Iterator<Item = usize>) -> bool {
    let mut queue = [0; JOBS_WEIGHED];
    let mut queued = 0;
    for (slot, n) in queue.iter_mut().zip(permutations) {
        *slot = n;
        queued += 1;
    }
    let total: usize = queue.iter().sum();
    // Permutations of all lanes, then the last job's rest on a single state.
    let (mut shared, mut next, mut lanes) = (0, 0, [0; X4]);
    let last = loop {
        for lane in lanes.iter_mut().filter(|lane| **lane == 0) {
            if next < queued {
                *lane = queue[next];
                next += 1;
            }
        }
        let busy = lanes.iter().filter(|&&n| n > 0);
        if busy.clone().count() <= 1 {
            break lanes.iter().sum::<usize>();
        }
        // Until the first busy lane's job ends.
        let step = busy.min().copied().unwrap_or(0);
        shared += step;
        lanes.iter_mut().for_each(|n| *n = n.saturating_sub(step));
    };
    per * total > times * shared + per * last
}

/// Not inlined: the lane states (800 bytes and more) live only in this call, never in the frame
/// of [`Multi::run`]'s callers, which also run one-state hashes below them (low-memory mode).
/// With `last`, the last job left (once no lane has another one and no job is waiting)
/// finishes on that single-state implementation instead of one lane of all.
#[inline(never)]
fn run_on<'a, const W: usize, K: Permutation<W>>(
    keccak: K,
    jobs: &mut dyn Jobs<'a>,
    last: Option<super::Single>,
) {
    let mut state = MultiState::<W>::new();
    // Per lane: its job, its sponge and the output bytes written so far.
    let mut lanes: [Option<(Job<'a>, Sponge, usize)>; W] = [const { None }; W];
    // Once the jobs ran out, idle lanes stop asking (a call through the adapters per idle lane
    // and permutation).
    let mut more_jobs = true;
    loop {
        for (lane, slot) in lanes.iter_mut().enumerate() {
            if slot.is_none() && more_jobs {
                let Some(job) = jobs.next_job() else {
                    more_jobs = false;
                    continue;
                };
                *slot = Some(start(&mut state, lane, job));
            }
        }
        // Every empty lane asked for a job above: with one busy lane, none is waiting.
        let mut busy = lanes
            .iter_mut()
            .enumerate()
            .filter(|(_, slot)| slot.is_some());
        match (busy.next(), busy.next(), last) {
            (None, _, _) => break,
            (Some((lane, slot)), None, Some(single)) => {
                if let Some((job, sponge, written)) = slot.take() {
                    single.resume(job, sponge, &state.lane(lane), written);
                }
                break;
            }
            _ => {}
        }
        for (lane, slot) in lanes.iter_mut().enumerate() {
            if let Some((job, sponge, _)) = slot
                && !sponge.is_squeezing()
            {
                sponge.absorb_next(&mut state.lane(lane), &job.input);
            }
        }
        keccak.permute(&mut state);
        for (lane, slot) in lanes.iter_mut().enumerate() {
            let Some((job, sponge, written)) = slot else {
                continue;
            };
            sponge.permuted();
            if !sponge.is_squeezing() {
                continue;
            }
            *written += sponge.squeeze(&state.lane(lane), &mut job.output[*written..]);
            if *written < job.output.len() {
                continue;
            }
            // Done: the follow-up, if any, starts on this lane at the next permutation.
            *slot = slot
                .take()
                .and_then(|(job, _, _)| job.into_next())
                .map(|next| start(&mut state, lane, next));
        }
    }
}

/// `job` started on state `lane`, cleared: the job, its sponge and no output written yet.
fn start<'a, const W: usize>(
    state: &mut MultiState<W>,
    lane: usize,
    job: Job<'a>,
) -> (Job<'a>, Sponge, usize) {
    state.clear(lane);
    let sponge = Sponge::new(job.function);
    (job, sponge, 0)
}

#[cfg(test)]
mod tests {
    use super::super::{Function, Then};
    use super::*;
    use sha3::Digest;
    use shake::{ExtendableOutput, Update, XofReader};

    /// Mixed jobs (more jobs than lanes, so states are reused, and lengths around every rate)
    /// against the `sha3` and `shake` crates, on every multi-way permutation.
    #[test]
    fn jobs_match_the_sha3_and_shake_crates() {
        let message: [u8; 1500] = core::array::from_fn(|i| (i * 13 + 5) as u8);
        // (function, head, tail, output length): input = message[..head] ‖ the next tail bytes.
        let mut cases = [(Function::Shake128, 0, 0, 0); 8 + 3 * 12];
        cases[..8].copy_from_slice(&[
            (Function::Shake128, 32, 0, 3744),
            (Function::Shake128, 32, 2, 416),
            (Function::Sha3_256, 1088, 0, 32),
            (Function::Sha3_512, 64, 0, 64),
            (Function::Shake128, 0, 0, 168),
            (Function::Sha3_256, 136, 1, 32),
            (Function::Shake128, 167, 1, 1000),
            (Function::Sha3_256, 0, 0, 32),
        ]);
        let mut filled = 8;
        for function in [Function::Sha3_256, Function::Sha3_512, Function::Shake128] {
            for len in [1, 33, 71, 72, 73, 135, 136, 137, 167, 168, 169, 400] {
                cases[filled] = (function, len, 0, 200);
                filled += 1;
            }
        }
        for keccak in Multi::all() {
            let mut outputs = [[0u8; 3744]; 8 + 3 * 12];
            keccak.run(outputs.iter_mut().zip(cases.iter()).map(
                |(out, &(function, head, tail, len))| {
                    let len = match function {
                        Function::Sha3_256 => 32,
                        Function::Sha3_512 => 64,
                        Function::Shake128 => len,
                    };
                    Job {
                        function,
                        input: [&message[..head], &message[head..head + tail]],
                        output: &mut out[..len],
                        then: None,
                    }
                },
            ));
            for (out, &(function, head, tail, len)) in outputs.iter().zip(cases.iter()) {
                let input = &message[..head + tail];
                let mut expected = [0u8; 3744];
                let len = match function {
                    Function::Shake128 => {
                        let mut x = shake::Shake128::default();
                        x.update(input);
                        x.finalize_xof().read(&mut expected[..len]);
                        len
                    }
                    Function::Sha3_256 => {
                        expected[..32].copy_from_slice(&sha3::Sha3_256::digest(input));
                        32
                    }
                    Function::Sha3_512 => {
                        expected[..64].copy_from_slice(&sha3::Sha3_512::digest(input));
                        64
                    }
                };
                assert_eq!(
                    out[..len],
                    expected[..len],
                    "{} {function:?} {head}+{tail}",
                    keccak.name()
                );
            }
        }
    }

    /// Lanes in step, as in a batch: SHAKE128 streams of equal input length squeezing blocks
    /// together, some ending mid-block or early, against the `shake` crate on every path.
    #[test]
    fn lanes_in_step_match_the_shake_crate() {
        let seeds: [[u8; 32]; 11] = core::array::from_fn(|i| [i as u8 + 1; 32]);
        // Per job: output length (multiples of the rate, a partial last block, shorter ones).
        let lengths = [3744, 3744, 3744, 3744, 3360, 3744, 640, 3744, 168, 3745, 1];
        for keccak in Multi::all() {
            let mut outputs = [[0u8; 3745]; 11];
            keccak.run(
                outputs
                    .iter_mut()
                    .zip(&seeds)
                    .zip(lengths)
                    .map(|((out, seed), len)| Job::shake128(seed, &mut out[..len])),
            );
            for ((out, seed), len) in outputs.iter().zip(&seeds).zip(lengths) {
                let mut expected = [0u8; 3745];
                let mut x = shake::Shake128::default();
                x.update(seed);
                x.finalize_xof().read(&mut expected[..len]);
                assert_eq!(out[..len], expected[..len], "{} {len}", keccak.name());
            }
        }
    }

    /// With the last job finishing on a single state, the AVX2 lanes (4/3 of a permutation, and
    /// likewise at 19/10) pay for any two jobs or more: Saber's decapsulation (matrix, secret and
    /// H(c): 23, 5 and 9 permutations: 9 shared, then 14 single), its key generation (23 and 5: 5
    /// shared, then 18), and a long stream with a short one; never for one job. The portable lanes
    /// (4 single permutations) never pay.
    #[test]
    fn lanes_pay_where_the_shorter_jobs_outweigh_their_cost() {
        for avx2 in [(4, 3), (19, 10)] {
            assert!(lanes_pay(avx2, [23, 5, 9].into_iter()));
            assert!(lanes_pay(avx2, [23, 5].into_iter()));
            assert!(lanes_pay(avx2, [10, 4].into_iter()));
            assert!(lanes_pay(avx2, [40, 5].into_iter()));
            assert!(!lanes_pay(avx2, [40].into_iter()));
        }
        let portable = (4, 1);
        assert!(!lanes_pay(portable, [23, 5, 9].into_iter()));
        assert!(!lanes_pay(portable, [9, 9, 9, 9].into_iter()));
        assert!(lanes_pay((1, 1), [40, 1].into_iter()));
        assert!(!lanes_pay((1, 1), [40].into_iter()));
    }

    /// Whichever way the jobs run, they give the crates' hashes: on every multi-way permutation
    /// with every single-state one for the last job, which the AVX2 lanes hand over mid-squeeze
    /// (a long stream beside short ones, ending mid-block or not) or mid-absorb (a long input
    /// beside a short stream); one job alone runs on the single state from the start.
    #[test]
    fn run_or_one_at_a_time_matches_the_sha3_and_shake_crates() {
        let message: [u8; 1500] = core::array::from_fn(|i| (i * 7 + 1) as u8);
        // (function, input length, output length) per job; 0: no job.
        let cases: [[(Function, usize, usize); 3]; 5] = [
            [
                (Function::Shake128, 32, 3744),
                (Function::Shake128, 32, 768),
                (Function::Shake128, 0, 0),
            ],
            [
                (Function::Shake128, 32, 3744),
                (Function::Shake128, 33, 768),
                (Function::Sha3_256, 1088, 32),
            ],
            [
                (Function::Shake128, 32, 1000),
                (Function::Sha3_512, 64, 64),
                (Function::Shake128, 0, 0),
            ],
            [
                (Function::Sha3_256, 1500, 32),
                (Function::Shake128, 32, 100),
                (Function::Shake128, 0, 0),
            ],
            [
                (Function::Shake128, 32, 500),
                (Function::Shake128, 0, 0),
                (Function::Shake128, 0, 0),
            ],
        ];
        for jobs in cases {
            for keccak in Multi::all() {
                for single in super::super::Single::all() {
                    let mut outputs = [[0u8; 3744]; 3];
                    keccak.run_or_one_at_a_time(
                        single,
                        outputs
                            .iter_mut()
                            .zip(jobs)
                            .filter(|(_, (_, _, len))| *len > 0)
                            .map(|(out, (function, input, len))| Job {
                                function,
                                input: [&message[..input], &[]],
                                output: &mut out[..len],
                                then: None,
                            }),
                    );
                    for (out, (function, input, len)) in outputs.iter().zip(jobs) {
                        let input = &message[..input];
                        let mut expected = [0u8; 3744];
                        match function {
                            Function::Shake128 => {
                                let mut x = shake::Shake128::default();
                                x.update(input);
                                x.finalize_xof().read(&mut expected[..len]);
                            }
                            Function::Sha3_256 => {
                                expected[..32].copy_from_slice(&sha3::Sha3_256::digest(input))
                            }
                            Function::Sha3_512 => {
                                expected[..64].copy_from_slice(&sha3::Sha3_512::digest(input))
                            }
                        }
                        assert_eq!(
                            out[..len],
                            expected[..len],
                            "{} {} {function:?} {len}",
                            keccak.name(),
                            single.name()
                        );
                    }
                }
            }
        }
    }

    /// A job with a follow-up (SHA3-512, then SHAKE128 of the digest's second half: the FO
    /// transform's G and secret stream) gives the crates' hashes wherever it runs: on the lanes
    /// beside a longer and a shorter job (the follow-up starting on the lane the first job
    /// leaves), handed over to a single state during its first job or its follow-up, or alone.
    #[test]
    fn follow_ups_match_the_sha3_and_shake_crates() {
        let message: [u8; 1500] = core::array::from_fn(|i| (i * 11 + 3) as u8);
        // (input of the chained job, its follow-up's output length, other jobs' (input, output)
        // lengths as SHAKE128 jobs; 0: none).
        type Lengths = (usize, usize);
        let cases: [(usize, usize, [Lengths; 2]); 5] = [
            (64, 768, [(32, 3744), (1088, 32)]),
            (64, 768, [(32, 100), (0, 0)]),
            (200, 500, [(32, 1), (0, 0)]),
            (64, 3000, [(32, 200), (0, 0)]),
            (64, 768, [(0, 0), (0, 0)]),
        ];
        for (input, len, others) in cases {
            let mut digest = [0u8; 64];
            digest.copy_from_slice(&sha3::Sha3_512::digest(&message[..input]));
            let mut want = [0u8; 3000];
            let mut x = shake::Shake128::default();
            x.update(&digest[32..]);
            x.finalize_xof().read(&mut want[..len]);
            for keccak in Multi::all() {
                for single in [None]
                    .into_iter()
                    .chain(super::super::Single::all().map(Some))
                {
                    let mut kr = [0u8; 64];
                    let mut stream = [0u8; 3000];
                    let mut outputs = [[0u8; 3744]; 2];
                    let chained = Job {
                        function: Function::Sha3_512,
                        input: [&message[..input], &[]],
                        output: &mut kr,
                        then: Some(Then {
                            function: Function::Shake128,
                            from: 32,
                            output: &mut stream[..len],
                        }),
                    };
                    let jobs = core::iter::once(chained).chain(
                        outputs
                            .iter_mut()
                            .zip(others)
                            .filter(|(_, (_, out))| *out > 0)
                            .map(|(out, (input, len))| Job {
                                function: Function::Shake128,
                                input: [&message[..input], &[]],
                                output: &mut out[..len],
                                then: None,
                            }),
                    );
                    match single {
                        Some(single) => keccak.run_or_one_at_a_time(single, jobs),
                        None => keccak.run(jobs),
                    }
                    let name = (keccak.name(), single.map(super::super::Single::name));
                    assert_eq!(kr, digest, "{name:?} {input}");
                    assert_eq!(stream[..len], want[..len], "{name:?} {input} {len}");
                }
            }
        }
    }

    /// `permute` of each multi-way permutation equals single permutations of its states.
    #[test]
    fn multi_permute_matches_single_states() {
        for keccak in Multi::all() {
            let mut states: [[u64; 25]; 8] =
                core::array::from_fn(|l| core::array::from_fn(|i| (l * 25 + i) as u64 * 0x9E37));
            let mut want = states;
            for state in want.iter_mut().take(keccak.ways()) {
                super::super::Single::crates().permute(state, 3);
            }
            keccak.permute(&mut states, 3);
            assert_eq!(states, want, "{}", keccak.name());
        }
    }
}
