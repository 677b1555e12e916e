//! The low-memory organisation of Saber.PKE, used when the backend is wrapped in
//! [`LowMemory`](crate::LowMemory) (`PolyMul::STREAMING`). Byte-identical to the fast path (the
//! KATs run in both modes); only what is held at once differs. The FO transform around it
//! (hashing, the constant-time comparison, implicit rejection) is [`crate::kem`]'s, shared with
//! the fast path; this module provides its IND-CPA steps: key generation, encryption into a
//! buffer, encryption *compared* with a given ciphertext, and decryption. Its streaming
//! products ([`sum_of_products`], [`product_with`]) also implement `LowMemory`'s matrix-vector
//! methods (`src/polyvec.rs`).
//!
//! What is never held, and how (round-3 spec §2.5–2.6 in the same order of XOF reads):
//! - **A**: entries are squeezed just in time, row-major, one polynomial at a time (as in the fast
//!   path; Saber+ on x86/x86_64 squeezes four entries per four-way Keccak call and holds them
//!   packed, 1.6 KB, `Plus::Matrix`).
//! - **The secret vector as `i8`s**: it is packed to 4 bits per coefficient (`|s| ≤ 5` fits in
//!   a signed nibble) right after sampling, and widened one polynomial at a time. In
//!   decapsulation the secret is decoded from the key bytes one polynomial at a time.
//! - **Transform-domain vectors**: one accumulator and one prepared secret are alive at a time;
//!   each output polynomial is accumulated in the backend's domain and finished once.
//! - **Key generation's L outputs of `Aᵀ·s`**: the row-major stream of A makes every output
//!   grow at once, so their 13-bit partial sums live in the caller's secret-key buffer (L · 416
//!   bytes fit in front of where the public key copy goes) until they are rounded into the
//!   public key; then they are wiped and the secret-key encoding takes their place.
//! - **Ciphertexts**: each polynomial is packed as soon as it is finished, straight into the
//!   output; the FO re-encryption in decapsulation packs it into one polynomial's scratch
//!   (≤ 320 bytes, next to the finished polynomial, off the multiplication's stack path) and
//!   compares it with the received ciphertext there, so the re-encrypted ciphertext is never
//!   buffered.
//!
//! Cost: `L² + L` prepares per matrix-vector product in place of `L` (a copy for plain-domain
//! backends such as [`Karatsuba`](crate::polymul::Karatsuba)), plus `L²` finishes in key
//! generation, and a 13-bit unpack/add/pack of each product there.

use core::ops::Range;

use subtle::Choice;
use zeroize::Zeroize;

use crate::ct::bytes_equal;
use crate::encoding::{pack_poly, packed_len, unpack};
use crate::params::Variant;
use crate::params::sizes::{self, POLY_P_BYTES};
use crate::pke::{decode_message, decode_secret_poly, encode_message, pack_rounded};
use crate::poly::{EP, EQ, N, Poly, SecretPoly};
use crate::polymul::PolyMul;
use crate::sampling::MatrixSource;

/// Bytes of one polynomial mod q (13 bits per coefficient).
const POLY_Q_BYTES: usize = packed_len(EQ);

/// L secret polynomials, two coefficients per byte (signed nibbles, even coefficient low).
struct PackedSecrets<const L: usize>([[u8; N >> 1]; L]);

impl<const L: usize> PackedSecrets<L> {
    /// Samples the secret vector of `seed`, packing each polynomial as it arrives. Not
    /// inlined, so that the sampler's state lives only in this call.
    #[inline(never)]
    fn sample<V: Variant, const MU: usize>(seed: &[u8; 32]) -> Self {
        let mut packed = Self([[0; N >> 1]; L]);
        V::gen_secret_with::<L, MU>(seed, |i, poly| {
            for (byte, pair) in packed.0[i].iter_mut().zip(poly.coeffs.chunks_exact(2)) {
                *byte = (pair[0] as u8 & 0x0F) | ((pair[1] as u8) << 4);
            }
        });
        packed
    }

    /// Widens polynomial `i` (nibbles sign-extended).
    fn get(&self, i: usize, out: &mut SecretPoly) {
        for (pair, &byte) in out.coeffs.chunks_exact_mut(2).zip(self.0[i].iter()) {
            pair[0] = ((byte << 4) as i8) >> 4;
            pair[1] = (byte as i8) >> 4;
        }
    }
}

impl<const L: usize> Drop for PackedSecrets<L> {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

/// Where a ciphertext goes as it is produced: into a buffer, or compared with a received one.
enum CiphertextSink<'a> {
    Write(&'a mut [u8]),
    /// `matches` is the AND of the comparisons so far.
    Compare {
        expected: &'a [u8],
        matches: Choice,
    },
}

impl CiphertextSink<'_> {
    /// Hands `pack` the ciphertext bytes `at` to write: the output itself, or one polynomial's
    /// scratch that is compared with the received bytes and wiped.
    #[inline(always)]
    fn put(&mut self, at: Range<usize>, pack: impl FnOnce(&mut [u8])) {
        match self {
            Self::Write(out) => pack(&mut out[at]),
            Self::Compare { expected, matches } => {
                let mut scratch = [0u8; POLY_P_BYTES];
                let produced = &mut scratch[..at.len()];
                pack(produced);
                *matches &= bytes_equal(&expected[at], produced);
                scratch.zeroize();
            }
        }
    }
}

/// `Σ_j a_j · s_j` over j < L with one accumulator, handed to `consume`: `public(j, a)` writes
/// a_j, `secret(j, s)` writes s_j. Each secret is prepared, used once and wiped before the next.
/// Not inlined, so that the accumulator lives only during this call.
#[inline(never)]
pub(crate) fn sum_of_products<B: PolyMul, const L: usize>(
    backend: &mut B,
    mut public: impl FnMut(usize, &mut Poly),
    mut secret: impl FnMut(usize, &mut SecretPoly),
    consume: impl FnOnce(&Poly),
) {
    let mut acc = backend.accumulator();
    for j in 0..L {
        let mut prepared = prepare_with(backend, |s| secret(j, s));
        multiply_with(backend, &mut acc, &prepared, |a| public(j, a));
        prepared.zeroize();
    }
    finish_with(backend, &acc, consume);
    acc.zeroize();
}

/// Finishes `acc` and hands the result to `consume`; the result lives only in this call,
/// never beside a multiplication.
#[inline(never)]
fn finish_with<B: PolyMul>(backend: &mut B, acc: &B::Accumulator, consume: impl FnOnce(&Poly)) {
    let mut sum = backend.finish(acc);
    consume(&sum);
    sum.zeroize();
}

/// Prepares the secret that `secret` writes; the widened polynomial lives only in this frame.
#[inline(never)]
fn prepare_with<B: PolyMul>(backend: &mut B, secret: impl FnOnce(&mut SecretPoly)) -> B::Prepared {
    let mut s = SecretPoly::ZERO;
    secret(&mut s);
    backend.prepare(&s)
}

/// `acc += a · s` for the public polynomial that `public` writes, held only in this frame.
#[inline(never)]
fn multiply_with<B: PolyMul>(
    backend: &mut B,
    acc: &mut B::Accumulator,
    prepared: &B::Prepared,
    public: impl FnOnce(&mut Poly),
) {
    let mut a = Poly::ZERO;
    public(&mut a);
    backend.mul_acc(acc, &a, prepared);
    a.zeroize();
}

/// Writes packed polynomial `j` of `packed` (10 bits per coefficient) into `a`.
pub(crate) fn unpack_p(packed: &[u8], j: usize, a: &mut Poly) {
    unpack(
        &packed[j * POLY_P_BYTES..(j + 1) * POLY_P_BYTES],
        EP,
        &mut a.coeffs,
    );
}

/// `sum += p` mod 2^13 on a polynomial stored with 13 bits per coefficient.
fn add_into_packed_q(sum: &mut [u8], p: &Poly) {
    let mut total = Poly::ZERO;
    unpack(sum, EQ, &mut total.coeffs);
    total.add_assign(p);
    pack_poly(&total, EQ, sum);
    total.zeroize();
}

/// The product `a · s` for the public polynomial that `public` writes, finished and handed to
/// `consume`; the accumulator and the product live only in this call.
#[inline(never)]
pub(crate) fn product_with<B: PolyMul>(
    backend: &mut B,
    prepared: &B::Prepared,
    public: impl FnOnce(&mut Poly),
    consume: impl FnOnce(&Poly),
) {
    let mut acc = backend.accumulator();
    multiply_with(backend, &mut acc, prepared, public);
    finish_with(backend, &acc, consume);
    acc.zeroize();
}

/// `sums = Aᵀ·s` (13 bits per coefficient). Row i of A meets s_i and its products go to all L
/// outputs. Not inlined: the matrix stream and the prepared secret live only in this call.
#[inline(never)]
fn transposed_into_packed_q<V: Variant, B: PolyMul, const L: usize>(
    backend: &mut B,
    seed_a: &[u8; 32],
    secrets: &PackedSecrets<L>,
    sums: &mut [u8],
) {
    sums.fill(0);
    let mut matrix = V::matrix(seed_a, L);
    for i in 0..L {
        let mut prepared = prepare_with(backend, |s| secrets.get(i, s));
        for sum in sums.chunks_exact_mut(POLY_Q_BYTES) {
            product_with(
                backend,
                &prepared,
                |a| matrix.next_entry(a),
                |product| add_into_packed_q(sum, product),
            );
        }
        prepared.zeroize();
    }
}

/// Saber.PKE.KeyGen with seed_A already hashed, low-memory: writes `pk` and the encoded secret
/// at the front of the KEM's secret-key buffer `sk`, whose first `L · 416` bytes hold the
/// partial sums of `b` meanwhile (wiped before the secret is encoded). Inlined into the KEM's
/// key generation, whose frame holds only the hashed seed: one frame fewer on the deepest chain.
#[inline(always)]
pub(crate) fn keygen<V: Variant, B: PolyMul, const L: usize, const MU: usize>(
    backend: &mut B,
    seed_a: &[u8; 32],
    seed_s: &[u8; 32],
    pk: &mut [u8],
    sk: &mut [u8],
) {
    let secrets = PackedSecrets::<L>::sample::<V, MU>(seed_s);
    let sums = &mut sk[..L * POLY_Q_BYTES];
    transposed_into_packed_q::<V, B, L>(backend, seed_a, &secrets, sums);
    round_into_public_key::<L>(sums, seed_a, pk);
    sums.zeroize();
    encode_secrets::<V, L>(&secrets, &mut sk[..sizes::secret_cpa::<V>(L)]);
}

/// pk = round_p(b) packed to 10 bits ‖ seed_A, from the 13-bit sums.
#[inline(never)]
fn round_into_public_key<const L: usize>(sums: &[u8], seed_a: &[u8; 32], pk: &mut [u8]) {
    let (pk_b, pk_seed) = pk.split_at_mut(L * POLY_P_BYTES);
    let mut b = Poly::ZERO;
    for (sum, out) in sums
        .chunks_exact(POLY_Q_BYTES)
        .zip(pk_b.chunks_exact_mut(POLY_P_BYTES))
    {
        unpack(sum, EQ, &mut b.coeffs);
        pack_rounded(&b, out);
    }
    b.zeroize();
    pk_seed.copy_from_slice(seed_a);
}

/// sk_cpa, one widened polynomial at a time.
#[inline(never)]
fn encode_secrets<V: Variant, const L: usize>(secrets: &PackedSecrets<L>, sk_cpa: &mut [u8]) {
    let mut s = SecretPoly::ZERO;
    for (i, out) in sk_cpa.chunks_exact_mut(V::SECRET_POLY_BYTES).enumerate() {
        secrets.get(i, &mut s);
        V::encode_secret(&s, out);
    }
    s.zeroize();
}

/// Saber.PKE.Enc, low-memory, into `sink`: each ciphertext polynomial is rounded and packed as
/// soon as it is finished.
#[inline(never)]
fn encrypt_into<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    m: &[u8; 32],
    coins: &[u8; 32],
    pk: &[u8],
    sink: &mut CiphertextSink<'_>,
) {
    let secrets = PackedSecrets::<L>::sample::<V, MU>(coins);
    let (pk_b, pk_seed) = pk.split_at(L * POLY_P_BYTES);
    let mut seed_a = [0u8; 32];
    seed_a.copy_from_slice(pk_seed);
    let mut matrix = V::matrix(&seed_a, L);
    for i in 0..L {
        // b'_i = Σ_j A[i][j]·s'_j
        sum_of_products::<B, L>(
            backend,
            |_, a| matrix.next_entry(a),
            |j, s| secrets.get(j, s),
            |row| {
                sink.put(i * POLY_P_BYTES..(i + 1) * POLY_P_BYTES, |out| {
                    pack_rounded(row, out)
                })
            },
        );
    }
    // v' = bᵀ·s', carrying the message into c_m.
    let c_m = L * POLY_P_BYTES..L * POLY_P_BYTES + packed_len(ET as u32);
    sum_of_products::<B, L>(
        backend,
        |j, a| unpack_p(pk_b, j, a),
        |j, s| secrets.get(j, s),
        |v| sink.put(c_m, |out| encode_message::<ET>(v, m, out)),
    );
}

/// Saber.PKE.Enc, low-memory: writes `ct`.
pub(crate) fn encrypt<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    m: &[u8; 32],
    coins: &[u8; 32],
    pk: &[u8],
    ct: &mut [u8],
) {
    encrypt_into::<V, B, L, MU, ET>(backend, m, coins, pk, &mut CiphertextSink::Write(ct));
}

/// Whether Saber.PKE.Enc(m; coins) under `pk` is `ct`, in constant time, low-memory: the
/// encryption is compared polynomial by polynomial as it is produced, never buffered whole.
pub(crate) fn encrypts_to<
    V: Variant,
    B: PolyMul,
    const L: usize,
    const MU: usize,
    const ET: usize,
>(
    backend: &mut B,
    m: &[u8; 32],
    coins: &[u8; 32],
    pk: &[u8],
    ct: &[u8],
) -> Choice {
    let mut sink = CiphertextSink::Compare {
        expected: ct,
        matches: Choice::from(u8::from(ct.len() == sizes::ciphertext(L, ET))),
    };
    encrypt_into::<V, B, L, MU, ET>(backend, m, coins, pk, &mut sink);
    match sink {
        CiphertextSink::Compare { matches, .. } => matches,
        CiphertextSink::Write(_) => Choice::from(0),
    }
}

/// Saber.PKE.Dec, low-memory: each secret polynomial is decoded from `sk_cpa` when needed.
#[inline(never)]
pub(crate) fn decrypt<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    sk_cpa: &[u8],
    ct: &[u8],
) -> [u8; 32] {
    let (ct_b, ct_m) = ct.split_at(L * POLY_P_BYTES);
    let mut m = [0u8; 32];
    sum_of_products::<B, L>(
        backend,
        |j, a| unpack_p(ct_b, j, a),
        |j, s| decode_secret_poly::<V, MU>(sk_cpa, j, s),
        |v| m = decode_message::<ET>(v, ct_m),
    );
    m
}
