//! Portable NTT kernels: `i32` coefficients, signed Montgomery arithmetic with `i64` products.
//! Builds for every target, 32-bit ones included. Generic over the layer count so that the
//! alternatives can be measured; the public backends instantiate [`Layers6`](super::params::Layers6).

use zeroize::Zeroize;

use super::params::{
    HALF_Q, ONE_MONT, Params, Q, QINV, acc_index, block_slot, block_zeta, prepared_index,
};
use crate::poly::{N, Poly, SecretPoly, centred};

/// Signed Montgomery reduction: returns r ≡ x·2^(−32) (mod q') with
/// |r| <= |x| / 2^32 + q'/2, for |x| < 2^63 − 2^31·q'.
#[inline(always)]
pub(crate) fn montgomery_reduce(x: i64) -> i32 {
    let m = (x as i32).wrapping_mul(QINV);
    // x − m·q' ≡ 0 (mod 2^32), so the shift is exact.
    ((x - i64::from(m) * i64::from(Q)) >> 32) as i32
}

/// a·b·2^(−32) mod q', with |result| <= |a|·|b| / 2^32 + q'/2.
#[inline(always)]
pub(crate) fn mont_mul(a: i32, b: i32) -> i32 {
    montgomery_reduce(i64::from(a) * i64::from(b))
}

/// The canonical centred residue in [−(q'−1)/2, (q'−1)/2] of any |x| < q' (branch-free).
#[inline(always)]
pub(crate) fn canonical_small(x: i32) -> i32 {
    let x = x - (Q & ((HALF_Q - x) >> 31));
    x + (Q & ((x + HALF_Q) >> 31))
}

/// The canonical centred residue of any `i32`: one Montgomery multiplication by 2^32 mod q'
/// brings it below q' (|x|·(q'/2) / 2^32 + q'/2 < q'), then [`canonical_small`].
#[inline(always)]
pub(crate) fn canonical(x: i32) -> i32 {
    canonical_small(mont_mul(x, ONE_MONT))
}

/// Forward negacyclic NTT, Cooley–Tukey, natural order in and out, no reduction of sums
/// (growth <= q'/2 + 2^(−7)·q' per layer, see the module docs).
pub(crate) fn forward<P: Params>(a: &mut [i32; N]) {
    let mut k = 1;
    for layer in 0..P::LAYERS {
        let len = N >> (layer + 1);
        for group in a.chunks_exact_mut(2 * len) {
            let zeta = P::ZETAS[k];
            k += 1;
            let (lo, hi) = group.split_at_mut(len);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let t = mont_mul(*y, zeta);
                *y = *x - t;
                *x += t;
            }
        }
    }
}

/// Inverse NTT, Gentleman–Sande, natural order in and out, followed by the final scaling and
/// the canonical centred reduction. Input: |x| <= 0.75·q' (what [`finish_to_natural`] gives).
pub(crate) fn inverse<P: Params>(a: &mut [i32; N]) {
    for layer in (0..P::LAYERS).rev() {
        let len = N >> (layer + 1);
        let first = 1 << layer;
        // Sums double per layer; from the sixth layer on (only for more than six layers, and
        // never on the last one, which the final Montgomery multiplication absorbs) they are
        // reduced below q' to stay inside i32.
        let done = P::LAYERS - layer;
        let reduce_sums = done >= 6 && layer > 0;
        for (g, group) in a.chunks_exact_mut(2 * len).enumerate() {
            let zeta_inv = P::ZETAS_INV[first + g];
            let (lo, hi) = group.split_at_mut(len);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                let (u, v) = (*x, *y);
                let sum = u + v;
                *x = if reduce_sums {
                    mont_mul(sum, ONE_MONT)
                } else {
                    sum
                };
                *y = mont_mul(u - v, zeta_inv);
            }
        }
    }
    for x in a.iter_mut() {
        *x = canonical_small(mont_mul(*x, P::FINAL_SCALE));
    }
}

/// Writes the base-multiplication matrices of an NTT-domain secret (`ntt(block, k)` reads
/// coefficient `k` of block `block`) into `out`: column `i`, row `k` of block x^B − ζ holds
/// b_(k−i) for i <= k and ζ·b_(k−i+B) otherwise, all canonical, so that every product row is a
/// plain dot product (asymmetric multiplication: the ζ·b terms are computed once per secret).
pub(crate) fn build_columns<P: Params>(ntt: impl Fn(usize, usize) -> i32, out: &mut [i32]) {
    let b = P::BLOCK;
    for block in 0..(1usize << P::LAYERS) {
        let zeta = block_zeta::<P>(block);
        let slot = block_slot(block);
        for k in 0..b {
            let coeff = canonical(ntt(block, k));
            // Entries (i, i + k) for i + k < B, i.e. row k + i, column i.
            for i in 0..b - k {
                out[prepared_index::<P>(slot, i, k + i)] = coeff;
            }
            if k > 0 {
                let twisted = canonical_small(mont_mul(coeff, zeta));
                // ζ·b_k lands in row r, column i with r − i + B = k, i.e. i = r + B − k.
                for r in 0..k {
                    out[prepared_index::<P>(slot, r + b - k, r)] = twisted;
                }
            }
        }
    }
}

/// `prepare`: forward NTT of the secret, then its base-multiplication matrices.
pub(crate) fn prepare<P: Params>(s: &SecretPoly, out: &mut [i32]) {
    let mut t = [0i32; N];
    for (x, &c) in t.iter_mut().zip(s.coeffs.iter()) {
        *x = i32::from(c);
    }
    forward::<P>(&mut t);
    build_columns::<P>(|block, k| t[block * P::BLOCK + k], out);
    t.as_mut_slice().zeroize();
}

/// Forward NTT of the centred `a`, stored in NTT-domain order (block `b` at slot
/// `block_slot(b)`): what [`basemul_acc`] reads, and the cached form of a public polynomial.
pub(crate) fn public_to_domain<P: Params>(a: &Poly, out: &mut [i32; N]) {
    let mut t = [0i32; N];
    for (x, &c) in t.iter_mut().zip(a.coeffs.iter()) {
        *x = centred(c);
    }
    forward::<P>(&mut t);
    for (block, a_block) in t.chunks_exact(P::BLOCK).enumerate() {
        out[block_slot(block) << P::LOG_BLOCK..][..P::BLOCK].copy_from_slice(a_block);
    }
    // `a` is secret-derived in decapsulation's re-encryption.
    t.as_mut_slice().zeroize();
}

/// `acc += â ∘ ŝ` blockwise, in `i64`, for â in NTT-domain order (|â| < 3.1·q').
pub(crate) fn basemul_acc<P: Params>(acc: &mut [i64; N], a_hat: &[i32; N], prepared: &[i32]) {
    let b = P::BLOCK;
    for (slot, a_block) in a_hat.chunks_exact(b).enumerate() {
        for k in 0..b {
            let mut sum = 0i64;
            for (i, &ai) in a_block.iter().enumerate() {
                sum += i64::from(ai) * i64::from(prepared[prepared_index::<P>(slot, i, k)]);
            }
            acc[acc_index((slot << P::LOG_BLOCK) + k)] += sum;
        }
    }
}

/// `mul_acc`: forward NTT of the centred `a`, then the base multiplication.
pub(crate) fn mul_acc<P: Params>(acc: &mut [i64; N], a: &Poly, prepared: &[i32]) {
    let mut a_hat = [0i32; N];
    public_to_domain::<P>(a, &mut a_hat);
    basemul_acc::<P>(acc, &a_hat, prepared);
    a_hat.as_mut_slice().zeroize();
}

/// Montgomery-reduces the accumulator into natural NTT order (|x| <= 0.75·q').
pub(crate) fn finish_to_natural<P: Params>(acc: &[i64; N], t: &mut [i32; N]) {
    for (block, t_block) in t.chunks_exact_mut(P::BLOCK).enumerate() {
        let slot = block_slot(block);
        for (k, x) in t_block.iter_mut().enumerate() {
            *x = montgomery_reduce(acc[acc_index((slot << P::LOG_BLOCK) + k)]);
        }
    }
}

/// `finish`: one inverse NTT; the exact centred coefficient, wrapped to `u16`.
pub(crate) fn finish<P: Params>(acc: &[i64; N]) -> Poly {
    let mut t = [0i32; N];
    finish_to_natural::<P>(acc, &mut t);
    inverse::<P>(&mut t);
    let mut out = Poly::ZERO;
    for (o, &x) in out.coeffs.iter_mut().zip(t.iter()) {
        *o = x as u16;
    }
    t.as_mut_slice().zeroize();
    out
}
