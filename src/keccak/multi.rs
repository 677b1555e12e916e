//! Keccak-f\[1600\] on four or eight independent states at once.
//!
//! A [`MultiState`] holds 25 words of `W` states, interleaved: word `i` of state `l` is
//! `lanes[i][l]`, so one vector register holds the same word of all states and every step of
//! the permutation is one vector instruction for all of them.
//!
//! The permutation is written once (`keccak_f1600!`) and instantiated per word type:
//! - AVX-512 (`avx512`, x86 and x86_64, CPUs with AVX-512F and AVX-512VL): four states on
//!   `__m256i` or eight on `__m512i`; rotations by `vprolq`, θ's parities and χ by `vpternlogq`,
//!   all 25 words in registers.
//! - AVX2 (`x4_avx2`): one `__m256i` per word, rotations as shift/shift/or, and only 16
//!   registers, so the rounds stream the state through memory (each word loaded twice and stored
//!   once per round).
//! - portable (`x4_portable`, every target): `[u64; 4]` words, which the compiler may map to
//!   whatever vectors the target has (two SSE2 registers on baseline x86-64).

use zeroize::Zeroize;

use super::sponge::Words;
use super::x4_portable;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use super::{avx512, x4_avx2};

/// Number of states of the four-way permutation.
pub(super) const X4: usize = 4;

/// `W` Keccak-f\[1600\] states, interleaved word by word (see the module docs). Wiped on drop:
/// the sponges absorb secret seeds.
#[derive(Clone)]
#[repr(C, align(64))]
pub(super) struct MultiState<const W: usize> {
    pub(super) lanes: [[u64; W]; 25],
}

impl<const W: usize> MultiState<W> {
    /// `W` all-zero states.
    pub(super) const fn new() -> Self {
        Self {
            lanes: [[0; W]; 25],
        }
    }

    /// Zeroes state `lane`.
    pub(super) fn clear(&mut self, lane: usize) {
        for word in self.lanes.iter_mut() {
            word[lane] = 0;
        }
    }

    /// State `lane` as the sponge sees it.
    pub(super) fn lane(&mut self, lane: usize) -> Lane<'_, W> {
        Lane { state: self, lane }
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

/// One state of a [`MultiState`].
pub(super) struct Lane<'a, const W: usize> {
    state: &'a mut MultiState<W>,
    lane: usize,
}

impl<const W: usize> Words for Lane<'_, W> {
    #[inline(always)]
    fn xor_word(&mut self, index: usize, value: u64) {
        self.state.lanes[index][self.lane] ^= value;
    }

    #[inline(always)]
    fn word(&self, index: usize) -> u64 {
        self.state.lanes[index][self.lane]
    }

    #[inline(always)]
    fn xor_words(&mut self, first: usize, words: &[[u8; 8]]) {
        let lane = self.lane;
        for (state, word) in self.state.lanes[first..].iter_mut().zip(words) {
            state[lane] ^= u64::from_le_bytes(*word);
        }
    }

    #[inline(always)]
    fn read_words(&self, first: usize, out: &mut [[u8; 8]]) {
        for (state, word) in self.state.lanes[first..].iter().zip(out) {
            *word = state[self.lane].to_le_bytes();
        }
    }
}

/// Keccak-f\[1600\] on each of `W` states at once.
pub(super) trait Permutation<const W: usize>: Copy {
    /// Applies Keccak-f\[1600\] to each state.
    fn permute(self, state: &mut MultiState<W>);
}

/// The four-way permutations.
#[derive(Clone, Copy, Debug)]
pub(super) enum KeccakX4 {
    /// Portable code; only tests and benchmarks run it (it is no faster than four single
    /// permutations).
    #[cfg_attr(not(any(test, feature = "hazmat")), allow(dead_code))]
    Portable,
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Avx2(crate::cpu::Avx2Token),
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Avx512(crate::cpu::Avx512VlToken),
}

impl KeccakX4 {
    /// The AVX2 implementation, if this CPU has AVX2 (within the cap).
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    pub(super) fn avx2() -> Option<Self> {
        crate::cpu::Avx2Token::detect().map(Self::Avx2)
    }

    /// The AVX-512 implementation (256-bit registers), if this CPU has AVX-512F and AVX-512VL
    /// (within the cap).
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    pub(super) fn avx512() -> Option<Self> {
        crate::cpu::Avx512VlToken::detect().map(Self::Avx512)
    }

    /// `"avx512"`, `"avx2"` or `"portable"`.
    #[cfg(any(test, feature = "hazmat"))]
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Portable => "portable",
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Self::Avx2(_) => "avx2",
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Self::Avx512(_) => "avx512",
        }
    }

    /// Every four-way implementation this CPU runs, portable first.
    #[cfg(any(test, feature = "hazmat"))]
    pub(super) fn all() -> impl Iterator<Item = Self> {
        #[allow(unused_mut)]
        let mut all = [Some(Self::Portable), None, None];
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            all[1] = Self::avx2();
            all[2] = Self::avx512();
        }
        all.into_iter().flatten()
    }
}

impl Permutation<X4> for KeccakX4 {
    #[inline]
    fn permute(self, state: &mut MultiState<X4>) {
        match self {
            Self::Portable => x4_portable::permute(&mut state.lanes),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Self::Avx2(token) => x4_avx2::permute(token, state),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Self::Avx512(token) => avx512::x4::permute(token, &mut state.lanes),
        }
    }
}

/// The eight-way permutation (AVX-512 on 512-bit registers; x86 only).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[derive(Clone, Copy, Debug)]
pub(super) struct KeccakX8(crate::cpu::Avx512VlToken);

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
impl KeccakX8 {
    /// The AVX-512 implementation, if this CPU has AVX-512F and AVX-512VL (within the cap).
    pub(super) fn avx512() -> Option<Self> {
        crate::cpu::Avx512VlToken::detect().map(Self)
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
impl Permutation<8> for KeccakX8 {
    #[inline]
    fn permute(self, state: &mut MultiState<8>) {
        avx512::x8::permute(self.0, &mut state.lanes);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Pseudo-random, different states in every lane.
    pub(in super::super) fn random_states<const W: usize>() -> MultiState<W> {
        let mut x = 0x0123_4567_89AB_CDEFu64;
        let mut state = MultiState::new();
        for word in state.lanes.iter_mut() {
            for value in word.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *value = x;
            }
        }
        state
    }

    /// Keccak-f\[1600\] of the zero state (FIPS 202 test vector, first and last words) in every
    /// lane, on every four-way path and the eight-way one.
    #[test]
    fn permutation_of_zero_matches_the_known_answer() {
        fn check<const W: usize>(keccak: impl Permutation<W>, name: &str) {
            let mut state = MultiState::<W>::new();
            keccak.permute(&mut state);
            for lane in 0..W {
                assert_eq!(state.lanes[0][lane], 0xF125_8F79_40E1_DDE7, "{name}");
                assert_eq!(state.lanes[24][lane], 0xEAF1_FF7B_5CEC_A249, "{name}");
            }
        }
        for keccak in KeccakX4::all() {
            check(keccak, keccak.name());
        }
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if let Some(keccak) = KeccakX8::avx512() {
            check(keccak, "avx512x8");
        }
    }

    /// Every four-way path against the portable one, chained over many permutations.
    #[test]
    fn vector_paths_match_the_portable_permutation() {
        let start = random_states::<X4>();
        let mut want = start.clone();
        for _ in 0..50 {
            KeccakX4::Portable.permute(&mut want);
        }
        for keccak in KeccakX4::all() {
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
            let mut want = MultiState::<X4>::new();
            for (want, start) in want.lanes.iter_mut().zip(&start.lanes) {
                want.copy_from_slice(&start[4 * half..4 * half + 4]);
            }
            for _ in 0..50 {
                KeccakX4::Portable.permute(&mut want);
            }
            for (got, want) in got.lanes.iter().zip(&want.lanes) {
                assert_eq!(got[4 * half..4 * half + 4], want[..]);
            }
        }
    }
}
