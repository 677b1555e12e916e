//! Polynomials of R_q = Z_{2^13}\[x\]/(x^256 + 1) and small secret polynomials.
//!
//! Public polynomials keep one `u16` per coefficient and use wrapping arithmetic: Saber only ever
//! reads the low 13 (mod q) or 10 (mod p) bits, exactly as the reference code does (spec §2.4).

use zeroize::{Zeroize, ZeroizeOnDrop};

/// Degree bound n of every Saber polynomial.
pub const N: usize = 256;
/// The products are computed mod 2^13, the largest q (round 3 and Saber+): every backend's result
/// is correct in these low bits, and a smaller q (a power of two) reads fewer of them.
pub const Q_MASK: u16 = (1 << 13) - 1;

/// A polynomial with coefficients mod 2^16; only the low 13 bits (or fewer, mod q) carry meaning.
#[derive(Clone, PartialEq, Eq)]
pub struct Poly {
    /// Coefficient `k` multiplies `x^k`.
    pub coeffs: [u16; N],
}

impl Poly {
    /// The zero polynomial.
    pub const ZERO: Self = Self { coeffs: [0; N] };

    /// `self += other` coefficient-wise, mod 2^16.
    pub fn add_assign(&mut self, other: &Poly) {
        for (x, y) in self.coeffs.iter_mut().zip(other.coeffs.iter()) {
            *x = x.wrapping_add(*y);
        }
    }
}

// Wiped through a slice: `zeroize` (>= 1.9) fills a slice and then applies an optimisation
// barrier, where the derived impl of an array would issue one volatile store per coefficient.
impl Zeroize for Poly {
    fn zeroize(&mut self) {
        self.coeffs.as_mut_slice().zeroize();
    }
}

impl Default for Poly {
    fn default() -> Self {
        Self::ZERO
    }
}

impl core::fmt::Debug for Poly {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Poly").finish_non_exhaustive()
    }
}

/// Largest |coefficient| a [`SecretPoly`] may hold: mu/2 for LightSaber (mu = 10).
///
/// Backends rely on this bound for exactness (NTT prime size, Kronecker slot widths).
pub const SECRET_BOUND: i8 = 5;

/// A small secret polynomial with coefficients in `[-SECRET_BOUND, SECRET_BOUND]`
/// (in fact `[-mu/2, mu/2]` for the parameter set in use).
///
/// Wiped on drop.
#[derive(Clone)]
pub struct SecretPoly {
    /// Coefficient `k` multiplies `x^k`.
    pub coeffs: [i8; N],
}

impl SecretPoly {
    /// The zero polynomial.
    pub const ZERO: Self = Self { coeffs: [0; N] };
}

// Through a slice, as for `Poly`.
impl Zeroize for SecretPoly {
    fn zeroize(&mut self) {
        self.coeffs.as_mut_slice().zeroize();
    }
}

impl Drop for SecretPoly {
    fn drop(&mut self) {
        self.zeroize();
    }
}

impl ZeroizeOnDrop for SecretPoly {}

impl Default for SecretPoly {
    fn default() -> Self {
        Self::ZERO
    }
}

impl core::fmt::Debug for SecretPoly {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SecretPoly(<redacted>)")
    }
}

/// The centred representative in `[-4096, 4095]` of a residue mod 2^13 (sign-extends bit 12).
///
/// Backends that compute exact integer products (NTT, Kronecker) centre their public input with
/// this so that the product bounds in their module docs hold.
#[inline(always)]
pub fn centred(x: u16) -> i32 {
    ((x as i32) << 19) >> 19
}
