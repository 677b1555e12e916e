//! Keccak-f\[1600\] on 32-bit words, for 32-bit cores (FIPS 202 §3; the techniques are those
//! of the Keccak team's implementation overview, §2).
//!
//! - **Bit interleaving**: each 64-bit lane is held in two 32-bit words, its even bits in word 0
//!   and its odd bits in word 1 ([`split`], [`join`]). A 64-bit rotation is then two 32-bit
//!   rotations with no bits crossing between the words, which ARM folds into the operand of the
//!   instruction that uses the result (`eor r, a, b, ror #n`), and a rotation by 1 (θ) is one
//!   32-bit rotation and a swap. χ, θ and ι are bitwise, so each half of a row is computed on its
//!   own: a half-row reads one word of each of its five lanes, five registers' worth.
//! - **No π**: a round reads its lanes where they are and writes each χ output into one of the
//!   slots its row read ("in-place" renaming). Which slot is forced by the next round reading
//!   back in natural order: even rounds write lane (x, y) into slot (2x + y, 2x + 3y), odd
//!   rounds read it there and write lanes back into their own slots, so two rounds are written
//!   out and the layout repeats.
//! - **θ's parities from χ's outputs**: each half-row XORs its five outputs into the next
//!   round's column parities as it writes them, so a round reads each state word once.
//! - **Lane complementing** (optional, [`COMPLEMENTED`]): six lanes are held complemented, which
//!   turns χ's a ⊕ (¬b ∧ c) into AND/OR forms with one NOT per row instead of five, for cores
//!   without an and-not instruction (RV32I). Which lanes, and each row's formulas, follow from
//!   the pattern ([`plan`], checked against the portable permutation by the tests).
//!
//! Rounds are unrolled with literal indices (`unroll!`), so every slot, rotation amount and
//! formula is a compile-time constant, and a compiler barrier ([`barrier`]) after each half-row
//! keeps the state in memory: without it the compiler holds all 50 words as values across the
//! rounds and spills them, which costs more loads and stores than reading the state does.

use core::sync::atomic::{Ordering, compiler_fence};

use zeroize::Zeroize;

use super::sponge::Words;
use super::{NEXT, NEXT2, PREV, RHO_OFFSETS, ROUND_CONSTANTS};

/// Expands `$body` once per listed value, with `$i` that value as a constant.
macro_rules! unroll {
    ($i:ident in [$($n:literal),*] => $body:block) => {{
        $({
            const $i: usize = $n;
            $body
        })*
    }};
}

/// Moves the even bits of `x` to its low half and the odd bits to its high half, each in order
/// (an outer perfect unshuffle: four swaps of bit groups).
#[inline(always)]
const fn unshuffle(mut x: u32) -> u32 {
    x = swap(x, 0x2222_2222, 1);
    x = swap(x, 0x0C0C_0C0C, 2);
    x = swap(x, 0x00F0_00F0, 4);
    swap(x, 0x0000_FF00, 8)
}

/// The inverse of [`unshuffle`].
#[inline(always)]
const fn shuffle(mut x: u32) -> u32 {
    x = swap(x, 0x0000_FF00, 8);
    x = swap(x, 0x00F0_00F0, 4);
    x = swap(x, 0x0C0C_0C0C, 2);
    swap(x, 0x2222_2222, 1)
}

/// Exchanges the bits of `x` selected by `mask` with those `shift` places above them.
#[inline(always)]
const fn swap(x: u32, mask: u32, shift: u32) -> u32 {
    let t = (x ^ (x >> shift)) & mask;
    x ^ t ^ (t << shift)
}

/// The even and the odd bits of `lane`.
#[inline(always)]
const fn split(lane: u64) -> [u32; 2] {
    let low = unshuffle(lane as u32);
    let high = unshuffle((lane >> 32) as u32);
    [
        (low & 0xFFFF) | (high << 16),
        (low >> 16) | (high & 0xFFFF_0000),
    ]
}

/// The lane of its even and odd bits (inverse of [`split`]).
#[inline(always)]
const fn join([even, odd]: [u32; 2]) -> u64 {
    let low = shuffle((even & 0xFFFF) | (odd << 16));
    let high = shuffle((even >> 16) | (odd & 0xFFFF_0000));
    low as u64 | ((high as u64) << 32)
}

/// Word `half` of a lane rotated left by `n` (< 64), as (which word of the lane, by how much to
/// rotate it): bit 2k + j of the lane is bit k of word j, so rotating by 2m moves both words by
/// m, and by 2m + 1 the odd word becomes the even one moved by m + 1, the even one the odd one
/// moved by m.
const fn rotated_half(half: usize, n: u32) -> (usize, u32) {
    if n & 1 == 0 {
        (half, n >> 1)
    } else if half == 0 {
        (1, (n + 1) >> 1)
    } else {
        (0, n >> 1)
    }
}

/// Keeps the compiler from carrying `state`'s words across this point as values: it must store
/// them before and load them after (no instruction is emitted). Without it, the compiler holds
/// words across rows and rounds and spills them, which costs more than reading the state.
#[inline(always)]
fn barrier(state: &mut [u32; 50]) {
    let _ = state;
    compiler_fence(Ordering::SeqCst);
}

/// [`barrier`], and `words` computed by here and held in registers: without it the compiler
/// loads a round's words first and XORs them into θ's parities later, spilling them in between.
/// An empty `asm!` on the cores this code is for (no instruction); a fence elsewhere.
#[inline(always)]
fn pin(state: &mut [u32; 50], words: &mut [u32; 2]) {
    #[cfg(any(target_arch = "arm", target_arch = "riscv32"))]
    {
        let [x, y] = words;
        // SAFETY: the template is empty (a comment): it reads and writes only its operands'
        // registers; it may access memory as far as the compiler knows, which is the point.
        #[allow(unsafe_code)]
        unsafe {
            core::arch::asm!(
                "/* {0} {1} {2} */",
                in(reg) state.as_mut_ptr(),
                inout(reg) *x,
                inout(reg) *y,
                options(nostack, preserves_flags)
            );
        }
    }
    #[cfg(not(any(target_arch = "arm", target_arch = "riscv32")))]
    {
        let _ = words;
        barrier(state);
    }
}

/// The lanes held complemented when complementing is on, bit `x + 5y` for lane (x, y): (1, 0),
/// (2, 0), (3, 1), (2, 2), (2, 3), (0, 4). One of the patterns with the fewest NOTs (five per
/// round and word) under [`plan`]'s cost; found by exhaustive search over all 2^25 patterns.
pub(super) const COMPLEMENTED: u32 = 0x0012_1106;

/// `v mod 5` (the crate forbids `%`; compile-time tables only).
const fn mod5(mut v: usize) -> usize {
    while v >= 5 {
        v -= 5;
    }
    v
}

/// The lane tables below, by index `x + 5y`: the column x; the lane feeding χ's input
/// b\[x, y\] (π⁻¹: b\[x, y\] = a\[x + 3y, x\]); the slot of lane (x, y) between an even and an
/// odd round, (2x + y, 2x + 3y).
const fn lane_table(which: u8) -> [usize; 25] {
    let mut table = [0; 25];
    let mut y = 0;
    while y < 5 {
        let mut x = 0;
        while x < 5 {
            table[x + 5 * y] = match which {
                0 => x,
                1 => mod5(x + 3 * y) + 5 * x,
                _ => mod5(2 * x + y) + 5 * mod5(2 * x + 3 * y),
            };
            x += 1;
        }
        y += 1;
    }
    table
}

const COLUMN: [usize; 25] = lane_table(0);
const SOURCE: [usize; 25] = lane_table(1);
const MOVED: [usize; 25] = lane_table(2);

/// One χ output's formula: `l0 ^ (l1 op l2)`, then NOT if `not_out`, where `lk` is input k of
/// the output's row or, if `not_k`, its complement (computed once per row, see [`RowPlan`]).
#[derive(Clone, Copy)]
struct Output {
    not: [bool; 3],
    or: bool,
    not_out: bool,
}

/// A row's χ formulas: the inputs complemented once for the row, and each output's formula.
#[derive(Clone, Copy)]
struct RowPlan {
    not_inputs: [bool; 5],
    outputs: [Output; 5],
}

/// The χ formulas of all five rows under a complementing pattern.
#[derive(Clone, Copy)]
pub(super) struct Plan {
    rows: [RowPlan; 5],
}

/// Whether lane `i` is held complemented under `pattern`.
const fn held_complemented(pattern: u32, i: usize) -> bool {
    (pattern >> i) & 1 == 1
}

/// χ's formulas for the lanes complemented as in `pattern` (0: none), with as few NOTs as
/// possible: row by row, every set of inputs to complement once, and for each output the
/// literals and AND/OR whose value is its a ⊕ (¬b ∧ c) with the output's status (complemented
/// or not, as the next round expects), or one NOT more.
///
/// Statuses: a χ input b\[x, y\] is a lane after θ and ρ; ρ keeps a complement (a rotated all-ones
/// word is all-ones), θ flips lanes of column x when exactly one of columns x ± 1 has an odd
/// number of complemented lanes.
pub(super) const fn plan(pattern: u32) -> Plan {
    let mut column = [false; 5];
    let mut i = 0;
    while i < 25 {
        column[COLUMN[i]] ^= held_complemented(pattern, i);
        i += 1;
    }
    let mut rows = [RowPlan {
        not_inputs: [false; 5],
        outputs: [Output {
            not: [false; 3],
            or: false,
            not_out: false,
        }; 5],
    }; 5];
    let mut y = 0;
    while y < 5 {
        let mut input = [false; 5];
        let mut output = [false; 5];
        let mut x = 0;
        while x < 5 {
            let source = SOURCE[x + 5 * y];
            let d = column[PREV[COLUMN[source]]] ^ column[NEXT[COLUMN[source]]];
            input[x] = held_complemented(pattern, source) ^ d;
            output[x] = held_complemented(pattern, x + 5 * y);
            x += 1;
        }
        let mut best = u32::MAX;
        let mut set = 0;
        while set < 32 {
            let mut row = RowPlan {
                not_inputs: [false; 5],
                outputs: rows[y].outputs,
            };
            let mut cost = 0;
            let mut x = 0;
            while x < 5 {
                row.not_inputs[x] = (set >> x) & 1 == 1;
                cost += row.not_inputs[x] as u32;
                x += 1;
            }
            let mut x = 0;
            while x < 5 {
                let lanes = [x, NEXT[x], NEXT2[x]];
                match best_output(
                    [input[lanes[0]], input[lanes[1]], input[lanes[2]]],
                    output[x],
                    [
                        row.not_inputs[lanes[0]],
                        row.not_inputs[lanes[1]],
                        row.not_inputs[lanes[2]],
                    ],
                ) {
                    Some(out) => {
                        cost += out.not_out as u32;
                        row.outputs[x] = out;
                    }
                    None => cost = u32::MAX - 1,
                }
                x += 1;
            }
            if cost < best {
                best = cost;
                rows[y] = row;
            }
            set += 1;
        }
        y += 1;
    }
    Plan { rows }
}

/// The cheapest formula for one output whose inputs are held with `status` (complemented or
/// not) and `available` as complements, giving `out` status; `None` if no literal choice works.
const fn best_output(status: [bool; 3], out: bool, available: [bool; 3]) -> Option<Output> {
    let mut best: Option<Output> = None;
    let mut choice = 0;
    while choice < 16 {
        let not = [choice & 1 == 1, choice & 2 == 2, choice & 4 == 4];
        let or = choice & 8 == 8;
        choice += 1;
        if (not[0] && !available[0]) || (not[1] && !available[1]) || (not[2] && !available[2]) {
            continue;
        }
        // The term over the real values b, c of inputs 1 and 2: either ¬b ∧ c or its complement.
        let (mut same, mut opposite) = (true, true);
        let mut bits = 0;
        while bits < 4 {
            let (b, c) = (bits & 1 == 1, bits & 2 == 2);
            let l1 = b ^ status[1] ^ not[1];
            let l2 = c ^ status[2] ^ not[2];
            let term = if or { l1 | l2 } else { l1 & l2 };
            let want = !b & c;
            same &= term == want;
            opposite &= term != want;
            bits += 1;
        }
        if !same && !opposite {
            continue;
        }
        let held = status[0] ^ not[0] ^ opposite;
        let candidate = Output {
            not,
            or,
            not_out: held != out,
        };
        match best {
            Some(b) if !b.not_out || candidate.not_out => {}
            _ => best = Some(candidate),
        }
    }
    best
}

/// χ as written, a ⊕ (¬b ∧ c) for every output: for cores with an and-not instruction (ARM's
/// `bic`), where the NOT is free.
const PLAIN: Plan = {
    let direct = Output {
        not: [false, true, false],
        or: false,
        not_out: false,
    };
    Plan {
        rows: [RowPlan {
            not_inputs: [true; 5],
            outputs: [direct; 5],
        }; 5],
    }
};
const WITH_COMPLEMENTS: Plan = plan(COMPLEMENTED);

/// ι's constants, interleaved (two words per round).
const INTERLEAVED_ROUND_CONSTANTS: [[u32; 2]; 24] = {
    let mut out = [[0; 2]; 24];
    let mut r = 0;
    while r < 24 {
        out[r] = split(ROUND_CONSTANTS[r]);
        r += 1;
    }
    out
};

/// Whether lane `i`'s ρ offset is odd: its rotated words swap (see [`rotated_half`]).
const fn odd_rho(i: usize) -> bool {
    RHO_OFFSETS[i] & 1 == 1
}

/// The slot that holds lane `i` in round `r` of four: its own in even rounds, `MOVED[i]` in odd
/// ones.
const fn slot(r: usize, i: usize) -> usize {
    if r & 1 == 1 { MOVED[i] } else { i }
}

/// `EVEN_WORD[r][s]`: which word of slot `s` holds the even bits of its lane in round `r` of four.
///
/// A half-row writes its outputs over words that its row has read, and the other half of the
/// same row, computed after it, must still find its inputs: so half 0 of a lane goes into the
/// word that half 0 of its row read from that slot, which is the odd one when the lane there had
/// an odd ρ offset (its words swap). The choice flips per slot and round, and repeats every four
/// rounds (24 is a multiple of four: between permutations every lane is in its own slot, even
/// bits first).
const EVEN_WORD: [[usize; 25]; 4] = {
    let mut table = [[0; 25]; 4];
    let mut r = 0;
    while r < 3 {
        let mut i = 0;
        while i < 25 {
            // Lane `i` is in slot(r, i) now; its row writes the new lane of that slot's index
            // in round r + 1 (lanes move back and forth between the two slot maps).
            let now = slot(r, i);
            table[r + 1][now] = table[r][now] ^ (odd_rho(i) as usize);
            i += 1;
        }
        r += 1;
    }
    table
};

/// `FRAME[r][i][h]`: in round `r` of four of the lazy rounds ([`round`] with `LAZY`), word `h` of lane
/// `i` holds its value rotated right by this much. A χ output is computed in the frame of its
/// third input (below), so that every rotation folds into an operand; round 3 rotates its
/// outputs back, so that every four rounds, and between permutations, the state is plain.
const FRAME: [[[u32; 2]; 25]; 4] = {
    let mut frame = [[[0; 2]; 25]; 4];
    let mut r = 0;
    while r < 3 {
        let mut y = 0;
        while y < 5 {
            let mut x = 0;
            while x < 5 {
                let mut half = 0;
                while half < 2 {
                    let source = SOURCE[NEXT2[x] + 5 * y];
                    let (word, amount) = rotated_half(half, RHO_OFFSETS[source]);
                    frame[r + 1][x + 5 * y][half] = (frame[r][source][word] + amount) & 31;
                    half += 1;
                }
                x += 1;
            }
            y += 1;
        }
        r += 1;
    }
    frame
};

/// One round (round `R` of four) on `a` (50 words, the lane in slot `s` at words 2s and
/// 2s + 1), with the χ formulas of `plan`. If `LAZY` (cores that rotate an operand for free),
/// words are held rotated as [`FRAME`] says, and every rotation folds into an operand; `plan`
/// must then be [`PLAIN`].
#[inline(always)]
fn round<const R: usize, const LAZY: bool>(a: &mut [u32; 50], plan: &Plan, rc: [u32; 2]) {
    /// Word `half` (0: even bits) of lane `i` in round `r`.
    const fn word(r: usize, i: usize, half: usize) -> usize {
        2 * slot(r, i) + (EVEN_WORD[r & 3][slot(r, i)] ^ half)
    }
    /// How far word `half` of lane `i` is held rotated right in round `r`.
    const fn frame<const LAZY: bool>(r: usize, i: usize, half: usize) -> u32 {
        if LAZY { FRAME[r & 3][i][half] } else { 0 }
    }
    // θ: the column parities, then each column's D: its left neighbour's parity ⊕ its right
    // neighbour's rotated by 1.
    let mut c = [[0u32; 2]; 5];
    unroll!(X in [0, 1, 2, 3, 4] => {
        unroll!(Y in [0, 1, 2, 3, 4] => {
            unroll!(H in [0, 1] => {
                c[X][H] ^= a[word(R, X + 5 * Y, H)].rotate_left(frame::<LAZY>(R, X + 5 * Y, H));
            });
        });
        pin(a, &mut c[X]);
    });
    let mut d = [[0u32; 2]; 5];
    unroll!(X in [0, 1, 2, 3, 4] => {
        let (left, right) = (c[PREV[X]], c[NEXT[X]]);
        d[X] = [left[0] ^ right[1].rotate_left(1), left[1] ^ right[0]];
    });
    // Half by half, row by row: θ's D, ρ (π by the slots), χ, ι on lane (0, 0).
    unroll!(H in [0, 1] => {
        unroll!(Y in [0, 1, 2, 3, 4] => {
            // The χ inputs: b[x] = t[x] rotated left by f[x].
            let mut t = [0u32; 5];
            let mut f = [0u32; 5];
            unroll!(X in [0, 1, 2, 3, 4] => {
                let source = SOURCE[X + 5 * Y];
                let (half, amount) = rotated_half(H, RHO_OFFSETS[source]);
                let held = frame::<LAZY>(R, source, half);
                t[X] = a[word(R, source, half)] ^ d[COLUMN[source]][half].rotate_right(held);
                f[X] = (held + amount) & 31;
            });
            let row = &plan.rows[Y];
            unroll!(X in [0, 1, 2, 3, 4] => {
                let to = frame::<LAZY>(R + 1, X + 5 * Y, H);
                let value = if LAZY {
                    // b0 ⊕ (¬b1 ∧ b2) in the frame of b2, then turned to the frame it is held in.
                    let f2 = f[NEXT2[X]];
                    let b1 = t[NEXT[X]].rotate_left(f[NEXT[X]].wrapping_sub(f2) & 31);
                    let b0 = t[X].rotate_left(f[X].wrapping_sub(f2) & 31);
                    let mut value = (t[NEXT2[X]] & !b1) ^ b0;
                    if X == 0 && Y == 0 {
                        value ^= rc[H].rotate_right(f2);
                    }
                    value.rotate_left(f2.wrapping_sub(to) & 31)
                } else {
                    let out = &row.outputs[X];
                    let literal = |x: usize, not: bool| {
                        let b = t[x].rotate_left(f[x]);
                        if not { !b } else { b }
                    };
                    let l1 = literal(NEXT[X], out.not[1]);
                    let l2 = literal(NEXT2[X], out.not[2]);
                    let term = if out.or { l1 | l2 } else { l1 & l2 };
                    let mut value = literal(X, out.not[0]) ^ term;
                    if out.not_out {
                        value = !value;
                    }
                    if X == 0 && Y == 0 {
                        value ^= rc[H];
                    }
                    value
                };
                a[word(R + 1, X + 5 * Y, H)] = value;
            });
            barrier(a);
        });
    });
}

/// This target's variant (measurements in `embedded/RESULTS.md`): on RISC-V without Zbb,
/// neither and-not nor rotate instructions, complemented lanes and plain rotations; on ARMv7-M,
/// free operand rotations and `bic`, lazy rotations; on ARMv6-M (Cortex-M0/M0+: rotations by
/// register only, two-operand instructions) and elsewhere, plain. ARMv6-M is told apart from
/// ARMv7-M by its lack of 32-bit atomics, the one difference stable Rust exposes as a cfg.
#[cfg(target_arch = "riscv32")]
pub(super) type ForTarget = State<true, false>;
#[cfg(all(target_arch = "arm", target_has_atomic = "32"))]
pub(super) type ForTarget = State<false, true>;
#[cfg(not(any(
    target_arch = "riscv32",
    all(target_arch = "arm", target_has_atomic = "32")
)))]
pub(super) type ForTarget = State<false, false>;

/// A Keccak-f\[1600\] state of 50 words, lane `i` interleaved in words 2i and 2i + 1,
/// complemented per [`COMPLEMENTED`] if `COMPLEMENT`, permuted with lazy rotations if `LAZY`
/// (not both). Wiped on drop.
#[derive(Clone)]
pub(super) struct State<const COMPLEMENT: bool, const LAZY: bool> {
    words: [u32; 50],
}

impl<const COMPLEMENT: bool, const LAZY: bool> State<COMPLEMENT, LAZY> {
    const PLAN: Plan = {
        assert!(!(COMPLEMENT && LAZY), "lazy rotations take the plain χ");
        if COMPLEMENT { WITH_COMPLEMENTS } else { PLAIN }
    };

    /// The all-zero state (complemented lanes all-ones).
    #[inline(always)]
    pub(super) fn new() -> Self {
        let mut state = Self { words: [0; 50] };
        state.complement_lanes();
        state
    }

    /// Turns the zero words of a fresh state into the all-zero state (the complemented lanes
    /// all-ones), in place: a SHAKE stream is built where it is kept, without a copy.
    #[inline(always)]
    pub(super) fn complement_lanes(&mut self) {
        if COMPLEMENT {
            for (i, lane) in self.words.as_chunks_mut::<2>().0.iter_mut().enumerate() {
                if held_complemented(COMPLEMENTED, i) {
                    *lane = [u32::MAX; 2];
                }
            }
        }
    }

    /// A state of zero words, to be made fresh by [`Self::complement_lanes`].
    #[inline(always)]
    pub(super) const fn zero_words() -> Self {
        Self { words: [0; 50] }
    }

    /// Applies Keccak-f\[1600\]. Not inlined: one copy of the unrolled rounds.
    #[inline(never)]
    pub(super) fn permute(&mut self) {
        let a = &mut self.words;
        for four in INTERLEAVED_ROUND_CONSTANTS.as_chunks::<4>().0 {
            round::<0, LAZY>(a, &Self::PLAN, four[0]);
            round::<1, LAZY>(a, &Self::PLAN, four[1]);
            round::<2, LAZY>(a, &Self::PLAN, four[2]);
            round::<3, LAZY>(a, &Self::PLAN, four[3]);
        }
    }

    /// Whether lane `index` is held complemented, as a mask.
    #[inline(always)]
    fn mask(index: usize) -> u64 {
        if COMPLEMENT && held_complemented(COMPLEMENTED, index) {
            u64::MAX
        } else {
            0
        }
    }
}

impl<const COMPLEMENT: bool, const LAZY: bool> Words for State<COMPLEMENT, LAZY> {
    #[inline(always)]
    fn xor_word(&mut self, index: usize, value: u64) {
        let [even, odd] = split(value);
        self.words[2 * index] ^= even;
        self.words[2 * index + 1] ^= odd;
    }

    #[inline(always)]
    fn word(&self, index: usize) -> u64 {
        join([self.words[2 * index], self.words[2 * index + 1]]) ^ Self::mask(index)
    }

    #[inline(always)]
    fn xor_words(&mut self, first: usize, words: &[[u8; 8]]) {
        let lanes = self.words[2 * first..].as_chunks_mut::<2>().0;
        for (lane, word) in lanes.iter_mut().zip(words) {
            let [even, odd] = split(u64::from_le_bytes(*word));
            lane[0] ^= even;
            lane[1] ^= odd;
        }
    }
}

impl<const COMPLEMENT: bool, const LAZY: bool> Zeroize for State<COMPLEMENT, LAZY> {
    fn zeroize(&mut self) {
        self.words.as_mut_slice().zeroize();
    }
}

impl<const COMPLEMENT: bool, const LAZY: bool> Drop for State<COMPLEMENT, LAZY> {
    fn drop(&mut self) {
        self.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_lanes() -> [u64; 25] {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        core::array::from_fn(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
    }

    #[test]
    fn interleaving_round_trips_and_rotates_like_u64() {
        for lane in sample_lanes() {
            assert_eq!(join(split(lane)), lane);
            for n in 0..64 {
                let words = split(lane);
                let rotated: [u32; 2] = core::array::from_fn(|half| {
                    let (word, amount) = rotated_half(half, n);
                    words[word].rotate_left(amount)
                });
                assert_eq!(join(rotated), lane.rotate_left(n), "{n}");
            }
        }
        assert_eq!(
            split(0x5555_5555_5555_5555),
            [u32::MAX, 0],
            "even bits in word 0"
        );
    }

    /// The complemented pattern costs one NOT per row; the plain formulas complement each input
    /// once (one and-not per output).
    #[test]
    fn the_plans_have_the_expected_costs() {
        let cost = |plan: &Plan| -> usize {
            plan.rows
                .iter()
                .map(|row| {
                    row.not_inputs.iter().filter(|&&n| n).count()
                        + row.outputs.iter().filter(|o| o.not_out).count()
                })
                .sum()
        };
        assert_eq!(cost(&WITH_COMPLEMENTS), 5);
        assert_eq!(cost(&PLAIN), 25);
    }

    /// Every variant (plain, complemented, lazy) against the portable four-way permutation, chained over
    /// many permutations.
    #[test]
    fn both_variants_match_the_portable_permutation() {
        fn check<const C: bool, const LAZY: bool>() {
            let start = sample_lanes();
            let mut want = super::super::multi::MultiState::<4>::new();
            for (word, lane) in want.lanes.iter_mut().zip(start) {
                word[0] = lane;
            }
            let mut state = State::<C, LAZY>::new();
            for (i, lane) in start.into_iter().enumerate() {
                state.xor_word(i, lane);
            }
            for round in 0..20 {
                super::super::x4_portable::permute(&mut want.lanes);
                state.permute();
                for i in 0..25 {
                    assert_eq!(state.word(i), want.lanes[i][0], "{C} {round} {i}");
                }
            }
        }
        check::<false, false>();
        check::<true, false>();
        check::<false, true>();
    }
}
