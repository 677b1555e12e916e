//! Saber.PKE, the IND-CPA encryption scheme (round-3 spec §2.5, Algorithms 1–3), generic over the
//! variant, the multiplication backend and the parameters.
//!
//! Arithmetic is on `u16` with wrapping, reduced by masking exactly where the spec reduces mod q
//! or mod p, so every backend that is correct mod 2^13 gives the reference's bytes.

use zeroize::Zeroize;

use crate::encoding::{GROUP, pack_group, pack_groups, pack_wide, unpack_poly};
use crate::params::Variant;
use crate::params::sizes::POLY_P_BYTES;
use crate::poly::{EP, EQ, H1, N, P_MASK, Poly, SecretPoly};
use crate::polymul::{PolyMul, PolyMulPublic};
use crate::polyvec::{fill_each, wipe_each};
use crate::sampling::MatrixSource;

/// h2 = 2^(EP−2) − 2^(EP−ET−1) + 2^(EQ−EP−1) (spec §2.2).
pub(crate) const fn h2(et: u32) -> u16 {
    (1 << (EP - 2)) - (1 << (EP - et - 1)) + H1
}

/// Packs `round(x) = (x + h1) mod q >> (EQ − EP)`, the rounding of `b` and `b'` to 10 bits (the
/// packing's mask to 10 bits is the reduction mod q: bits 3..13 of `x + h1`). Rounding the whole
/// polynomial first lets the compiler vectorise it.
pub(crate) fn pack_rounded(x: &Poly, out: &mut [u8]) {
    let mut rounded = [0u16; N];
    for (r, &c) in rounded.iter_mut().zip(x.coeffs.iter()) {
        *r = c.wrapping_add(H1) >> (EQ - EP);
    }
    pack_wide::<{ EP as usize }>(&rounded, out);
    rounded.as_mut_slice().zeroize();
}

/// Writes secret polynomial `index` of the encoded IND-CPA secret key `sk_cpa` into `out`.
pub(crate) fn decode_secret_poly<V: Variant, const MU: usize>(
    sk_cpa: &[u8],
    index: usize,
    out: &mut SecretPoly,
) {
    let bytes = &sk_cpa[index * V::SECRET_POLY_BYTES..(index + 1) * V::SECRET_POLY_BYTES];
    // Range validity was checked when the key was built.
    let _ = V::decode_secret(bytes, MU, out);
}

/// The zero secret vector (a `const fn`, so arrays of secret vectors can be built in place).
pub(crate) const fn zero_secret<const L: usize>() -> [SecretPoly; L] {
    [const { SecretPoly::ZERO }; L]
}

/// Saber.PKE.KeyGen with seed_A already hashed: writes `pk = pack_10(b) ‖ seed_A` and the
/// encoded secret `sk_cpa`.
pub fn keygen<V: Variant, B: PolyMul, const L: usize, const MU: usize>(
    backend: &mut B,
    seed_a: &[u8; 32],
    seed_s: &[u8; 32],
    pk: &mut [u8],
    sk_cpa: &mut [u8],
) {
    let mut s = zero_secret::<L>();
    V::gen_secret::<L, MU>(seed_s, &mut s);
    keygen_from::<V, B, _, L>(backend, &mut V::matrix(seed_a, L), &s, seed_a, pk, sk_cpa);
}

/// Saber.PKE.KeyGen from its sampled inputs: the matrix of `seed_a` and the secret `s` (the batch
/// API samples them several operations at a time).
pub(crate) fn keygen_from<V: Variant, B: PolyMul, M: MatrixSource, const L: usize>(
    backend: &mut B,
    matrix: &mut M,
    s: &[SecretPoly; L],
    seed_a: &[u8; 32],
    pk: &mut [u8],
    sk_cpa: &mut [u8],
) {
    let (pk_b, pk_seed) = pk.split_at_mut(L * POLY_P_BYTES);
    backend.matrix_vector_transposed(matrix, s, |j, b| {
        pack_rounded(b, &mut pk_b[j * POLY_P_BYTES..(j + 1) * POLY_P_BYTES]);
    });
    pk_seed.copy_from_slice(seed_a);
    for (s_i, out) in s.iter().zip(sk_cpa.chunks_exact_mut(V::SECRET_POLY_BYTES)) {
        V::encode_secret(s_i, out);
    }
}

/// Saber.PKE.Enc: encrypts the 32-byte message `m` under `pk` with the coins `r`, writing
/// `ct = pack_10(b') ‖ pack_ET(c_m)`.
pub fn encrypt<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    m: &[u8; 32],
    coins: &[u8; 32],
    pk: &[u8],
    ct: &mut [u8],
) {
    let mut s = zero_secret::<L>();
    V::gen_secret::<L, MU>(coins, &mut s);
    let mut seed_a = [0u8; 32];
    seed_a.copy_from_slice(&pk[L * POLY_P_BYTES..]);
    encrypt_from::<B, _, L, ET>(backend, &mut V::matrix(&seed_a, L), &s, m, pk, ct);
}

/// Saber.PKE.Enc from its sampled inputs: the matrix of `pk`'s seed_A and the secret `s'` of the
/// coins (the batch API samples them several operations at a time).
pub(crate) fn encrypt_from<B: PolyMul, M: MatrixSource, const L: usize, const ET: usize>(
    backend: &mut B,
    matrix: &mut M,
    s: &[SecretPoly; L],
    m: &[u8; 32],
    pk: &[u8],
    ct: &mut [u8],
) {
    let pk_b = &pk[..L * POLY_P_BYTES];
    let (ct_b, ct_m) = ct.split_at_mut(L * POLY_P_BYTES);
    let mut v = backend.matrix_vector_and_inner(matrix, s, pk_b, |i, b| {
        pack_rounded(b, &mut ct_b[i * POLY_P_BYTES..(i + 1) * POLY_P_BYTES]);
    });
    encode_message::<ET>(&v, m, ct_m);
    v.zeroize();
}

/// Saber.PKE.Enc with the public key in the backend's domain: `matrix` holds A row-major and
/// `public_b` the vector b of the public key, both from [`PolyMulPublic::prepare_public`].
/// Same bytes as [`encrypt`].
pub fn encrypt_prepared<
    V: Variant,
    B: PolyMulPublic,
    const L: usize,
    const MU: usize,
    const ET: usize,
>(
    backend: &mut B,
    matrix: &[B::PreparedPublic],
    public_b: &[B::PreparedPublic],
    m: &[u8; 32],
    coins: &[u8; 32],
    ct: &mut [u8],
) {
    let mut s = zero_secret::<L>();
    V::gen_secret::<L, MU>(coins, &mut s);
    let mut prepared: [Option<B::Prepared>; L] = [const { None }; L];
    fill_each(&mut prepared, |j| backend.prepare(&s[j]));
    drop(s);
    let (ct_b, ct_m) = ct.split_at_mut(L * POLY_P_BYTES);
    let mut acc = backend.accumulator();
    for (row, out) in matrix
        .chunks_exact(L)
        .zip(ct_b.chunks_exact_mut(POLY_P_BYTES))
    {
        for (a, s_j) in row.iter().zip(prepared.iter().flatten()) {
            backend.mul_acc_prepared(&mut acc, a, s_j);
        }
        let mut b = backend.finish(&acc);
        pack_rounded(&b, out);
        b.zeroize();
        acc.zeroize();
        acc = backend.accumulator();
    }
    for (b, s_j) in public_b.iter().zip(prepared.iter().flatten()) {
        backend.mul_acc_prepared(&mut acc, b, s_j);
    }
    let mut v = backend.finish(&acc);
    encode_message::<ET>(&v, m, ct_m);
    v.zeroize();
    acc.zeroize();
    wipe_each(&mut prepared);
}

/// c_m = (v' + h1 − 2^(EP−1)·m) mod p >> (EP − ET), packed with ET bits as it is computed. A
/// group of eight coefficients is one message byte (bit `i` for coefficient `i`, the 1-bit
/// packing).
pub(crate) fn encode_message<const ET: usize>(v: &Poly, m: &[u8; 32], ct_m: &mut [u8]) {
    for ((group, &byte), bytes) in v
        .coeffs
        .chunks_exact(GROUP)
        .zip(m.iter())
        .zip(ct_m.chunks_exact_mut(ET))
    {
        pack_group::<ET>(
            core::array::from_fn(|i| {
                let bit = u16::from(byte >> i) & 1;
                (group[i].wrapping_add(H1).wrapping_sub(bit << (EP - 1)) & P_MASK)
                    >> (EP - ET as u32)
            }),
            bytes,
        );
    }
}

/// Saber.PKE.Dec: recovers the 32-byte message from `ct` with the decoded secret `s`.
pub fn decrypt<B: PolyMul, const L: usize, const ET: usize>(
    backend: &mut B,
    s: &[SecretPoly; L],
    ct: &[u8],
) -> [u8; 32] {
    let (ct_b, ct_m) = ct.split_at(L * POLY_P_BYTES);
    let mut v = backend.inner_product(ct_b, s);
    let m = decode_message::<ET>(&v, ct_m);
    v.zeroize();
    m
}

/// Saber.PKE.Dec with the secret already in the backend's domain. Same result as [`decrypt`].
pub fn decrypt_prepared<B: PolyMul, const L: usize, const ET: usize>(
    backend: &mut B,
    s: &[B::Prepared],
    ct: &[u8],
) -> [u8; 32] {
    let (ct_b, ct_m) = ct.split_at(L * POLY_P_BYTES);
    let mut acc = backend.accumulator();
    for (s_j, packed) in s.iter().zip(ct_b.chunks_exact(POLY_P_BYTES)) {
        backend.mul_acc(&mut acc, &unpack_poly(packed, EP), s_j);
    }
    let mut v = backend.finish(&acc);
    acc.zeroize();
    let m = decode_message::<ET>(&v, ct_m);
    v.zeroize();
    m
}

/// m = (v + h2 − 2^(EP−ET)·c_m) mod p >> (EP − 1), one bit per coefficient, packed in place.
pub(crate) fn decode_message<const ET: usize>(v: &Poly, ct_m: &[u8]) -> [u8; 32] {
    let c_m = unpack_poly(ct_m, ET as u32);
    // All 256 bits first (a uniform loop the compiler vectorises), then the 1-bit packing.
    let mut bits = [0u16; N];
    for ((bit, &vk), &ck) in bits.iter_mut().zip(v.coeffs.iter()).zip(c_m.coeffs.iter()) {
        *bit = (vk
            .wrapping_add(h2(ET as u32))
            .wrapping_sub(ck << (EP - ET as u32))
            & P_MASK)
            >> (EP - 1);
    }
    let mut m = [0u8; 32];
    pack_groups::<1>(&bits, &mut m);
    bits.as_mut_slice().zeroize();
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_constants_match_the_spec() {
        assert_eq!(H1, 4);
        assert_eq!([h2(3), h2(4), h2(6)], [196, 228, 252]);
    }
}
