//! The scheme's encodings: bit packing, the rounding of b and b', the message coding of c_m, and
//! the secret-key coding (round-3 spec §2.2, §2.5; `docs/saber-plus.md` §3.4).
//!
//! Every Saber encoding is a little-endian bit stream in which coefficient `k` takes bits
//! `[k·w, (k+1)·w)`, least significant bit first. Packing keeps the low `w` bits of each
//! coefficient: that mask is the only reduction mod p, T or q the scheme performs, so arithmetic
//! elsewhere is on `u16` with wrapping, and every backend correct mod 2^13 gives the reference's
//! bytes, for uSaber's q = 2^12 too (its 12-bit masks take the residues mod 2^12).
//!
//! # Speed
//!
//! Eight coefficients of `w` bits fill exactly `w` bytes, whatever `w`. The widths Saber uses
//! (13 for A and the secret key, 12 for uSaber's, 10 for b and b', ε_T = 3, 4, 6 for c_m, 4 for
//! Saber+ secret keys, 1 for messages) therefore go through `pack_groups` / `unpack_groups`,
//! which move one group of eight through one or two 64-bit words with shifts by constants (about
//! 3 instructions per coefficient instead of a bit loop's 20–45); on targets other than x86 the
//! wide ones (10, 12, 13 bits) go through 32-bit words instead, which 32-bit cores shift in one
//! instruction. Other widths take the bit loop.
//! Both are straight-line code: no branch or index depends on the coefficients or the bytes.

use subtle::Choice;
use zeroize::Zeroize;

use crate::params::{EP, Variant};
use crate::poly::{N, Poly, SecretPoly};

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx2;

/// Bytes taken by one polynomial packed with `width` bits per coefficient.
pub const fn packed_len(width: u32) -> usize {
    (N * width as usize) >> 3
}

/// Packs the low `width` bits of 256 coefficients into `out` (`packed_len(width)` bytes).
///
/// The loop structure depends only on `width`, never on the data.
pub fn pack(coeffs: &[u16; N], width: u32, out: &mut [u8]) {
    debug_assert_eq!(out.len(), packed_len(width));
    match width {
        1 => pack_groups::<1>(coeffs, out),
        3 => pack_groups::<3>(coeffs, out),
        4 => pack_groups::<4>(coeffs, out),
        6 => pack_groups::<6>(coeffs, out),
        10 => pack_wide::<10>(coeffs, out),
        12 => pack_wide::<12>(coeffs, out),
        13 => pack_wide::<13>(coeffs, out),
        _ => pack_bits(coeffs, width, out),
    }
}

/// Unpacks coefficients of `width` bits from `bytes` (`out.len() · width / 8` bytes: 256
/// coefficients for a whole polynomial, fewer when a caller streams it in pieces); each result
/// lies in `[0, 2^width)`.
pub fn unpack(bytes: &[u8], width: u32, out: &mut [u16]) {
    debug_assert_eq!(bytes.len() * 8, out.len() * width as usize);
    if out.len() & (GROUP - 1) != 0 {
        return unpack_bits(bytes, width, out);
    }
    match width {
        1 => unpack_groups::<1>(bytes, out),
        3 => unpack_groups::<3>(bytes, out),
        4 => unpack_groups::<4>(bytes, out),
        6 => unpack_groups::<6>(bytes, out),
        10 => unpack_wide::<10>(bytes, out),
        12 => unpack_wide::<12>(bytes, out),
        13 => unpack_wide::<13>(bytes, out),
        _ => unpack_bits(bytes, width, out),
    }
}

/// Coefficients per group: eight coefficients of `W` bits are `W` whole bytes.
pub(crate) const GROUP: usize = 8;

/// `W` little-endian bytes (`W <= 8`) as one word. Eight bytes are copied whole (one load); the
/// byte-wise form of shorter ones is what the compiler merges into a few loads.
#[inline(always)]
fn load_le<const W: usize>(bytes: &[u8]) -> u64 {
    if W == 8 {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[..8]);
        return u64::from_le_bytes(word);
    }
    let mut word = 0u64;
    for (k, &b) in bytes[..W].iter().enumerate() {
        word |= u64::from(b) << (8 * k);
    }
    word
}

/// Packs `coeffs` (a multiple of eight of them) with `W` bits each, one group of eight at a
/// time ([`pack_group`]).
pub(crate) fn pack_groups<const W: usize>(coeffs: &[u16], out: &mut [u8]) {
    debug_assert_eq!(coeffs.len() * W, out.len() * 8);
    for (group, bytes) in coeffs.chunks_exact(GROUP).zip(out.chunks_exact_mut(W)) {
        pack_group::<W>(core::array::from_fn(|i| group[i]), bytes);
    }
}

/// Packs the low `W` bits of eight coefficients into the `W` bytes of `bytes`. Callers that
/// compute coefficients just before packing them (rounding, message encoding) call it directly,
/// without a 256-entry temporary.
///
/// A group of `W <= 8` bits is one word. A wider one (`W <= 14`) is two overlapping words: `low`
/// is bits `0..64` of the group, `high` bits `8·(W − 8) .. 8·W`, so that its top `W − 8` bytes
/// are the group's last ones.
#[inline(always)]
pub(crate) fn pack_group<const W: usize>(group: [u16; GROUP], bytes: &mut [u8]) {
    const { assert!(W >= 1 && W <= 14) };
    let mask = (1u64 << W) - 1;
    if W <= 8 {
        let mut word = 0u64;
        for (i, &c) in group.iter().enumerate() {
            word |= (u64::from(c) & mask) << (W * i);
        }
        bytes[..W].copy_from_slice(&word.to_le_bytes()[..W]);
    } else {
        let high_start = 8 * (W - 8);
        let mut low = 0u64;
        let mut high = 0u64;
        // Every shift below is by a constant; the branches are on `i` and `W` only.
        for (i, &c) in group.iter().enumerate() {
            let c = u64::from(c) & mask;
            let at = W * i;
            if at < 64 {
                low |= c << at;
            }
            if at >= high_start {
                high |= c << (at - high_start);
            } else {
                high |= c >> (high_start - at);
            }
        }
        bytes[..8].copy_from_slice(&low.to_le_bytes());
        bytes[8..W].copy_from_slice(&high.to_le_bytes()[16 - W..]);
    }
}

/// Unpacks `out.len()` (a multiple of eight) coefficients of `W` bits from `bytes`, one group of
/// eight at a time; the word layout is that of [`pack_groups`].
///
/// With two words, coefficient `i` is read from `low` when it ends within bit 64
/// (`W·(i+1) <= 64`), else from `high`, which then contains it: the first such `i` is
/// `i > 64/W − 1`, and it starts at or after `high_start = 8·(W − 8)` when `i >= 8 − 64/W`,
/// implied for `W <= 14` (`64/W − 1 >= 8 − 64/W` iff `W <= 128/9`).
pub(crate) fn unpack_groups<const W: usize>(bytes: &[u8], out: &mut [u16]) {
    const { assert!(W >= 1 && W <= 14) };
    debug_assert_eq!(out.len() * W, bytes.len() * 8);
    let mask = (1u64 << W) - 1;
    for (group, bytes) in out.chunks_exact_mut(GROUP).zip(bytes.chunks_exact(W)) {
        if W <= 8 {
            let word = load_le::<W>(bytes);
            for (i, c) in group.iter_mut().enumerate() {
                *c = ((word >> (W * i)) & mask) as u16;
            }
        } else {
            let high_start = 8 * (W - 8);
            let low = load_le::<8>(bytes);
            let high = load_le::<8>(&bytes[W - 8..]);
            for (i, c) in group.iter_mut().enumerate() {
                let word = if W * (i + 1) <= 64 {
                    low >> (W * i)
                } else {
                    high >> (W * i - high_start)
                };
                *c = (word & mask) as u16;
            }
        }
    }
}

/// [`unpack_groups`] for the widths read L² + 2L times per operation (10, and 13 or 12): on x86
/// with an AVX2 path for most of the groups where the CPU has it (`encoding/avx2.rs`), elsewhere
/// with 32-bit words ([`group_fields`]). On x86 also c_m's width (`decode_message`).
pub(crate) fn unpack_wide<const W: usize>(bytes: &[u8], out: &mut [u16]) {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        let done = avx2::unpack::<W>(bytes, out);
        unpack_groups::<W>(&bytes[(done * W) >> 3..], &mut out[done..]);
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    unpack_words::<W>(bytes, out);
}

/// [`pack_groups`] for the widths written L times per operation (10 bits: b and b'; 13 or 12
/// bits: the secret key): on x86 with an AVX2 path for most of the groups where the CPU has it
/// (`encoding/avx2.rs`), elsewhere with 32-bit words ([`pack_group_words`]). On x86 also c_m's
/// width (`encode_message`).
pub(crate) fn pack_wide<const W: usize>(coeffs: &[u16], out: &mut [u8]) {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        let done = avx2::pack::<W>(coeffs, out);
        pack_groups::<W>(&coeffs[done..], &mut out[(done * W) >> 3..]);
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    pack_words::<W>(coeffs, out);
}

/// [`unpack_groups`] with 32-bit words ([`group_fields`]), for `8 < W <= 16`.
#[cfg(any(test, not(any(target_arch = "x86", target_arch = "x86_64"))))]
fn unpack_words<const W: usize>(bytes: &[u8], out: &mut [u16]) {
    const { assert!(W > 8 && W <= 16) };
    for (group, bytes) in out.chunks_exact_mut(GROUP).zip(bytes.chunks_exact(W)) {
        for (c, field) in group.iter_mut().zip(group_fields::<W>(bytes)) {
            *c = (field >> (32 - W)) as u16;
        }
    }
}

/// [`pack_groups`] with 32-bit words ([`pack_group_words`]), for `8 < W <= 16`.
#[cfg(any(test, not(any(target_arch = "x86", target_arch = "x86_64"))))]
fn pack_words<const W: usize>(coeffs: &[u16], out: &mut [u8]) {
    for (group, bytes) in coeffs.chunks_exact(GROUP).zip(out.chunks_exact_mut(W)) {
        pack_group_words::<W>(core::array::from_fn(|i| group[i]), bytes);
    }
}

/// The eight `W`-bit fields of a group of `W` bytes (`4 <= W <= 25`), each in the top `W` bits of
/// a word (below it: bits of the next fields), so that a right shift by `32 − W`, logical or
/// arithmetic, gives the field. One 32-bit little-endian load per field, from the field's first
/// byte or, near the end of the group, from its last four bytes; the shifts are constants, which
/// ARM and RISC-V turn into one bit-field extract with the load (the 64-bit words of
/// [`unpack_groups`] cost a pair of shifts per field on 32-bit cores).
#[inline(always)]
fn group_fields<const W: usize>(bytes: &[u8]) -> [u32; GROUP] {
    const { assert!(W >= 4 && W <= 25) };
    let bytes: &[u8; W] = bytes.try_into().expect("a group is W bytes");
    core::array::from_fn(|i| {
        let bit = W * i;
        let at = (bit >> 3).min(W - 4);
        let word = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        word << (32 - W - (bit - 8 * at))
    })
}

/// [`pack_group`] with 32-bit words, for `8 < W <= 16`: the fields ORed into a word until it is
/// full, each full word stored whole, the last `W mod 4` bytes one by one.
#[cfg(any(test, not(any(target_arch = "x86", target_arch = "x86_64"))))]
#[inline(always)]
fn pack_group_words<const W: usize>(group: [u16; GROUP], bytes: &mut [u8]) {
    const { assert!(W > 8 && W <= 16) };
    let bytes: &mut [u8; W] = bytes.try_into().expect("a group is W bytes");
    let mask = (1u32 << W) - 1;
    let mut word = 0u32;
    let mut used = 0;
    let mut at = 0;
    // Every shift and branch below depends on the position in the group and on `W` only.
    for &c in &group {
        let c = u32::from(c) & mask;
        word |= c << used;
        used += W;
        if used >= 32 {
            bytes[at..at + 4].copy_from_slice(&word.to_le_bytes());
            at += 4;
            used -= 32;
            // The top `used` bits of c, which did not fit (none when c ended the word).
            word = c >> (W - used);
        }
    }
    for (k, byte) in bytes[at..].iter_mut().enumerate() {
        *byte = (word >> (8 * k)) as u8;
    }
}

/// The bit loop for any width up to 16 (slices of any length).
fn pack_bits(coeffs: &[u16], width: u32, out: &mut [u8]) {
    let mask = (1u32 << width) - 1;
    let mut acc = 0u32;
    let mut bits = 0u32;
    let mut bytes = out.iter_mut();
    for &c in coeffs {
        acc |= (u32::from(c) & mask) << bits;
        bits += width;
        while bits >= 8 {
            if let Some(b) = bytes.next() {
                *b = acc as u8;
            }
            acc >>= 8;
            bits -= 8;
        }
    }
}

/// The bit loop for any width up to 16 (slices of any length).
fn unpack_bits(bytes: &[u8], width: u32, out: &mut [u16]) {
    let mask = (1u32 << width) - 1;
    let mut acc = 0u32;
    let mut bits = 0u32;
    let mut input = bytes.iter();
    for c in out.iter_mut() {
        while bits < width {
            let b = input.next().copied().unwrap_or(0);
            acc |= u32::from(b) << bits;
            bits += 8;
        }
        *c = (acc & mask) as u16;
        acc >>= width;
        bits -= width;
    }
}

/// Unpacks a whole polynomial.
#[cfg(test)]
pub fn unpack_poly(bytes: &[u8], width: u32) -> Poly {
    let mut p = Poly::ZERO;
    unpack(bytes, width, &mut p.coeffs);
    p
}

/// Rounding constant h1 = 2^(EQ − EP − 1) (spec §2.2).
const fn h1<V: Variant>() -> u16 {
    1 << (V::EQ - EP - 1)
}

/// h2 = 2^(EP−2) − 2^(EP−ET−1) + 2^(EQ−EP−1) (spec §2.2).
const fn h2<V: Variant>(et: u32) -> u16 {
    (1 << (EP - 2)) - (1 << (EP - et - 1)) + h1::<V>()
}

/// Mask for reduction mod p.
const P_MASK: u16 = (1 << EP) - 1;

/// Packs `round(x) = (x + h1) mod q >> (EQ − EP)`, the rounding of `b` and `b'` to EP bits (the
/// packing's mask to EP bits is the reduction mod q: bits EQ − EP .. EQ of `x + h1`). `x` is
/// the caller's finished sum, wiped after: on x86 it is rounded in place first (the compiler
/// vectorises the whole polynomial; no second polynomial on the stack), elsewhere each group is
/// rounded as it is packed into 32-bit words.
pub(crate) fn pack_rounded<V: Variant>(x: &mut Poly, out: &mut [u8]) {
    let round = |c: u16| c.wrapping_add(h1::<V>()) >> (V::EQ - EP);
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        for c in x.coeffs.iter_mut() {
            *c = round(*c);
        }
        pack_wide::<{ EP as usize }>(&x.coeffs, out);
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    for (group, bytes) in x
        .coeffs
        .chunks_exact(GROUP)
        .zip(out.chunks_exact_mut(EP as usize))
    {
        pack_group_words::<{ EP as usize }>(core::array::from_fn(|i| round(group[i])), bytes);
    }
}

/// c_m = (v' + h1 − 2^(EP−1)·m) mod p >> (EP − ET), packed with ET bits as it is computed. A
/// group of eight coefficients is one message byte (bit `i` for coefficient `i`, the 1-bit
/// packing).
pub(crate) fn encode_message<V: Variant, const ET: usize>(v: &Poly, m: &[u8; 32], ct_m: &mut [u8]) {
    let c_m = |vk: u16, byte: u8, i: usize| {
        let bit = u16::from(byte >> i) & 1;
        (vk.wrapping_add(h1::<V>()).wrapping_sub(bit << (EP - 1)) & P_MASK) >> (EP - ET as u32)
    };
    // On x86 all 256 coefficients first (a uniform loop the compiler vectorises), then the
    // packing with the AVX2 path, as `decode_message`.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        let mut coeffs = [0u16; N];
        for (k, (o, &vk)) in coeffs.iter_mut().zip(v.coeffs.iter()).enumerate() {
            *o = c_m(vk, m[k >> 3], k & 7);
        }
        pack_wide::<ET>(&coeffs, ct_m);
        coeffs.as_mut_slice().zeroize();
    }
    // Elsewhere each group packed as it is computed: no temporaries.
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    for ((group, &byte), bytes) in v
        .coeffs
        .chunks_exact(GROUP)
        .zip(m.iter())
        .zip(ct_m.chunks_exact_mut(ET))
    {
        pack_group::<ET>(core::array::from_fn(|i| c_m(group[i], byte, i)), bytes);
    }
}

/// m = (v + h2 − 2^(EP−ET)·c_m) mod p >> (EP − 1), one bit per coefficient, packed in place.
pub(crate) fn decode_message<V: Variant, const ET: usize>(v: &Poly, ct_m: &[u8]) -> [u8; 32] {
    let bit = |vk: u16, ck: u16| {
        (vk.wrapping_add(h2::<V>(ET as u32))
            .wrapping_sub(ck << (EP - ET as u32))
            & P_MASK)
            >> (EP - 1)
    };
    let mut m = [0u8; 32];
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        let mut c_m = Poly::ZERO;
        unpack_wide::<ET>(ct_m, &mut c_m.coeffs);
        // All 256 bits first, one per byte (a uniform loop the compiler vectorises), then each
        // group's eight bytes gathered into one by a multiplication: bit i of the message byte
        // is the product's term b_i·2^(8i)·2^(56 − 7i); every other term is a distinct power of
        // two below bit 56 or past bit 63, so nothing carries into the top byte.
        let mut bits = [0u8; N];
        for ((b, &vk), &ck) in bits.iter_mut().zip(v.coeffs.iter()).zip(c_m.coeffs.iter()) {
            *b = bit(vk, ck) as u8;
        }
        for (byte, group) in m.iter_mut().zip(bits.as_chunks::<GROUP>().0) {
            *byte = (u64::from_le_bytes(*group).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8;
        }
        bits.as_mut_slice().zeroize();
    }
    // Elsewhere a message byte per group of eight, from its ET bytes of c_m: no temporaries.
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    for ((group, bytes), byte) in v
        .coeffs
        .chunks_exact(GROUP)
        .zip(ct_m.chunks_exact(ET))
        .zip(m.iter_mut())
    {
        let word = load_le::<ET>(bytes);
        let mask = (1u64 << ET) - 1;
        for (i, &vk) in group.iter().enumerate() {
            let ck = ((word >> (ET * i)) & mask) as u16;
            *byte |= (bit(vk, ck) as u8) << i;
        }
    }
    m
}

/// Writes one secret polynomial in the secret-key coding: `SECRET_KEY_BITS`-bit two's complement
/// (13 bits for round 3: −3 → 0x1FFD; 12 for uSaber: −2 → 0xFFE; 4-bit nibbles for Saber+, even
/// coefficient low).
pub(crate) fn encode_secret<V: Variant>(s: &SecretPoly, out: &mut [u8]) {
    let mut wide = s.coeffs.map(|c| c as i16 as u16);
    pack(&wide, V::SECRET_KEY_BITS, out);
    // As a slice: one bulk fill (an array would take a volatile store per coefficient).
    wide.as_mut_slice().zeroize();
}

/// Reads one secret polynomial; the returned flag is set only if every coefficient lies in
/// `range` (inclusive), the set's secret range. Constant time.
pub(crate) fn decode_secret<V: Variant>(
    bytes: &[u8],
    range: (i32, i32),
    out: &mut SecretPoly,
) -> Choice {
    let (low, high) = range;
    // The sign bit of `outside` ends up set iff some coefficient lies outside the range.
    let mut outside = 0i32;
    secret_fields::<V>(bytes, out, |o, v| {
        outside |= (v - low) | (high - v);
        *o = v as i8;
    });
    Choice::from((((outside as u32) >> 31) ^ 1) as u8)
}

/// [`decode_secret`] without the range check, for keys whose range was checked when they were
/// built (a field outside `i8` would wrap; a checked key has none).
pub(crate) fn read_secret<V: Variant>(bytes: &[u8], out: &mut SecretPoly) {
    secret_fields::<V>(bytes, out, |o, v| *o = v as i8);
}

/// `take(out[k], v)` for each coefficient `v` of the secret-key coding of `bytes`, the
/// two's-complement fields sign-extended straight from the packing.
#[inline(always)]
fn secret_fields<V: Variant>(
    bytes: &[u8],
    out: &mut SecretPoly,
    mut take: impl FnMut(&mut i8, i32),
) {
    let width = V::SECRET_KEY_BITS;
    let shift = 32 - width;
    // A field in the top bits of a word: sign-extended by the arithmetic shift.
    let mut field = |o: &mut i8, field: u32| take(o, (field as i32) >> shift);
    // Each field from its word, without a temporary; on x86 `unpack` (AVX2 for 12 and 13 bits)
    // and a uniform loop the compiler vectorises are faster (BENCHMARKS.md, issue 18).
    let by_field = !cfg!(any(target_arch = "x86", target_arch = "x86_64"));
    match width {
        4 if by_field => each_field::<4>(bytes, &mut out.coeffs, field),
        12 if by_field => each_field::<12>(bytes, &mut out.coeffs, field),
        13 if by_field => each_field::<13>(bytes, &mut out.coeffs, field),
        _ => {
            let mut wide = [0u16; N];
            unpack(bytes, width, &mut wide);
            for (o, &w) in out.coeffs.iter_mut().zip(wide.iter()) {
                field(o, u32::from(w) << shift);
            }
            wide.as_mut_slice().zeroize();
        }
    }
}

/// `take(out[k], field k)` for the `W`-bit fields of `bytes`, each in the top bits of a word
/// ([`group_fields`]).
#[inline(always)]
fn each_field<const W: usize>(bytes: &[u8], out: &mut [i8], mut take: impl FnMut(&mut i8, u32)) {
    for (group, bytes) in out.chunks_exact_mut(GROUP).zip(bytes.chunks_exact(W)) {
        for (o, field) in group.iter_mut().zip(group_fields::<W>(bytes)) {
            take(o, field);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_constants_match_the_spec() {
        use crate::params::Round3;
        assert_eq!(h1::<Round3>(), 4);
        assert_eq!(
            [h2::<Round3>(3), h2::<Round3>(4), h2::<Round3>(6)],
            [196, 228, 252]
        );
        // uSaber, q = 2^12: h1 = 2, and h2 two less.
        use crate::params::Uniform;
        assert_eq!(h1::<Uniform>(), 2);
        assert_eq!(
            [h2::<Uniform>(3), h2::<Uniform>(4), h2::<Uniform>(6)],
            [194, 226, 250]
        );
    }

    /// The message coding against the spec's formulas coefficient by coefficient (§2.5,
    /// Algorithms 2 and 3), for every ε_T and both moduli q: x86 computes whole polynomials and
    /// packs them on the AVX2 path, gathering the message bits by a multiplication.
    #[test]
    fn message_coding_matches_the_formulas() {
        fn check<V: Variant, const ET: usize>() {
            for seed in 1..8 {
                let mut v = Poly::ZERO;
                for (c, r) in v.coeffs.iter_mut().zip(noise(seed)) {
                    *c = r as u16;
                }
                let m: [u8; 32] =
                    core::array::from_fn(|i| (seed as u8).wrapping_mul(37) ^ (i as u8 * 11));
                let mut ct_m = [0u8; 32 * 6];
                encode_message::<V, ET>(&v, &m, &mut ct_m[..32 * ET]);
                let c_m = unpack_poly(&ct_m[..32 * ET], ET as u32);
                for k in 0..N {
                    let bit = u16::from(m[k >> 3] >> (k & 7)) & 1;
                    let expected = (v.coeffs[k]
                        .wrapping_add(h1::<V>())
                        .wrapping_sub(bit << (EP - 1))
                        & P_MASK)
                        >> (EP - ET as u32);
                    assert_eq!(c_m.coeffs[k], expected, "encode, ET {ET}, coefficient {k}");
                }
                let decoded = decode_message::<V, ET>(&v, &ct_m[..32 * ET]);
                for k in 0..N {
                    let expected = (v.coeffs[k]
                        .wrapping_add(h2::<V>(ET as u32))
                        .wrapping_sub(c_m.coeffs[k] << (EP - ET as u32))
                        & P_MASK)
                        >> (EP - 1);
                    assert_eq!(
                        u16::from(decoded[k >> 3] >> (k & 7)) & 1,
                        expected,
                        "decode, ET {ET}, bit {k}"
                    );
                }
            }
        }
        check::<crate::params::Round3, 3>();
        check::<crate::params::Round3, 4>();
        check::<crate::params::Round3, 6>();
        check::<crate::params::Uniform, 3>();
        check::<crate::params::Uniform, 4>();
        check::<crate::params::Uniform, 6>();
    }

    /// A deterministic pseudo-random sequence (xorshift64).
    fn noise(seed: u64) -> impl Iterator<Item = u64> {
        let mut x = seed | 1;
        core::iter::repeat_with(move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
    }

    /// The grouped routines against the bit loops, for every width they support, with junk
    /// above the width in every coefficient (packing must drop it).
    #[test]
    fn groups_match_the_bit_loop() {
        fn check<const W: usize>() {
            // Every seed takes every path; Miri (~1000× slower) runs two of them.
            let seeds = if cfg!(miri) { 3 } else { 20 };
            for seed in 1..seeds {
                let mut coeffs = [0u16; N];
                for (c, r) in coeffs.iter_mut().zip(noise(seed)) {
                    *c = r as u16;
                }
                let len = packed_len(W as u32);
                let (mut fast, mut slow) = ([0u8; packed_len(14)], [0u8; packed_len(14)]);
                pack_groups::<W>(&coeffs, &mut fast[..len]);
                pack_bits(&coeffs, W as u32, &mut slow[..len]);
                assert_eq!(fast[..len], slow[..len], "pack, width {W}");
                {
                    let mut wide = [0u8; packed_len(14)];
                    pack_wide::<W>(&coeffs, &mut wide[..len]);
                    assert_eq!(wide[..len], slow[..len], "pack_wide, width {W}");
                    // Pieces, and a buffer longer than the packing (bytes past it untouched).
                    for log_pieces in 0..6 {
                        let (count, piece_bytes) = (N >> log_pieces, len >> log_pieces);
                        let mut wide = [0xA5u8; packed_len(14)];
                        for (c, o) in coeffs
                            .chunks_exact(count)
                            .zip(wide[..len].chunks_exact_mut(piece_bytes))
                        {
                            pack_wide::<W>(c, o);
                        }
                        assert_eq!(
                            wide[..len],
                            slow[..len],
                            "pack_wide in 2^{log_pieces} pieces, width {W}"
                        );
                        assert!(wide[len..].iter().all(|&b| b == 0xA5));
                    }
                }
                let mut bytes = [0u8; packed_len(14)];
                for (b, r) in bytes.iter_mut().zip(noise(seed + 100)) {
                    *b = r as u8;
                }
                let (mut fast, mut slow) = ([0u16; N], [0u16; N]);
                unpack_groups::<W>(&bytes[..len], &mut fast);
                unpack_bits(&bytes[..len], W as u32, &mut slow);
                assert_eq!(fast, slow, "unpack, width {W}");
                {
                    let mut wide = [0u16; N];
                    unpack_wide::<W>(&bytes[..len], &mut wide);
                    assert_eq!(wide, slow, "unpack_wide, width {W}");
                    for log_pieces in 0..6 {
                        let (coeffs, piece_bytes) = (N >> log_pieces, len >> log_pieces);
                        let mut wide = [0u16; N];
                        for (o, b) in wide
                            .chunks_exact_mut(coeffs)
                            .zip(bytes[..len].chunks_exact(piece_bytes))
                        {
                            unpack_wide::<W>(b, o);
                        }
                        assert_eq!(
                            wide, slow,
                            "unpack_wide in 2^{log_pieces} pieces, width {W}"
                        );
                    }
                }
                // A piece of a polynomial (64 coefficients), as streaming callers use.
                unpack_groups::<W>(&bytes[..len >> 2], &mut fast[..N >> 2]);
                assert_eq!(fast[..N >> 2], slow[..N >> 2], "unpack piece, width {W}");
            }
        }
        check::<1>();
        check::<2>();
        check::<3>();
        check::<4>();
        check::<5>();
        check::<6>();
        check::<7>();
        check::<8>();
        check::<9>();
        check::<10>();
        check::<11>();
        check::<12>();
        check::<13>();
        check::<14>();
    }

    /// The 32-bit-word forms (pack_wide and unpack_wide on targets other than x86) against the
    /// bit loops, with junk above the width in every coefficient.
    #[test]
    fn words_match_the_bit_loop() {
        fn check<const W: usize>() {
            let len = packed_len(W as u32);
            for seed in 1..20 {
                let mut coeffs = [0u16; N];
                for (c, r) in coeffs.iter_mut().zip(noise(seed)) {
                    *c = r as u16;
                }
                let (mut words, mut bits) = ([0u8; packed_len(16)], [0u8; packed_len(16)]);
                pack_words::<W>(&coeffs, &mut words[..len]);
                pack_bits(&coeffs, W as u32, &mut bits[..len]);
                assert_eq!(words[..len], bits[..len], "pack_words, width {W}");
                let (mut words, mut bits) = ([0u16; N], [0u16; N]);
                unpack_words::<W>(&bytes_of(seed, len)[..len], &mut words);
                unpack_bits(&bytes_of(seed, len)[..len], W as u32, &mut bits);
                assert_eq!(words, bits, "unpack_words, width {W}");
            }
        }
        fn bytes_of(seed: u64, len: usize) -> [u8; packed_len(16)] {
            let mut bytes = [0u8; packed_len(16)];
            for (b, r) in bytes[..len].iter_mut().zip(noise(seed + 100)) {
                *b = r as u8;
            }
            bytes
        }
        check::<9>();
        check::<10>();
        check::<11>();
        check::<12>();
        check::<13>();
        check::<14>();
        check::<15>();
        check::<16>();
    }

    #[test]
    fn round_trip_every_width() {
        for width in [1, 3, 4, 6, 10, 12, 13] {
            let mut p = Poly::ZERO;
            for (k, c) in p.coeffs.iter_mut().enumerate() {
                *c = (k as u16).wrapping_mul(40503) & ((1 << width) - 1);
            }
            let mut buf = [0u8; packed_len(13)];
            let len = packed_len(width);
            pack(&p.coeffs, width, &mut buf[..len]);
            assert_eq!(unpack_poly(&buf[..len], width), p, "width {width}");
        }
    }

    #[test]
    fn layout_is_lsb_first() {
        // ET = 4: two coefficients per byte, low nibble first (round-3 spec).
        let mut p = Poly::ZERO;
        p.coeffs[0] = 0x3;
        p.coeffs[1] = 0xA;
        let mut out = [0u8; packed_len(4)];
        pack(&p.coeffs, 4, &mut out);
        assert_eq!(out[0], 0xA3);
        // 13 bits: coefficient 1 starts at bit 13.
        let mut p = Poly::ZERO;
        p.coeffs[1] = 0x1FFF;
        let mut out = [0u8; packed_len(13)];
        pack(&p.coeffs, 13, &mut out);
        assert_eq!(&out[..4], &[0x00, 0xE0, 0xFF, 0x03]);
    }
}
