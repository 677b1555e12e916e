//! Parameter sets and scheme variants as types.
//!
//! A KEM instance is [`SaberKem<V, L, MU, ET>`](crate::SaberKem): the variant `V` ([`Round3`] or
//! [`Plus`]) chooses the matrix source, the secret sampler and the secret-key encoding; the const
//! parameters are the module rank L, the binomial parameter μ and the ciphertext exponent ε_T
//! (round-3 spec Table 1). Only the six combinations listed at the bottom of this file implement
//! [`ParameterSet`], which fixes their byte sizes.

use core::fmt::Debug;
use core::hash::Hash;

use subtle::Choice;
use zeroize::Zeroize;

use crate::encoding::{pack, packed_len, unpack};
use crate::poly::{EP, EQ, N, SecretPoly, centred};
use crate::sampling::{MatrixSource, SecretSegment, StreamMatrix, gen_secret, gen_secret_with};

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// The scheme variant: round-3 Saber or Saber+ (`docs/saber-plus.md`). Everything else (FO
/// transform, rounding, pk/ct formats) is shared.
pub trait Variant:
    Copy
    + Clone
    + Debug
    + Default
    + Eq
    + Ord
    + Hash
    + Send
    + Sync
    + 'static
    + sealed::Sealed
    + crate::batch::BatchVariant
{
    /// Appended to the parameter-set name: `""` or `"+"`.
    const SUFFIX: &'static str;
    /// Bytes of one secret polynomial in the secret key.
    const SECRET_POLY_BYTES: usize;
    /// The matrix source of this variant.
    type Matrix: MatrixSource;

    /// A row-major source for the `rank × rank` matrix A of `seed_a`.
    fn matrix(seed_a: &[u8; 32], rank: usize) -> Self::Matrix;

    /// GenSecret: the secret vector for `seed` (key generation's seed_s or encryption's r).
    fn gen_secret<const L: usize, const MU: usize>(seed: &[u8; 32], out: &mut [SecretPoly; L]);

    /// GenSecret, streaming: hands each secret polynomial to `take(index, poly)` as soon as it
    /// is sampled (same stream and order as [`gen_secret`](Self::gen_secret), one polynomial in
    /// memory).
    fn gen_secret_with<const L: usize, const MU: usize>(
        seed: &[u8; 32],
        take: impl FnMut(usize, &SecretPoly),
    );

    /// Writes one secret polynomial in the secret-key encoding.
    fn encode_secret(s: &SecretPoly, out: &mut [u8]);

    /// Reads one secret polynomial; the returned flag is set only if every coefficient lies in
    /// `[-μ/2, μ/2]`. Constant time.
    fn decode_secret(bytes: &[u8], mu: usize, out: &mut SecretPoly) -> Choice;
}

/// Round-3 Saber (NIST submission, October 2020).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Round3;

/// Saber+ as specified in `docs/saber-plus.md` (Saber_RV32, strategy SLOWGENA_FASTMUL): matrix
/// entries from independent XOF calls, a gapped secret stream and 4-bit secret keys.
///
/// Deviation from the Saber_RV32 code (`docs/saber-plus.md` §9): on a ciphertext mismatch the key
/// is SHA3-256(z ‖ SHA3-256(ct)) with a constant-time 0/1 flag, as in round-3 Saber, not the
/// code's byte-masked mix that lets only 32 bits of z into the key. Valid-ciphertext KATs are
/// unaffected. Secret keys whose nibbles lie outside [-μ/2, μ/2] are rejected when decoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Plus;

impl sealed::Sealed for Round3 {}
impl sealed::Sealed for Plus {}

/// Sets the flag to 0 if any of `coeffs` lies outside `[-bound, bound]`, without branching.
fn all_within(coeffs: &[i8; N], bound: i32) -> Choice {
    let mut outside = 0i32;
    for &c in coeffs {
        let shifted = i32::from(c) + bound; // in range iff 0 <= shifted <= 2·bound
        outside |= shifted | (2 * bound - shifted);
    }
    // The sign bit of `outside` is set iff some term went negative.
    Choice::from((((outside as u32) >> 31) ^ 1) as u8)
}

impl Variant for Round3 {
    const SUFFIX: &'static str = "";
    const SECRET_POLY_BYTES: usize = packed_len(EQ);
    type Matrix = StreamMatrix;

    fn matrix(seed_a: &[u8; 32], _rank: usize) -> StreamMatrix {
        StreamMatrix::new(seed_a)
    }

    fn gen_secret<const L: usize, const MU: usize>(seed: &[u8; 32], out: &mut [SecretPoly; L]) {
        // Polynomial i reads bytes [i·32μ, (i+1)·32μ) of one stream (spec §2.4.2).
        let segments: [SecretSegment; L] = core::array::from_fn(|i| SecretSegment {
            offset: (i * N * MU) >> 3,
            coeffs: N,
        });
        gen_secret(seed, MU as u32, &segments, out);
    }

    fn gen_secret_with<const L: usize, const MU: usize>(
        seed: &[u8; 32],
        take: impl FnMut(usize, &SecretPoly),
    ) {
        let segments: [SecretSegment; L] = core::array::from_fn(|i| SecretSegment {
            offset: (i * N * MU) >> 3,
            coeffs: N,
        });
        gen_secret_with(seed, MU as u32, &segments, take);
    }

    fn encode_secret(s: &SecretPoly, out: &mut [u8]) {
        // 13-bit two's complement (−3 → 0x1FFD).
        let mut wide = s.coeffs.map(|c| c as i16 as u16);
        pack(&wide, EQ, out);
        // As a slice: one bulk fill (an array would take a volatile store per coefficient).
        wide.as_mut_slice().zeroize();
    }

    fn decode_secret(bytes: &[u8], mu: usize, out: &mut SecretPoly) -> Choice {
        let mut wide = [0u16; N];
        unpack(bytes, EQ, &mut wide);
        let mut in_i8_range = 0i32;
        for (o, &w) in out.coeffs.iter_mut().zip(wide.iter()) {
            let v = centred(w);
            // Values beyond ±127 cannot be valid; remember that before truncating to i8.
            in_i8_range |= (v + 128) | (127 - v);
            *o = v as i8;
        }
        wide.as_mut_slice().zeroize();
        let fits = Choice::from((((in_i8_range as u32) >> 31) ^ 1) as u8);
        fits & all_within(&out.coeffs, (mu >> 1) as i32)
    }
}

/// Saber+ secret stream ranges (`docs/saber-plus.md` §4.3): contiguous runs of the one
/// SHAKE128(seed) stream, with the gaps the Saber_RV32 block-wise squeezing leaves.
pub(crate) fn plus_segments(rank: usize) -> &'static [SecretSegment] {
    const fn seg(offset: usize, coeffs: usize) -> SecretSegment {
        SecretSegment { offset, coeffs }
    }
    const L2: [SecretSegment; 4] = [seg(0, 128), seg(168, 128), seg(336, 128), seg(504, 128)];
    const L3: [SecretSegment; 3] = [seg(0, 256), seg(256, 256), seg(584, 256)];
    const L4: [SecretSegment; 4] = [seg(0, 256), seg(264, 256), seg(456, 256), seg(648, 256)];
    match rank {
        2 => &L2,
        3 => &L3,
        _ => &L4,
    }
}

/// Saber+'s matrix source for one operation. On x86/x86_64 the L² independent entries are
/// squeezed four at a time with the AVX2 four-way Keccak (hashed one at a time on CPUs without
/// AVX2), which made Saber+ keygen/encaps/decaps 1.12–1.31× faster with the default backend and
/// 1.09–1.17× with toom-cook (peer-bench, BENCHMARKS.md "Saber+ vs Saber"), for 1.6 KB of
/// buffered entries, also in `LowMemory` mode. Elsewhere (the 32-bit embedded cores, which have
/// no vector Keccak) the entries are hashed one at a time and nothing is buffered.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
type PlusMatrix = crate::batch::IndexedMatrixX4;
#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
type PlusMatrix = crate::sampling::IndexedMatrix;

impl Variant for Plus {
    const SUFFIX: &'static str = "+";
    const SECRET_POLY_BYTES: usize = packed_len(4);
    type Matrix = PlusMatrix;

    fn matrix(seed_a: &[u8; 32], rank: usize) -> PlusMatrix {
        PlusMatrix::new(seed_a, rank)
    }

    fn gen_secret<const L: usize, const MU: usize>(seed: &[u8; 32], out: &mut [SecretPoly; L]) {
        gen_secret(seed, MU as u32, plus_segments(L), out);
    }

    fn gen_secret_with<const L: usize, const MU: usize>(
        seed: &[u8; 32],
        take: impl FnMut(usize, &SecretPoly),
    ) {
        gen_secret_with(seed, MU as u32, plus_segments(L), take);
    }

    fn encode_secret(s: &SecretPoly, out: &mut [u8]) {
        // 4-bit two's-complement nibbles, even coefficient in the low nibble (§3.4).
        let mut wide = s.coeffs.map(|c| c as u8 as u16);
        pack(&wide, 4, out);
        wide.as_mut_slice().zeroize();
    }

    fn decode_secret(bytes: &[u8], mu: usize, out: &mut SecretPoly) -> Choice {
        let mut wide = [0u16; N];
        unpack(bytes, 4, &mut wide);
        for (o, &w) in out.coeffs.iter_mut().zip(wide.iter()) {
            // Sign-extend the nibble: −8..7.
            *o = ((w as u8) << 4) as i8 >> 4;
        }
        wide.as_mut_slice().zeroize();
        all_within(&out.coeffs, (mu >> 1) as i32)
    }
}

/// Fixed-size byte strings (key and ciphertext encodings).
pub trait ByteArray:
    AsRef<[u8]> + AsMut<[u8]> + Clone + Zeroize + Send + Sync + 'static + sealed::Sealed
{
    /// All zero. A constant, so that arrays of keys and ciphertexts (the batch API's results)
    /// are built zeroed in place, as `[C; N]` of a constant `C`, rather than assembled from
    /// temporaries and copied.
    const ZERO: Self;
}

impl<const LEN: usize> ByteArray for [u8; LEN] {
    const ZERO: Self = [0; LEN];
}

/// Fixed-size arrays of `T`: per-parameter-set storage for vectors (L) and matrices (L·L) of
/// backend-domain polynomials, such as the caches of the expanded keys.
pub trait ArrayOf<T>: AsRef<[T]> + AsMut<[T]> + sealed::Sealed {
    /// Element `i` is `f(i)`, built in order.
    fn from_fn(f: impl FnMut(usize) -> T) -> Self;
}

impl<T, const LEN: usize> sealed::Sealed for [T; LEN] {}
impl<T, const LEN: usize> ArrayOf<T> for [T; LEN] {
    fn from_fn(f: impl FnMut(usize) -> T) -> Self {
        core::array::from_fn(f)
    }
}

/// Byte sizes derived from (V, L, MU, ET) — round-3 spec §2.2 and `docs/saber-plus.md` §2.
pub mod sizes {
    use super::*;

    /// Packed polynomial mod p.
    pub const POLY_P_BYTES: usize = packed_len(EP);
    /// Seeds, hashes, messages and shared secrets.
    pub const SEED_BYTES: usize = 32;

    /// pk = pack_10(b) ‖ seed_A.
    pub const fn public_key(l: usize) -> usize {
        l * POLY_P_BYTES + SEED_BYTES
    }
    /// IND-CPA secret key.
    pub const fn secret_cpa<V: Variant>(l: usize) -> usize {
        l * V::SECRET_POLY_BYTES
    }
    /// sk = sk_cpa ‖ pk ‖ H(pk) ‖ z.
    pub const fn secret_key<V: Variant>(l: usize) -> usize {
        secret_cpa::<V>(l) + public_key(l) + 2 * SEED_BYTES
    }
    /// ct = pack_10(b') ‖ pack_ET(c_m).
    pub const fn ciphertext(l: usize, et: usize) -> usize {
        l * POLY_P_BYTES + ((N * et) >> 3)
    }
}

/// A concrete parameter set: its name and encoding sizes as types.
pub trait ParameterSet: crate::kem::Operations {
    /// "LightSaber", "Saber+", …
    const NAME: &'static str;
    /// Encoded public (encapsulation) key.
    type PublicKeyBytes: ByteArray;
    /// Encoded secret (decapsulation) key, NIST layout.
    type SecretKeyBytes: ByteArray;
    /// The IND-CPA secret part of the secret key.
    type SecretCpaBytes: ByteArray;
    /// Encoded ciphertext.
    type CiphertextBytes: ByteArray;
    /// L values of `T`.
    type Vector<T>: ArrayOf<T>;
    /// L·L values of `T`, row-major.
    type Matrix<T>: ArrayOf<T>;
    /// The matrix A packed (L·L entries of 13-bit coefficients, row-major), as the batch API
    /// holds it between squeezing and multiplying.
    type MatrixBytes: ByteArray;
}

macro_rules! parameter_sets {
    ($( $(#[$doc:meta])* $alias:ident = ($v:ty, $l:literal, $mu:literal, $et:literal), $name:literal,
        pk $pk:literal $pk_t:ident, sk $sk:literal $sk_t:ident, cpa $cpa:literal, ct $ct:literal $ct_t:ident; )*) => {
        $(
            $(#[$doc])*
            pub type $alias = crate::SaberKem<$v, $l, $mu, $et>;

            impl ParameterSet for $alias {
                const NAME: &'static str = $name;
                type PublicKeyBytes = [u8; $pk];
                type SecretKeyBytes = [u8; $sk];
                type SecretCpaBytes = [u8; $cpa];
                type CiphertextBytes = [u8; $ct];
                type Vector<T> = [T; $l];
                type Matrix<T> = [T; $l * $l];
                type MatrixBytes = [u8; $l * $l * crate::sampling::MATRIX_ENTRY_BYTES];
            }

            const _: () = {
                assert!($pk == sizes::public_key($l));
                assert!($sk == sizes::secret_key::<$v>($l));
                assert!($cpa == sizes::secret_cpa::<$v>($l));
                assert!($ct == sizes::ciphertext($l, $et));
            };

            #[cfg(feature = "kem")]
            impl crate::kem_traits::KemSizes for $alias {
                type PublicKeySize = hybrid_array::sizes::$pk_t;
                type SecretKeySize = hybrid_array::sizes::$sk_t;
                type CiphertextSize = hybrid_array::sizes::$ct_t;
            }
        )*
    };
}

parameter_sets! {
    /// LightSaber (NIST level 1): L = 2, μ = 10, ε_T = 3.
    LightSaber = (Round3, 2, 10, 3), "LightSaber",
        pk 672 U672, sk 1568 U1568, cpa 832, ct 736 U736;
    /// Saber (NIST level 3): L = 3, μ = 8, ε_T = 4.
    Saber = (Round3, 3, 8, 4), "Saber",
        pk 992 U992, sk 2304 U2304, cpa 1248, ct 1088 U1088;
    /// FireSaber (NIST level 5): L = 4, μ = 6, ε_T = 6.
    FireSaber = (Round3, 4, 6, 6), "FireSaber",
        pk 1312 U1312, sk 3040 U3040, cpa 1664, ct 1472 U1472;
    /// LightSaber+: LightSaber parameters with the Saber+ generators and 4-bit secret keys.
    LightSaberPlus = (Plus, 2, 10, 3), "LightSaber+",
        pk 672 U672, sk 992 U992, cpa 256, ct 736 U736;
    /// Saber+: Saber parameters with the Saber+ generators and 4-bit secret keys.
    SaberPlus = (Plus, 3, 8, 4), "Saber+",
        pk 992 U992, sk 1440 U1440, cpa 384, ct 1088 U1088;
    /// FireSaber+: FireSaber parameters with the Saber+ generators and 4-bit secret keys.
    FireSaberPlus = (Plus, 4, 6, 6), "FireSaber+",
        pk 1312 U1312, sk 1888 U1888, cpa 512, ct 1472 U1472;
}
