//! The job runner: independent hash computations spread over the states of a multi-way
//! permutation ([`MultiKeccak`]). Where all lanes of a permutation cost about as much as one
//! (vector implementations), `W` independent hashes take as many permutations as the longest of
//! them instead of their sum: the matrix stream, the secret stream and H(ct) of one
//! decapsulation ([`crate::batch`], "Inside one operation"), or every hash of a batch.
//!
//! Each state runs one job at a time (FIPS 202 sponges: absorb `rate`-byte blocks, pad with the
//! job's suffix, squeeze); a state whose job is done takes the next job, cleared first. The
//! schedule depends only on the jobs' lengths, which are public.

use zeroize::Zeroize;

use super::{
    KeccakX4, MultiKeccak, MultiState, Permutation, SHA3_256_RATE, SHA3_512_RATE, SHA3_SUFFIX,
    SHAKE_SUFFIX, SHAKE128_RATE,
};

/// The hash function of a [`Job`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Function {
    /// SHAKE128, any output length.
    Shake128,
    /// SHA3-256 (32-byte output).
    Sha3_256,
    /// SHA3-512 (64-byte output).
    Sha3_512,
}

impl Function {
    fn rate(self) -> usize {
        match self {
            Self::Shake128 => SHAKE128_RATE,
            Self::Sha3_256 => SHA3_256_RATE,
            Self::Sha3_512 => SHA3_512_RATE,
        }
    }

    fn suffix(self) -> u8 {
        match self {
            Self::Shake128 => SHAKE_SUFFIX,
            Self::Sha3_256 | Self::Sha3_512 => SHA3_SUFFIX,
        }
    }
}

/// One hash computation: `function` of `input[0] ‖ input[1]` into all of `output`.
pub struct Job<'a> {
    /// The hash function.
    pub function: Function,
    /// The input, as two parts (the second may be empty).
    pub input: [&'a [u8]; 2],
    /// Where the hash goes; its length is the output length (32 for SHA3-256, 64 for SHA3-512).
    pub output: &'a mut [u8],
}

impl<'a> Job<'a> {
    /// SHAKE128 of `input` into `output`.
    pub fn shake128(input: &'a [u8], output: &'a mut [u8]) -> Self {
        Self {
            function: Function::Shake128,
            input: [input, &[]],
            output,
        }
    }

    /// SHA3-256 of `input` into `output`.
    pub fn sha3_256(input: &'a [u8], output: &'a mut [u8; 32]) -> Self {
        Self::sha3_256_of([input, &[]], output)
    }

    /// SHA3-256 of `input[0] ‖ input[1]` into `output`.
    pub fn sha3_256_of(input: [&'a [u8]; 2], output: &'a mut [u8; 32]) -> Self {
        Self {
            function: Function::Sha3_256,
            input,
            output,
        }
    }

    /// SHA3-512 of `input[0] ‖ input[1]` into `output`.
    pub fn sha3_512_of(input: [&'a [u8]; 2], output: &'a mut [u8; 64]) -> Self {
        Self {
            function: Function::Sha3_512,
            input,
            output,
        }
    }
}

/// Where a job stands.
#[derive(Clone, Copy, Default)]
struct Progress {
    /// Input bytes absorbed so far.
    absorbed: usize,
    /// Whether the padded last block has been absorbed (the job is squeezing).
    padded: bool,
    /// Output bytes written so far.
    squeezed: usize,
}

/// Runs every job on the lanes of `keccak`; on return each output holds its hash.
pub fn run<'a>(keccak: impl Into<MultiKeccak>, jobs: impl IntoIterator<Item = Job<'a>>) {
    match keccak.into() {
        MultiKeccak::X4(keccak) => run_on::<4, KeccakX4>(keccak, jobs.into_iter()),
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        MultiKeccak::X8(keccak) => run_on::<8, super::KeccakX8>(keccak, jobs.into_iter()),
    }
}

fn run_on<'a, const W: usize, K: Permutation<W>>(
    keccak: K,
    mut jobs: impl Iterator<Item = Job<'a>>,
) {
    let mut state = MultiState::<W>::new();
    let mut block = [0u8; SHAKE128_RATE];
    let mut lanes: [Option<(Job<'a>, Progress)>; W] = [const { None }; W];
    loop {
        for (lane, slot) in lanes.iter_mut().enumerate() {
            if slot.is_none()
                && let Some(job) = jobs.next()
            {
                state.clear(lane);
                *slot = Some((job, Progress::default()));
            }
        }
        if lanes.iter().all(Option::is_none) {
            break;
        }
        for (lane, slot) in lanes.iter_mut().enumerate() {
            let Some((job, progress)) = slot else {
                continue;
            };
            if progress.padded {
                continue;
            }
            let rate = job.function.rate();
            let len = job.input[0].len() + job.input[1].len();
            let take = (len - progress.absorbed).min(rate);
            gather(&job.input, progress.absorbed, &mut block[..take]);
            progress.absorbed += take;
            if take < rate {
                // The last block: pad10*1 after the domain bits (FIPS 202 §5.1, §6).
                block[take..rate].fill(0);
                block[take] ^= job.function.suffix();
                block[rate - 1] ^= 0x80;
                progress.padded = true;
            }
            for (bytes, word) in block[..rate]
                .as_chunks::<8>()
                .0
                .iter()
                .zip(&mut state.lanes)
            {
                word[lane] ^= u64::from_le_bytes(*bytes);
            }
        }
        keccak.permute(&mut state);
        for (lane, slot) in lanes.iter_mut().enumerate() {
            let Some((job, progress)) = slot else {
                continue;
            };
            if !progress.padded {
                continue;
            }
            let rate = job.function.rate();
            let out = &mut job.output[progress.squeezed..];
            let take = out.len().min(rate);
            // Whole words with fixed-size stores (a variable-length copy per word would be a
            // `memcpy` call each), then the partial last word, if any.
            let (words, tail) = out[..take].as_chunks_mut::<8>();
            for (bytes, word) in words.iter_mut().zip(&state.lanes) {
                *bytes = word[lane].to_le_bytes();
            }
            if !tail.is_empty() {
                let tail_len = tail.len();
                tail.copy_from_slice(&state.word(lane, words.len()).to_le_bytes()[..tail_len]);
            }
            progress.squeezed += take;
            if progress.squeezed == job.output.len() {
                *slot = None;
            }
        }
    }
    block.as_mut_slice().zeroize();
}

/// Bytes `offset..offset + out.len()` of `parts[0] ‖ parts[1]`.
fn gather(parts: &[&[u8]; 2], offset: usize, out: &mut [u8]) {
    let first = parts[0].len();
    let mut written = 0;
    if offset < first {
        let n = (first - offset).min(out.len());
        out[..n].copy_from_slice(&parts[0][offset..offset + n]);
        written = n;
        if written == out.len() {
            return;
        }
    }
    let from = offset + written - first;
    let rest = out.len() - written;
    out[written..].copy_from_slice(&parts[1][from..from + rest]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha3::Digest;
    use shake::{ExtendableOutput, Update, XofReader};

    /// Every multi-way path, and none (one job at a time).
    fn paths() -> [Option<MultiKeccak>; 5] {
        let mut paths = [Some(KeccakX4::portable().into()), None, None, None, None];
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            paths[1] = KeccakX4::avx2().map(Into::into);
            paths[2] = KeccakX4::avx512().map(Into::into);
            paths[3] = super::super::KeccakX8::avx512().map(MultiKeccak::X8);
        }
        paths
    }

    /// Mixed jobs of many lengths (more jobs than lanes, so states are reused, and lengths
    /// around every rate) against the `sha3` and `shake` crates, on every path and one job at a
    /// time.
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
        for keccak in paths().into_iter().flatten().map(Some) {
            let mut outputs = [[0u8; 3744]; 8 + 3 * 12];
            let jobs =
                outputs
                    .iter_mut()
                    .zip(cases.iter())
                    .map(|(out, &(function, head, tail, len))| {
                        let len = match function {
                            Function::Sha3_256 => 32,
                            Function::Sha3_512 => 64,
                            Function::Shake128 => len,
                        };
                        Job {
                            function,
                            input: [&message[..head], &message[head..head + tail]],
                            output: &mut out[..len],
                        }
                    });
            let name = keccak.map_or("one by one", |k| k.name());
            if let Some(keccak) = keccak {
                run(keccak, jobs);
            }
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
                    "{name} {function:?} {head}+{tail}"
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
        for keccak in paths().into_iter().flatten() {
            let mut outputs = [[0u8; 3745]; 11];
            run(
                keccak,
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
}
