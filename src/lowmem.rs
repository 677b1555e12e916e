//! The low-memory organisation of the KEM, used when the backend is wrapped in
//! [`LowMemory`](crate::LowMemory) (`PolyMul::STREAMING`). Byte-identical to the fast path (the
//! KATs run in both modes); only what is held at once differs.
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
//!   public key; the secret-key encoding then overwrites them.
//! - **Ciphertexts**: packed straight into the output as each row is finished; the FO
//!   re-encryption in decapsulation is *compared* with the received ciphertext byte by byte as
//!   it is produced (accumulating the OR of differences) instead of being buffered.
//!
//! Cost: `L² + L` prepares per matrix-vector product in place of `L` (a copy for plain-domain
//! backends such as [`Karatsuba`](crate::polymul::Karatsuba)), plus `L²` finishes in key
//! generation, and a 13-bit unpack/add/pack of each product there.

use subtle::{Choice, ConstantTimeEq};
use zeroize::{Zeroize, Zeroizing};

use crate::ct::KeySelect;
use crate::encoding::packed_len;
use crate::hash::{sha3_256, sha3_512};
use crate::kem::SharedSecret;
use crate::params::Variant;
use crate::params::sizes::{self, POLY_P_BYTES, SEED_BYTES};
use crate::pke::h2;
use crate::poly::{EP, EQ, H1, N, P_MASK, Poly, Q_MASK, SecretPoly};
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

/// Where a ciphertext goes: into a buffer, or compared with a received one.
enum CiphertextSink<'a> {
    Write(&'a mut [u8]),
    Compare { expected: &'a [u8], difference: u8 },
}

impl CiphertextSink<'_> {
    #[inline(always)]
    fn put(&mut self, index: usize, byte: u8) {
        match self {
            Self::Write(out) => out[index] = byte,
            Self::Compare {
                expected,
                difference,
            } => *difference |= expected[index] ^ byte,
        }
    }
}

/// Packs the low `width` bits of `value(k)`, k = 0..256, little-endian bit order (as
/// [`crate::encoding::pack`]), handing each byte to `emit(index, byte)`.
#[inline(always)]
fn pack_with(width: u32, mut value: impl FnMut(usize) -> u16, mut emit: impl FnMut(usize, u8)) {
    let mask = (1u32 << width) - 1;
    let (mut acc, mut bits, mut index) = (0u32, 0u32, 0usize);
    for k in 0..N {
        acc |= (u32::from(value(k)) & mask) << bits;
        bits += width;
        while bits >= 8 {
            emit(index, acc as u8);
            index += 1;
            acc >>= 8;
            bits -= 8;
        }
    }
}

/// Unpacks 256 `width`-bit values from `bytes`, handing each to `take(k, value)`.
#[inline(always)]
fn unpack_with(bytes: &[u8], width: u32, mut take: impl FnMut(usize, u16)) {
    let mask = (1u32 << width) - 1;
    let (mut acc, mut bits) = (0u32, 0u32);
    let mut input = bytes.iter();
    for k in 0..N {
        while bits < width {
            acc |= u32::from(input.next().copied().unwrap_or(0)) << bits;
            bits += 8;
        }
        take(k, (acc & mask) as u16);
        acc >>= width;
        bits -= width;
    }
}

/// `Σ_j a_j · s_j` over j < L with one accumulator, handed to `consume`: `public(j, a)` writes
/// a_j, `secret(j, s)` writes s_j. Each secret is prepared, used once and wiped before the next.
/// Not inlined, so that the accumulator lives only during this call.
#[inline(never)]
fn sum_of_products<B: PolyMul, const L: usize>(
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

/// `(x + h1) mod q >> (EQ − EP)`: rounding to 10 bits.
#[inline(always)]
fn round_to_p(x: u16) -> u16 {
    (x.wrapping_add(H1) & Q_MASK) >> (EQ - EP)
}

/// `sums[k] += p[k]` mod 2^13 on a polynomial stored with 13 bits per coefficient.
fn add_into_packed_q(sums: &mut [u8], p: &Poly) {
    // Eight coefficients per 13 bytes; a u64 holds the group's 104 bits in two halves.
    for (group, values) in sums.chunks_exact_mut(13).zip(p.coeffs.chunks_exact(8)) {
        let mut wide = [0u16; 8];
        let (mut acc, mut bits, mut k) = (0u32, 0u32, 0usize);
        for &byte in group.iter() {
            acc |= u32::from(byte) << bits;
            bits += 8;
            if bits >= EQ {
                wide[k] = (acc as u16).wrapping_add(values[k]);
                acc >>= EQ;
                bits -= EQ;
                k += 1;
            }
        }
        let (mut acc, mut bits, mut index) = (0u32, 0u32, 0usize);
        for &w in &wide {
            acc |= u32::from(w & Q_MASK) << bits;
            bits += EQ;
            while bits >= 8 {
                group[index] = acc as u8;
                index += 1;
                acc >>= 8;
                bits -= 8;
            }
        }
    }
}

/// `sum += a · s` (mod 2^13, 13 bits per coefficient) for the public polynomial that `public`
/// writes; the accumulator and the product live only in this call.
#[inline(never)]
fn add_product_into_packed_q<B: PolyMul>(
    backend: &mut B,
    prepared: &B::Prepared,
    public: impl FnOnce(&mut Poly),
    sum: &mut [u8],
) {
    let mut acc = backend.accumulator();
    multiply_with(backend, &mut acc, prepared, public);
    finish_with(backend, &acc, |product| add_into_packed_q(sum, product));
    acc.zeroize();
}

/// Coefficient `k` of a polynomial stored with 13 bits per coefficient.
#[inline(always)]
fn read_packed_q(bytes: &[u8], k: usize) -> u16 {
    let bit = k * EQ as usize;
    let at = |i: usize| u32::from(bytes.get((bit >> 3) + i).copied().unwrap_or(0));
    let window = at(0) | (at(1) << 8) | (at(2) << 16);
    ((window >> (bit & 7)) as u16) & Q_MASK
}

/// (K̂, r): the two halves of G's output.
fn split_kr(kr: &[u8; 64]) -> (Zeroizing<[u8; 32]>, Zeroizing<[u8; 32]>) {
    let mut k = Zeroizing::new([0u8; 32]);
    let mut r = Zeroizing::new([0u8; 32]);
    k.copy_from_slice(&kr[..32]);
    r.copy_from_slice(&kr[32..]);
    (k, r)
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
            add_product_into_packed_q(backend, &prepared, |a| matrix.next_entry(a), sum);
        }
        prepared.zeroize();
    }
}

/// Key generation (Algorithm 4 with Saber.PKE.KeyGen inlined), low-memory.
#[inline(never)]
pub(crate) fn keypair<V: Variant, B: PolyMul, const L: usize, const MU: usize>(
    backend: &mut B,
    seed_a: &[u8; 32],
    seed_s: &[u8; 32],
    z: &[u8; 32],
    pk: &mut [u8],
    sk: &mut [u8],
) {
    let hashed_seed = hash_seed(seed_a);
    let secrets = PackedSecrets::<L>::sample::<V, MU>(seed_s);
    // b = Aᵀ·s, its 13-bit sums in front of the secret key until rounded.
    transposed_into_packed_q::<V, B, L>(
        backend,
        &hashed_seed,
        &secrets,
        &mut sk[..L * POLY_Q_BYTES],
    );
    round_into_public_key::<L>(&sk[..L * POLY_Q_BYTES], &hashed_seed, pk);
    write_secret_key::<V, L>(&secrets, pk, z, sk);
}

/// seed_A = SHAKE128(random seed), so that raw RNG output never appears in the public key.
#[inline(never)]
fn hash_seed(seed_a: &[u8; 32]) -> [u8; 32] {
    let mut hashed = [0u8; 32];
    shake::XofReader::read(&mut crate::hash::shake128(&[seed_a]), &mut hashed);
    hashed
}

/// pk = round_p(b) packed to 10 bits ‖ seed_A, from the 13-bit sums.
#[inline(never)]
fn round_into_public_key<const L: usize>(sums: &[u8], seed_a: &[u8; 32], pk: &mut [u8]) {
    let (pk_b, pk_seed) = pk.split_at_mut(L * POLY_P_BYTES);
    for (sum, out) in sums
        .chunks_exact(POLY_Q_BYTES)
        .zip(pk_b.chunks_exact_mut(POLY_P_BYTES))
    {
        pack_with(
            EP,
            |k| round_to_p(read_packed_q(sum, k)),
            |index, byte| out[index] = byte,
        );
    }
    pk_seed.copy_from_slice(seed_a);
}

/// sk = sk_cpa ‖ pk ‖ H(pk) ‖ z, overwriting the sums.
#[inline(never)]
fn write_secret_key<V: Variant, const L: usize>(
    secrets: &PackedSecrets<L>,
    pk: &[u8],
    z: &[u8; 32],
    sk: &mut [u8],
) {
    let (sk_cpa, rest) = sk.split_at_mut(sizes::secret_cpa::<V>(L));
    let mut s = SecretPoly::ZERO;
    for (i, out) in sk_cpa.chunks_exact_mut(V::SECRET_POLY_BYTES).enumerate() {
        secrets.get(i, &mut s);
        V::encode_secret(&s, out);
    }
    s.zeroize();
    let (sk_pk, rest) = rest.split_at_mut(pk.len());
    sk_pk.copy_from_slice(pk);
    let (sk_hpk, sk_z) = rest.split_at_mut(SEED_BYTES);
    sk_hpk.copy_from_slice(&hash_h(&[pk]));
    sk_z.copy_from_slice(z);
}

/// H = SHA3-256, not inlined so that the hasher's state never sits in a caller's frame.
#[inline(never)]
fn hash_h(parts: &[&[u8]]) -> [u8; 32] {
    sha3_256(parts)
}

/// G = SHA3-512, not inlined (as [`hash_h`]).
#[inline(never)]
fn hash_g(parts: &[&[u8]]) -> [u8; 64] {
    sha3_512(parts)
}

/// Saber.PKE.Enc, low-memory, into `sink`.
#[inline(never)]
fn encrypt<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
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
        // b'_i = Σ_j A[i][j]·s'_j, rounded and packed at once.
        let offset = i * POLY_P_BYTES;
        sum_of_products::<B, L>(
            backend,
            |_, a| matrix.next_entry(a),
            |j, s| secrets.get(j, s),
            |row| {
                pack_with(
                    EP,
                    |k| round_to_p(row.coeffs[k]),
                    |index, byte| sink.put(offset + index, byte),
                )
            },
        );
    }
    // v' = bᵀ·s'; c_m = (v' + h1 − 2^(EP−1)·m) mod p >> (EP − ET).
    let offset = L * POLY_P_BYTES;
    sum_of_products::<B, L>(
        backend,
        |j, a| {
            let packed = &pk_b[j * POLY_P_BYTES..(j + 1) * POLY_P_BYTES];
            unpack_with(packed, EP, |k, x| a.coeffs[k] = x);
        },
        |j, s| secrets.get(j, s),
        |v| {
            pack_with(
                ET as u32,
                |k| {
                    let bit = u16::from((m[k >> 3] >> (k & 7)) & 1);
                    (v.coeffs[k].wrapping_add(H1).wrapping_sub(bit << (EP - 1)) & P_MASK)
                        >> (EP - ET as u32)
                },
                |index, byte| sink.put(offset + index, byte),
            )
        },
    );
}

/// Saber.PKE.Dec, low-memory: each secret polynomial is decoded from `secret` when needed.
#[inline(never)]
fn decrypt<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    secret: &[u8],
    ct: &[u8],
) -> [u8; 32] {
    let (ct_b, ct_m) = ct.split_at(L * POLY_P_BYTES);
    let mut m = [0u8; 32];
    sum_of_products::<B, L>(
        backend,
        |j, a| {
            let packed = &ct_b[j * POLY_P_BYTES..(j + 1) * POLY_P_BYTES];
            unpack_with(packed, EP, |k, x| a.coeffs[k] = x);
        },
        |j, s| {
            let bytes = &secret[j * V::SECRET_POLY_BYTES..(j + 1) * V::SECRET_POLY_BYTES];
            // Range validity was checked when the key was built.
            let _ = V::decode_secret(bytes, MU, s);
        },
        |v| {
            // m = (v + h2 − 2^(EP−ET)·c_m) mod p >> (EP − 1)
            unpack_with(ct_m, ET as u32, |k, c| {
                let bit = (v.coeffs[k]
                    .wrapping_add(h2(ET as u32))
                    .wrapping_sub(c << (EP - ET as u32))
                    & P_MASK)
                    >> (EP - 1);
                m[k >> 3] |= (bit as u8) << (k & 7);
            })
        },
    );
    m
}

/// Encapsulation (Algorithm 5), low-memory.
#[inline(never)]
pub(crate) fn encapsulate<
    V: Variant,
    B: PolyMul,
    const L: usize,
    const MU: usize,
    const ET: usize,
>(
    backend: &mut B,
    pk: &[u8],
    m: &[u8; 32],
    ct: &mut [u8],
) -> SharedSecret {
    let message = Zeroizing::new(hash_h(&[m]));
    let kr = Zeroizing::new(hash_g(&[&message[..], &hash_h(&[pk])]));
    let (k, coins) = split_kr(&kr);
    encrypt::<V, B, L, MU, ET>(
        backend,
        &message,
        &coins,
        pk,
        &mut CiphertextSink::Write(ct),
    );
    SharedSecret(hash_h(&[&k[..], &hash_h(&[ct])]))
}

/// Decapsulation (Algorithm 6), low-memory: the re-encryption is compared as it is produced.
#[inline(never)]
pub(crate) fn decapsulate<
    V: Variant,
    B: PolyMul,
    S: KeySelect,
    const L: usize,
    const MU: usize,
    const ET: usize,
>(
    backend: &mut B,
    secret: &[u8],
    pk: &[u8],
    hpk: &[u8; 32],
    z: &[u8; 32],
    ct: &[u8],
) -> SharedSecret {
    let message = Zeroizing::new(decrypt::<V, B, L, MU, ET>(backend, secret, ct));
    let kr = Zeroizing::new(hash_g(&[&message[..], hpk]));
    let (mut k, coins) = split_kr(&kr);
    let mut sink = CiphertextSink::Compare {
        expected: ct,
        difference: 0,
    };
    encrypt::<V, B, L, MU, ET>(backend, &message, &coins, pk, &mut sink);
    let CiphertextSink::Compare { difference, .. } = sink else {
        unreachable!()
    };
    // Implicit rejection: K = H(z ‖ H(c)) on any mismatch, selected without a branch.
    let mismatch: Choice = !difference.ct_eq(&0);
    S::select_into(&mut k, z, mismatch);
    SharedSecret(hash_h(&[&k[..], &hash_h(&[ct])]))
}
