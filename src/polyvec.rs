//! Matrix-vector and inner products of the IND-CPA scheme, and the memory strategies.
//!
//! The KEM calls three operations (spec §2.5):
//! - key generation: `b = Aᵀ·s`;
//! - encryption: `b' = A·s'` and `v' = bᵀ·s'` (sharing the prepared `s'`);
//! - decryption: `v = b'ᵀ·s`.
//!
//! They are provided methods of [`PolyMul`], implemented here for speed (every secret prepared
//! once, every output accumulated in the backend's domain and finished once: `L² + L` forward
//! transforms, `L` finishes). Matrix entries arrive just in time from a row-major
//! [`MatrixSource`]; A is never held whole. [`LowMemory`] trades time for stack by finishing
//! every product at once and keeping only plain 16-bit sums.

use zeroize::Zeroize;

use crate::encoding::unpack_poly;
use crate::lowmem;
use crate::params::sizes::POLY_P_BYTES;
use crate::poly::{EP, Poly, SecretPoly};
use crate::polymul::PolyMul;
use crate::sampling::MatrixSource;

/// Fills the empty `slots` in place, each value moved once (`get_or_insert_with` builds it in the
/// slot; `*slot = Some(…)` moved it twice, and `core::array::from_fn` moves each value three or
/// four times: for a 4 KiB NTT image 12–16 KiB of copies per secret, about 3 % of a
/// decapsulation, each copy an unwiped duplicate of secret data). Iterate with `.flatten()`.
pub(crate) fn fill_each<T>(slots: &mut [Option<T>], mut make: impl FnMut(usize) -> T) {
    for (j, slot) in slots.iter_mut().enumerate() {
        slot.get_or_insert_with(|| make(j));
    }
}

/// Wipes every value of `slots`.
pub(crate) fn wipe_each<T: Zeroize>(slots: &mut [Option<T>]) {
    slots.iter_mut().flatten().for_each(Zeroize::zeroize);
}

/// `b = Aᵀ·s`: entry A[i][j] contributes to output j. Row-major streaming needs the L outputs
/// accumulating at once, but only one prepared secret.
pub(crate) fn transposed_fast<B: PolyMul, M: MatrixSource, const L: usize>(
    backend: &mut B,
    matrix: &mut M,
    s: &[SecretPoly; L],
    mut emit: impl FnMut(usize, &Poly),
) {
    let mut acc: [Option<B::Accumulator>; L] = [const { None }; L];
    fill_each(&mut acc, |_| backend.accumulator());
    let mut entry = Poly::ZERO;
    for s_i in s {
        let mut prepared = backend.prepare(s_i);
        for acc_j in acc.iter_mut().flatten() {
            matrix.next_entry(&mut entry);
            backend.mul_acc(acc_j, &entry, &prepared);
        }
        prepared.zeroize();
    }
    for (j, acc_j) in acc.iter().flatten().enumerate() {
        let mut out = backend.finish(acc_j);
        emit(j, &out);
        out.zeroize();
    }
    wipe_each(&mut acc);
}

/// `b' = A·s'` (rows emitted as they finish) and `v' = bᵀ·s'` (returned), with each `s'_j`
/// prepared once for its L + 1 products.
pub(crate) fn encrypt_fast<B: PolyMul, M: MatrixSource, const L: usize>(
    backend: &mut B,
    matrix: &mut M,
    s: &[SecretPoly; L],
    public_b: &[u8],
    mut emit: impl FnMut(usize, &Poly),
) -> Poly {
    let mut prepared: [Option<B::Prepared>; L] = [const { None }; L];
    fill_each(&mut prepared, |j| backend.prepare(&s[j]));
    let mut entry = Poly::ZERO;
    let mut acc = backend.accumulator();
    for i in 0..L {
        for p in prepared.iter().flatten() {
            matrix.next_entry(&mut entry);
            backend.mul_acc(&mut acc, &entry, p);
        }
        let mut row = backend.finish(&acc);
        emit(i, &row);
        row.zeroize();
        acc.zeroize();
        acc = backend.accumulator();
    }
    for (p, packed) in prepared
        .iter()
        .flatten()
        .zip(public_b.chunks_exact(POLY_P_BYTES))
    {
        backend.mul_acc(&mut acc, &unpack_poly(packed, EP), p);
    }
    let v = backend.finish(&acc);
    acc.zeroize();
    wipe_each(&mut prepared);
    v
}

/// `v = bᵀ·s` for L polynomials packed with 10 bits per coefficient.
pub(crate) fn inner_product_fast<B: PolyMul, const L: usize>(
    backend: &mut B,
    public_b: &[u8],
    s: &[SecretPoly; L],
) -> Poly {
    let mut acc = backend.accumulator();
    for (s_j, packed) in s.iter().zip(public_b.chunks_exact(POLY_P_BYTES)) {
        let mut prepared = backend.prepare(s_j);
        backend.mul_acc(&mut acc, &unpack_poly(packed, EP), &prepared);
        prepared.zeroize();
    }
    let v = backend.finish(&acc);
    acc.zeroize();
    v
}

/// The low-memory strategy around any backend, chosen at the type level: `LowMemory(backend)`
/// wherever a backend is accepted.
///
/// With it the KEM switches to its streaming organisation (`src/lowmem.rs`): A is squeezed
/// just in time, the secret vector is packed to 4 bits (or decoded from the key) and widened one
/// polynomial at a time, at most one prepared secret and one accumulator are alive, key
/// generation keeps its partial sums in the output key buffer, and ciphertexts are packed (or,
/// in decapsulation, compared) as they are produced. Byte-identical results; the price is
/// `L² + L` prepares instead of `L` per matrix-vector product, which is nothing for
/// plain-domain backends such as [`Karatsuba`](crate::polymul::Karatsuba).
///
/// The matrix-vector methods below follow the same rule, with the same streaming helpers, for
/// callers of the IND-CPA layer ([`crate::pke`], the batch API).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LowMemory<B>(pub B);

impl<B: PolyMul> PolyMul for LowMemory<B> {
    type Prepared = B::Prepared;
    type Accumulator = B::Accumulator;
    const STREAMING: bool = true;

    fn prepare(&mut self, s: &SecretPoly) -> B::Prepared {
        self.0.prepare(s)
    }
    fn accumulator(&mut self) -> B::Accumulator {
        self.0.accumulator()
    }
    fn mul_acc(&mut self, acc: &mut B::Accumulator, a: &Poly, s: &B::Prepared) {
        self.0.mul_acc(acc, a, s)
    }
    fn finish(&mut self, acc: &B::Accumulator) -> Poly {
        self.0.finish(acc)
    }
    fn name(&self) -> &'static str {
        self.0.name()
    }

    /// Row-major A makes all L outputs grow at once: they are kept as plain sums (finished
    /// products added mod 2^16, which stays correct mod 2^13), with one accumulator and one
    /// prepared secret alive at a time.
    fn matrix_vector_transposed<M: MatrixSource, const L: usize>(
        &mut self,
        matrix: &mut M,
        s: &[SecretPoly; L],
        mut emit: impl FnMut(usize, &Poly),
    ) {
        let mut sums: [Poly; L] = core::array::from_fn(|_| Poly::ZERO);
        for s_i in s {
            let mut prepared = self.0.prepare(s_i);
            for sum in sums.iter_mut() {
                lowmem::product_with(
                    &mut self.0,
                    &prepared,
                    |entry| matrix.next_entry(entry),
                    |product| sum.add_assign(product),
                );
            }
            prepared.zeroize();
        }
        for (j, sum) in sums.iter().enumerate() {
            emit(j, sum);
        }
        sums.zeroize();
    }

    fn matrix_vector_and_inner<M: MatrixSource, const L: usize>(
        &mut self,
        matrix: &mut M,
        s: &[SecretPoly; L],
        public_b: &[u8],
        mut emit: impl FnMut(usize, &Poly),
    ) -> Poly {
        for i in 0..L {
            lowmem::sum_of_products::<B, L>(
                &mut self.0,
                |_, entry| matrix.next_entry(entry),
                |j, s_j| s_j.coeffs = s[j].coeffs,
                |row| emit(i, row),
            );
        }
        self.inner_product(public_b, s)
    }

    fn inner_product<const L: usize>(&mut self, public_b: &[u8], s: &[SecretPoly; L]) -> Poly {
        let mut v = Poly::ZERO;
        lowmem::sum_of_products::<B, L>(
            &mut self.0,
            |j, entry| lowmem::unpack_p(public_b, j, entry),
            |j, s_j| s_j.coeffs = s[j].coeffs,
            |sum| v.coeffs = sum.coeffs,
        );
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::sizes::{ciphertext, public_key, secret_cpa};
    use crate::params::{Plus, Round3, Variant};
    use crate::pke;
    use crate::polymul::Karatsuba;

    /// The IND-CPA layer with `LowMemory` (its matrix-vector methods, which the KEM's own
    /// streaming path does not use) gives the fast path's bytes: key generation, encryption
    /// and decryption, on a few seeds.
    fn low_memory_matches_fast<V: Variant, const L: usize, const MU: usize, const ET: usize>() {
        let (pk_len, cpa_len, ct_len) = (public_key(L), secret_cpa::<V>(L), ciphertext(L, ET));
        for seed in 0..3u8 {
            let seed_a = [seed; 32];
            let seed_s = [seed ^ 0x5A; 32];
            let (message, coins) = ([seed ^ 0xC3; 32], [seed ^ 0x3C; 32]);
            let mut outputs = [([0u8; 1312], [0u8; 1664], [0u8; 1472], [0u8; 32]); 2];
            for (low_memory, (pk, sk, ct, decrypted)) in [false, true].into_iter().zip(&mut outputs)
            {
                let (pk, sk, ct) = (&mut pk[..pk_len], &mut sk[..cpa_len], &mut ct[..ct_len]);
                let mut s = pke::zero_secret::<L>();
                V::gen_secret::<L, MU>(&seed_s, &mut s);
                if low_memory {
                    let backend = &mut LowMemory(Karatsuba);
                    pke::keygen::<V, _, L, MU>(backend, &seed_a, &seed_s, pk, sk);
                    pke::encrypt::<V, _, L, MU, ET>(backend, &message, &coins, pk, ct);
                    *decrypted = pke::decrypt::<_, L, ET>(backend, &s, ct);
                } else {
                    let backend = &mut Karatsuba;
                    pke::keygen::<V, _, L, MU>(backend, &seed_a, &seed_s, pk, sk);
                    pke::encrypt::<V, _, L, MU, ET>(backend, &message, &coins, pk, ct);
                    *decrypted = pke::decrypt::<_, L, ET>(backend, &s, ct);
                }
            }
            assert!(outputs[0] == outputs[1], "seed {seed}");
            assert_eq!(outputs[0].3, message, "seed {seed}");
        }
    }

    #[test]
    fn low_memory_ind_cpa_matches_fast() {
        low_memory_matches_fast::<Round3, 2, 10, 3>();
        low_memory_matches_fast::<Round3, 3, 8, 4>();
        low_memory_matches_fast::<Round3, 4, 6, 6>();
        low_memory_matches_fast::<Plus, 3, 8, 4>();
    }
}
