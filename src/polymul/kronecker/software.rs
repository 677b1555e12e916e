//! The software big-integer engine: fixed-length schoolbook multiplication, constant time, no
//! allocation.
//!
//! Operand scanning over 64-bit limbs on 64-bit targets (a `u64 × u64 → u128` step cannot
//! overflow: `(2^64 − 1)² + 2·(2^64 − 1) = 2^128 − 1`), over 32-bit limbs elsewhere. The loops
//! run over the public operand length only; there is no data-dependent branch.

use super::BigMul;

/// Schoolbook big-integer multiplication in software for operands of up to `MAX_WORDS` 32-bit
/// words (at most 64).
///
/// `MAX_WORDS` steers the Kronecker plan: 64 (the default) gives one multiplication per
/// Toom-Cook point (KS1, like a 2048-bit coprocessor); 48 reproduces the ESP32-C3 plan; 32 or
/// less makes every point a pair of half-size multiplications (KS2), which a quadratic-time engine
/// does in about half the time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SoftwareBigMul<const MAX_WORDS: usize = 64>;

impl<const MAX_WORDS: usize> BigMul for SoftwareBigMul<MAX_WORDS> {
    const MAX_OPERAND_WORDS: usize = MAX_WORDS;
    const BACKEND_NAME: &'static str = if MAX_WORDS >= 60 {
        "kronecker"
    } else if MAX_WORDS >= 44 {
        "kronecker-1536"
    } else {
        "kronecker-ks2"
    };

    fn mul(&mut self, x: &[u32], y: &[u32], product: &mut [u32]) {
        let n = x.len();
        assert!(n <= MAX_WORDS && n <= 64 && y.len() == n && product.len() == 2 * n);
        mul_limbs(x, y, product);
    }
}

/// `product = x·y` with 64-bit limbs.
#[cfg(target_pointer_width = "64")]
fn mul_limbs(x: &[u32], y: &[u32], product: &mut [u32]) {
    use zeroize::Zeroize;

    let n = x.len();
    let limbs = n.div_ceil(2);
    let mut x64 = [0u64; 32];
    let mut y64 = [0u64; 32];
    for (i, (xl, yl)) in x64.iter_mut().zip(y64.iter_mut()).enumerate().take(limbs) {
        let hi = 2 * i + 1;
        *xl = x[2 * i] as u64 | (if hi < n { x[hi] as u64 } else { 0 }) << 32;
        *yl = y[2 * i] as u64 | (if hi < n { y[hi] as u64 } else { 0 }) << 32;
    }
    let mut r = [0u64; 64];
    for i in 0..limbs {
        let mut carry = 0u128;
        for j in 0..limbs {
            let t = (x64[i] as u128) * (y64[j] as u128) + r[i + j] as u128 + carry;
            r[i + j] = t as u64;
            carry = t >> 64;
        }
        r[i + limbs] = carry as u64;
    }
    // x, y < 2^(32n), so the product has at most 2n words; an odd n leaves a zero top word.
    for (k, p) in product.iter_mut().enumerate() {
        *p = (r[k >> 1] >> (32 * (k & 1))) as u32;
    }
    x64.zeroize();
    y64.zeroize();
    r.zeroize();
}

/// `product = x·y` with 32-bit limbs.
#[cfg(not(target_pointer_width = "64"))]
fn mul_limbs(x: &[u32], y: &[u32], product: &mut [u32]) {
    let n = x.len();
    product.fill(0);
    for i in 0..n {
        let mut carry = 0u64;
        for j in 0..n {
            let t = (x[i] as u64) * (y[j] as u64) + product[i + j] as u64 + carry;
            product[i + j] = t as u32;
            carry = t >> 32;
        }
        product[i + n] = carry as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiplies_all_ones_operands_of_every_length() {
        for n in 1..=64 {
            let x = [u32::MAX; 64];
            let mut product = [0u32; 128];
            SoftwareBigMul::<64>.mul(&x[..n], &x[..n], &mut product[..2 * n]);
            // (2^32n − 1)² = 2^64n − 2^(32n+1) + 1
            assert_eq!(product[0], 1);
            assert!(product[1..n].iter().all(|&w| w == 0));
            assert_eq!(product[n], u32::MAX - 1);
            assert!(product[n + 1..2 * n].iter().all(|&w| w == u32::MAX));
        }
    }
}
