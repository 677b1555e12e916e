//! Karatsuba multiplication with a small fixed working set (under 0.7 KB of stack), for the
//! low-memory mode on microcontrollers.
//!
//! # Method
//!
//! One Karatsuba level on halves of size h:
//! `a·b = a0·b0·(1 − x^h) + a1·b1·(x^{2h} − x^h) + (a0 + a1)·(b0 + b1)·x^h`.
//! Five levels take 256 down to 8 (243 products of 8 × 8, 15,552 multiplications instead of
//! 65,536). The usual recursion keeps each level's operand sums and its middle product alive
//! (about 8n bytes for n = 256); here the two top levels are *unrolled into leaves* instead: each
//! of the 3² = 9 paths (low, high or sum at each level) names the 64-coefficient blocks whose
//! sum is its operand, and the (offset, sign) pairs at which its product enters the result. A
//! leaf's operands are gathered, its 64 × 64 product is computed into a 127-coefficient buffer
//! (by the same unrolling, two levels down to 16 × 16, which is one more Karatsuba level over
//! register-resident 8 × 8 product scanning), and added to the accumulator
//! at its at most four places, reducing by x^256 = −1 on the way (Karmakar et al., "Saber on
//! ARM", TCHES 2018, §4, compute Karatsuba in place for the same reason; this layout is ours).
//!
//! # Bounds
//!
//! All arithmetic is on `u16` residues with wrapping (mod 2^16): Karatsuba uses only additions,
//! subtractions and multiplications, so every intermediate value is exact mod 2^16, hence the
//! result is exact mod 2^13 (the contract). No bound on the inputs is needed beyond the type.
//!
//! # Constant time
//!
//! Every loop bound, index and branch depends only on the fixed Karatsuba structure.
//!
//! # Memory
//!
//! `Prepared` is the secret itself, two coefficients per byte (128 B), `Accumulator` the plain
//! result (512 B); `mul_acc` uses two 64-coefficient operands, a 127-coefficient product and the
//! 16 × 16 level's small buffers (measured peak in `embedded/RESULTS.md`).

use crate::poly::{N, Poly};
use crate::polymul::PackedSecret;

/// Size of the products materialised in a buffer (two levels below N).
const MID: usize = N >> 2;
/// Size of the schoolbook products (two levels below MID).
const LEAF: usize = MID >> 2;

/// One of the 3² leaves of two unrolled Karatsuba levels over a span of `n` coefficients.
struct Leaf {
    /// Starts of the blocks (size n/4) whose sum is the leaf's operand.
    starts: [usize; 4],
    blocks: usize,
    /// Offsets and signs (`true` = subtract) at which the leaf's product enters the result.
    places: [(usize, bool); 4],
    count: usize,
}

/// Branch 0 takes the low halves, 1 the high halves, 2 their sums (half size `h`): the blocks
/// it reads relative to the span start, and where its product goes.
fn branch(which: usize, h: usize) -> ([usize; 2], usize, [(usize, bool); 2], usize) {
    match which {
        0 => ([0, 0], 1, [(0, false), (h, true)], 2),
        1 => ([h, 0], 1, [(2 * h, false), (h, true)], 2),
        _ => ([0, h], 2, [(h, false), (0, false)], 1),
    }
}

impl Leaf {
    fn new(n: usize, outer: usize, inner: usize) -> Self {
        let (outer_starts, outer_blocks, outer_places, outer_count) = branch(outer, n >> 1);
        let (inner_starts, inner_blocks, inner_places, inner_count) = branch(inner, n >> 2);
        let mut leaf = Leaf {
            starts: [0; 4],
            blocks: 0,
            places: [(0, false); 4],
            count: 0,
        };
        for &o in &outer_starts[..outer_blocks] {
            for &i in &inner_starts[..inner_blocks] {
                leaf.starts[leaf.blocks] = o + i;
                leaf.blocks += 1;
            }
        }
        for &(o, o_neg) in &outer_places[..outer_count] {
            for &(i, i_neg) in &inner_places[..inner_count] {
                leaf.places[leaf.count] = (o + i, o_neg ^ i_neg);
                leaf.count += 1;
            }
        }
        leaf
    }

    /// `out[k] = Σ_blocks src[start + k]`, mod 2^16.
    fn gather<const W: usize>(&self, src: &[u16], out: &mut [u16; W]) {
        out.copy_from_slice(&src[self.starts[0]..self.starts[0] + W]);
        for &start in &self.starts[1..self.blocks] {
            for (o, &x) in out.iter_mut().zip(&src[start..start + W]) {
                *o = o.wrapping_add(x);
            }
        }
    }
}

/// Half a leaf: the size of the products computed in registers.
const HALF: usize = LEAF >> 1;

/// 8 × 8 schoolbook, product-scanning: each of the fifteen outputs is one chain of
/// multiply-adds over operands held in registers (both operands are sixteen values, and a
/// column never needs more than one accumulator), so nothing spills.
#[inline(always)]
fn schoolbook_half(a: &[u32; HALF], b: &[u32; HALF]) -> [u32; 2 * HALF - 1] {
    macro_rules! column {
        ($(($i:literal, $j:literal)),+) => {
            0u32 $(.wrapping_add(a[$i].wrapping_mul(b[$j])))+
        };
    }
    [
        column!((0, 0)),
        column!((0, 1), (1, 0)),
        column!((0, 2), (1, 1), (2, 0)),
        column!((0, 3), (1, 2), (2, 1), (3, 0)),
        column!((0, 4), (1, 3), (2, 2), (3, 1), (4, 0)),
        column!((0, 5), (1, 4), (2, 3), (3, 2), (4, 1), (5, 0)),
        column!((0, 6), (1, 5), (2, 4), (3, 3), (4, 2), (5, 1), (6, 0)),
        column!(
            (0, 7),
            (1, 6),
            (2, 5),
            (3, 4),
            (4, 3),
            (5, 2),
            (6, 1),
            (7, 0)
        ),
        column!((1, 7), (2, 6), (3, 5), (4, 4), (5, 3), (6, 2), (7, 1)),
        column!((2, 7), (3, 6), (4, 5), (5, 4), (6, 3), (7, 2)),
        column!((3, 7), (4, 6), (5, 5), (6, 4), (7, 3)),
        column!((4, 7), (5, 6), (6, 5), (7, 4)),
        column!((5, 7), (6, 6), (7, 5)),
        column!((6, 7), (7, 6)),
        column!((7, 7)),
    ]
}

/// 16 × 16 product (31 coefficients), mod 2^16: one more Karatsuba level over
/// [`schoolbook_half`] (three 8 × 8 products instead of four),
/// `low + x^8·(middle − low − high) + x^16·high`, each half product added in as soon as it is
/// computed, so that one is alive at a time (the stack of the products' deepest frame).
#[inline(always)]
fn schoolbook_leaf(a: &[u16; LEAF], b: &[u16; LEAF], out: &mut [u16; 2 * LEAF - 1]) {
    // Residues mod 2^16, widened so that the products need no masking.
    let a0: [u32; HALF] = core::array::from_fn(|k| u32::from(a[k]));
    let b0: [u32; HALF] = core::array::from_fn(|k| u32::from(b[k]));
    let a1: [u32; HALF] = core::array::from_fn(|k| u32::from(a[k + HALF]));
    let b1: [u32; HALF] = core::array::from_fn(|k| u32::from(b[k + HALF]));
    out.fill(0);
    let low = schoolbook_half(&a0, &b0);
    for (k, &p) in low.iter().enumerate() {
        out[k] = out[k].wrapping_add(p as u16);
        out[k + HALF] = out[k + HALF].wrapping_sub(p as u16);
    }
    let high = schoolbook_half(&a1, &b1);
    for (k, &p) in high.iter().enumerate() {
        out[k + LEAF] = out[k + LEAF].wrapping_add(p as u16);
        out[k + HALF] = out[k + HALF].wrapping_sub(p as u16);
    }
    let a_sum: [u32; HALF] = core::array::from_fn(|k| a0[k] + a1[k]);
    let b_sum: [u32; HALF] = core::array::from_fn(|k| b0[k] + b1[k]);
    let middle = schoolbook_half(&a_sum, &b_sum);
    for (k, &p) in middle.iter().enumerate() {
        out[k + HALF] = out[k + HALF].wrapping_add(p as u16);
    }
}

/// `out = a · b` (127 coefficients, no reduction), mod 2^16.
fn product_mid(a: &[u16; MID], b: &[u16; MID], out: &mut [u16; 2 * MID - 1]) {
    out.fill(0);
    let mut a_leaf = [0u16; LEAF];
    let mut b_leaf = [0u16; LEAF];
    let mut product = [0u16; 2 * LEAF - 1];
    for outer in 0..3 {
        for inner in 0..3 {
            let leaf = Leaf::new(MID, outer, inner);
            leaf.gather(a, &mut a_leaf);
            leaf.gather(b, &mut b_leaf);
            schoolbook_leaf(&a_leaf, &b_leaf, &mut product);
            for &(offset, negate) in &leaf.places[..leaf.count] {
                let target = &mut out[offset..offset + product.len()];
                if negate {
                    for (t, &p) in target.iter_mut().zip(&product) {
                        *t = t.wrapping_sub(p);
                    }
                } else {
                    for (t, &p) in target.iter_mut().zip(&product) {
                        *t = t.wrapping_add(p);
                    }
                }
            }
        }
    }
}

/// `acc += sign · product · x^offset` mod (x^256 + 1), for `offset < 2N`.
fn add_negacyclic(acc: &mut [u16; N], product: &[u16; 2 * MID - 1], offset: usize, negate: bool) {
    // x^256 = −1: an offset past N flips the sign.
    let (offset, negate) = if offset >= N {
        (offset - N, !negate)
    } else {
        (offset, negate)
    };
    let direct = (N - offset).min(product.len());
    let (low, wrapped) = product.split_at(direct);
    // Wrapped terms land below `offset` (product.len() < N), so the two ranges are disjoint.
    let (front, back) = acc.split_at_mut(offset);
    let (head, tail) = (&mut back[..direct], &mut front[..wrapped.len()]);
    if negate {
        head.iter_mut()
            .zip(low)
            .for_each(|(t, &p)| *t = t.wrapping_sub(p));
        tail.iter_mut()
            .zip(wrapped)
            .for_each(|(t, &p)| *t = t.wrapping_add(p));
    } else {
        head.iter_mut()
            .zip(low)
            .for_each(|(t, &p)| *t = t.wrapping_add(p));
        tail.iter_mut()
            .zip(wrapped)
            .for_each(|(t, &p)| *t = t.wrapping_sub(p));
    }
}

/// Low-stack Karatsuba (see the module docs). Its domain is the plain coefficient domain, so
/// `prepare` and `finish` are copies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Karatsuba;

plain_domain_polymul!(Karatsuba, "karatsuba", karatsuba_acc, packed);

/// `acc += a · s` (see the module docs).
fn karatsuba_acc(acc: &mut Poly, a: &Poly, s: &PackedSecret) {
    let mut a_mid = [0u16; MID];
    let mut s_mid = [0u16; MID];
    let mut product = [0u16; 2 * MID - 1];
    for outer in 0..3 {
        for inner in 0..3 {
            let leaf = Leaf::new(N, outer, inner);
            leaf.gather(&a.coeffs, &mut a_mid);
            // The secret's blocks, summed as residues mod 2^16 (signed nibbles, two per byte).
            s_mid.fill(0);
            for &start in &leaf.starts[..leaf.blocks] {
                let bytes = &s[start >> 1..(start + MID) >> 1];
                for (pair, &byte) in s_mid.chunks_exact_mut(2).zip(bytes) {
                    pair[0] = pair[0].wrapping_add((((byte << 4) as i8) >> 4) as i16 as u16);
                    pair[1] = pair[1].wrapping_add(((byte as i8) >> 4) as i16 as u16);
                }
            }
            product_mid(&a_mid, &s_mid, &mut product);
            for &(offset, negate) in &leaf.places[..leaf.count] {
                add_negacyclic(&mut acc.coeffs, &product, offset, negate);
            }
        }
    }
    zeroize::Zeroize::zeroize(&mut s_mid);
    zeroize::Zeroize::zeroize(&mut product);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poly::SecretPoly;
    use crate::polymul::{PolyMul, Schoolbook};

    #[test]
    fn leaves_cover_the_product() {
        // The top-level paths: low (1 block, places 0 and −h), high, sum (2 blocks, place h).
        let low = Leaf::new(N, 0, 0);
        assert_eq!((low.blocks, low.count), (1, 4));
        let sums = Leaf::new(N, 2, 2);
        assert_eq!(&sums.starts[..sums.blocks], &[0, 64, 128, 192]);
        assert_eq!(&sums.places[..sums.count], &[(192, false)]);
    }

    #[test]
    fn matches_schoolbook_on_a_dense_product() {
        let mut a = Poly::ZERO;
        let mut s = SecretPoly::ZERO;
        for k in 0..N {
            a.coeffs[k] = (k as u16).wrapping_mul(40503) & 0x1FFF;
            s.coeffs[k] = (((k * 7) & 7) as i8) - 4;
        }
        let want = Schoolbook.mul(&a, &s);
        let got = Karatsuba.mul(&a, &s);
        for k in 0..N {
            assert_eq!(
                got.coeffs[k] & 0x1FFF,
                want.coeffs[k] & 0x1FFF,
                "coefficient {k}"
            );
        }
    }
}
