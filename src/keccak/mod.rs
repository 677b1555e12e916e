//! Keccak-f\[1600\] on four independent states at once (FIPS 202 §3), and the SHA3-256, SHA3-512
//! and SHAKE128 sponges on top of it (FIPS 202 §4, §6.1, §6.2), for the batch API
//! ([`crate::batch`]) and for Saber+, whose matrix entries are independent XOF calls.
//!
//! # Layout and paths
//!
//! A [`StateX4`] holds 25 words of four states, interleaved: word `i` of state `l` is
//! `lanes[i][l]`, so one 256-bit register holds the same word of all four states and every step
//! of the permutation is one vector instruction for the four of them.
//!
//! The permutation is written once (the `keccak_f1600!` macro below) and instantiated three
//! times; [`KeccakX4::new`] picks the first one the CPU runs (CPUID once per process through
//! `cpufeatures`):
//! - AVX-512 (`x4_avx512`, x86 and x86_64, CPUs with AVX-512F and AVX-512VL): one `__m256i` per
//!   word, rotations by `vprolq`, θ's parities and χ by `vpternlogq`, all 25 words in registers.
//! - AVX2 (`x4_avx2`, x86 and x86_64): one `__m256i` per word, rotations as shift/shift/or, and
//!   only 16 registers, so words go through the stack every round.
//! - portable (`x4_portable`, every target): `[u64; 4]` words, which the compiler may map to
//!   whatever vectors the target has (two SSE2 registers on baseline x86-64).
//!
//! On the development machine (`BENCHMARKS.md`) one AVX-512 permutation of four states costs
//! about a third of an AVX2 one. `docs/anchors.md` §6 measured AVX-512 code *generation*
//! (`-C target-cpu=native`) slowing the *single* Keccak on a Zen 4 machine; explicit AVX-512
//! instructions are a different matter, and the AVX2 path stays for CPUs without AVX-512.
//!
//! Every path is tested against the portable one and against the `sha3` and `shake` crates,
//! each constructed explicitly ([`KeccakX4::avx512`], [`KeccakX4::avx2`]; unit tests below and
//! `tests/batch.rs`, which also runs the KATs through each).
//!
//! # Sponges
//!
//! The four messages of one call are absorbed in lockstep, so they must need the same number of
//! permutations: `len / rate` equal for all four (equal lengths always qualify; Saber's batches
//! hash equal-length public keys, ciphertexts and seeds). Outputs are squeezed in lockstep too.
//! Nothing branches on message or state contents; the only data-dependent work is the length
//! check, on public lengths.

use zeroize::Zeroize;

pub mod lanes;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) mod sponge;
mod x4_portable;

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod x4_avx2;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod x4_avx512;

/// Number of states processed together.
pub const LANES: usize = 4;

/// Iota's round constants (FIPS 202 §3.2.5, precomputed).
const ROUND_CONSTANTS: [u64; 24] = [
    0x0000_0000_0000_0001,
    0x0000_0000_0000_8082,
    0x8000_0000_0000_808A,
    0x8000_0000_8000_8000,
    0x0000_0000_0000_808B,
    0x0000_0000_8000_0001,
    0x8000_0000_8000_8081,
    0x8000_0000_0000_8009,
    0x0000_0000_0000_008A,
    0x0000_0000_0000_0088,
    0x0000_0000_8000_8009,
    0x0000_0000_8000_000A,
    0x0000_0000_8000_808B,
    0x8000_0000_0000_008B,
    0x8000_0000_0000_8089,
    0x8000_0000_0000_8003,
    0x8000_0000_0000_8002,
    0x8000_0000_0000_0080,
    0x0000_0000_0000_800A,
    0x8000_0000_8000_000A,
    0x8000_0000_8000_8081,
    0x8000_0000_0000_8080,
    0x0000_0000_8000_0001,
    0x8000_0000_8000_8008,
];

/// `x + 1 mod 5`, `x + 2 mod 5` and `x − 1 mod 5` for the column index of θ and χ (tables, since
/// the crate forbids `%`).
const NEXT: [usize; 5] = [1, 2, 3, 4, 0];
const NEXT2: [usize; 5] = [2, 3, 4, 0, 1];
const PREV: [usize; 5] = [4, 0, 1, 2, 3];

/// The 24 rounds of Keccak-f\[1600\] on `$a: [W; 25]` (word `x + 5y` is lane (x, y)), for any
/// word type `W` given its operations:
/// - `$xor(a, b)` = a ⊕ b, `$xor3(a, b, c)` = a ⊕ b ⊕ c, `$chi(a, b, c)` = a ⊕ (¬b ∧ c),
///   `$constant(u64)` = the constant in every state, `$rol!(w, n)` = w rotated left by the
///   literal `n` in (0, 64).
///
/// The three-input operations are single instructions on AVX-512 (`vpternlogq`); elsewhere they
/// are two.
///
/// ρ and π are fused and written out with literal offsets (FIPS 202 §3.2.2–3.2.3: lane (x, y)
/// moves to (y, 2x + 3y) rotated by its ρ offset), so that every rotation is by an immediate.
macro_rules! keccak_f1600 {
    (
        $a:ident,
        xor = $xor:ident,
        xor3 = $xor3:ident,
        chi = $chi:ident,
        rol = $rol:ident,
        constant = $constant:ident
    ) => {
        for &rc in $crate::keccak::ROUND_CONSTANTS.iter() {
            // θ: every lane absorbs the parities of its two neighbouring columns.
            let mut c = [$a[0]; 5];
            for x in 0..5 {
                c[x] = $xor3($xor3($a[x], $a[x + 5], $a[x + 10]), $a[x + 15], $a[x + 20]);
            }
            for x in 0..5 {
                let d = $xor(
                    c[$crate::keccak::PREV[x]],
                    $rol!(c[$crate::keccak::NEXT[x]], 1),
                );
                for y in 0..5 {
                    $a[x + 5 * y] = $xor($a[x + 5 * y], d);
                }
            }
            // ρ and π: b[dst] = rol(a[src], offset).
            let b = [
                $a[0],
                $rol!($a[6], 44),
                $rol!($a[12], 43),
                $rol!($a[18], 21),
                $rol!($a[24], 14),
                $rol!($a[3], 28),
                $rol!($a[9], 20),
                $rol!($a[10], 3),
                $rol!($a[16], 45),
                $rol!($a[22], 61),
                $rol!($a[1], 1),
                $rol!($a[7], 6),
                $rol!($a[13], 25),
                $rol!($a[19], 8),
                $rol!($a[20], 18),
                $rol!($a[4], 27),
                $rol!($a[5], 36),
                $rol!($a[11], 10),
                $rol!($a[17], 15),
                $rol!($a[23], 56),
                $rol!($a[2], 62),
                $rol!($a[8], 55),
                $rol!($a[14], 39),
                $rol!($a[15], 41),
                $rol!($a[21], 2),
            ];
            // χ: the only non-linear step, row by row.
            for y in 0..5 {
                for x in 0..5 {
                    $a[x + 5 * y] = $chi(
                        b[x + 5 * y],
                        b[$crate::keccak::NEXT[x] + 5 * y],
                        b[$crate::keccak::NEXT2[x] + 5 * y],
                    );
                }
            }
            // ι
            $a[0] = $xor($a[0], $constant(rc));
        }
    };
}
pub(crate) use keccak_f1600;

/// Four Keccak-f\[1600\] states, interleaved word by word (see the module docs). Wiped on drop:
/// the sponges absorb secret seeds.
#[derive(Clone)]
#[repr(C, align(32))]
pub struct StateX4 {
    lanes: [[u64; LANES]; 25],
}

impl StateX4 {
    /// Four all-zero states.
    pub const fn new() -> Self {
        Self {
            lanes: [[0; LANES]; 25],
        }
    }

    /// Word `word` of state `lane`.
    pub fn word(&self, lane: usize, word: usize) -> u64 {
        self.lanes[word][lane]
    }

    /// XORs `value` into word `word` of state `lane`.
    pub fn xor_word(&mut self, lane: usize, word: usize, value: u64) {
        self.lanes[word][lane] ^= value;
    }
}

impl Default for StateX4 {
    fn default() -> Self {
        Self::new()
    }
}

impl Zeroize for StateX4 {
    fn zeroize(&mut self) {
        // As a slice: one bulk fill (an array would take a volatile store per word).
        self.lanes.as_flattened_mut().zeroize();
    }
}

impl Drop for StateX4 {
    fn drop(&mut self) {
        self.zeroize();
    }
}

impl core::fmt::Debug for StateX4 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("StateX4(<redacted>)")
    }
}

/// Which implementation runs the four-way permutation.
#[derive(Clone, Copy, Debug)]
enum Path {
    Portable,
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Avx2(x4_avx2::Avx2Token),
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Avx512(x4_avx512::Avx512Token),
}

/// The four-way Keccak-f\[1600\] permutation, with the implementation chosen once.
#[derive(Clone, Copy, Debug)]
pub struct KeccakX4 {
    path: Path,
}

impl KeccakX4 {
    /// The fastest implementation for this CPU: AVX-512, else AVX2 when available (detected
    /// once per process), otherwise the portable one.
    pub fn new() -> Self {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if let Some(keccak) = Self::avx512().or_else(Self::avx2) {
            return keccak;
        }
        Self::portable()
    }

    /// The portable implementation, on every CPU (for tests and comparisons).
    pub const fn portable() -> Self {
        Self {
            path: Path::Portable,
        }
    }

    /// The AVX2 implementation, if this CPU has AVX2.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    pub fn avx2() -> Option<Self> {
        x4_avx2::Avx2Token::detect().map(|token| Self {
            path: Path::Avx2(token),
        })
    }

    /// The AVX-512 implementation (256-bit registers), if this CPU has AVX-512F and AVX-512VL.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    pub fn avx512() -> Option<Self> {
        x4_avx512::Avx512Token::detect().map(|token| Self {
            path: Path::Avx512(token),
        })
    }

    /// Whether this is a vector implementation (as opposed to the portable one), i.e. whether
    /// four lanes cost about as much as one.
    pub fn is_vectorised(&self) -> bool {
        !matches!(self.path, Path::Portable)
    }

    /// `"avx512"`, `"avx2"` or `"portable"`.
    pub fn name(&self) -> &'static str {
        match self.path {
            Path::Portable => "portable",
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Path::Avx2(_) => "avx2",
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Path::Avx512(_) => "avx512",
        }
    }

    /// Applies Keccak-f\[1600\] to each of the four states.
    #[inline]
    pub fn permute(&self, state: &mut StateX4) {
        match self.path {
            Path::Portable => x4_portable::permute(&mut state.lanes),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Path::Avx2(token) => x4_avx2::permute(token, &mut state.lanes),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Path::Avx512(token) => x4_avx512::permute(token, &mut state.lanes),
        }
    }
}

impl Default for KeccakX4 {
    fn default() -> Self {
        Self::new()
    }
}

/// SHAKE128's rate in bytes (capacity 256 bits).
pub const SHAKE128_RATE: usize = 168;
/// SHA3-256's rate in bytes.
pub const SHA3_256_RATE: usize = 136;
/// SHA3-512's rate in bytes.
pub const SHA3_512_RATE: usize = 72;

/// Domain-separation bits plus the first padding bit (FIPS 202 §6, B.2): SHA-3 appends `01`,
/// SHAKE `1111`.
const SHA3_SUFFIX: u8 = 0x06;
const SHAKE_SUFFIX: u8 = 0x1F;

/// Number of whole `rate`-byte blocks in `len` bytes (public lengths; the crate forbids `/`).
fn whole_blocks(len: usize, rate: usize) -> usize {
    let mut blocks = 0;
    let mut rest = len;
    while rest >= rate {
        rest -= rate;
        blocks += 1;
    }
    blocks
}

/// Little-endian word `index` of `bytes` (which holds at least `8·(index + 1)` bytes).
fn le_word(bytes: &[u8], index: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[8 * index..8 * index + 8]);
    u64::from_le_bytes(word)
}

/// Absorbs four messages into zeroed states with pad10*1 and the given suffix, ending with the
/// permutation that precedes the first squeezed block.
///
/// # Panics
/// If the messages need different numbers of permutations (`len / rate` differs).
fn absorb(
    keccak: &KeccakX4,
    state: &mut StateX4,
    rate: usize,
    suffix: u8,
    messages: [&[u8]; LANES],
) {
    let full_blocks = whole_blocks(messages[0].len(), rate);
    assert!(
        messages
            .iter()
            .all(|m| whole_blocks(m.len(), rate) == full_blocks),
        "four-way sponge: messages must need the same number of blocks"
    );
    for block in 0..full_blocks {
        for (lane, message) in messages.iter().enumerate() {
            let block_bytes = &message[block * rate..(block + 1) * rate];
            for word in 0..rate >> 3 {
                state.xor_word(lane, word, le_word(block_bytes, word));
            }
        }
        keccak.permute(state);
    }
    let mut last = [0u8; SHAKE128_RATE];
    for (lane, message) in messages.iter().enumerate() {
        let tail = &message[full_blocks * rate..];
        last[..rate].fill(0);
        last[..tail.len()].copy_from_slice(tail);
        last[tail.len()] ^= suffix;
        last[rate - 1] ^= 0x80;
        for word in 0..rate >> 3 {
            state.xor_word(lane, word, le_word(&last, word));
        }
    }
    last.as_mut_slice().zeroize();
    keccak.permute(state);
}

/// Writes the first `out[l].len()` bytes of state `l`'s rate part (at most one block) for the
/// first `out.len()` states. Whole words are copied with fixed-size stores.
fn extract(state: &StateX4, out: &mut [&mut [u8]]) {
    for (lane, bytes) in out.iter_mut().enumerate() {
        let mut words = bytes.chunks_exact_mut(8);
        let mut index = 0;
        for chunk in &mut words {
            chunk.copy_from_slice(&state.word(lane, index).to_le_bytes());
            index += 1;
        }
        let rest = words.into_remainder();
        if !rest.is_empty() {
            let len = rest.len();
            rest.copy_from_slice(&state.word(lane, index).to_le_bytes()[..len]);
        }
    }
}

/// SHA3-256 of four messages (`len / 136` equal for all four; see the module docs).
pub fn sha3_256_x4(keccak: &KeccakX4, messages: [&[u8]; LANES]) -> [[u8; 32]; LANES] {
    let mut state = StateX4::new();
    absorb(keccak, &mut state, SHA3_256_RATE, SHA3_SUFFIX, messages);
    let mut out = [[0u8; 32]; LANES];
    extract(&state, &mut out.each_mut().map(|o| &mut o[..]));
    out
}

/// SHA3-512 of four messages (`len / 72` equal for all four; see the module docs).
pub fn sha3_512_x4(keccak: &KeccakX4, messages: [&[u8]; LANES]) -> [[u8; 64]; LANES] {
    let mut state = StateX4::new();
    absorb(keccak, &mut state, SHA3_512_RATE, SHA3_SUFFIX, messages);
    let mut out = [[0u8; 64]; LANES];
    extract(&state, &mut out.each_mut().map(|o| &mut o[..]));
    out
}

/// Four SHAKE128 output streams, squeezed in lockstep. Wiped on drop.
pub struct Shake128X4 {
    keccak: KeccakX4,
    state: StateX4,
    /// Bytes of the current block (the rate part of `state`) already read.
    position: usize,
    /// Copy of the current block, made when a read stops inside it.
    block: [[u8; SHAKE128_RATE]; LANES],
    block_is_current: bool,
}

impl Shake128X4 {
    /// Absorbs four messages (`len / 168` equal for all four; see the module docs).
    pub fn new(keccak: &KeccakX4, messages: [&[u8]; LANES]) -> Self {
        let mut xof = Self {
            keccak: *keccak,
            state: StateX4::new(),
            position: 0,
            block: [[0; SHAKE128_RATE]; LANES],
            block_is_current: false,
        };
        absorb(
            keccak,
            &mut xof.state,
            SHAKE128_RATE,
            SHAKE_SUFFIX,
            messages,
        );
        xof
    }

    /// Reads the next `len` bytes of stream `l` into `out[l]`, for the first `out.len()` streams
    /// (the other streams advance too; their bytes are discarded).
    ///
    /// # Panics
    /// If there are more than four outputs or they differ in length.
    pub fn squeeze(&mut self, out: &mut [&mut [u8]]) {
        assert!(out.len() <= LANES, "four-way squeeze: at most four outputs");
        let len = out.first().map_or(0, |o| o.len());
        assert!(
            out.iter().all(|o| o.len() == len),
            "four-way squeeze: outputs must have equal lengths"
        );
        let mut done = 0;
        while done < len {
            if self.position == SHAKE128_RATE {
                self.keccak.permute(&mut self.state);
                self.position = 0;
                self.block_is_current = false;
            }
            let take = (SHAKE128_RATE - self.position).min(len - done);
            if take == SHAKE128_RATE {
                // A whole block: straight from the state.
                let outputs = out.len();
                let mut views: [&mut [u8]; LANES] = [&mut [], &mut [], &mut [], &mut []];
                for (view, o) in views.iter_mut().zip(out.iter_mut()) {
                    *view = &mut o[done..done + take];
                }
                extract(&self.state, &mut views[..outputs]);
            } else {
                if !self.block_is_current {
                    extract(&self.state, &mut self.block.each_mut().map(|b| &mut b[..]));
                    self.block_is_current = true;
                }
                for (o, block) in out.iter_mut().zip(self.block.iter()) {
                    o[done..done + take]
                        .copy_from_slice(&block[self.position..self.position + take]);
                }
            }
            self.position += take;
            done += take;
        }
    }
}

impl Drop for Shake128X4 {
    fn drop(&mut self) {
        // As a slice: one bulk fill (an array would take a volatile store per byte).
        self.block.as_flattened_mut().zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha3::Digest;
    use shake::{ExtendableOutput, Update, XofReader};

    /// The permutation alone: Keccak-f\[1600\] of the zero state (FIPS 202 test vector, first
    /// and last words), in all four lanes, on every path.
    #[test]
    fn permutation_of_zero_matches_the_known_answer() {
        for keccak in paths() {
            let mut state = StateX4::new();
            keccak.permute(&mut state);
            for lane in 0..LANES {
                assert_eq!(
                    state.word(lane, 0),
                    0xF125_8F79_40E1_DDE7,
                    "{}",
                    keccak.name()
                );
                assert_eq!(
                    state.word(lane, 24),
                    0xEAF1_FF7B_5CEC_A249,
                    "{}",
                    keccak.name()
                );
            }
        }
    }

    fn paths() -> impl Iterator<Item = KeccakX4> {
        let mut all = [Some(KeccakX4::portable()), None, None];
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            all[1] = KeccakX4::avx2();
            all[2] = KeccakX4::avx512();
        }
        all.into_iter().flatten()
    }

    /// Every path against the portable one on pseudo-random states, four different states per
    /// call, chained over many permutations.
    #[test]
    fn vector_paths_match_the_portable_permutation() {
        let mut x = 0x0123_4567_89AB_CDEFu64;
        let mut start = StateX4::new();
        for word in 0..25 {
            for lane in 0..LANES {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                start.xor_word(lane, word, x);
            }
        }
        let mut want = start.clone();
        for _ in 0..50 {
            KeccakX4::portable().permute(&mut want);
        }
        for keccak in paths() {
            let mut got = start.clone();
            for _ in 0..50 {
                keccak.permute(&mut got);
            }
            assert_eq!(got.lanes, want.lanes, "{}", keccak.name());
        }
    }

    #[test]
    fn sponges_match_the_reference_crates() {
        let data: [u8; 700] = core::array::from_fn(|i| (i * 7 + 3) as u8);
        for keccak in paths() {
            for len in [0, 1, 33, 71, 72, 135, 136, 167, 168, 169, 400] {
                let messages: [&[u8]; 4] = core::array::from_fn(|l| &data[l..l + len]);
                let h256 = sha3_256_x4(&keccak, messages);
                let h512 = sha3_512_x4(&keccak, messages);
                let mut xof = Shake128X4::new(&keccak, messages);
                let mut streams = [[0u8; 500]; 4];
                let [a, b, c, d] = &mut streams;
                xof.squeeze(&mut [&mut a[..13], &mut b[..13], &mut c[..13], &mut d[..13]]);
                xof.squeeze(&mut [&mut a[13..], &mut b[13..], &mut c[13..], &mut d[13..]]);
                for (l, message) in messages.iter().enumerate() {
                    assert_eq!(h256[l][..], sha3::Sha3_256::digest(message)[..]);
                    assert_eq!(h512[l][..], sha3::Sha3_512::digest(message)[..]);
                    let mut reference = shake::Shake128::default();
                    reference.update(message);
                    let mut want = [0u8; 500];
                    reference.finalize_xof().read(&mut want);
                    assert_eq!(streams[l], want, "{} len {len} lane {l}", keccak.name());
                }
            }
        }
    }
}
