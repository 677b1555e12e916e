//! Independent hash computations of one operation spread over the four states of the four-way
//! permutation: where a four-way permutation costs no more than a single one (AVX-512), the
//! matrix stream, the secret stream and H(ct) of a decapsulation take as many permutations as
//! the longest of them instead of their sum.
//!
//! Each state runs one job at a time (FIPS 202 sponges: absorb `rate`-byte blocks, pad with the
//! job's suffix, squeeze); a state whose job is done takes the next job, cleared first. The
//! schedule depends only on the jobs' lengths, which are public.

use zeroize::Zeroize;

use super::{KeccakX4, LANES, SHA3_256_RATE, SHA3_SUFFIX, SHAKE_SUFFIX, SHAKE128_RATE, StateX4};

/// The hash function of a [`Job`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Function {
    /// SHAKE128, any output length.
    Shake128,
    /// SHA3-256 (32-byte output).
    Sha3_256,
}

impl Function {
    fn rate(self) -> usize {
        match self {
            Self::Shake128 => SHAKE128_RATE,
            Self::Sha3_256 => SHA3_256_RATE,
        }
    }

    fn suffix(self) -> u8 {
        match self {
            Self::Shake128 => SHAKE_SUFFIX,
            Self::Sha3_256 => SHA3_SUFFIX,
        }
    }
}

/// One hash computation: `function` of `input[0] ‖ input[1]` into all of `output`.
pub struct Job<'a> {
    /// The hash function.
    pub function: Function,
    /// The input, as two parts (the second may be empty).
    pub input: [&'a [u8]; 2],
    /// Where the hash goes; its length is the output length (32 for SHA3-256).
    pub output: &'a mut [u8],
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

/// Runs every job (`None` entries are skipped); on return each output holds its hash.
pub fn run(keccak: KeccakX4, jobs: &mut [Option<Job<'_>>]) {
    let mut state = StateX4::new();
    let mut block = [0u8; SHAKE128_RATE];
    let mut lanes: [Option<(usize, Progress)>; LANES] = [None; LANES];
    let mut next = 0;
    loop {
        for (lane, slot) in lanes.iter_mut().enumerate() {
            while slot.is_none() && next < jobs.len() {
                if jobs[next].is_some() {
                    clear_lane(&mut state, lane);
                    *slot = Some((next, Progress::default()));
                }
                next += 1;
            }
        }
        if lanes.iter().all(Option::is_none) {
            break;
        }
        for (lane, slot) in lanes.iter_mut().enumerate() {
            let Some((index, progress)) = slot else {
                continue;
            };
            if progress.padded {
                continue;
            }
            let Some(job) = &jobs[*index] else {
                continue;
            };
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
            for (word, bytes) in block[..rate].chunks_exact(8).enumerate() {
                let mut le = [0u8; 8];
                le.copy_from_slice(bytes);
                state.xor_word(lane, word, u64::from_le_bytes(le));
            }
        }
        keccak.permute(&mut state);
        for (lane, slot) in lanes.iter_mut().enumerate() {
            let Some((index, progress)) = slot else {
                continue;
            };
            if !progress.padded {
                continue;
            }
            let Some(job) = &mut jobs[*index] else {
                continue;
            };
            let rate = job.function.rate();
            let out = &mut job.output[progress.squeezed..];
            let take = out.len().min(rate);
            // Whole words with fixed-size copies (a variable-length copy per word would be a
            // `memcpy` call each), then the partial last word, if any.
            let mut words = out[..take].chunks_exact_mut(8);
            let mut word = 0;
            for bytes in &mut words {
                bytes.copy_from_slice(&state.word(lane, word).to_le_bytes());
                word += 1;
            }
            let tail = words.into_remainder();
            if !tail.is_empty() {
                let tail_len = tail.len();
                tail.copy_from_slice(&state.word(lane, word).to_le_bytes()[..tail_len]);
            }
            progress.squeezed += take;
            if progress.squeezed == job.output.len() {
                *slot = None;
            }
        }
    }
    block.zeroize();
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

/// Zeroes state `lane` (it may hold the end of a previous job).
fn clear_lane(state: &mut StateX4, lane: usize) {
    for word in 0..25 {
        let value = state.word(lane, word);
        state.xor_word(lane, word, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha3::Digest;
    use shake::{ExtendableOutput, Update, XofReader};

    /// Mixed jobs of many lengths (more jobs than lanes, so states are reused) against the
    /// `sha3` and `shake` crates, on every permutation path.
    #[test]
    fn jobs_match_the_sha3_and_shake_crates() {
        let message: [u8; 1500] = core::array::from_fn(|i| (i * 13 + 5) as u8);
        let mut paths = [Some(KeccakX4::portable()), None, None];
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            paths[1] = KeccakX4::avx2();
            paths[2] = KeccakX4::avx512();
        }
        let cases: [(Function, usize, usize, usize); 7] = [
            (Function::Shake128, 32, 0, 3744),
            (Function::Shake128, 32, 2, 416),
            (Function::Sha3_256, 1088, 0, 32),
            (Function::Shake128, 0, 0, 168),
            (Function::Sha3_256, 136, 1, 32),
            (Function::Shake128, 167, 1, 1000),
            (Function::Sha3_256, 0, 0, 32),
        ];
        for keccak in paths.into_iter().flatten() {
            let mut outputs = [[0u8; 3744]; 7];
            let mut jobs: [Option<Job<'_>>; 7] = [const { None }; 7];
            for ((job, out), &(function, head, tail, len)) in
                jobs.iter_mut().zip(outputs.iter_mut()).zip(cases.iter())
            {
                *job = Some(Job {
                    function,
                    input: [&message[..head], &message[head..head + tail]],
                    output: &mut out[..len],
                });
            }
            run(keccak, &mut jobs);
            for (out, &(function, head, tail, len)) in outputs.iter().zip(cases.iter()) {
                let input = &message[..head + tail];
                let mut expected = [0u8; 3744];
                match function {
                    Function::Shake128 => {
                        let mut x = shake::Shake128::default();
                        x.update(input);
                        x.finalize_xof().read(&mut expected[..len]);
                    }
                    Function::Sha3_256 => {
                        expected[..32].copy_from_slice(&sha3::Sha3_256::digest(input));
                    }
                }
                assert_eq!(
                    out[..len],
                    expected[..len],
                    "{} {function:?} {head}+{tail}",
                    keccak.name()
                );
            }
        }
    }
}
