//! The symmetric primitives of the scheme (round-3 spec §2.3): the hash H, the hash G and the XOF
//! of a variant's family ([`Symmetric`]), and the one place that decides how they run on this
//! CPU.
//!
//! Every hash an operation computes is a [`Job`]; a [`Hasher`] runs lists of them. For the SHA-3
//! family, where the CPU has a vector multi-way Keccak, independent jobs share its lanes
//! (`crate::keccak`): the hashes of a batch's operations, and the independent streams of one
//! operation (G with the secret stream as its follow-up, [`Job::then_xof`]), which the IND-CPA
//! layer then squeezes in advance
//! ([`Hasher::squeezes_in_advance`]): always where four lanes cost no more than one permutation
//! (AVX-512), and with the AVX2 lanes, which cost between one and two, wherever two jobs
//! or more run, the last one left finishing on a single state ([`Multi::run_or_one_at_a_time`]).
//! Otherwise jobs run one at a time.
//! The 90s family (SHA-2 and AES-256-CTR, `sha2aes`) has no lanes: its jobs always run one at a
//! time, and on x86, where AES-NI makes the keystream nearly free, an operation squeezes its
//! streams in advance, one call each. The bytes are the same either way.

use crate::keccak::{self, Multi, Shake128Stream, Single};
use crate::params::Symmetric;

mod sha2aes;

pub use sha2aes::Sha2AesEngines;

/// Which of a family's functions a [`Job`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Function {
    /// H: 32-byte digests (SHA3-256 or SHA-256).
    H,
    /// G: 64-byte digests (SHA3-512 or SHA-512).
    G,
    /// The XOF, any output length (SHAKE128, or the AES-256-CTR keystream of a 32-byte key).
    Xof,
}

/// One hash computation: `function` of `input[0] ‖ input[1]` into all of `output`, then, if
/// given, the XOF of part of that output ([`Job::then_xof`]).
pub(crate) struct Job<'a> {
    function: Function,
    input: [&'a [u8]; 2],
    output: &'a mut [u8],
    /// The XOF of `output[from..]` into the second slice, run once `output` is written.
    then: Option<(usize, &'a mut [u8])>,
}

impl<'a> Job<'a> {
    /// H(`input[0] ‖ input[1]`) into `output`.
    pub(crate) fn h(input: [&'a [u8]; 2], output: &'a mut [u8; 32]) -> Self {
        Self {
            function: Function::H,
            input,
            output,
            then: None,
        }
    }

    /// G(`input[0] ‖ input[1]`) into `output`, as its two 32-byte halves.
    pub(crate) fn g(input: [&'a [u8]; 2], output: &'a mut [[u8; 32]; 2]) -> Self {
        Self {
            function: Function::G,
            input,
            output: output.as_flattened_mut(),
            then: None,
        }
    }

    /// The first `output.len()` bytes of XOF(`input[0] ‖ input[1]`).
    pub(crate) fn xof(input: [&'a [u8]; 2], output: &'a mut [u8]) -> Self {
        Self {
            function: Function::Xof,
            input,
            output,
            then: None,
        }
    }

    /// The same, then the first `output.len()` bytes of XOF(this job's output from byte `from`
    /// on) into `output`: the FO transform's secret stream from the r of (K̂, r) = G(…), one job
    /// with G, so that on lanes G shares its permutation with the operation's other streams.
    pub(crate) fn then_xof(self, from: usize, output: &'a mut [u8]) -> Self {
        Self {
            then: Some((from, output)),
            ..self
        }
    }

    /// The follow-up job, once this job's output is written (the 90s family, which runs its
    /// jobs one at a time).
    fn into_next(self) -> Option<Job<'a>> {
        let (from, output) = self.then?;
        let done: &'a [u8] = self.output;
        Some(Job::xof(
            [done.get(from..).unwrap_or_default(), &[]],
            output,
        ))
    }

    /// The job as a Keccak job (the SHA-3 family).
    fn keccak(self) -> keccak::Job<'a> {
        let function = |function| match function {
            Function::H => keccak::Function::Sha3_256,
            Function::G => keccak::Function::Sha3_512,
            Function::Xof => keccak::Function::Shake128,
        };
        keccak::Job {
            function: function(self.function),
            input: self.input,
            output: self.output,
            then: self.then.map(|(from, output)| keccak::Then {
                function: function(Function::Xof),
                from,
                output,
            }),
        }
    }
}

/// Runs the hashes of an operation, or of a group of operations, on the paths chosen for this
/// CPU once, when it is made.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hasher {
    family: Symmetric,
    /// The implementation of one-state hashes and streams.
    single: Single,
    /// The multi-way Keccak whose lanes independent jobs share, if sharing pays.
    lanes: Option<Multi>,
    /// Hardware engines for the 90s family's SHA-256 and AES keystream, if the caller's backend
    /// brought them.
    engines: Option<Sha2AesEngines>,
}

impl Hasher {
    /// For one operation: its independent streams share the four-way lanes (AVX-512; with AVX2
    /// where their lengths make it pay); never for the 90s family.
    pub(crate) fn for_operation(family: Symmetric) -> Self {
        Self {
            family,
            single: Single::fastest(),
            lanes: match family {
                Symmetric::Sha3 => Multi::x4_for_operation(),
                Symmetric::Sha2Aes => None,
            },
            engines: None,
        }
    }

    /// The same with the 90s family's SHA-256 and AES keystream on `engines` (no effect on the
    /// SHA-3 family).
    pub(crate) fn with_engines(self, engines: Option<Sha2AesEngines>) -> Self {
        Self { engines, ..self }
    }

    /// For a group of `count` independent operations, on `lanes` ([`Lanes::fastest`] outside
    /// tests): four AVX-512 lanes instead of eight for up to four operations. The 90s family
    /// ignores `lanes` and hashes one operation at a time.
    pub(crate) fn for_group(family: Symmetric, lanes: Lanes, count: usize) -> Self {
        Self {
            family,
            single: Single::fastest(),
            lanes: match family {
                Symmetric::Sha3 => lanes.for_group(count).0,
                Symmetric::Sha2Aes => None,
            },
            engines: None,
        }
    }

    /// Whether an operation's XOF streams are squeezed together, in advance: as lane jobs where
    /// there are lanes, and for the 90s family always (one keystream call per stream instead of
    /// one per piece read; AES-NI). Never off x86, so that the code for it is not even built
    /// there.
    #[inline]
    pub(crate) fn squeezes_in_advance(&self) -> bool {
        cfg!(any(target_arch = "x86", target_arch = "x86_64"))
            && (self.lanes.is_some() || self.family == Symmetric::Sha2Aes)
    }

    /// Runs every job; on return each output holds its hash.
    pub(crate) fn run<'a>(&self, jobs: impl IntoIterator<Item = Job<'a>>) {
        match (self.family, self.lanes) {
            (Symmetric::Sha3, Some(keccak)) => {
                keccak.run_or_one_at_a_time(self.single, jobs.into_iter().map(Job::keccak))
            }
            _ => jobs.into_iter().for_each(|job| self.run_one(job)),
        }
    }

    /// One job on one state. Not inlined, so that the hash state lives only in this call, never
    /// in the frame of the stage that runs the job (low-memory mode).
    #[inline(never)]
    fn run_one(&self, job: Job<'_>) {
        match self.family {
            Symmetric::Sha3 => self.single.run(job.keccak()),
            Symmetric::Sha2Aes if job.then.is_some() => self.run_chained(job),
            Symmetric::Sha2Aes => sha2aes::hash(job.function, &job.input, job.output, self.engines),
        }
    }

    /// [`Hasher::run_one`] of a 90s job with a follow-up. Not inlined (as its SHA-3 counterpart
    /// in `keccak::Single::run`): the job held across its hash stays out of the frame of
    /// `run_one`, through which every hash of the microcontrollers passes.
    #[inline(never)]
    fn run_chained(&self, job: Job<'_>) {
        sha2aes::hash(job.function, &job.input, &mut *job.output, self.engines);
        if let Some(next) = job.into_next() {
            self.run_one(next);
        }
    }

    /// H of the concatenation of `parts`. Not inlined (nor is [`g`](Self::g)), so that the hash
    /// state lives only in this call, never in a caller's frame (low-memory mode).
    #[inline(never)]
    pub(crate) fn h(&self, parts: &[&[u8]]) -> [u8; 32] {
        let mut digest = [0u8; 32];
        match self.family {
            Symmetric::Sha3 => self
                .single
                .hash(keccak::Function::Sha3_256, parts, &mut digest),
            Symmetric::Sha2Aes => sha2aes::hash(Function::H, parts, &mut digest, self.engines),
        }
        digest
    }

    /// G of the concatenation of `parts` (the FO transform runs G as a job).
    #[cfg(feature = "hazmat")]
    #[inline(never)]
    pub(crate) fn g(&self, parts: &[&[u8]]) -> [u8; 64] {
        let mut digest = [0u8; 64];
        match self.family {
            Symmetric::Sha3 => self
                .single
                .hash(keccak::Function::Sha3_512, parts, &mut digest),
            Symmetric::Sha2Aes => sha2aes::hash(Function::G, parts, &mut digest, self.engines),
        }
        digest
    }

    /// The XOF stream of the concatenation of `parts`, read as it is needed. Inlined: the stream
    /// is made in the caller's slot for it (low-memory mode).
    #[inline(always)]
    pub(crate) fn xof(&self, parts: &[&[u8]]) -> Xof {
        let mut xof = Xof::UNSTARTED;
        self.start_xof(parts, &mut xof);
        xof
    }

    /// Starts `xof` as [`Hasher::xof`] of `parts`, where it is (the SHAKE state is written in
    /// place, not built aside and copied: see [`Single::start_shake128`]). Not inlined: the
    /// absorbing lives in a frame of its own, not in the caller's.
    #[inline(never)]
    pub(crate) fn start_xof(&self, parts: &[&[u8]], xof: &mut Xof) {
        match self.family {
            Symmetric::Sha3 => {
                if !matches!(xof, Xof::Shake(_)) {
                    *xof = Xof::UNSTARTED;
                }
                if let Xof::Shake(stream) = xof {
                    self.single.start_shake128(stream, parts);
                }
            }
            Symmetric::Sha2Aes => *xof = Xof::Aes(sha2aes::AesStream::new(parts, self.engines)),
        }
    }
}

/// A choice of multi-way Keccak for groups of operations: a vector implementation's lanes, or
/// none (jobs one at a time). Tests and benches pick each path through the batch API.
#[derive(Clone, Copy, Debug)]
pub struct Lanes(Option<Multi>);

impl Lanes {
    /// The fastest for many independent hashes on this CPU: the eight-way AVX-512 Keccak, else
    /// the four-way AVX2 one, else none.
    pub fn fastest() -> Self {
        Self(Multi::x8().or_else(Multi::x4))
    }

    /// Every path this CPU runs: none, the portable four-way Keccak, and the vector ones.
    #[cfg(any(test, feature = "hazmat"))]
    pub fn all() -> impl Iterator<Item = Self> {
        core::iter::once(Self(None)).chain(Multi::all().map(|keccak| Self(Some(keccak))))
    }

    /// `"one at a time"`, or the multi-way Keccak's name (`"portable"`, `"avx2"`, `"avx512"`,
    /// `"avx512x8"`).
    #[cfg(any(test, feature = "hazmat"))]
    pub fn name(&self) -> &'static str {
        self.0.map_or("one at a time", Multi::name)
    }

    /// Four AVX-512 lanes instead of eight for groups of up to four operations (an eight-way
    /// permutation costs more than a four-way one, and its extra lanes would idle).
    fn for_group(self, count: usize) -> Self {
        match (self.0, Multi::x4_at_single_cost()) {
            (Some(keccak), Some(four)) if keccak.ways() == 8 && count <= four.ways() => {
                Self(Some(four))
            }
            _ => self,
        }
    }
}

/// An XOF output stream from [`Hasher::xof`]. Wiped on drop.
// The SHAKE stream is large only on x86 (one state of the four-way permutation), where the size
// is immaterial; on 32-bit targets it is 208 bytes (the assertion below). No boxing: no allocator.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Xof {
    /// SHAKE128.
    Shake(Shake128Stream),
    /// The AES-256-CTR keystream (no larger than its key and position: the SHAKE stream's size
    /// is what the low-memory figures count on).
    Aes(sha2aes::AesStream),
}

impl Xof {
    /// A stream for [`Hasher::start_xof`] to start.
    pub(crate) const UNSTARTED: Self = Self::Shake(Shake128Stream::UNSTARTED);

    /// The next `out.len()` bytes of the stream.
    pub(crate) fn read(&mut self, out: &mut [u8]) {
        match self {
            Self::Shake(stream) => stream.read(out),
            Self::Aes(stream) => stream.read(out),
        }
    }

    /// The next `count` runs of `buf.len()` bytes, each read into `buf` and handed to
    /// `take(run, bytes)`: the 90s keystream expands its key once for them all.
    pub(crate) fn read_runs(
        &mut self,
        buf: &mut [u8],
        count: usize,
        take: &mut dyn FnMut(usize, &[u8]),
    ) {
        match self {
            Self::Shake(stream) => {
                for run in 0..count {
                    stream.read(buf);
                    take(run, buf);
                }
            }
            Self::Aes(stream) => stream.read_runs(buf, count, take),
        }
    }
}

#[cfg(target_pointer_width = "32")]
const _: () = assert!(
    size_of::<Xof>() <= size_of::<Shake128Stream>() + 8,
    "the 90s stream must not make the SHA-3 family's stream larger"
);
