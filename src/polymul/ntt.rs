//! NTT multiplication over a 32-bit prime, exact for Saber's power-of-two modulus
//! (Chung, Hwang, Kannwischer, Seiler, Shih, Yang, "NTT Multiplication for NTT-unfriendly Rings",
//! TCHES 2021(2); the incomplete 6-layer shape of Saber+, Zhang et al., IEEE TC 71(11), 2022;
//! asymmetric base multiplication as in Becker et al., "Neon NTT", TCHES 2022(1)).
//!
//! # Method
//!
//! Z_{2^13} has no suitable roots of unity, so the product is computed **exactly over Z** and
//! reduced mod 2^13 at the end: `a` is centred to [−4096, 4095] (`poly::centred`), `s`
//! has |s_i| <= 5 ([`crate::poly::SECRET_BOUND`]), and the sum of up to four products is computed
//! in Z_{q'}\[x\]/(x^256 + 1) for a prime q' more than twice as large as any coefficient of that
//! sum; its centred residue is then the integer itself, whose low 13 bits are the answer.
//!
//! - **Transform.** A 6-layer negacyclic NTT (Cooley–Tukey forward, Gentleman–Sande inverse)
//!   splits x^256 + 1 into 64 blocks x^4 ∓ ζ. Signed Montgomery arithmetic with R = 2^32 on `i32`
//!   values and `i64` products: no division, no branch, no table lookup at a data-dependent
//!   index.
//! - **Prepared secret** ([`NttPrepared`], 4 KiB): the NTT of `s` as one 4×4 matrix per block,
//!   column i of block x^4 − ζ being (b_0..b_3 shifted down by i, with the wrapped entries
//!   multiplied by ζ once here), so every base multiplication row is a plain dot product; stored
//!   by groups of four blocks (column i of the four side by side: one AVX-512 register).
//! - **Accumulator** ([`NttAccumulator`], 2 KiB): the `i64` sums of the base products of up to
//!   four `mul_acc` calls, not reduced at all; `finish` does one Montgomery reduction per
//!   coefficient, one inverse NTT and the canonical centred reduction.
//! - A matrix-vector product of rank L thus costs L² + L forward and L inverse transforms.
//! - [`PolyMulPublic`]: a public polynomial can be kept in the NTT domain too ([`NttPublic`],
//!   1 KiB), so that the expanded keys (`crate::expanded`) transform A and b once; a cached
//!   product is then the base multiplication alone.
//!
//! # The prime and the bound proof
//!
//! q' = **41,944,577** = 2^9 · 81,923 + 1, the smallest prime above 2 · 4 · 256 · 4096 · 5 =
//! 41,943,040 with 512 | q' − 1 (so 5-, 6-, 7- and complete 8-layer transforms all exist over
//! it). Let η <= 5 bound |s_i| and L <= 4 be the number of accumulated products.
//!
//! 1. **Exactness.** Every coefficient of Σ_{k<L} a_k·s_k over Z\[x\]/(x^256 + 1) is a sum of
//!    L·256 terms of size <= 4096·η, hence at most 4·256·4096·5 = 20,971,520 <= (q' − 1)/2 =
//!    20,972,288. The canonical centred residue mod q' therefore *is* the integer coefficient.
//!    The Saber parameter sets need less (L·η = 2·5, 3·4, 4·3: at most 12,582,912, which
//!    25,166,081 would cover), but the [`PolyMul`] contract allows any four products with
//!    |s_i| <= 5, and the differential tests exercise exactly that.
//! 2. **Montgomery.** `montgomery_reduce(x)` = (x − m·q')/2^32 with |m| <= 2^31, so its result r
//!    satisfies |r| <= |x|/2^32 + q'/2. A product by a centred constant (|ζ| <= q'/2) gives
//!    |a·ζ·2^(−32)| <= q'·(|a|/2^33 + 1/2). (q'/2^32 < 0.009766.)
//! 3. **Forward NTT, no intermediate reduction.** Each layer adds at most the product bound
//!    of (2) to the magnitude; with |a| < 3.1·q' throughout, that is <= 0.5151·q' per layer. From
//!    |a_i| <= 4096 (or 5), six layers give |â| <= 4096 + 6·0.5151·q' < 3.1·q' < 2^27.
//!    `prepare` then makes the secret's outputs canonical: one Montgomery multiplication by
//!    2^32 (|r| <= 0.5151·q' by (2)) and one conditional ±q' in the scalar code; in the
//!    AVX-512 code ±2q' beyond ±(3q' − 1)/2, then ±q' (exact for |x| <= 3.5·q').
//! 4. **Base multiplication, lazily accumulated in `i64`.** Prepared entries are canonical
//!    (|b| <= (q' − 1)/2). One output coefficient of one product is a 4-term dot product, so L = 4
//!    accumulated products sum 16 terms: |Σ| <= 16 · 3.1·q' · q'/2 = 24.8·q'^2 < 4.4·10^16 < 2^56,
//!    far inside `i64` and inside the Montgomery precondition |x| < 2^63 − 2^31·q'.
//! 5. **Reduction in `finish`**: |r| <= 24.8·q'^2/2^32 + q'/2 <= 0.7422·q'.
//! 6. **Inverse NTT, no intermediate reduction.** Each Gentleman–Sande layer maps (u, v) to
//!    (u + v, (u − v)·ζ^(−1)); sums at most double, the products stay below q'·(|u − v|/2^33 +
//!    1/2), smaller than the sums' bound. After six layers |x| <= 2^6 · 0.7422·q' = 47.5·q' =
//!    1,992,400,000 < 2^31 − 1, and every difference along the way obeys the same bound.
//! 7. **Final scaling** by F = 2^64/2^6 mod q' (undoing the 2^6 of the butterflies and the
//!    2^(−32) of step 5): |r| <= 47.5·q' · q'/2^33 + q'/2 < 0.74·q' < q', so one conditional
//!    subtraction and one conditional addition (masks, no branch) give the canonical centred
//!    residue, which by (1) is the exact coefficient. Output: that integer wrapped to `u16`.
//!
//! The measurement variants with 5, 7 and 8 layers (benchmarks only) satisfy the same chain:
//! fewer layers raise the base-product sum (32 terms for 5 layers: <= 0.91·q' after step 5, 32×
//! growth); more layers lower it but would overflow `i32` in the inverse, so from the sixth
//! inverse layer on the sums are reduced by one Montgomery multiplication by 2^32 mod q'.
//!
//! # Backends and dispatch
//!
//! [`NttScalar`] is portable Rust for every target (32-bit ones use `i64` products as
//! `mul`/`mulh` pairs). [`NttAvx512`] runs the same arithmetic sixteen lanes wide with AVX-512
//! F and BW (the whole polynomial in registers) and produces the same accumulators, prepared
//! secrets and outputs bit for bit. [`NttAvx2`] computes the product another way: mod two 16-bit
//! primes, sixteen `i16` lanes per register, joined by the CRT in `finish` (its module docs
//! give the bounds), because AVX2 lacks the 32×32-bit multiply on all lanes that makes q' cheap;
//! its `finish` outputs are the same bit for bit, its NTT-domain values (same types, same sizes)
//! are laid out its own way and only mean something to the AVX2 path. `new()` is `None` without
//! the instructions, and always on other architectures. [`Ntt`] detects the features once at
//! construction (CPUID and the OS's register support through `cpufeatures`, cached
//! process-wide), keeps the widest path's token and dispatches on it (AVX-512, else AVX2, else
//! scalar); every `Ntt` of a process takes the same path unless the level is capped in between
//! (`hazmat::cap_isa`). All share [`NttPrepared`], [`NttAccumulator`] and [`NttPublic`].
//! Valgrind's CPU model has no AVX-512, so the constant-time test (`tests/ct_valgrind.rs`) runs
//! the AVX2 path; the AVX-512 kernels have the same structure (no branch, no data-dependent
//! index: fixed registers, constant offsets).
//!
//! # Why six layers
//!
//! Six layers were the fastest layer count for the scalar code (`NttScalarLayers<L>`, BENCHMARKS.md
//! "NTT: layer count and SIMD paths"). The AVX-512 path holds the whole polynomial in sixteen
//! registers (layers 1–4 pair registers, layers 5–6 rearrange register pairs; fully unrolled, no
//! stack traffic); its `prepare` makes the secret's transform canonical by compares and masked
//! ±2q', ±q' instead of a Montgomery multiplication. The AVX2 path's six layers end on blocks of
//! four `i16`, a 64-bit quarter of a register, whose products are `vpmaddwd` dot products. Both
//! SIMD `prepare`s write their 4 KiB output without zero-filling it first (and the AVX2 path
//! multiplies a secret used once, decryption's, without that output: `mul_acc_once`); on x86
//! the three NTT-domain types are cache-line aligned, so that no 64-byte access splits across
//! two lines.

use zeroize::Zeroize;

use crate::poly::{N, Poly, SecretPoly};
use crate::polymul::{PolyMul, PolyMulPublic};

mod merged;
mod params;
mod scalar;

pub use merged::{
    MergedAccumulator, MergedAccumulatorPortable, MergedPrepared, MergedPreparedPortable,
    NttLowStack, NttLowStackPortable, NttMerged, NttMergedPortable,
};

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx2;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx512;

use params::{LayerCount, Layers6};

/// A secret in the NTT domain: for each of the 64 blocks mod x^4 ∓ ζ, its 4×4 base-multiplication
/// matrix (the ζ-multiples precomputed). 4 KiB. Wiped by the caller (the [`PolyMul`] contract).
#[derive(Clone)]
// Cache-line aligned on x86: a 64-byte AVX-512 access to an unaligned address splits across
// two lines (the AVX2 path's 32-byte ones, every other time).
#[cfg_attr(any(target_arch = "x86", target_arch = "x86_64"), repr(align(64)))]
pub struct NttPrepared {
    columns: [i32; 4 * N],
    #[allow(dead_code)] // Never read: its type is a niche.
    niche: Niche,
}

/// A field whose only use is its niche: `Option` of a type holding one needs no tag of its own,
/// so that `Some` of a zero value is all zero bytes, and a slot is zero-filled where it is (with
/// a tag the value was built apart and copied in: a fill and a copy of the whole value, 4 KiB
/// for a prepared secret, 2 KiB for an accumulator).
#[derive(Clone, Copy)]
#[repr(u8)]
enum Niche {
    Filled = 0,
}

impl NttPrepared {
    const ZERO: Self = Self {
        columns: [0; 4 * N],
        niche: Niche::Filled,
    };
}

// Through a slice: `zeroize` wipes slices with one bulk fill and an optimisation barrier, arrays
// one volatile store per element (1,024 stores here, a measurable share of `prepare`).
impl Zeroize for NttPrepared {
    fn zeroize(&mut self) {
        self.columns.as_mut_slice().zeroize();
    }
}

impl core::fmt::Debug for NttPrepared {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("NttPrepared(<redacted>)")
    }
}

/// A sum of up to four products in the NTT domain: unreduced `i64` base-product sums, 2 KiB.
/// Wiped by the caller.
#[derive(Clone)]
// Cache-line aligned on x86: a 64-byte AVX-512 access to an unaligned address splits across
// two lines (the AVX2 path's 32-byte ones, every other time).
#[cfg_attr(any(target_arch = "x86", target_arch = "x86_64"), repr(align(64)))]
pub struct NttAccumulator {
    sums: [i64; N],
    #[allow(dead_code)] // Never read: its type is a niche.
    niche: Niche,
}

impl Zeroize for NttAccumulator {
    fn zeroize(&mut self) {
        self.sums.as_mut_slice().zeroize();
    }
}

impl core::fmt::Debug for NttAccumulator {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("NttAccumulator(<redacted>)")
    }
}

impl NttAccumulator {
    const ZERO: Self = Self {
        sums: [0; N],
        niche: Niche::Filled,
    };
}

/// A public polynomial (matrix entry, public-key vector) in the NTT domain, for the expanded
/// keys ([`PolyMulPublic`]): its forward transform, 1 KiB. With it a product is only the base
/// multiplication.
#[derive(Clone)]
// Cache-line aligned on x86: a 64-byte AVX-512 access to an unaligned address splits across
// two lines (the AVX2 path's 32-byte ones, every other time).
#[cfg_attr(any(target_arch = "x86", target_arch = "x86_64"), repr(align(64)))]
pub struct NttPublic {
    coeffs: [i32; N],
}

impl core::fmt::Debug for NttPublic {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("NttPublic").finish_non_exhaustive()
    }
}

/// The portable NTT backend (any target).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NttScalar;

impl PolyMul for NttScalar {
    type Prepared = NttPrepared;
    type Accumulator = NttAccumulator;
    /// Built in the slot: a value returned from `prepare` is a 4 KiB copy beside the first.
    fn prepares_in_slot(&self) -> bool {
        true
    }

    fn prepare(&mut self, s: &SecretPoly) -> NttPrepared {
        let mut out = NttPrepared::ZERO;
        self.prepare_into(s, &mut out);
        out
    }

    fn prepare_into(&mut self, s: &SecretPoly, out: &mut NttPrepared) {
        scalar::prepare::<Layers6>(s, &mut out.columns);
    }

    fn prepare_in(&mut self, s: &SecretPoly, slot: &mut Option<NttPrepared>) {
        self.prepare_into(s, slot.get_or_insert(NttPrepared::ZERO));
    }

    fn accumulator(&mut self) -> NttAccumulator {
        NttAccumulator::ZERO
    }

    fn mul_acc(&mut self, acc: &mut NttAccumulator, a: &Poly, s: &NttPrepared) {
        scalar::mul_acc::<Layers6>(&mut acc.sums, a, &s.columns);
    }

    fn finish(&mut self, acc: &NttAccumulator) -> Poly {
        scalar::finish::<Layers6>(&acc.sums)
    }

    fn name(&self) -> &'static str {
        "ntt-scalar"
    }
}

impl PolyMulPublic for NttScalar {
    type PreparedPublic = NttPublic;

    fn prepare_public(&mut self, a: &Poly) -> NttPublic {
        let mut out = NttPublic { coeffs: [0; N] };
        scalar::public_to_domain::<Layers6>(a, &mut out.coeffs);
        out
    }

    fn mul_acc_prepared(&mut self, acc: &mut NttAccumulator, a: &NttPublic, s: &NttPrepared) {
        scalar::basemul_acc::<Layers6>(&mut acc.sums, &a.coeffs, &s.columns);
    }
}

/// One SIMD path of the NTT as a backend: a type holding the proof that the CPU has the path's
/// instructions (the path module's token; an uninhabited type off x86), with the [`PolyMul`] and
/// [`PolyMulPublic`] implementations over the path module's kernels. Same `finish` outputs as
/// [`NttScalar`], bit for bit.
macro_rules! simd_ntt_backend {
    ($(#[$doc:meta])* $backend:ident, $proof:ident, $path:ident :: $token:ident, $name:literal,
     $new_doc:literal, [$($own:tt)*]) => {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        type $proof = $path::$token;

        /// Uninhabited: these instructions never exist off x86.
        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
        #[derive(Clone, Copy, Debug)]
        enum $proof {}

        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $backend {
            token: $proof,
        }

        impl $backend {
            #[doc = $new_doc]
            pub fn new() -> Option<Self> {
                cfg_if::cfg_if! {
                    if #[cfg(any(target_arch = "x86", target_arch = "x86_64"))] {
                        $path::$token::detect().map(|token| Self { token })
                    } else {
                        None
                    }
                }
            }
        }

        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        impl PolyMul for $backend {
            type Prepared = NttPrepared;
            type Accumulator = NttAccumulator;

            fn prepare(&mut self, s: &SecretPoly) -> NttPrepared {
                NttPrepared {
                    columns: $path::prepare(self.token, s),
                    niche: Niche::Filled,
                }
            }

            fn prepare_into(&mut self, s: &SecretPoly, out: &mut NttPrepared) {
                $path::prepare_into(self.token, s, &mut out.columns);
            }

            // A new slot zero-filled, then built in place: a value moved into it was a 4 KiB
            // copy, and left the secret's image unwiped where it was built.
            fn prepare_in(&mut self, s: &SecretPoly, slot: &mut Option<NttPrepared>) {
                self.prepare_into(s, slot.get_or_insert(NttPrepared::ZERO));
            }

            fn accumulator(&mut self) -> NttAccumulator {
                NttAccumulator::ZERO
            }

            fn mul_acc(&mut self, acc: &mut NttAccumulator, a: &Poly, s: &NttPrepared) {
                $path::mul_acc(self.token, &mut acc.sums, a, &s.columns);
            }

            fn finish(&mut self, acc: &NttAccumulator) -> Poly {
                // From a copy, which the kernel wipes as it reads: `acc` stays as it is.
                let mut out = Poly::ZERO;
                let mut acc = acc.clone();
                $path::finish_into(self.token, &mut acc.sums, &mut out);
                out
            }

            // Into `out` directly (`finish`'s value was a 512-byte copy), the sums wiped as the
            // kernel reads them (a separate 2 KiB fill cost more: `BENCHMARKS.md`).
            fn finish_into(&mut self, acc: &mut NttAccumulator, out: &mut Poly) {
                $path::finish_into(self.token, &mut acc.sums, out);
            }

            fn name(&self) -> &'static str {
                $name
            }

            $($own)*
        }

        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        impl PolyMulPublic for $backend {
            type PreparedPublic = NttPublic;

            fn prepare_public(&mut self, a: &Poly) -> NttPublic {
                let mut out = NttPublic { coeffs: [0; N] };
                $path::public_to_domain(self.token, a, &mut out.coeffs);
                out
            }

            fn mul_acc_prepared(
                &mut self,
                acc: &mut NttAccumulator,
                a: &NttPublic,
                s: &NttPrepared,
            ) {
                $path::basemul_acc(self.token, &mut acc.sums, &a.coeffs, &s.columns);
            }
        }

        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
        impl PolyMul for $backend {
            type Prepared = NttPrepared;
            type Accumulator = NttAccumulator;

            fn prepare(&mut self, _: &SecretPoly) -> NttPrepared {
                match self.token {}
            }

            fn accumulator(&mut self) -> NttAccumulator {
                match self.token {}
            }

            fn mul_acc(&mut self, _: &mut NttAccumulator, _: &Poly, _: &NttPrepared) {
                match self.token {}
            }

            fn finish(&mut self, _: &NttAccumulator) -> Poly {
                match self.token {}
            }

            fn name(&self) -> &'static str {
                match self.token {}
            }
        }

        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
        impl PolyMulPublic for $backend {
            type PreparedPublic = NttPublic;

            fn prepare_public(&mut self, _: &Poly) -> NttPublic {
                match self.token {}
            }

            fn mul_acc_prepared(&mut self, _: &mut NttAccumulator, _: &NttPublic, _: &NttPrepared) {
                match self.token {}
            }
        }
    };
}

simd_ntt_backend!(
    /// The AVX2 NTT backend, mod two 16-bit primes: same products as [`NttScalar`], bit for bit;
    /// its NTT-domain values are its own (module docs). Only constructible on a CPU with AVX2.
    NttAvx2,
    Avx2Proof,
    avx2::Avx2Token,
    "ntt-avx2",
    "The AVX2 backend, or `None` when the CPU (or the architecture) lacks AVX2.",
    [
        const MULTIPLIES_UNPREPARED: bool = true;

        fn mul_acc_once(&mut self, acc: &mut NttAccumulator, a: &Poly, s: &SecretPoly) {
            avx2::mul_acc_once(self.token, &mut acc.sums, a, s);
        }
    ]
);

simd_ntt_backend!(
    /// The AVX-512 NTT backend (F and BW): same results as [`NttScalar`], bit for bit, sixteen
    /// lanes per register. Only constructible on a CPU (and OS) with AVX-512 F and BW.
    NttAvx512,
    Avx512Proof,
    avx512::Avx512Token,
    "ntt-avx512",
    "The AVX-512 backend, or `None` when the CPU, the OS or the architecture lacks AVX-512 F \
     and BW.",
    []
);

/// The path [`Ntt`] picked at construction.
#[derive(Clone, Copy, Debug)]
enum NttPath {
    Avx512(NttAvx512),
    Avx2(NttAvx2),
    Scalar,
}

/// The NTT backend with the best path for this CPU: [`NttAvx512`] when CPUID reports AVX-512 F
/// and BW (and the OS saves the registers), else [`NttAvx2`] when it reports AVX2 (a constant
/// when the target enables AVX2 at compile time), else [`NttScalar`]. Detected once, at
/// construction.
#[derive(Clone, Copy, Debug)]
pub struct Ntt {
    path: NttPath,
}

impl Ntt {
    /// Detects the CPU's features and picks the path.
    pub fn new() -> Self {
        let path = if let Some(avx512) = NttAvx512::new() {
            NttPath::Avx512(avx512)
        } else if let Some(avx2) = NttAvx2::new() {
            NttPath::Avx2(avx2)
        } else {
            NttPath::Scalar
        };
        Self { path }
    }
}

impl Default for Ntt {
    fn default() -> Self {
        Self::new()
    }
}

/// Runs `$call` on the backend of `$ntt`'s path (one definition of the dispatch).
macro_rules! dispatch {
    ($ntt:expr, |$backend:ident| $call:expr) => {
        match $ntt.path {
            NttPath::Avx512(mut $backend) => $call,
            NttPath::Avx2(mut $backend) => $call,
            NttPath::Scalar => {
                let mut $backend = NttScalar;
                $call
            }
        }
    };
}

impl PolyMul for Ntt {
    type Prepared = NttPrepared;
    type Accumulator = NttAccumulator;
    /// The AVX2 path's (the others prepare for the one use).
    const MULTIPLIES_UNPREPARED: bool = cfg!(any(target_arch = "x86", target_arch = "x86_64"));

    /// The scalar path's answer (it builds in its slot); the SIMD paths return their value in
    /// place, where a slot costs more (`BENCHMARKS.md`).
    fn prepares_in_slot(&self) -> bool {
        matches!(self.path, NttPath::Scalar)
    }

    fn prepare(&mut self, s: &SecretPoly) -> NttPrepared {
        dispatch!(self, |backend| backend.prepare(s))
    }

    fn prepare_into(&mut self, s: &SecretPoly, out: &mut NttPrepared) {
        dispatch!(self, |backend| backend.prepare_into(s, out))
    }

    fn prepare_in(&mut self, s: &SecretPoly, slot: &mut Option<NttPrepared>) {
        dispatch!(self, |backend| backend.prepare_in(s, slot))
    }

    fn accumulator(&mut self) -> NttAccumulator {
        NttAccumulator::ZERO
    }

    fn mul_acc(&mut self, acc: &mut NttAccumulator, a: &Poly, s: &NttPrepared) {
        dispatch!(self, |backend| backend.mul_acc(acc, a, s))
    }

    fn mul_acc_once(&mut self, acc: &mut NttAccumulator, a: &Poly, s: &SecretPoly) {
        dispatch!(self, |backend| backend.mul_acc_once(acc, a, s))
    }

    fn finish(&mut self, acc: &NttAccumulator) -> Poly {
        dispatch!(self, |backend| backend.finish(acc))
    }

    fn finish_into(&mut self, acc: &mut NttAccumulator, out: &mut Poly) {
        dispatch!(self, |backend| backend.finish_into(acc, out))
    }

    fn name(&self) -> &'static str {
        match self.path {
            NttPath::Avx512(backend) => backend.name(),
            NttPath::Avx2(backend) => backend.name(),
            NttPath::Scalar => NttScalar.name(),
        }
    }
}

impl PolyMulPublic for Ntt {
    type PreparedPublic = NttPublic;

    fn prepare_public(&mut self, a: &Poly) -> NttPublic {
        dispatch!(self, |backend| backend.prepare_public(a))
    }

    fn mul_acc_prepared(&mut self, acc: &mut NttAccumulator, a: &NttPublic, s: &NttPrepared) {
        dispatch!(self, |backend| backend.mul_acc_prepared(acc, a, s))
    }
}

/// The scalar kernels with another layer count, for the layer-count measurement in
/// `benches/ntt.rs` only (not part of the supported API).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct NttScalarLayers<const LAYERS: usize>;

/// Prepared secret of [`NttScalarLayers`]: up to 8 matrix entries per coefficient.
#[doc(hidden)]
#[derive(Clone)]
pub struct NttLayersPrepared {
    columns: [i32; 8 * N],
}

impl Zeroize for NttLayersPrepared {
    fn zeroize(&mut self) {
        self.columns.as_mut_slice().zeroize();
    }
}

impl<const LAYERS: usize> PolyMul for NttScalarLayers<LAYERS> {
    type Prepared = NttLayersPrepared;
    type Accumulator = NttAccumulator;

    fn prepare(&mut self, s: &SecretPoly) -> NttLayersPrepared {
        let mut out = NttLayersPrepared {
            columns: [0; 8 * N],
        };
        scalar::prepare::<LayerCount<LAYERS>>(s, &mut out.columns);
        out
    }

    fn accumulator(&mut self) -> NttAccumulator {
        NttAccumulator::ZERO
    }

    fn mul_acc(&mut self, acc: &mut NttAccumulator, a: &Poly, s: &NttLayersPrepared) {
        scalar::mul_acc::<LayerCount<LAYERS>>(&mut acc.sums, a, &s.columns);
    }

    fn finish(&mut self, acc: &NttAccumulator) -> Poly {
        scalar::finish::<LayerCount<LAYERS>>(&acc.sums)
    }

    fn name(&self) -> &'static str {
        "ntt-scalar-layers"
    }
}

#[cfg(test)]
mod tests;
