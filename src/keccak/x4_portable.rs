//! The portable four-way permutation: each word is a `[u64; 4]`, one entry per state. Plain
//! integer code for every target; the compiler may vectorise it with whatever the target has.

use super::multi::X4;

type Word = [u64; X4];

#[inline(always)]
fn xor(a: Word, b: Word) -> Word {
    [a[0] ^ b[0], a[1] ^ b[1], a[2] ^ b[2], a[3] ^ b[3]]
}

#[inline(always)]
fn xor3(a: Word, b: Word, c: Word) -> Word {
    xor(xor(a, b), c)
}

/// a ⊕ (¬b ∧ c).
#[inline(always)]
fn chi(a: Word, b: Word, c: Word) -> Word {
    [
        a[0] ^ (!b[0] & c[0]),
        a[1] ^ (!b[1] & c[1]),
        a[2] ^ (!b[2] & c[2]),
        a[3] ^ (!b[3] & c[3]),
    ]
}

#[inline(always)]
fn constant(value: u64) -> Word {
    [value; X4]
}

#[inline(always)]
fn rotate(a: Word, n: u32) -> Word {
    a.map(|w| w.rotate_left(n))
}

macro_rules! rol {
    ($w:expr, $n:literal) => {
        rotate($w, $n)
    };
}

/// Keccak-f\[1600\] on the four interleaved states, in place (no copy of the state to wipe).
pub(super) fn permute(state: &mut [Word; 25]) {
    super::keccak_f1600!(
        state,
        xor = xor,
        xor3 = xor3,
        chi = chi,
        rol = rol,
        constant = constant
    );
}
