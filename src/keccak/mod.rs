//! Keccak-f\[1600\] (FIPS 202 §3) and the SHA3-256, SHA3-512 and SHAKE128 sponges (§4, §6.1,
//! §6.2) on top of it, for the hash layer ([`crate::hash`]).
//!
//! # Layout
//!
//! - `sponge`: the one sponge engine (absorb `rate`-byte blocks as little-endian words, pad
//!   with the domain suffix and the final `0x80`, squeeze), written once over any state that
//!   exposes its 25 words, and cut at the permutations so that both drivers call its steps:
//! - [`Single`] (`single`): one state at a time, one job to completion or an incremental SHAKE128
//!   stream, on one of several single-state permutations: the `keccak` crate's (what the `sha3`
//!   and `shake` crates run), the 32-bit bit-interleaved one of `bits32` (32-bit targets), the
//!   64-bit one compiled with BMI1/BMI2 (`x86_bmi`: x86 with AVX2, no AVX-512), or one state of
//!   a four-way vector permutation (x86 with AVX-512);
//! - [`Multi`] (`lanes`): the lane runner, independent jobs spread over the states of a four- or
//!   eight-way permutation (`multi`: portable, AVX2, AVX-512), where all lanes of a vector
//!   permutation cost about as much as one.
//!
//! Every SIMD permutation takes a `crate::cpu` token, so the instruction-set cap applies to all
//! of them; a value built before a cap keeps its path.
//!
//! Every path is tested against the portable permutation and, through both drivers, against the
//! `sha3` and `shake` crates on every block boundary (unit tests in the submodules;
//! `tests/suite/batch.rs` also runs the KATs through each lane runner).

mod bits32;
mod lanes;
mod multi;
mod single;
mod sponge;
mod x4_portable;

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx512;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod x4_avx2;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod x86_bmi;

pub use lanes::Multi;
pub use single::{Shake128Stream, Single};

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

/// ρ's rotation offsets (FIPS 202 §3.2.2, Table 2), by word index `x + 5y`.
const RHO_OFFSETS: [u32; 25] = [
    0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14,
];

/// `x + 1 mod 5`, `x + 2 mod 5` and `x − 1 mod 5` for the column index of θ and χ (tables, since
/// the crate forbids `%`).
const NEXT: [usize; 5] = [1, 2, 3, 4, 0];
const NEXT2: [usize; 5] = [2, 3, 4, 0, 1];
const PREV: [usize; 5] = [4, 0, 1, 2, 3];
/// The column x of word `x + 5y` (a table, as above).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
const COLUMN: [usize; 25] = [
    0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4,
];

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

/// The 24 rounds of Keccak-f\[1600\] with the state streamed through memory, for 16 registers,
/// where the 25 words and θ's temporaries do not fit (the AVX2 four-way permutation and the
/// BMI1/BMI2 scalar one): each round reads `$state` and writes `$scratch`, the next one back (24
/// rounds: the result ends in `$state`; `$scratch` then holds round 23's input, to be wiped by
/// the caller).
///
/// A round first reads its input for θ's column parities C and effects D, then computes its five
/// output planes one after the other: the five input words of a plane are loaded, given their
/// column's D and rotated by ρ into their π positions (FIPS 202 §3.2.1–3.2.3: lane (x, y) moves
/// to (y, 2x + 3y)); χ and ι make the plane's output words, which are stored. Only D and a
/// plane's words stay in registers (10 words and a temporary): every word is loaded twice and
/// stored once per round, with no spill traffic besides. (C kept in registers and added up from
/// the stored words instead saves the second load but needs 15 registers and more: the compiler
/// then spills.) Same operations as [`keccak_f1600!`]; `$load(from, i)` and `$store(to, i,
/// value)` move word `i` (< 25) of `$state` or `$scratch`, which must be of one type (swapped
/// after every round); `$scratch` is stored in full by the first round before any load from it.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
macro_rules! keccak_f1600_streamed {
    (
        $state:expr,
        $scratch:expr,
        load = $load:ident,
        store = $store:ident,
        xor = $xor:ident,
        chi = $chi:ident,
        rol = $rol:ident,
        constant = $constant:ident
    ) => {{
        let (mut src, mut dst) = ($state, $scratch);
        for &rc in $crate::keccak::ROUND_CONSTANTS.iter() {
            let mut c = [$load(src, 0); 5];
            for x in 0..5 {
                c[x] = $xor(
                    $xor(
                        $xor($load(src, x), $load(src, x + 5)),
                        $xor($load(src, x + 10), $load(src, x + 15)),
                    ),
                    $load(src, x + 20),
                );
            }
            let d = [
                $xor(c[4], $rol!(c[1], 1)),
                $xor(c[0], $rol!(c[2], 1)),
                $xor(c[1], $rol!(c[3], 1)),
                $xor(c[2], $rol!(c[4], 1)),
                $xor(c[3], $rol!(c[0], 1)),
            ];
            // Output plane y takes input lane ((x + 3y) mod 5, x) into position x, rotated by
            // its ρ offset: (input word index, offset) per position.
            $crate::keccak::keccak_plane!(
                (src, dst, d, rc),
                ($load, $store, $xor, $chi, $rol, $constant),
                0,
                [(0, 0), (6, 44), (12, 43), (18, 21), (24, 14)]
            );
            $crate::keccak::keccak_plane!(
                (src, dst, d, rc),
                ($load, $store, $xor, $chi, $rol, $constant),
                1,
                [(3, 28), (9, 20), (10, 3), (16, 45), (22, 61)]
            );
            $crate::keccak::keccak_plane!(
                (src, dst, d, rc),
                ($load, $store, $xor, $chi, $rol, $constant),
                2,
                [(1, 1), (7, 6), (13, 25), (19, 8), (20, 18)]
            );
            $crate::keccak::keccak_plane!(
                (src, dst, d, rc),
                ($load, $store, $xor, $chi, $rol, $constant),
                3,
                [(4, 27), (5, 36), (11, 10), (17, 15), (23, 56)]
            );
            $crate::keccak::keccak_plane!(
                (src, dst, d, rc),
                ($load, $store, $xor, $chi, $rol, $constant),
                4,
                [(2, 62), (8, 55), (14, 39), (15, 41), (21, 2)]
            );
            core::mem::swap(&mut src, &mut dst);
        }
    }};
}
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) use keccak_f1600_streamed;

/// One output plane `$y` of [`keccak_f1600_streamed!`]: its inputs `(word index, ρ offset)` per
/// position; plane 0 also takes ι's constant.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
macro_rules! keccak_plane {
    (
        ($src:ident, $dst:ident, $d:ident, $rc:ident),
        ($load:ident, $store:ident, $xor:ident, $chi:ident, $rol:ident, $constant:ident),
        $y:literal,
        [$(($word:literal, $offset:literal)),*]
    ) => {{
        let b = [$($rol!(
            $xor($load($src, $word), $d[$crate::keccak::COLUMN[$word]]),
            $offset
        )),*];
        for x in 0..5 {
            let mut e = $chi(
                b[x],
                b[$crate::keccak::NEXT[x]],
                b[$crate::keccak::NEXT2[x]],
            );
            if $y == 0 && x == 0 {
                e = $xor(e, $constant($rc));
            }
            $store($dst, 5 * $y + x, e);
        }
    }};
}
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) use keccak_plane;

/// SHAKE128's rate in bytes (capacity 256 bits).
const SHAKE128_RATE: usize = 168;
/// SHA3-256's rate in bytes.
const SHA3_256_RATE: usize = 136;
/// SHA3-512's rate in bytes.
const SHA3_512_RATE: usize = 72;

/// Domain-separation bits plus the first padding bit (FIPS 202 §6, B.2): SHA-3 appends `01`,
/// SHAKE `1111`.
const SHA3_SUFFIX: u8 = 0x06;
const SHAKE_SUFFIX: u8 = 0x1F;

/// The FIPS 202 function of a [`Job`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Function {
    /// SHA3-256 (32-byte output).
    Sha3_256,
    /// SHA3-512 (64-byte output).
    Sha3_512,
    /// SHAKE128, any output length.
    Shake128,
}

impl Function {
    /// The rate in bytes (FIPS 202 §6: 1600 bits minus the capacity).
    const fn rate(self) -> usize {
        match self {
            Self::Sha3_256 => SHA3_256_RATE,
            Self::Sha3_512 => SHA3_512_RATE,
            Self::Shake128 => SHAKE128_RATE,
        }
    }

    /// The domain suffix with the first pad bit.
    const fn suffix(self) -> u8 {
        match self {
            Self::Sha3_256 | Self::Sha3_512 => SHA3_SUFFIX,
            Self::Shake128 => SHAKE_SUFFIX,
        }
    }
}

/// One hash computation: `function` of `input[0] ‖ input[1]` into all of `output`, then, if
/// given, a second one on bytes of that output ([`Then`]).
#[derive(Debug)]
pub struct Job<'a> {
    /// The hash function.
    pub function: Function,
    /// The input, as two parts (the second may be empty).
    pub input: [&'a [u8]; 2],
    /// Where the hash goes; its length is the output length (32 for SHA3-256, 64 for SHA3-512).
    pub output: &'a mut [u8],
    /// The job that starts on the same state once this one's output is written, if any.
    pub then: Option<Then<'a>>,
}

/// A job whose input is the output of the job before it, from byte `from` on: the FO
/// transform's secret stream XOF(r) after (K̂, r) = G(…), which then runs on lanes beside the
/// operation's other streams instead of before them.
#[derive(Debug)]
pub struct Then<'a> {
    /// The hash function.
    pub function: Function,
    /// Where in the previous job's output this job's input starts.
    pub from: usize,
    /// Where the hash goes.
    pub output: &'a mut [u8],
}

impl<'a> Job<'a> {
    /// The permutations this job and its follow-up take: one per absorbed block (the last one
    /// padded, so one more than the whole blocks of input), one more per further output block.
    fn permutations(&self) -> usize {
        let input = self.input[0].len() + self.input[1].len();
        let follow_up = self.then.as_ref().map_or(0, |then| {
            let input = self.output.len().saturating_sub(then.from);
            permutations(then.function, input, then.output.len())
        });
        permutations(self.function, input, self.output.len()) + follow_up
    }

    /// The follow-up job, once this job's output is written: its output is now the next one's
    /// input.
    fn into_next(self) -> Option<Job<'a>> {
        let then = self.then?;
        let done: &'a [u8] = self.output;
        Some(Job {
            function: then.function,
            input: [done.get(then.from..).unwrap_or_default(), &[]],
            output: then.output,
            then: None,
        })
    }
}

/// The permutations of one sponge run of `function` ([`Job::permutations`]).
fn permutations(function: Function, input: usize, output: usize) -> usize {
    let rate = function.rate();
    // Whole blocks by subtraction: the crate has no division (the lengths are public).
    let blocks = |mut len: usize| {
        let mut count = 0;
        while len >= rate {
            len -= rate;
            count += 1;
        }
        count
    };
    blocks(input) + 1 + blocks(output.saturating_sub(1))
}

// The constructors serve tests and benchmarks; the hash layer builds jobs from its own.
#[cfg(any(test, feature = "hazmat"))]
impl<'a> Job<'a> {
    /// SHAKE128 of `input` into `output`.
    pub fn shake128(input: &'a [u8], output: &'a mut [u8]) -> Self {
        Self {
            function: Function::Shake128,
            input: [input, &[]],
            output,
            then: None,
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
            then: None,
        }
    }

    /// SHA3-512 of `input[0] ‖ input[1]` into `output`.
    pub fn sha3_512_of(input: [&'a [u8]; 2], output: &'a mut [u8; 64]) -> Self {
        Self {
            function: Function::Sha3_512,
            input,
            output,
            then: None,
        }
    }
}

/// Keccak-f\[1600\] on one state (word `x + 5y` is lane (x, y)) with the permutation of
/// [`Single::fastest`]. The state is converted to and from that permutation's layout around the
/// call (on 32-bit targets: bit interleaving).
#[cfg(any(test, feature = "hazmat"))]
pub fn permute(state: &mut [u64; 25]) {
    Single::fastest().permute(state, 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keccak-f\[1600\] of the zero state (FIPS 202 test vector: first and last words, and the
    /// second application), through [`permute`] and through every single-state implementation.
    #[test]
    fn permutation_of_zero_matches_the_known_answer() {
        for single in Single::all() {
            let mut state = [0u64; 25];
            single.permute(&mut state, 1);
            assert_eq!(state[0], 0xF125_8F79_40E1_DDE7, "{}", single.name());
            assert_eq!(state[24], 0xEAF1_FF7B_5CEC_A249, "{}", single.name());
            single.permute(&mut state, 1);
            assert_eq!(state[0], 0x2D5C_954D_F96E_CB3C, "{}", single.name());
        }
        let mut state = [0u64; 25];
        permute(&mut state);
        assert_eq!(state[0], 0xF125_8F79_40E1_DDE7);
    }

    /// A job's permutations: the padded last input block, then one per further output block.
    #[test]
    fn permutations_count_blocks() {
        let input = [0u8; 400];
        let mut output = [0u8; 400];
        for (input_len, output_len, want) in [
            (0, 1, 1),
            (167, 168, 1),
            (168, 168, 2),
            (168, 169, 3),
            (32, 336, 2),
            (32, 337, 3),
        ] {
            let job = Job::shake128(&input[..input_len], &mut output[..output_len]);
            assert_eq!(job.permutations(), want, "{input_len} {output_len}");
        }
        let mut digest = [0u8; 32];
        assert_eq!(Job::sha3_256(&input[..136], &mut digest).permutations(), 2);
        assert_eq!(Job::sha3_256(&input[..135], &mut digest).permutations(), 1);
        // A follow-up's own: G of 64 bytes (one), then SHAKE128 of its last 32 bytes into 768
        // (five).
        let (mut kr, mut stream) = ([0u8; 64], [0u8; 768]);
        let mut chained = Job::sha3_512_of([&input[..64], &[]], &mut kr);
        chained.then = Some(Then {
            function: Function::Shake128,
            from: 32,
            output: &mut stream,
        });
        assert_eq!(chained.permutations(), 6);
    }

    /// `Function`'s rates and suffixes are FIPS 202's.
    #[test]
    fn rates_are_fips_202s() {
        assert_eq!(Function::Sha3_256.rate(), 200 - 2 * 32);
        assert_eq!(Function::Sha3_512.rate(), 200 - 2 * 64);
        assert_eq!(Function::Shake128.rate(), 200 - 2 * 16);
    }
}
