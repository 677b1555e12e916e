//! Schoolbook multiplication: O(n²), obviously correct, the oracle every other backend is tested
//! against.

use crate::poly::{N, Poly, SecretPoly};

/// The O(n²) negacyclic product. Its accumulator is the plain coefficient domain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Schoolbook;

plain_domain_polymul!(Schoolbook, "schoolbook", schoolbook_acc);

/// `acc += a · s` mod (x^256 + 1), term by term.
fn schoolbook_acc(acc: &mut Poly, a: &Poly, s: &SecretPoly) {
    for (i, &ai) in a.coeffs.iter().enumerate() {
        for (j, &sj) in s.coeffs.iter().enumerate() {
            // x^256 = -1: the term lands at i + j mod 256 with a sign flip on wrap-around.
            let term = ai.wrapping_mul(sj as i16 as u16);
            let k = i + j;
            if k < N {
                acc.coeffs[k] = acc.coeffs[k].wrapping_add(term);
            } else {
                acc.coeffs[k - N] = acc.coeffs[k - N].wrapping_sub(term);
            }
        }
    }
}

/// The plain domain is the schoolbook's only domain: nothing to cache.
impl crate::polymul::PolyMulPublic for Schoolbook {
    type PreparedPublic = Poly;

    fn prepare_public(&mut self, a: &Poly) -> Poly {
        a.clone()
    }

    fn mul_acc_prepared(&mut self, acc: &mut Poly, a: &Poly, s: &SecretPoly) {
        schoolbook_acc(acc, a, s)
    }
}
