//! Parameter sets and scheme variants, as data.
//!
//! A KEM instance is `SaberKem<V, L, MU, ET>` (`crate::kem`): the variant `V` ([`Round3`],
//! [`Uniform`], [`Nineties`], [`UniformNineties`] or [`Plus`]) says how the scheme's pieces are
//! derived (the modulus q, the secret distribution and its stream layout, the matrix derivation,
//! the secret-key coding, the symmetric primitives); the const parameters are the module rank L,
//! the binomial parameter μ and the ciphertext exponent ε_T (round-3 spec §2.2, Table 1).
//! Everything downstream reads these descriptions; a new variant is new data here plus, where it
//! brings one, a new sampler or hash family.

use core::fmt::Debug;
use core::hash::Hash;

use zeroize::Zeroize;

use crate::poly::N;

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// log2 of the rounding modulus p (spec §2.2), the same for every set.
pub const EP: u32 = 10;
/// Bytes of seeds, hashes, messages and shared secrets.
pub const SEED_BYTES: usize = 32;

/// How the secret coefficients are distributed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Secrets {
    /// The centred binomial distribution β_μ: μ bits of the stream per coefficient (§2.4.2).
    Binomial,
    /// Uniform in [−2, 1] (uSaber): each 2-bit field of the stream, least
    /// significant first, read as a two's-complement number.
    Uniform,
}

impl Secrets {
    /// The inclusive range of the coefficients, for binomial parameter `mu`.
    pub(crate) const fn range(self, mu: usize) -> (i32, i32) {
        match self {
            Self::Binomial => (-((mu >> 1) as i32), (mu >> 1) as i32),
            Self::Uniform => (-2, 1),
        }
    }

    /// Bits of the secret stream per coefficient, for binomial parameter `mu`.
    pub(crate) const fn stream_bits(self, mu: usize) -> usize {
        match self {
            Self::Binomial => mu,
            Self::Uniform => 2,
        }
    }
}

/// How the matrix A comes out of the XOF.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixDerivation {
    /// One stream XOF(seed_A); A\[i\]\[j\] is its polynomial i·L + j (§2.4.1).
    OneStream,
    /// A\[i\]\[j\] = XOF(seed_A ‖ i ‖ j), each index one byte (`docs/saber-plus.md` §4.1).
    PerEntry,
}

/// A run of secret coefficients in the secret stream: `coeffs` coefficients from byte `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Byte offset into the stream XOF(seed).
    pub offset: usize,
    /// Number of coefficients (a multiple of 128).
    pub coeffs: usize,
}

/// Where each secret polynomial's bytes lie in the secret stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretLayout {
    /// Polynomial i takes the i-th run of the stream's bytes, without gaps (§2.4.2).
    Contiguous,
    /// Runs listed per rank 2, 3 and 4, in coefficient order, with gaps between them.
    Runs(&'static [&'static [Segment]; 3]),
}

/// The symmetric primitives of a variant (§2.3): the hash H, the hash G and the XOF.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Symmetric {
    /// H = SHA3-256, G = SHA3-512, XOF = SHAKE128.
    Sha3,
    /// The "90s" primitives of Saber-90s: H = SHA-256, G = SHA-512, and as the XOF the
    /// AES-256-CTR keystream keyed with the 32-byte seed, from an all-zero 12-byte nonce and a
    /// 32-bit big-endian block counter starting at 0 (the reference's `saber_aes256ctr_prf`).
    Sha2Aes,
}

/// A scheme variant: everything the parameter sets of one family share, as data. Sealed.
pub trait Variant:
    Copy + Clone + Debug + Default + Eq + Ord + Hash + Send + Sync + 'static + sealed::Sealed
{
    /// Put before the rank's name (`"Saber"`, …) in the parameter set's name (`"u"` for uSaber).
    const PREFIX: &'static str;
    /// Appended to the rank's name in the parameter set's name (`"-90s"`, `"+"`).
    const SUFFIX: &'static str;
    /// log2 of the modulus q.
    const EQ: u32;
    /// The distribution of the secrets.
    const SECRETS: Secrets;
    /// Where each secret polynomial's bytes lie in the secret stream.
    const SECRET_LAYOUT: SecretLayout;
    /// Bits per secret coefficient in the secret key (two's complement).
    const SECRET_KEY_BITS: u32;
    /// How A is derived from seed_A.
    const MATRIX: MatrixDerivation;
    /// The hash functions and the XOF.
    const SYMMETRIC: Symmetric;
}

/// Round-3 Saber (NIST submission, October 2020).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Round3;

/// uSaber (a variant in the round-3 submission): round-3 Saber with q = 2^12 and secrets
/// uniform in [−2, 1] (2 stream bits per coefficient); secret keys take 12 bits per coefficient.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Uniform;

/// Saber-90s (a variant in the round-3 submission): round-3 Saber on SHA-2 and AES-256-CTR
/// instead of SHA-3 and SHAKE128 ([`Symmetric::Sha2Aes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nineties;

/// uSaber-90s: [`Uniform`]'s modulus and secrets on [`Nineties`]' primitives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UniformNineties;

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
impl sealed::Sealed for Uniform {}
impl sealed::Sealed for Nineties {}
impl sealed::Sealed for UniformNineties {}
impl sealed::Sealed for Plus {}

/// The four official round-3 variants: {binomial, uniform} secrets × {SHA-3, 90s} primitives.
macro_rules! round3_variants {
    ($($variant:ty: $prefix:literal, $suffix:literal, $eq:literal, $secrets:ident,
        $symmetric:ident;)*) => {$(
        impl Variant for $variant {
            const PREFIX: &'static str = $prefix;
            const SUFFIX: &'static str = $suffix;
            const EQ: u32 = $eq;
            const SECRETS: Secrets = Secrets::$secrets;
            const SECRET_LAYOUT: SecretLayout = SecretLayout::Contiguous;
            const SECRET_KEY_BITS: u32 = Self::EQ;
            const MATRIX: MatrixDerivation = MatrixDerivation::OneStream;
            const SYMMETRIC: Symmetric = Symmetric::$symmetric;
        }
    )*};
}

round3_variants! {
    Round3: "", "", 13, Binomial, Sha3;
    Uniform: "u", "", 12, Uniform, Sha3;
    Nineties: "", "-90s", 13, Binomial, Sha2Aes;
    UniformNineties: "u", "-90s", 12, Uniform, Sha2Aes;
}

/// Saber+'s secret-stream runs (`docs/saber-plus.md` §4.3): the gaps are what the Saber_RV32
/// block-wise squeezing leaves.
const PLUS_RUNS: [&[Segment]; 3] = {
    const fn seg(offset: usize, coeffs: usize) -> Segment {
        Segment { offset, coeffs }
    }
    [
        &[seg(0, 128), seg(168, 128), seg(336, 128), seg(504, 128)],
        &[seg(0, 256), seg(256, 256), seg(584, 256)],
        &[seg(0, 256), seg(264, 256), seg(456, 256), seg(648, 256)],
    ]
};

impl Variant for Plus {
    const PREFIX: &'static str = "";
    const SUFFIX: &'static str = "+";
    const EQ: u32 = 13;
    const SECRETS: Secrets = Secrets::Binomial;
    const SECRET_LAYOUT: SecretLayout = SecretLayout::Runs(&PLUS_RUNS);
    const SECRET_KEY_BITS: u32 = 4;
    const MATRIX: MatrixDerivation = MatrixDerivation::PerEntry;
    const SYMMETRIC: Symmetric = Symmetric::Sha3;
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
pub(crate) mod sizes {
    use super::{EP, N, SEED_BYTES, Variant};

    /// Bytes of one polynomial packed with `bits` bits per coefficient.
    pub(crate) const fn packed(bits: u32) -> usize {
        (N * bits as usize) >> 3
    }
    /// A packed polynomial mod p (b, b').
    pub(crate) const POLY_P_BYTES: usize = packed(EP);
    /// A packed polynomial mod q (an entry of A).
    pub(crate) const fn poly_q<V: Variant>() -> usize {
        packed(V::EQ)
    }
    /// pk = pack_p(b) ‖ seed_A.
    pub(crate) const fn public_key(l: usize) -> usize {
        l * POLY_P_BYTES + SEED_BYTES
    }
    /// One secret polynomial in the secret key.
    pub(crate) const fn secret_poly<V: Variant>() -> usize {
        packed(V::SECRET_KEY_BITS)
    }
    /// The IND-CPA secret key.
    pub(crate) const fn secret_cpa<V: Variant>(l: usize) -> usize {
        l * secret_poly::<V>()
    }
    /// sk = sk_cpa ‖ pk ‖ H(pk) ‖ z.
    pub(crate) const fn secret_key<V: Variant>(l: usize) -> usize {
        secret_cpa::<V>(l) + public_key(l) + 2 * SEED_BYTES
    }
    /// ct = pack_p(b') ‖ pack_ET(c_m).
    pub(crate) const fn ciphertext(l: usize, et: usize) -> usize {
        l * POLY_P_BYTES + packed(et as u32)
    }
}
