//! Multiplication in R_q = Z_{2^13}\[x\]/(x^256 + 1) by a small secret: the [`PolyMul`] trait and
//! its backends.
//!
//! # The contract
//!
//! Every product Saber computes is *(public polynomial) × (small secret)*: `Aᵀ·s` in key
//! generation, `A·s'` and `bᵀ·s'` in encryption, `b'ᵀ·s` in decryption. Fast multiplication
//! methods share one shape, and the trait follows it:
//!
//! 1. [`PolyMul::prepare`] transforms a secret once (NTT image, Toom-Cook evaluation, packed
//!    big integer); the KEM reuses it for the L products it takes part in.
//! 2. [`PolyMul::mul_acc`] adds `a · s` into an accumulator kept in the backend's own domain
//!    (NTT domain, evaluation domain, …); `a` may arrive just in time from the XOF.
//! 3. [`PolyMul::finish`] leaves that domain once per output polynomial (inverse NTT,
//!    interpolation, unpacking).
//!
//! Inputs and outputs:
//! - `a` is a public polynomial; only the low 13 bits of each coefficient count (it is a residue
//!   mod q = 2^13; the 10-bit values of `b` and `b'` are residues of the same kind).
//! - `s` has coefficients in `[-5, 5]` ([`crate::poly::SECRET_BOUND`]). Backends may rely on this
//!   for exactness; the KEM rejects secret keys that violate it.
//! - The result of `finish` must equal `Σ a_k · s_k` in R_q in its low 13 bits; higher bits are
//!   unspecified.
//! - A backend accumulates at most L = 4 products before `finish`.
//!
//! All backends must be constant time with respect to `s` (and to `a`, which is secret-derived
//! in decryption's re-encryption).
//!
//! The KEM's IND-CPA algorithms are written once on these four (the crate's `pke` module), and
//! the memory plan is a type-level wrapper around any backend ([`LowMemory`](crate::LowMemory)).

use zeroize::Zeroize;

pub use crate::poly::{N, Poly, Q_MASK, SECRET_BOUND, SecretPoly};

#[macro_use]
mod plain;

pub mod karatsuba;
pub mod kronecker;
pub mod ntt;
pub mod schoolbook;
pub mod toom_cook;

pub use karatsuba::Karatsuba;
pub use kronecker::{Kronecker, KroneckerSoft, SoftwareBigMul};
pub use ntt::{
    Ntt, NttAccumulator, NttAvx2, NttLowStack, NttMerged, NttPrepared, NttPublic, NttScalar,
};
pub use schoolbook::Schoolbook;
pub use toom_cook::ToomCook;

// The default per target is decided by measurement (BENCHMARKS.md); a `--cfg saber_polymul=…`
// overrides it, as a cfg rather than a feature because a choice is not additive.
cfg_if::cfg_if! {
    if #[cfg(saber_polymul = "schoolbook")] {
        type Selected = Schoolbook;
    } else if #[cfg(saber_polymul = "toom_cook")] {
        type Selected = ToomCook;
    } else if #[cfg(saber_polymul = "kronecker")] {
        type Selected = KroneckerSoft;
    } else if #[cfg(saber_polymul = "karatsuba")] {
        type Selected = Karatsuba;
    } else if #[cfg(all(target_arch = "x86_64", saber_isa = "portable", not(saber_polymul = "ntt")))] {
        // x86_64 capped to portable code: Toom-Cook (SSE2 by the compiler) is the fastest
        // portable backend there, 1.5-2x faster than the NTT's scalar path (BENCHMARKS.md, "x86
        // without AVX-512").
        type Selected = ToomCook;
    } else if #[cfg(any(saber_polymul = "ntt", target_arch = "x86_64"))] {
        // x86_64: the NTT with its run-time-detected AVX2 path is 1.6-1.8x faster than
        // Toom-Cook for every operation (BENCHMARKS.md, peer-bench).
        type Selected = Ntt;
    } else if #[cfg(saber_ntt_asm)] {
        // Cortex-M3/M4/M7/M33 and RV32IM, where the merged-layer NTT has assembly kernels:
        // NttLowStack has the fewest instructions among the backends whose working set is a few
        // KB (under 4 KB for the whole KEM with `LowMemory`; embedded/RESULTS.md).
        type Selected = NttLowStack;
    } else if #[cfg(target_pointer_width = "32")] {
        // Other 32-bit cores (Cortex-M0/M0+: no 32×32→64 multiply): Karatsuba, as fast as the
        // portable NTT there with the smaller stack (embedded/RESULTS.md).
        type Selected = Karatsuba;
    } else {
        type Selected = ToomCook;
    }
}

/// A secret polynomial two coefficients per byte: signed nibbles, coefficient 2k in the low
/// nibble of byte k (|s| <= 5 fits). The form in which the low-memory plan holds its secrets
/// ([`PolyMul::with_packed`]), and the prepared form of the backends for microcontrollers
/// ([`Karatsuba`], [`NttLowStack`]).
pub type PackedSecret = [u8; N >> 1];

/// `s` as a [`PackedSecret`].
pub(crate) fn pack_secret(s: &SecretPoly, out: &mut PackedSecret) {
    for (byte, pair) in out.iter_mut().zip(s.coeffs.chunks_exact(2)) {
        *byte = (pair[0] as u8 & 0x0F) | ((pair[1] as u8) << 4);
    }
}

/// The coefficients of a [`PackedSecret`] (nibbles sign-extended).
pub(crate) fn unpack_secret(s: &PackedSecret, out: &mut SecretPoly) {
    for (pair, &byte) in out.coeffs.chunks_exact_mut(2).zip(s.iter()) {
        pair[0] = ((byte << 4) as i8) >> 4;
        pair[1] = (byte as i8) >> 4;
    }
}

/// `s` as a [`PackedSecret`] value.
pub(crate) fn packed_secret(s: &SecretPoly) -> PackedSecret {
    let mut out = [0; N >> 1];
    pack_secret(s, &mut out);
    out
}

/// Prepares the secret that `secret` writes into `slot` ([`PolyMul::prepare_in`]: in place when
/// the slot holds one already); the widened polynomial lives only in this frame (not inlined: off
/// the frames that hold the products' operands).
#[inline(never)]
pub(crate) fn prepare_in_from<B: PolyMul + ?Sized>(
    backend: &mut B,
    slot: &mut Option<B::Prepared>,
    secret: impl FnOnce(&mut SecretPoly),
) {
    let mut s = SecretPoly::ZERO;
    secret(&mut s);
    backend.prepare_in(&s, slot);
}

/// The secret that `secret` writes, prepared as a value ([`PolyMul::prepare`]); the widened
/// polynomial lives only in this frame.
#[inline(never)]
pub(crate) fn prepared_from<B: PolyMul + ?Sized>(
    backend: &mut B,
    secret: impl FnOnce(&mut SecretPoly),
) -> B::Prepared {
    let mut s = SecretPoly::ZERO;
    secret(&mut s);
    backend.prepare(&s)
}

/// A secret polynomial to prepare for one use ([`with_prepared_for_use`]): one that a closure
/// writes (widened in a frame of its own) or one held already (prepared where it is, without a
/// copy).
pub(crate) trait SecretInput {
    /// Prepares the secret into `slot` ([`PolyMul::prepare_in`]).
    fn prepare_in<B: PolyMul + ?Sized>(self, backend: &mut B, slot: &mut Option<B::Prepared>);
    /// The secret prepared as a value ([`PolyMul::prepare`]).
    fn prepared<B: PolyMul + ?Sized>(self, backend: &mut B) -> B::Prepared;
}

impl<F: FnOnce(&mut SecretPoly)> SecretInput for F {
    fn prepare_in<B: PolyMul + ?Sized>(self, backend: &mut B, slot: &mut Option<B::Prepared>) {
        prepare_in_from(backend, slot, self);
    }

    fn prepared<B: PolyMul + ?Sized>(self, backend: &mut B) -> B::Prepared {
        prepared_from(backend, self)
    }
}

/// Not inlined (as [`prepare_in_from`]): the preparation's buffers live only in a frame of their
/// own, off the frames that hold the products' operands.
impl SecretInput for &SecretPoly {
    #[inline(never)]
    fn prepare_in<B: PolyMul + ?Sized>(self, backend: &mut B, slot: &mut Option<B::Prepared>) {
        backend.prepare_in(self, slot);
    }

    #[inline(never)]
    fn prepared<B: PolyMul + ?Sized>(self, backend: &mut B) -> B::Prepared {
        backend.prepare(self)
    }
}

/// Calls `f` with `secret` prepared for this use only and wiped after `f`: built in a slot of
/// this call where the backend builds one in place ([`PolyMul::prepares_in_slot`]), else
/// returned as a value.
pub(crate) fn with_prepared_for_use<B: PolyMul + ?Sized>(
    backend: &mut B,
    secret: impl SecretInput,
    f: impl FnOnce(&mut B, &B::Prepared),
) {
    if backend.prepares_in_slot() {
        let mut slot = None;
        secret.prepare_in(backend, &mut slot);
        if let Some(prepared) = &mut slot {
            f(backend, prepared);
            prepared.zeroize();
        }
    } else {
        let mut prepared = secret.prepared(backend);
        f(backend, &prepared);
        prepared.zeroize();
    }
}

/// [`PolyMul::mul_acc`] of the polynomial that `public` writes in pieces, gathered in this frame
/// only (not inlined: not beside the caller's operands).
#[inline(never)]
fn mul_acc_gathered<B: PolyMul + ?Sized>(
    backend: &mut B,
    acc: &mut B::Accumulator,
    s: &B::Prepared,
    public: impl FnOnce(&mut dyn FnMut(usize, &[u16])),
) {
    let mut a = Poly::ZERO;
    public(&mut |at, piece| a.coeffs[at..at + piece.len()].copy_from_slice(piece));
    backend.mul_acc(acc, &a, s);
}

/// [`PolyMul::mul_acc`], not inlined: the product's buffers live only in this frame, not in the
/// caller's, through which the finishing chain passes too.
#[inline(never)]
fn mul_acc_apart<B: PolyMul + ?Sized>(
    backend: &mut B,
    acc: &mut B::Accumulator,
    a: &Poly,
    s: &B::Prepared,
) {
    backend.mul_acc(acc, a, s);
}

/// `a += ` the sum in `acc`, finished ([`PolyMul::finish_into`], leaving `acc` wiped). Not
/// inlined: the finished polynomial lives only in this frame, not beside the multiplication.
#[inline(never)]
fn add_finished<B: PolyMul + ?Sized>(backend: &mut B, acc: &mut B::Accumulator, a: &mut Poly) {
    let mut product = Poly::ZERO;
    backend.finish_into(acc, &mut product);
    a.add_assign(&product);
    product.zeroize();
}

/// The backend used when the caller does not pick one. Override with
/// `RUSTFLAGS='--cfg saber_polymul="schoolbook"'` (or `"toom_cook"`, `"ntt"`, `"kronecker"`).
pub type DefaultPolyMul = Selected;

/// A backend that can also keep a *public* polynomial in its own domain, so that an operand used
/// again and again (matrix A and the vector b of a public key, cached by the expanded keys) is
/// transformed once.
pub trait PolyMulPublic: PolyMul {
    /// A public polynomial in the backend's domain.
    type PreparedPublic: Clone;

    /// Transforms a public polynomial (a residue mod 2^13, as for [`PolyMul::mul_acc`]).
    fn prepare_public(&mut self, a: &Poly) -> Self::PreparedPublic;

    /// `acc += a · s` with both operands already in the backend's domain.
    fn mul_acc_prepared(
        &mut self,
        acc: &mut Self::Accumulator,
        a: &Self::PreparedPublic,
        s: &Self::Prepared,
    );
}

/// Multiplication of public polynomials by small secrets, with transform-domain accumulation.
///
/// Methods take `&mut self` so that a backend can own a hardware peripheral; software backends
/// are zero-sized and `Default`.
pub trait PolyMul {
    /// A secret in the backend's domain, computed once and reused for L products. Wiped by the
    /// caller after use.
    type Prepared: Zeroize;
    /// A sum of products in the backend's domain.
    type Accumulator: Zeroize;

    /// Whether a public polynomial streamed from the XOF is better handed over in pieces
    /// ([`mul_acc_pieces`](Self::mul_acc_pieces)) than written whole and given to
    /// [`mul_acc`](Self::mul_acc): true for backends that take the pieces straight into a
    /// buffer of their own (less stack); for the others gathering the pieces only costs time.
    const TAKES_PIECES: bool = false;

    /// Whether [`prepare_in`](Self::prepare_in) builds a new prepared secret in its slot, so that
    /// a secret prepared apart (for one use, or held beside the others) is made there rather than
    /// returned by [`prepare`](Self::prepare): true where the returned value is copied and the
    /// slot's fill costs less (the microcontroller NTTs, the scalar NTT, Kronecker, Toom-Cook,
    /// the plain-domain backends); false where `prepare` returns its value in place or the fill
    /// costs more than the copy (the x86 SIMD NTTs). Chosen by measurement (`BENCHMARKS.md`). A
    /// method, not a constant: [`Ntt`] answers for the path it detected.
    fn prepares_in_slot(&self) -> bool {
        false
    }

    /// Whether [`mul_acc_once`](Self::mul_acc_once) multiplies without building the prepared
    /// secret, so that a secret used in one product only (decryption's) is better handed over as
    /// it is than prepared: true for the AVX2 NTT, whose prepared image costs more to write, read
    /// and wipe than its use saves.
    const MULTIPLIES_UNPREPARED: bool = false;

    /// Transforms a secret polynomial into the backend's domain.
    fn prepare(&mut self, s: &SecretPoly) -> Self::Prepared;

    /// A fresh accumulator holding zero.
    fn accumulator(&mut self) -> Self::Accumulator;

    /// `acc += a · s`.
    fn mul_acc(&mut self, acc: &mut Self::Accumulator, a: &Poly, s: &Self::Prepared);

    /// `acc += a · s` for a secret used in this product only. The default prepares `s` for it
    /// and wipes the prepared secret after; backends that
    /// [multiply unprepared secrets](Self::MULTIPLIES_UNPREPARED) skip the prepared form.
    fn mul_acc_once(&mut self, acc: &mut Self::Accumulator, a: &Poly, s: &SecretPoly) {
        with_prepared_for_use(self, s, |backend, prepared| {
            backend.mul_acc(acc, a, prepared)
        });
    }

    /// Leaves the backend's domain: returns the accumulated sum (correct mod 2^13).
    fn finish(&mut self, acc: &Self::Accumulator) -> Poly;

    /// [`mul_acc`](Self::mul_acc) of the public polynomial that `public` writes in pieces:
    /// `public(take)` calls `take(first coefficient, coefficients)` in order until all N are
    /// written (the matrix stream unpacks a few coefficients at a time). The default gathers
    /// them in a polynomial of its own; a backend whose first step transforms `a` takes them
    /// straight into its transform's buffer, so that `a` is never held beside it.
    fn mul_acc_pieces(
        &mut self,
        acc: &mut Self::Accumulator,
        s: &Self::Prepared,
        public: impl FnOnce(&mut dyn FnMut(usize, &[u16])),
    ) {
        mul_acc_gathered(self, acc, s, public);
    }

    /// [`prepare`](Self::prepare) into `out`, replacing the secret it held, without moving a
    /// prepared value: the default assigns `prepare`'s result; backends with a large domain
    /// (the NTTs for microcontrollers) transform in place.
    fn prepare_into(&mut self, s: &SecretPoly, out: &mut Self::Prepared) {
        *out = self.prepare(s);
    }

    /// Prepares `s` into `slot`: in place ([`prepare_into`](Self::prepare_into)) when the slot
    /// holds a prepared secret already, else a new one built in it. The default moves in a value
    /// of [`prepare`](Self::prepare); backends that [prepare in a slot](Self::prepares_in_slot)
    /// build it there.
    fn prepare_in(&mut self, s: &SecretPoly, slot: &mut Option<Self::Prepared>) {
        match slot {
            Some(prepared) => self.prepare_into(s, prepared),
            None => *slot = Some(self.prepare(s)),
        }
    }

    /// Calls `f` with a secret given as a [`PackedSecret`] in the backend's domain. The default
    /// widens and prepares it for this use only, wiped after `f`; a backend whose
    /// prepared form is the packed secret itself hands it over as it is, so that no copy is held.
    fn with_packed(&mut self, s: &PackedSecret, f: impl FnOnce(&mut Self, &Self::Prepared)) {
        with_prepared_for_use(self, |wide: &mut SecretPoly| unpack_secret(s, wide), f);
    }

    /// Sets `acc` back to zero in place (the value of [`accumulator`](Self::accumulator)).
    fn reset(&mut self, acc: &mut Self::Accumulator) {
        *acc = self.accumulator();
    }

    /// [`finish`](Self::finish) into `out`, consuming the sum: `acc` is left wiped (the caller
    /// [`reset`](Self::reset)s it before accumulating into it again). The default finishes and
    /// wipes; the NTTs for microcontrollers run their inverse transform in place and the x86 SIMD
    /// NTTs zero each vector of sums as they read it, wiping as they go, so that neither a copy
    /// of the sum nor a separate wipe is needed.
    fn finish_into(&mut self, acc: &mut Self::Accumulator, out: &mut Poly) {
        *out = self.finish(acc);
        acc.zeroize();
    }

    /// `a ← sum + a · s` in the plain domain, the product finished at once, where `sum` writes
    /// the sum into the polynomial it is given (key generation's sums under the low-memory plan,
    /// kept packed). `a` is the public operand on entry and the result on return: a backend that
    /// has transformed `a` by the time it needs the sum has `sum` write it into `a` itself, so
    /// that no second polynomial is held. The default accumulates the one product and finishes
    /// it.
    fn mul_add_plain(&mut self, a: &mut Poly, s: &Self::Prepared, sum: impl FnOnce(&mut Poly)) {
        let mut acc = self.accumulator();
        mul_acc_apart(self, &mut acc, a, s);
        sum(a);
        add_finished(self, &mut acc, a);
    }

    /// Short, stable name of the backend (used by examples and benches).
    fn name(&self) -> &'static str;

    /// One product, `a · s` mod (x^256 + 1), correct mod 2^13. Convenience for tests.
    fn mul(&mut self, a: &Poly, s: &SecretPoly) -> Poly {
        let mut prepared = self.prepare(s);
        let mut acc = self.accumulator();
        self.mul_acc(&mut acc, a, &prepared);
        let out = self.finish(&acc);
        prepared.zeroize();
        acc.zeroize();
        out
    }
}
