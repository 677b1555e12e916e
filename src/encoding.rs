//! Bit packing: every Saber encoding is a little-endian bit stream in which coefficient `k` takes
//! bits `[k·w, (k+1)·w)`, least significant bit first (round-3 spec §2.2, `pack_unpack.c`).
//!
//! Packing keeps the low `w` bits of each coefficient: that mask is the only reduction mod p, T
//! or q the scheme performs.

use crate::poly::{N, Poly};

/// Bytes taken by one polynomial packed with `width` bits per coefficient.
pub const fn packed_len(width: u32) -> usize {
    (N * width as usize) >> 3
}

/// Packs the low `width` bits of 256 coefficients into `out` (`packed_len(width)` bytes).
///
/// The loop structure depends only on `width`, never on the data.
pub fn pack(coeffs: &[u16; N], width: u32, out: &mut [u8]) {
    debug_assert_eq!(out.len(), packed_len(width));
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

/// Unpacks coefficients of `width` bits from `bytes` (`out.len() · width / 8` bytes: 256
/// coefficients for a whole polynomial, fewer when a caller streams it in pieces); each result
/// lies in `[0, 2^width)`.
pub fn unpack(bytes: &[u8], width: u32, out: &mut [u16]) {
    debug_assert_eq!(bytes.len() * 8, out.len() * width as usize);
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

/// Packs a whole polynomial.
pub fn pack_poly(p: &Poly, width: u32, out: &mut [u8]) {
    pack(&p.coeffs, width, out);
}

/// Unpacks a whole polynomial.
pub fn unpack_poly(bytes: &[u8], width: u32) -> Poly {
    let mut p = Poly::ZERO;
    unpack(bytes, width, &mut p.coeffs);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_every_width() {
        for width in [1, 3, 4, 6, 10, 13] {
            let mut p = Poly::ZERO;
            for (k, c) in p.coeffs.iter_mut().enumerate() {
                *c = (k as u16).wrapping_mul(40503) & ((1 << width) - 1);
            }
            let mut buf = [0u8; packed_len(13)];
            let len = packed_len(width);
            pack_poly(&p, width, &mut buf[..len]);
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
        pack_poly(&p, 4, &mut out);
        assert_eq!(out[0], 0xA3);
        // 13 bits: coefficient 1 starts at bit 13.
        let mut p = Poly::ZERO;
        p.coeffs[1] = 0x1FFF;
        let mut out = [0u8; packed_len(13)];
        pack_poly(&p, 13, &mut out);
        assert_eq!(&out[..4], &[0x00, 0xE0, 0xFF, 0x03]);
    }
}
