//! Fixed operands of one polynomial product, shared by the ESP32 model tests and the Kronecker
//! bench (included there by path).
#![allow(dead_code)]

use saber_kem::polymul::{Poly, SecretPoly};

/// `a` with coefficients spread over the whole 16-bit range, `s` cycling through secret values
/// from −5 to 5.
pub fn product_operands() -> (Poly, SecretPoly) {
    let mut a = Poly::ZERO;
    let mut s = SecretPoly::ZERO;
    for i in 0..256 {
        a.coeffs[i] = (i as u16).wrapping_mul(40_503);
        s.coeffs[i] = [5, -5, 3, 0, -1, 4, -4, 2][i & 7];
    }
    (a, s)
}
