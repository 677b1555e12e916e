//! Keccak-f\[1600\] on four or eight independent states at once (FIPS 202 §3), and a job runner
//! that spreads independent SHA3-256, SHA3-512 and SHAKE128 computations over those states
//! ([`lanes`], FIPS 202 §4, §6.1, §6.2): for the batch API ([`crate::batch`]), for the
//! independent streams of one operation, and for Saber+, whose matrix entries are independent
//! XOF calls.
//!
//! # Layout and paths
//!
//! A [`MultiState`] holds 25 words of `W` states, interleaved: word `i` of state `l` is
//! `lanes[i][l]`, so one vector register holds the same word of all states and every step of
//! the permutation is one vector instruction for all of them.
//!
//! The permutation is written once (the `keccak_f1600!` macro below) and instantiated four
//! times; [`KeccakX4::new`] picks the first four-way one the CPU runs (CPUID once per process
//! through `cpufeatures`), [`MultiKeccak::new`] the eight-way one where there is one:
//! - AVX-512 (`avx512`, x86 and x86_64, CPUs with AVX-512F and AVX-512VL): four states on
//!   `__m256i` ([`KeccakX4::avx512`]) or eight on `__m512i` ([`KeccakX8::avx512`]); rotations
//!   by `vprolq`, θ's parities and χ by `vpternlogq`, all 25 words in registers.
//! - AVX2 (`x4_avx2`, x86 and x86_64): one `__m256i` per word, rotations as shift/shift/or, and
//!   only 16 registers, so words go through the stack every round.
//! - portable (`x4_portable`, every target): `[u64; 4]` words, which the compiler may map to
//!   whatever vectors the target has (two SSE2 registers on baseline x86-64).
//!
//! On the development machine (`BENCHMARKS.md`) one AVX-512 permutation of four states costs
//! about a third of an AVX2 one, and the eight-way one 1.2–1.35× less per state than that.
//! `docs/anchors.md` §6 measured AVX-512 code *generation* (`-C target-cpu=native`) slowing the
//! *single* Keccak on a Zen 4 machine; explicit AVX-512 instructions are a different matter, and
//! the AVX2 path stays for CPUs without AVX-512.
//!
//! Every path is tested against the portable one and, through the job runner, against the
//! `sha3` and `shake` crates, each constructed explicitly (unit tests here and in [`lanes`];
//! `tests/batch.rs` also runs the KATs through each).

use zeroize::Zeroize;

pub mod lanes;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) mod sponge;
mod x4_portable;

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx512;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod x4_avx2;

/// Number of states of the four-way permutation.
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

/// `W` Keccak-f\[1600\] states, interleaved word by word (see the module docs). Wiped on drop:
/// the sponges absorb secret seeds.
#[derive(Clone)]
#[repr(C, align(64))]
pub struct MultiState<const W: usize> {
    lanes: [[u64; W]; 25],
}

/// The states of the four-way permutation.
pub type StateX4 = MultiState<LANES>;
/// The states of the eight-way permutation.
pub type StateX8 = MultiState<8>;

impl<const W: usize> MultiState<W> {
    /// `W` all-zero states.
    pub const fn new() -> Self {
        Self {
            lanes: [[0; W]; 25],
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

    /// Zeroes state `lane`.
    pub fn clear(&mut self, lane: usize) {
        for word in self.lanes.iter_mut() {
            word[lane] = 0;
        }
    }
}

impl<const W: usize> Default for MultiState<W> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize> Zeroize for MultiState<W> {
    fn zeroize(&mut self) {
        // As a slice: one bulk fill (an array would take a volatile store per word).
        self.lanes.as_flattened_mut().zeroize();
    }
}

impl<const W: usize> Drop for MultiState<W> {
    fn drop(&mut self) {
        self.zeroize();
    }
}

impl<const W: usize> core::fmt::Debug for MultiState<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "MultiState<{W}>(<redacted>)")
    }
}

/// Keccak-f\[1600\] on each of `W` states at once.
pub trait Permutation<const W: usize>: Copy {
    /// Applies Keccak-f\[1600\] to each state.
    fn permute(&self, state: &mut MultiState<W>);
}

/// Which implementation runs the four-way permutation.
#[derive(Clone, Copy, Debug)]
enum Path {
    Portable,
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Avx2(x4_avx2::Avx2Token),
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Avx512(avx512::Avx512Token),
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
        avx512::Avx512Token::detect().map(|token| Self {
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
            Path::Avx512(token) => avx512::x4::permute(token, &mut state.lanes),
        }
    }
}

impl Permutation<LANES> for KeccakX4 {
    #[inline]
    fn permute(&self, state: &mut StateX4) {
        KeccakX4::permute(self, state);
    }
}

impl Default for KeccakX4 {
    fn default() -> Self {
        Self::new()
    }
}

/// The eight-way Keccak-f\[1600\] permutation (AVX-512 on 512-bit registers; x86 only).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[derive(Clone, Copy, Debug)]
pub struct KeccakX8 {
    token: avx512::Avx512Token,
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
impl KeccakX8 {
    /// The AVX-512 implementation, if this CPU has AVX-512F and AVX-512VL.
    pub fn avx512() -> Option<Self> {
        avx512::Avx512Token::detect().map(|token| Self { token })
    }

    /// Applies Keccak-f\[1600\] to each of the eight states.
    #[inline]
    pub fn permute(&self, state: &mut StateX8) {
        avx512::x8::permute(self.token, &mut state.lanes);
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
impl Permutation<8> for KeccakX8 {
    #[inline]
    fn permute(&self, state: &mut StateX8) {
        KeccakX8::permute(self, state);
    }
}

/// A multi-way permutation for the job runner ([`lanes::run`]): four or eight states.
#[derive(Clone, Copy, Debug)]
pub enum MultiKeccak {
    /// Four states.
    X4(KeccakX4),
    /// Eight states (AVX-512).
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    X8(KeccakX8),
}

impl MultiKeccak {
    /// The fastest for many independent hashes on this CPU: the eight-way AVX-512 permutation,
    /// else [`KeccakX4::new`].
    pub fn new() -> Self {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if let Some(keccak) = KeccakX8::avx512() {
            return Self::X8(keccak);
        }
        Self::X4(KeccakX4::new())
    }

    /// Whether this is a vector implementation, i.e. whether all lanes together cost about as
    /// much as one permutation.
    pub fn is_vectorised(&self) -> bool {
        match self {
            Self::X4(keccak) => keccak.is_vectorised(),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Self::X8(_) => true,
        }
    }

    /// `"avx512x8"`, or the four-way implementation's [`KeccakX4::name`].
    pub fn name(&self) -> &'static str {
        match self {
            Self::X4(keccak) => keccak.name(),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Self::X8(_) => "avx512x8",
        }
    }
}

impl Default for MultiKeccak {
    fn default() -> Self {
        Self::new()
    }
}

impl From<KeccakX4> for MultiKeccak {
    fn from(keccak: KeccakX4) -> Self {
        Self::X4(keccak)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The permutation alone: Keccak-f\[1600\] of the zero state (FIPS 202 test vector, first
    /// and last words), in every lane, on every path.
    #[test]
    fn permutation_of_zero_matches_the_known_answer() {
        fn check<const W: usize>(keccak: impl Permutation<W>, name: &str) {
            let mut state = MultiState::<W>::new();
            keccak.permute(&mut state);
            for lane in 0..W {
                assert_eq!(state.word(lane, 0), 0xF125_8F79_40E1_DDE7, "{name}");
                assert_eq!(state.word(lane, 24), 0xEAF1_FF7B_5CEC_A249, "{name}");
            }
        }
        for keccak in paths() {
            check(keccak, keccak.name());
        }
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if let Some(keccak) = KeccakX8::avx512() {
            check(keccak, "avx512x8");
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

    /// Pseudo-random, different states in every lane.
    fn random_states<const W: usize>() -> MultiState<W> {
        let mut x = 0x0123_4567_89AB_CDEFu64;
        let mut state = MultiState::new();
        for word in 0..25 {
            for lane in 0..W {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                state.xor_word(lane, word, x);
            }
        }
        state
    }

    /// Every four-way path against the portable one, chained over many permutations.
    #[test]
    fn vector_paths_match_the_portable_permutation() {
        let start = random_states::<LANES>();
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

    /// The eight-way path against the portable four-way one on both halves of its states.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    #[test]
    fn eight_way_path_matches_the_portable_permutation() {
        let Some(keccak) = KeccakX8::avx512() else {
            return;
        };
        let start = random_states::<8>();
        let mut got = start.clone();
        for _ in 0..50 {
            keccak.permute(&mut got);
        }
        for half in 0..2 {
            let mut want = StateX4::new();
            for word in 0..25 {
                for lane in 0..LANES {
                    want.xor_word(lane, word, start.word(4 * half + lane, word));
                }
            }
            for _ in 0..50 {
                KeccakX4::portable().permute(&mut want);
            }
            for word in 0..25 {
                for lane in 0..LANES {
                    assert_eq!(got.word(4 * half + lane, word), want.word(lane, word));
                }
            }
        }
    }
}
