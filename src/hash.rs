//! The symmetric primitives of the scheme (round-3 spec §2.3): the hash H, the hash G and the XOF
//! of a variant's family ([`Symmetric`]), and the one place that decides how they run on this
//! CPU.
//!
//! Every hash an operation computes is a [`Job`]; a [`Hasher`] runs lists of them. Where the CPU
//! has a vector multi-way Keccak, independent jobs share its lanes (`crate::keccak`): the hashes of
//! a batch's operations, and, where four lanes cost no more than one permutation (AVX-512), the
//! independent streams of one operation, which the IND-CPA layer then squeezes in advance
//! ([`Hasher::squeezes_in_advance`]). Otherwise jobs run one at a time. The bytes are the same
//! either way.

use sha3::{Digest, Sha3_256, Sha3_512};
use shake::{ExtendableOutput, Shake128, Shake128Reader, Update, XofReader};
use zeroize::Zeroize;

use crate::keccak::lanes::{self, Function as KeccakFunction, Job as KeccakJob};
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use crate::keccak::sponge::{self, Shake128Stream};
use crate::keccak::{KeccakX4, LANES, MultiKeccak};
use crate::params::Symmetric;

/// Which of a family's functions a [`Job`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Function {
    /// H: 32-byte digests (SHA3-256).
    H,
    /// G: 64-byte digests (SHA3-512).
    G,
    /// The XOF, any output length (SHAKE128).
    Xof,
}

/// One hash computation: `function` of `input[0] ‖ input[1]` into all of `output`.
pub(crate) struct Job<'a> {
    function: Function,
    input: [&'a [u8]; 2],
    output: &'a mut [u8],
}

impl<'a> Job<'a> {
    /// H(`input[0] ‖ input[1]`) into `output`.
    pub(crate) fn h(input: [&'a [u8]; 2], output: &'a mut [u8; 32]) -> Self {
        Self {
            function: Function::H,
            input,
            output,
        }
    }

    /// G(`input[0] ‖ input[1]`) into `output`, as its two 32-byte halves.
    pub(crate) fn g(input: [&'a [u8]; 2], output: &'a mut [[u8; 32]; 2]) -> Self {
        Self {
            function: Function::G,
            input,
            output: output.as_flattened_mut(),
        }
    }

    /// The first `output.len()` bytes of XOF(`input[0] ‖ input[1]`).
    pub(crate) fn xof(input: [&'a [u8]; 2], output: &'a mut [u8]) -> Self {
        Self {
            function: Function::Xof,
            input,
            output,
        }
    }
}

/// Runs the hashes of an operation, or of a group of operations, on the path chosen for this CPU
/// once, when it is made.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hasher {
    family: Symmetric,
    /// The multi-way Keccak whose lanes independent jobs share, if sharing pays.
    lanes: Option<MultiKeccak>,
}

impl Hasher {
    /// For one operation: its independent streams share lanes only where four lanes cost no
    /// more than one permutation (the AVX-512 four-way Keccak).
    pub(crate) fn for_operation(family: Symmetric) -> Self {
        Self {
            family,
            lanes: one_state_lanes().map(MultiKeccak::from),
        }
    }

    /// For a group of `count` independent operations, on `lanes` ([`Lanes::fastest`] outside
    /// tests): four AVX-512 lanes instead of eight for up to four operations.
    pub(crate) fn for_group(family: Symmetric, lanes: Lanes, count: usize) -> Self {
        Self {
            family,
            lanes: lanes.for_group(count).0,
        }
    }

    /// Whether an operation's XOF streams are squeezed together, in advance, as lane jobs
    /// (never off x86, so that the code for it is not even built there).
    #[inline]
    pub(crate) fn squeezes_in_advance(&self) -> bool {
        cfg!(any(target_arch = "x86", target_arch = "x86_64")) && self.lanes.is_some()
    }

    /// Runs every job; on return each output holds its hash.
    pub(crate) fn run<'a>(&self, jobs: impl IntoIterator<Item = Job<'a>>) {
        match self.family {
            Symmetric::Sha3 => match self.lanes {
                Some(keccak) => lanes::run(keccak, jobs.into_iter().map(keccak_job)),
                None => jobs.into_iter().for_each(|job| self.run_one(job)),
            },
        }
    }

    /// One job on one state. Not inlined, so that the hash state lives only in this call, never
    /// in the frame of the stage that runs the job (low-memory mode).
    #[inline(never)]
    fn run_one(&self, job: Job<'_>) {
        match job.function {
            Function::H => {
                let mut digest = self.h(&job.input);
                job.output.copy_from_slice(&digest);
                digest.zeroize();
            }
            Function::G => {
                let mut digest = self.g(&job.input);
                job.output.copy_from_slice(&digest);
                digest.zeroize();
            }
            Function::Xof => self.xof(&job.input).read(job.output),
        }
    }

    /// H of the concatenation of `parts`. Not inlined (nor is [`g`](Self::g)), so that the hash
    /// state lives only in this call, never in a caller's frame (low-memory mode).
    #[inline(never)]
    pub(crate) fn h(&self, parts: &[&[u8]]) -> [u8; 32] {
        match self.family {
            Symmetric::Sha3 => {
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                if let Some(keccak) = one_state_lanes() {
                    return sponge::sha3_256(keccak, parts);
                }
                let mut h = Sha3_256::new();
                for part in parts {
                    Digest::update(&mut h, part);
                }
                h.finalize().into()
            }
        }
    }

    /// G of the concatenation of `parts`.
    #[inline(never)]
    pub(crate) fn g(&self, parts: &[&[u8]]) -> [u8; 64] {
        match self.family {
            Symmetric::Sha3 => {
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                if let Some(keccak) = one_state_lanes() {
                    return sponge::sha3_512(keccak, parts);
                }
                let mut h = Sha3_512::new();
                for part in parts {
                    Digest::update(&mut h, part);
                }
                h.finalize().into()
            }
        }
    }

    /// The XOF stream of the concatenation of `parts`, read as it is needed.
    pub(crate) fn xof(&self, parts: &[&[u8]]) -> Xof {
        match self.family {
            Symmetric::Sha3 => {
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                if let Some(keccak) = one_state_lanes() {
                    return Xof(XofState::FourWay(Shake128Stream::new(keccak, parts)));
                }
                let mut x = Shake128::default();
                for part in parts {
                    x.update(part);
                }
                Xof(XofState::Crate(x.finalize_xof()))
            }
        }
    }
}

/// The four-way Keccak when four of its lanes cost no more than one permutation of the `keccak`
/// crate on this CPU (AVX-512, detected once per process): then it also runs single hashes,
/// on one of its states (`BENCHMARKS.md`, "KEM on x86_64": 0.81–0.83× the crates' time).
#[inline]
fn one_state_lanes() -> Option<KeccakX4> {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    let keccak = KeccakX4::avx512();
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    let keccak = None;
    keccak
}

fn keccak_job(job: Job<'_>) -> KeccakJob<'_> {
    KeccakJob {
        function: match job.function {
            Function::H => KeccakFunction::Sha3_256,
            Function::G => KeccakFunction::Sha3_512,
            Function::Xof => KeccakFunction::Shake128,
        },
        input: job.input,
        output: job.output,
    }
}

/// A choice of multi-way Keccak for groups of operations: a vector implementation's lanes, or
/// none (jobs one at a time). Tests and benches pick each path through the batch API.
#[derive(Clone, Copy, Debug)]
pub struct Lanes(Option<MultiKeccak>);

impl Lanes {
    /// The fastest for many independent hashes on this CPU: the eight-way AVX-512 Keccak, else
    /// the four-way AVX2 one, else none.
    pub fn fastest() -> Self {
        let keccak = MultiKeccak::new();
        Self(keccak.is_vectorised().then_some(keccak))
    }

    /// Every path this CPU runs: none, the portable four-way Keccak, and the vector ones.
    pub fn all() -> impl Iterator<Item = Self> {
        let mut all = [
            Some(Self(None)),
            Some(Self(Some(KeccakX4::portable().into()))),
            None,
            None,
            None,
        ];
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            all[2] = KeccakX4::avx2().map(|k| Self(Some(k.into())));
            all[3] = KeccakX4::avx512().map(|k| Self(Some(k.into())));
            all[4] = crate::keccak::KeccakX8::avx512().map(|k| Self(Some(MultiKeccak::X8(k))));
        }
        all.into_iter().flatten()
    }

    /// `"one at a time"`, or the multi-way Keccak's name.
    pub fn name(&self) -> &'static str {
        self.0.map_or("one at a time", |keccak| keccak.name())
    }

    /// Four AVX-512 lanes instead of eight for groups of up to four operations (an eight-way
    /// permutation costs more than a four-way one, and its extra lanes would idle).
    fn for_group(self, count: usize) -> Self {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if let (Some(MultiKeccak::X8(_)), true, Some(keccak)) =
            (self.0, count <= LANES, KeccakX4::avx512())
        {
            return Self(Some(keccak.into()));
        }
        let _ = count;
        self
    }
}

/// An XOF output stream from [`Hasher::xof`]. Wiped on drop.
pub(crate) struct Xof(XofState);

// The four-way state (about 1 KB) exists only on x86: elsewhere the stream stays the crate's
// (about 200 bytes), which the low-memory figures of the microcontrollers count on. No boxing: the
// crate has no allocator, and on x86 the size is immaterial.
#[allow(clippy::large_enum_variant)]
enum XofState {
    Crate(Shake128Reader),
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    FourWay(Shake128Stream),
}

impl Xof {
    /// The next `out.len()` bytes of the stream.
    pub(crate) fn read(&mut self, out: &mut [u8]) {
        match &mut self.0 {
            XofState::Crate(reader) => reader.read(out),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            XofState::FourWay(stream) => stream.read(out),
        }
    }
}
