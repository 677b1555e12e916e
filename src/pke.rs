//! Saber.PKE, the IND-CPA encryption scheme (round-3 spec §2.5, Algorithms 1–3), written once:
//! generic over the variant and the parameters, over where the operands of the products come
//! from, and over the memory plan.
//!
//! # Operands
//!
//! Every product is *(public polynomial) × (small secret)*, accumulated in the backend's domain
//! and finished once per output (`crate::polymul`). The public polynomials ([`Operands`]) come
//! from a [`MatrixSource`] (A streamed from the XOF or read squeezed in advance; b and b' unpacked
//! from their bytes) or are already in the backend's domain (the expanded keys' caches). The
//! secrets ([`SecretOperands`]) are prepared once for all their uses, prepared again at each use,
//! or were prepared when a key was expanded; decryption's, used once each, go to
//! [`PolyMul::mul_acc_once`], which the AVX2 NTT runs without the prepared form. Nothing prepared
//! is copied: each secret is prepared in its slot ([`PolyMul::prepare_in`]), or as a value in a
//! frame of its own where the backend returns one in place ([`PolyMul::prepares_in_slot`]: no
//! slot to fill first), and each sum is finished in place ([`PolyMul::finish_into`], which leaves
//! it wiped).
//!
//! # Memory plans
//!
//! A [`MemoryPlan`] says what is held at once; the bytes are the same under every plan (the KATs
//! run under each):
//! - [`Fast`]: the secret vector held as bytes, each polynomial prepared once and kept for
//!   encryption's `L² + L` products (at its first use, in a slot; or all beforehand, each in a
//!   frame of its own), L accumulators for key generation's `b = Aᵀ·s`.
//! - [`LowMemoryPlan`] (the [`LowMemory`] wrapper): the secret vector packed to 4 bits per
//!   coefficient (`|s| <= 5` fits a signed nibble, [`PackedSecret`](crate::polymul::PackedSecret))
//!   and prepared at each use ([`PolyMul::with_packed`]: used where it is by a backend whose
//!   prepared form it is), so that at most one prepared secret and one accumulator are alive at
//!   a time, and the public operands are handed to the products in pieces
//!   ([`PolyMul::mul_acc_pieces`]); key generation keeps its L partial sums of `Aᵀ·s` in the
//!   caller's secret-key buffer, as 16-bit words where it has room (the round-3 sets' keys) and
//!   else packed with EQ bits, each product finished into its sum at once
//!   ([`PolyMul::mul_add_plain`]), since the row-major stream of A makes every output grow at
//!   once. The price is `L² + L` prepares instead of `L` per
//!   encryption, which is nothing for plain-domain backends such as
//!   [`Karatsuba`](crate::polymul::Karatsuba) and for [`NttLowStack`](crate::polymul::NttLowStack).
//!
//! Under both plans ciphertexts go to a [`CiphertextSink`] polynomial by polynomial: written, or
//! compared with a received ciphertext (decapsulation's re-encryption check), so the
//! re-encrypted ciphertext is never buffered. The functions marked `#[inline(never)]` keep each
//! polynomial-sized value in a frame of its own, off the multiplication's stack path.
//!
//! Adding a memory plan is one type here implementing [`MemoryPlan`].

use core::ops::Range;

use subtle::Choice;
use zeroize::Zeroize;

use crate::ct::bytes_equal;
use crate::encoding::{
    decode_message, encode_message, encode_secret, pack, pack_rounded, read_secret, unpack,
};
use crate::hash::{Hasher, Job, Sha2AesEngines};
use crate::params::sizes::{self, POLY_P_BYTES};
use crate::params::{ByteArray, EP, SEED_BYTES, Variant};
use crate::poly::{N, Poly, SecretPoly};
use crate::polymul::{
    PolyMul, PolyMulPublic, SecretInput, pack_secret, prepare_in_from, prepared_from,
    unpack_secret, with_prepared_for_use,
};
use crate::sampling::{
    InAdvance, MatrixSource, PolyStream, SecretSeed, Squeezed, gen_secret, gen_secret_with,
    with_streamed_matrix,
};

// --- Backends and plans ------------------------------------------------------------------------

/// The low-memory plan around any backend, chosen at the type level: `LowMemory(backend)`
/// wherever a backend is accepted. Byte-identical results; see the module docs for what it
/// holds and what it costs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LowMemory<B>(pub B);

/// A backend with hardware engines for the 90s sets' SHA-256 and AES-256 keystream:
/// `Accelerated(backend, engines)` wherever a backend is accepted (around a [`PolyMul`] or a
/// [`LowMemory`]). The one-worker operations hash on the engines (SHA-512, G, stays in software;
/// the batch, expanded and two-worker paths hash in software); the SHA-3 sets ignore them.
/// Byte-identical results.
#[derive(Clone, Copy, Debug)]
pub struct Accelerated<B>(pub B, pub Sha2AesEngines);

/// What the KEM's `*_with` entry points accept: a multiplication backend with the memory plan
/// it runs under. Implemented for every [`PolyMul`] (the fast plan), for [`LowMemory<B>`] and for
/// [`Accelerated<B>`].
// The sealed-supertrait pattern: users pass backends, only the crate reads the parts.
#[allow(private_bounds)]
pub trait Backend: sealed::BackendParts {}

impl<T: sealed::BackendParts> Backend for T {}

pub(crate) mod sealed {
    use super::{MemoryPlan, PolyMul, Sha2AesEngines};

    /// The parts of a [`Backend`](super::Backend), sealed.
    pub(crate) trait BackendParts {
        /// The multiplication backend.
        type Mul: PolyMul;
        /// The memory plan.
        type Plan: MemoryPlan;
        /// The backend itself.
        fn mul(&mut self) -> &mut Self::Mul;
        /// The 90s family's hardware engines, if any.
        fn engines(&self) -> Option<Sha2AesEngines> {
            None
        }
    }
}

impl<B: PolyMul> sealed::BackendParts for B {
    type Mul = B;
    type Plan = Fast;
    fn mul(&mut self) -> &mut B {
        self
    }
}

impl<B: PolyMul> sealed::BackendParts for LowMemory<B> {
    type Mul = B;
    type Plan = LowMemoryPlan;
    fn mul(&mut self) -> &mut B {
        &mut self.0
    }
}

impl<Bk: sealed::BackendParts> sealed::BackendParts for Accelerated<Bk> {
    type Mul = Bk::Mul;
    type Plan = Bk::Plan;
    fn mul(&mut self) -> &mut Bk::Mul {
        self.0.mul()
    }
    fn engines(&self) -> Option<Sha2AesEngines> {
        Some(self.1)
    }
}

/// Where a secret vector's stream comes from.
#[derive(Clone, Copy)]
pub(crate) enum SecretBytes<'a> {
    /// XOF(seed), read as the sampler goes (the stream lives only in the sampler's frame).
    Seed(&'a Hasher, &'a [u8; 32]),
    /// The stream squeezed in advance.
    Squeezed(&'a [u8]),
}

/// What the IND-CPA algorithms hold at once (see the module docs). Sealed by its module.
pub(crate) trait MemoryPlan: Sized {
    /// Whether operations may hold their matrices and secret streams whole, squeezed in
    /// advance, where the hasher says lanes pay.
    const MAY_SQUEEZE_IN_ADVANCE: bool;
    /// A sampled secret vector, as held during an operation.
    type Secret<const L: usize>: SecretSource;
    /// Key generation's L outputs of `Aᵀ·s` as they accumulate.
    type Sums<'a, B: PolyMul, const L: usize>: Sums<B>;

    /// GenSecret.
    fn sample<V: Variant, const L: usize, const MU: usize>(
        from: SecretBytes<'_>,
    ) -> Self::Secret<L>;
    /// Runs `work` on the secret vector as encryption's products take it.
    fn with_encryption_secret<B: PolyMul, const L: usize>(
        backend: &mut B,
        secret: &Self::Secret<L>,
        work: impl SecretWork<B>,
    );
    /// Zeroed sums for key generation, in `scratch` where the plan keeps them there.
    fn sums<'a, V: Variant, B: PolyMul, const L: usize>(
        backend: &mut B,
        scratch: &'a mut [u8],
    ) -> Self::Sums<'a, B, L>;
    /// Bytes of secret-key buffer key generation needs: the IND-CPA secret key at its front,
    /// the rest scratch.
    fn keygen_buffer<V: Variant, const L: usize>() -> usize;
}

/// The fast plan: what every plain [`PolyMul`] runs under.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Fast;

/// The plan of [`LowMemory`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LowMemoryPlan;

impl MemoryPlan for Fast {
    const MAY_SQUEEZE_IN_ADVANCE: bool = true;
    type Secret<const L: usize> = SecretVector<L>;
    type Sums<'a, B: PolyMul, const L: usize> = Accumulators<B, L>;

    #[inline(never)]
    fn sample<V: Variant, const L: usize, const MU: usize>(
        from: SecretBytes<'_>,
    ) -> SecretVector<L> {
        let mut s = SecretVector::ZERO;
        match from {
            SecretBytes::Seed(hasher, seed) => {
                gen_secret::<V, L, MU>(&mut hasher.xof(&[seed]), &mut s.0)
            }
            SecretBytes::Squeezed(bytes) => gen_secret::<V, L, MU>(&mut Squeezed(bytes), &mut s.0),
        }
        s
    }

    /// Each polynomial prepared once: in a slot of its own at its first use where the backend
    /// builds in a slot ([`PolyMul::prepares_in_slot`]), else all beforehand, each returned in
    /// place in a frame of its own (a slot is zero-filled before it is built in: 4 KiB for the
    /// x86 NTTs).
    fn with_encryption_secret<B: PolyMul, const L: usize>(
        backend: &mut B,
        secret: &SecretVector<L>,
        work: impl SecretWork<B>,
    ) {
        if backend.prepares_in_slot() {
            let mut slots = PreparedSecrets::<'_, B, _, L> {
                secret,
                // Only each slot's tag written (a constant array of `None` was a fill of the
                // slots' whole payloads: 1.8 KB each for `NttMerged`).
                prepared: core::array::from_fn(|_| None),
            };
            work.run(backend, &mut slots);
        } else {
            run_with_held(backend, secret, 0, [None; L], work);
        }
    }

    fn sums<V: Variant, B: PolyMul, const L: usize>(
        backend: &mut B,
        _scratch: &mut [u8],
    ) -> Accumulators<B, L> {
        // Only each slot's tag written (see `for_encryption`).
        let mut acc: [Option<B::Accumulator>; L] = core::array::from_fn(|_| None);
        fill_each(&mut acc, |_| backend.accumulator());
        Accumulators(acc)
    }

    fn keygen_buffer<V: Variant, const L: usize>() -> usize {
        sizes::secret_cpa::<V>(L)
    }
}

impl MemoryPlan for LowMemoryPlan {
    const MAY_SQUEEZE_IN_ADVANCE: bool = false;
    type Secret<const L: usize> = PackedSecrets<L>;
    type Sums<'a, B: PolyMul, const L: usize> = PackedSums<'a>;

    /// Not inlined, so that the sampler's state lives only in this call.
    #[inline(never)]
    fn sample<V: Variant, const L: usize, const MU: usize>(
        from: SecretBytes<'_>,
    ) -> PackedSecrets<L> {
        let mut packed = PackedSecrets([[0; N >> 1]; L]);
        let mut take = |i: usize, poly: &SecretPoly| pack_secret(poly, &mut packed.0[i]);
        match from {
            SecretBytes::Seed(hasher, seed) => {
                gen_secret_with::<V, L, MU>(&mut hasher.xof(&[seed]), &mut take)
            }
            SecretBytes::Squeezed(bytes) => {
                gen_secret_with::<V, L, MU>(&mut Squeezed(bytes), &mut take)
            }
        }
        packed
    }

    fn with_encryption_secret<B: PolyMul, const L: usize>(
        backend: &mut B,
        secret: &PackedSecrets<L>,
        work: impl SecretWork<B>,
    ) {
        work.run(backend, &mut OnDemand(secret));
    }

    fn sums<'a, V: Variant, B: PolyMul, const L: usize>(
        _backend: &mut B,
        scratch: &'a mut [u8],
    ) -> PackedSums<'a> {
        PackedSums::new::<V, L>(scratch)
    }

    fn keygen_buffer<V: Variant, const L: usize>() -> usize {
        sizes::secret_cpa::<V>(L).max(L * sizes::poly_q::<V>())
    }
}

// --- Secrets ------------------------------------------------------------------------------------

/// Secret polynomials by index.
pub(crate) trait SecretSource {
    /// Writes secret polynomial `i` into `out`.
    fn get(&self, i: usize, out: &mut SecretPoly);

    /// Prepares secret polynomial `i` into `slot` ([`PolyMul::prepare_in`]); the widened
    /// polynomial, if any, lives only in a frame of its own.
    fn prepare_in<B: PolyMul>(&self, backend: &mut B, i: usize, slot: &mut Option<B::Prepared>) {
        prepare_in_from(backend, slot, |s| self.get(i, s));
    }

    /// Calls `f` with secret polynomial `i` prepared for this use only, wiped after `f`.
    fn with_prepared<B: PolyMul>(
        &self,
        backend: &mut B,
        i: usize,
        f: impl FnOnce(&mut B, &B::Prepared),
    ) {
        with_prepared_for_use(backend, |s: &mut SecretPoly| self.get(i, s), f);
    }
}

/// A secret vector of L polynomials. Wiped on drop.
pub(crate) struct SecretVector<const L: usize>(pub(crate) [SecretPoly; L]);

impl<const L: usize> SecretVector<L> {
    /// The zero vector (a constant, so arrays of them are built in place).
    pub(crate) const ZERO: Self = Self([const { SecretPoly::ZERO }; L]);
}

impl<const L: usize> SecretSource for SecretVector<L> {
    fn get(&self, i: usize, out: &mut SecretPoly) {
        out.coeffs = self.0[i].coeffs;
    }

    /// Prepared from where it is (no widened copy).
    fn prepare_in<B: PolyMul>(&self, backend: &mut B, i: usize, slot: &mut Option<B::Prepared>) {
        SecretInput::prepare_in(&self.0[i], backend, slot);
    }

    /// Prepared from where it is (no widened copy).
    fn with_prepared<B: PolyMul>(
        &self,
        backend: &mut B,
        i: usize,
        f: impl FnOnce(&mut B, &B::Prepared),
    ) {
        with_prepared_for_use(backend, &self.0[i], f);
    }
}

/// L secret polynomials, two coefficients per byte (signed nibbles, even coefficient low).
/// Wiped on drop.
pub(crate) struct PackedSecrets<const L: usize>([[u8; N >> 1]; L]);

impl<const L: usize> SecretSource for PackedSecrets<L> {
    /// Widens polynomial `i` (nibbles sign-extended).
    fn get(&self, i: usize, out: &mut SecretPoly) {
        unpack_secret(&self.0[i], out);
    }

    /// From the packed form ([`PolyMul::with_packed`]: used where it is by a backend whose
    /// prepared form it is).
    fn with_prepared<B: PolyMul>(
        &self,
        backend: &mut B,
        i: usize,
        f: impl FnOnce(&mut B, &B::Prepared),
    ) {
        backend.with_packed(&self.0[i], f);
    }
}

impl<const L: usize> Drop for PackedSecrets<L> {
    fn drop(&mut self) {
        self.0.as_flattened_mut().zeroize();
    }
}

impl<S: SecretSource> SecretSource for &S {
    fn get(&self, i: usize, out: &mut SecretPoly) {
        (**self).get(i, out)
    }

    fn prepare_in<B: PolyMul>(&self, backend: &mut B, i: usize, slot: &mut Option<B::Prepared>) {
        (**self).prepare_in(backend, i, slot)
    }

    fn with_prepared<B: PolyMul>(
        &self,
        backend: &mut B,
        i: usize,
        f: impl FnOnce(&mut B, &B::Prepared),
    ) {
        (**self).with_prepared(backend, i, f)
    }
}

/// The secret vector of an encoded IND-CPA secret key, decoded one polynomial at a time.
pub(crate) struct SecretKey<'a, V> {
    sk_cpa: &'a [u8],
    variant: core::marker::PhantomData<V>,
}

impl<'a, V: Variant> SecretKey<'a, V> {
    /// The secret of `sk_cpa`, whose range was checked when the key was built.
    pub(crate) fn new(sk_cpa: &'a [u8]) -> Self {
        Self {
            sk_cpa,
            variant: core::marker::PhantomData,
        }
    }
}

impl<V: Variant> SecretSource for SecretKey<'_, V> {
    fn get(&self, i: usize, out: &mut SecretPoly) {
        let len = sizes::secret_poly::<V>();
        // Range validity was checked when the key was built.
        read_secret::<V>(&self.sk_cpa[i * len..(i + 1) * len], out);
    }
}

/// Secret polynomials in the backend's domain, by index.
pub(crate) trait SecretOperands<B: PolyMul> {
    /// Calls `f` with secret polynomial `j` in the backend's domain (a secret prepared at its
    /// use: [`SecretSource::with_prepared`]).
    fn with_prepared(&mut self, backend: &mut B, j: usize, f: impl FnOnce(&mut B, &B::Prepared));

    /// `acc += a · s_j`, `a` the next polynomial of `public`, for a product that is secret j's
    /// only one (decryption's).
    fn mul_acc_once(
        &mut self,
        backend: &mut B,
        acc: &mut B::Accumulator,
        j: usize,
        public: &mut impl MatrixSource,
    ) {
        self.with_prepared(backend, j, |b, s_j| public.mul_acc_next(b, acc, s_j));
    }
}

/// Wipes the prepared secret in `slot`, if any.
pub(crate) fn wipe_slot<T: Zeroize>(slot: &mut Option<T>) {
    if let Some(value) = slot {
        value.zeroize();
    }
}

/// Work on a secret vector in the form in which a memory plan holds it for encryption's products
/// ([`MemoryPlan::with_encryption_secret`]; a trait, not a closure, because the form is a type
/// parameter of the work).
pub(crate) trait SecretWork<B: PolyMul> {
    /// Runs the work on the secret vector `s`.
    fn run(self, backend: &mut B, s: &mut impl SecretOperands<B>);
}

/// Runs `work` with secrets `j..L` of `secret` prepared beforehand, each in a frame of its own
/// ([`SecretSource::with_prepared`]: no slot to fill, wiped after the work), beside `held`, those
/// before `j`.
fn run_with_held<B: PolyMul, S: SecretSource, const L: usize>(
    backend: &mut B,
    secret: &S,
    j: usize,
    held: [Option<&B::Prepared>; L],
    work: impl SecretWork<B>,
) {
    if j == L {
        return work.run(backend, &mut HeldSecrets(held));
    }
    secret.with_prepared(backend, j, |backend, prepared| {
        let mut held = held;
        held[j] = Some(prepared);
        run_with_held(backend, secret, j + 1, held, work);
    });
}

/// Secrets prepared beforehand, each in a frame of its own ([`run_with_held`]).
struct HeldSecrets<'a, B: PolyMul, const L: usize>([Option<&'a B::Prepared>; L]);

impl<B: PolyMul, const L: usize> SecretOperands<B> for HeldSecrets<'_, B, L> {
    fn with_prepared(&mut self, backend: &mut B, j: usize, f: impl FnOnce(&mut B, &B::Prepared)) {
        if let Some(s) = self.0[j] {
            f(backend, s);
        }
    }
}

/// The whole secret vector, each polynomial prepared once, at its first use, in its own slot
/// (fast plan; nothing prepared is moved). Wiped on drop.
pub(crate) struct PreparedSecrets<'s, B: PolyMul, S, const L: usize> {
    secret: &'s S,
    prepared: [Option<B::Prepared>; L],
}

impl<B: PolyMul, S: SecretSource, const L: usize> SecretOperands<B>
    for PreparedSecrets<'_, B, S, L>
{
    fn with_prepared(&mut self, backend: &mut B, j: usize, f: impl FnOnce(&mut B, &B::Prepared)) {
        let slot = &mut self.prepared[j];
        if slot.is_none() {
            self.secret.prepare_in(backend, j, slot);
        }
        if let Some(s) = slot {
            f(backend, s);
        }
    }
}

impl<B: PolyMul, S, const L: usize> Drop for PreparedSecrets<'_, B, S, L> {
    fn drop(&mut self) {
        self.prepared.iter_mut().for_each(wipe_slot);
    }
}

/// Secrets prepared when a key was expanded.
pub(crate) struct PreparedSlice<'a, T>(pub(crate) &'a [T]);

impl<B: PolyMul> SecretOperands<B> for PreparedSlice<'_, B::Prepared> {
    fn with_prepared(&mut self, backend: &mut B, j: usize, f: impl FnOnce(&mut B, &B::Prepared)) {
        f(backend, &self.0[j]);
    }
}

/// Each secret prepared at its use (low-memory plan; and decryption, which uses each secret
/// once).
pub(crate) struct OnDemand<S>(pub(crate) S);

impl<S: SecretSource> OnDemand<S> {
    /// Secret polynomial `j` in the backend's domain (a value of its own: the expanded keys).
    pub(crate) fn prepare<B: PolyMul>(&self, backend: &mut B, j: usize) -> B::Prepared {
        prepared_from(backend, |s| self.0.get(j, s))
    }
}

impl<B: PolyMul, S: SecretSource> SecretOperands<B> for OnDemand<S> {
    fn with_prepared(&mut self, backend: &mut B, j: usize, f: impl FnOnce(&mut B, &B::Prepared)) {
        self.0.with_prepared(backend, j, f);
    }

    /// Unprepared where the backend multiplies so ([`PolyMul::MULTIPLIES_UNPREPARED`]); elsewhere
    /// prepared from where it is, so that no widened copy is held beside the public polynomial
    /// (the microcontrollers' stack).
    fn mul_acc_once(
        &mut self,
        backend: &mut B,
        acc: &mut B::Accumulator,
        j: usize,
        public: &mut impl MatrixSource,
    ) {
        if B::MULTIPLIES_UNPREPARED {
            multiply_once(backend, acc, |s| self.0.get(j, s), |a| public.next_entry(a));
        } else {
            self.with_prepared(backend, j, |b, s_j| public.mul_acc_next(b, acc, s_j));
        }
    }
}

/// Fills the empty `slots` in place, each value moved once (`get_or_insert_with` builds it in the
/// slot; `*slot = Some(…)` moved it twice, and `core::array::from_fn` moves each value three or
/// four times: for a 4 KiB NTT image 12–16 KiB of copies per secret, each an unwiped duplicate of
/// secret data).
pub(crate) fn fill_each<T>(slots: &mut [Option<T>], mut make: impl FnMut(usize) -> T) {
    for (j, slot) in slots.iter_mut().enumerate() {
        slot.get_or_insert_with(|| make(j));
    }
}

// --- Public operands ----------------------------------------------------------------------------

/// Public polynomials in the order the products use them.
pub(crate) trait Operands<B: PolyMul> {
    /// `acc += next · s`.
    fn mul_acc_next(&mut self, backend: &mut B, acc: &mut B::Accumulator, s: &B::Prepared);

    /// [`MatrixSource::computed_elsewhere`]: none of a cache's outputs.
    fn computed_elsewhere(&self, _output: usize) -> bool {
        false
    }

    /// [`MatrixSource::finished_output`].
    fn finished_output(&mut self, _consume: impl FnMut(&mut Poly)) {}
}

impl<B: PolyMul, M: MatrixSource> Operands<B> for M {
    fn mul_acc_next(&mut self, backend: &mut B, acc: &mut B::Accumulator, s: &B::Prepared) {
        if B::TAKES_PIECES {
            backend.mul_acc_pieces(acc, s, |take| self.next_entry_pieces(take));
        } else {
            multiply_with(backend, acc, s, |a| self.next_entry(a));
        }
    }

    fn computed_elsewhere(&self, output: usize) -> bool {
        MatrixSource::computed_elsewhere(self, output)
    }

    fn finished_output(&mut self, mut consume: impl FnMut(&mut Poly)) {
        MatrixSource::finished_output(self, &mut consume)
    }
}

/// Public polynomials already in the backend's domain (the expanded keys' caches).
pub(crate) struct PreparedOperands<'a, T>(pub(crate) core::slice::Iter<'a, T>);

impl<B: PolyMulPublic> Operands<B> for PreparedOperands<'_, B::PreparedPublic> {
    fn mul_acc_next(&mut self, backend: &mut B, acc: &mut B::Accumulator, s: &B::Prepared) {
        if let Some(a) = self.0.next() {
            backend.mul_acc_prepared(acc, a, s);
        }
    }
}

/// The L packed polynomials mod p of `bytes` (b of a public key, b' of a ciphertext).
pub(crate) fn packed_p(bytes: &[u8]) -> PolyStream<Squeezed<'_>> {
    PolyStream::new(Squeezed(bytes), EP)
}

// --- The products -------------------------------------------------------------------------------

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
}

/// [`PolyMul::mul_acc_once`] of the polynomials that `secret` and `public` write, held only in
/// this frame (the secret wiped on drop).
#[inline(never)]
fn multiply_once<B: PolyMul>(
    backend: &mut B,
    acc: &mut B::Accumulator,
    secret: impl FnOnce(&mut SecretPoly),
    public: impl FnOnce(&mut Poly),
) {
    let mut s = SecretPoly::ZERO;
    secret(&mut s);
    let mut a = Poly::ZERO;
    public(&mut a);
    backend.mul_acc_once(acc, &a, &s);
}

/// Finishes `acc` (left wiped, [`PolyMul::finish_into`]) and hands the result to `consume`,
/// which may change it (rounding in place); the result lives only in this call, never beside a
/// multiplication, and is wiped.
#[inline(never)]
fn finish_with<B: PolyMul>(
    backend: &mut B,
    acc: &mut B::Accumulator,
    consume: impl FnOnce(&mut Poly),
) {
    let mut sum = Poly::ZERO;
    backend.finish_into(acc, &mut sum);
    consume(&mut sum);
    sum.zeroize();
}

/// `Σ_j a_j · s_j` over j < L with one accumulator, handed to `consume`: `product(backend, acc,
/// j)` adds `a_j · s_j`. Not inlined, so that the accumulator lives only during this call.
#[inline(never)]
fn sum_of_products<B: PolyMul, const L: usize>(
    backend: &mut B,
    mut product: impl FnMut(&mut B, &mut B::Accumulator, usize),
    consume: impl FnOnce(&mut Poly),
) {
    let mut acc = backend.accumulator();
    for j in 0..L {
        product(backend, &mut acc, j);
    }
    finish_with(backend, &mut acc, consume);
}

/// Key generation's sums of `Aᵀ·s`.
pub(crate) trait Sums<B: PolyMul> {
    /// `sum_j += a · s`, where `public` writes a.
    fn add_product(
        &mut self,
        backend: &mut B,
        j: usize,
        s: &B::Prepared,
        public: impl FnOnce(&mut Poly),
    );
    /// Hands `sum_j` (correct mod q) to `consume`.
    fn finish(&mut self, backend: &mut B, j: usize, consume: impl FnOnce(&mut Poly));
}

/// L accumulators in the backend's domain (fast plan). Wiped on drop.
pub(crate) struct Accumulators<B: PolyMul, const L: usize>([Option<B::Accumulator>; L]);

impl<B: PolyMul, const L: usize> Sums<B> for Accumulators<B, L> {
    fn add_product(
        &mut self,
        backend: &mut B,
        j: usize,
        s: &B::Prepared,
        public: impl FnOnce(&mut Poly),
    ) {
        if let Some(acc) = &mut self.0[j] {
            multiply_with(backend, acc, s, public);
        }
    }

    /// The accumulator is wiped by finishing and dropped from the list (nothing left to wipe
    /// on drop).
    fn finish(&mut self, backend: &mut B, j: usize, consume: impl FnOnce(&mut Poly)) {
        if let Some(acc) = &mut self.0[j] {
            finish_with(backend, acc, consume);
        }
        self.0[j] = None;
    }
}

impl<B: PolyMul, const L: usize> Drop for Accumulators<B, L> {
    fn drop(&mut self) {
        self.0.iter_mut().flatten().for_each(Zeroize::zeroize);
    }
}

/// L sums of finished products in a caller's buffer (low-memory plan; finished products added
/// mod 2^16 stay correct mod q): as 16-bit little-endian words where the buffer has room (the
/// secret-key buffer of the round-3 sets), else packed with EQ bits. Wiped on drop.
pub(crate) struct PackedSums<'a> {
    sums: &'a mut [u8],
    bits: u32,
}

/// Bits per coefficient of the unpacked sums.
const WIDE: u32 = 16;

impl<'a> PackedSums<'a> {
    /// Zeroed sums of L polynomials in `scratch`, as wide as it allows.
    fn new<V: Variant, const L: usize>(scratch: &'a mut [u8]) -> Self {
        let bits = if scratch.len() >= L * sizes::packed(WIDE) {
            WIDE
        } else {
            V::EQ
        };
        let sums = &mut scratch[..L * sizes::packed(bits)];
        sums.fill(0);
        Self { sums, bits }
    }

    /// Sum `j` into `out`.
    fn read(&self, j: usize, out: &mut Poly) {
        let len = sizes::packed(self.bits);
        let bytes = &self.sums[j * len..(j + 1) * len];
        if self.bits == WIDE {
            for (c, pair) in out.coeffs.iter_mut().zip(bytes.chunks_exact(2)) {
                *c = u16::from_le_bytes([pair[0], pair[1]]);
            }
        } else {
            unpack(bytes, self.bits, &mut out.coeffs);
        }
    }

    /// `sum` as sum `j`.
    fn write(&mut self, j: usize, sum: &Poly) {
        let len = sizes::packed(self.bits);
        let bytes = &mut self.sums[j * len..(j + 1) * len];
        if self.bits == WIDE {
            for (&c, pair) in sum.coeffs.iter().zip(bytes.chunks_exact_mut(2)) {
                pair.copy_from_slice(&c.to_le_bytes());
            }
        } else {
            pack(&sum.coeffs, self.bits, bytes);
        }
    }
}

impl<B: PolyMul> Sums<B> for PackedSums<'_> {
    /// The product is finished into the sum at once ([`PolyMul::mul_add_plain`]: the sum is
    /// unpacked into the public polynomial's storage once the backend has transformed it); the
    /// polynomial lives only in this call.
    #[inline(never)]
    fn add_product(
        &mut self,
        backend: &mut B,
        j: usize,
        s: &B::Prepared,
        public: impl FnOnce(&mut Poly),
    ) {
        let mut a = Poly::ZERO;
        public(&mut a);
        backend.mul_add_plain(&mut a, s, |sum| self.read(j, sum));
        self.write(j, &a);
        a.zeroize();
    }

    #[inline(never)]
    fn finish(&mut self, _backend: &mut B, j: usize, consume: impl FnOnce(&mut Poly)) {
        let mut b = Poly::ZERO;
        self.read(j, &mut b);
        consume(&mut b);
        b.zeroize();
    }
}

impl Drop for PackedSums<'_> {
    fn drop(&mut self) {
        self.sums.zeroize();
    }
}

// --- Ciphertexts --------------------------------------------------------------------------------

/// Where a ciphertext goes as it is produced: into a buffer, or compared with a received one.
pub(crate) enum CiphertextSink<'a> {
    /// Written into the buffer.
    Write(&'a mut [u8]),
    /// Compared with `expected`; `matches` is the AND of the comparisons so far.
    Compare {
        /// The received ciphertext.
        expected: &'a [u8],
        /// Whether every part so far was equal.
        matches: Choice,
    },
}

impl<'a> CiphertextSink<'a> {
    /// A sink comparing with `ct`.
    pub(crate) fn compare(ct: &'a [u8]) -> Self {
        Self::Compare {
            expected: ct,
            matches: Choice::from(1),
        }
    }

    /// Whether everything put so far equalled the expected ciphertext (always false for a
    /// writing sink).
    pub(crate) fn matches(&self) -> Choice {
        match self {
            Self::Compare { matches, .. } => *matches,
            Self::Write(_) => Choice::from(0),
        }
    }

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
                // As a slice: one bulk fill (an array takes a volatile store per byte).
                scratch.as_mut_slice().zeroize();
            }
        }
    }
}

// --- The algorithms -----------------------------------------------------------------------------

/// Saber.PKE.KeyGen (Algorithm 1) with seed_A already hashed (and in its place at the end of
/// the public key): `b = round(Aᵀ·s)`, writing `pack_p(b)` into `pk_b` and the encoded secret at
/// the front of `sk`, which has [`MemoryPlan::keygen_buffer`] bytes (the rest is the plan's
/// scratch, wiped).
pub(crate) fn keygen<V: Variant, P: MemoryPlan, B: PolyMul, const L: usize, const MU: usize>(
    backend: &mut B,
    matrix: &mut impl MatrixSource,
    secret: SecretBytes<'_>,
    pk_b: &mut [u8],
    sk: &mut [u8],
) {
    let s = P::sample::<V, L, MU>(secret);
    transposed_into_public_key::<V, P, B, L>(backend, matrix, &s, pk_b, sk);
    encode_secret_key::<V, L>(&s, sk);
}

/// The IND-CPA secret key of `s` at the front of `sk`. Not inlined: the widened polynomial and
/// the encoder's buffers live only in this call, not in the frame that holds `s` during the
/// products.
#[inline(never)]
fn encode_secret_key<V: Variant, const L: usize>(s: &impl SecretSource, sk: &mut [u8]) {
    let mut poly = SecretPoly::ZERO;
    let len = sizes::secret_poly::<V>();
    for (i, out) in sk[..L * len].chunks_exact_mut(len).enumerate() {
        s.get(i, &mut poly);
        encode_secret::<V>(&poly, out);
    }
}

/// `pack_p(round(Aᵀ·s))` into the front of `pk`.
fn transposed_into_public_key<V: Variant, P: MemoryPlan, B: PolyMul, const L: usize>(
    backend: &mut B,
    matrix: &mut impl MatrixSource,
    s: &P::Secret<L>,
    pk: &mut [u8],
    scratch: &mut [u8],
) {
    transposed_products::<V, P, B, L>(backend, matrix, s, scratch, |j, b| {
        pack_rounded::<V>(b, &mut pk[j * POLY_P_BYTES..(j + 1) * POLY_P_BYTES])
    });
}

/// `Aᵀ·s`, output j handed to `consume(j, ·)` in increasing j: entry A\[i\]\[j\] meets s_i and
/// goes to output j. Outputs the matrix source computes elsewhere are skipped and taken finished
/// from it (the two-worker split, which also runs this for the outputs of its other worker).
/// Not inlined: the sums and the prepared secret live only in this call.
#[inline(never)]
pub(crate) fn transposed_products<V: Variant, P: MemoryPlan, B: PolyMul, const L: usize>(
    backend: &mut B,
    matrix: &mut impl MatrixSource,
    s: &P::Secret<L>,
    scratch: &mut [u8],
    mut consume: impl FnMut(usize, &mut Poly),
) {
    let mut sums = P::sums::<V, B, L>(backend, scratch);
    for i in 0..L {
        s.with_prepared(backend, i, |backend, prepared| {
            for j in 0..L {
                if !MatrixSource::computed_elsewhere(matrix, j) {
                    sums.add_product(backend, j, prepared, |a| matrix.next_entry(a));
                }
            }
        });
    }
    for j in 0..L {
        if MatrixSource::computed_elsewhere(matrix, j) {
            matrix.finished_output(&mut |b| consume(j, b));
        } else {
            sums.finish(backend, j, |b| consume(j, b));
        }
    }
}

/// Saber.PKE.Enc (Algorithm 2) of `m` with the secret sampled from `secret` (the coins'
/// stream) into `sink`: `b' = round(A·s')`, `v' = bᵀ·s'`, `ct = pack_p(b') ‖ pack_ET(c_m)`.
pub(crate) fn encrypt<
    V: Variant,
    P: MemoryPlan,
    B: PolyMul,
    const L: usize,
    const MU: usize,
    const ET: usize,
>(
    backend: &mut B,
    matrix: &mut impl Operands<B>,
    public_b: &mut impl Operands<B>,
    secret: SecretBytes<'_>,
    m: &[u8; 32],
    sink: &mut CiphertextSink<'_>,
) {
    let s = P::sample::<V, L, MU>(secret);
    P::with_encryption_secret::<B, L>(
        backend,
        &s,
        Encryption::<'_, '_, V, _, _, L, ET> {
            matrix,
            public_b,
            m,
            sink,
            variant: core::marker::PhantomData,
        },
    );
}

/// [`encrypt_with`] as [`SecretWork`].
struct Encryption<'a, 'c, V, M, P, const L: usize, const ET: usize> {
    matrix: &'a mut M,
    public_b: &'a mut P,
    m: &'a [u8; 32],
    sink: &'a mut CiphertextSink<'c>,
    variant: core::marker::PhantomData<V>,
}

impl<V: Variant, B: PolyMul, M: Operands<B>, P: Operands<B>, const L: usize, const ET: usize>
    SecretWork<B> for Encryption<'_, '_, V, M, P, L, ET>
{
    fn run(self, backend: &mut B, s: &mut impl SecretOperands<B>) {
        encrypt_with::<V, B, L, ET>(backend, self.matrix, self.public_b, s, self.m, self.sink);
    }
}

/// Saber.PKE.Enc with the secret vector given as operands.
fn encrypt_with<V: Variant, B: PolyMul, const L: usize, const ET: usize>(
    backend: &mut B,
    matrix: &mut impl Operands<B>,
    public_b: &mut impl Operands<B>,
    s: &mut impl SecretOperands<B>,
    m: &[u8; 32],
    sink: &mut CiphertextSink<'_>,
) {
    let put_row = |sink: &mut CiphertextSink<'_>, i: usize, row: &mut Poly| {
        sink.put(i * POLY_P_BYTES..(i + 1) * POLY_P_BYTES, |out| {
            pack_rounded::<V>(row, out)
        })
    };
    matrix_rows::<B, L>(backend, matrix, s, |i, row| put_row(sink, i, row));
    // v' = bᵀ·s', carrying the message into c_m.
    let c_m = L * POLY_P_BYTES..L * POLY_P_BYTES + sizes::packed(ET as u32);
    sum_of_products::<B, L>(
        backend,
        |backend, acc, j| s.with_prepared(backend, j, |b, s_j| public_b.mul_acc_next(b, acc, s_j)),
        |v| sink.put(c_m, |out| encode_message::<V, ET>(v, m, out)),
    );
    // The rows another worker computed (the two-worker split), once this one's work is done.
    for i in 0..L {
        if matrix.computed_elsewhere(i) {
            matrix.finished_output(|row| put_row(sink, i, row));
        }
    }
}

/// The rows `b'_i = Σ_j A[i][j]·s'_j` of `A·s'` that are computed here, each handed to
/// `consume(i, ·)`; rows the matrix source computes elsewhere are skipped (the two-worker split,
/// which also runs this for the rows of its other worker).
pub(crate) fn matrix_rows<B: PolyMul, const L: usize>(
    backend: &mut B,
    matrix: &mut impl Operands<B>,
    s: &mut impl SecretOperands<B>,
    mut consume: impl FnMut(usize, &mut Poly),
) {
    for i in 0..L {
        if matrix.computed_elsewhere(i) {
            continue;
        }
        sum_of_products::<B, L>(
            backend,
            |backend, acc, j| {
                s.with_prepared(backend, j, |b, s_j| matrix.mul_acc_next(b, acc, s_j))
            },
            |row| consume(i, row),
        );
    }
}

/// Saber.PKE.Dec (Algorithm 3): `v = b'ᵀ·s`, the message from `v` and `c_m`.
#[inline(never)]
pub(crate) fn decrypt<V: Variant, B: PolyMul, const L: usize, const ET: usize>(
    backend: &mut B,
    s: &mut impl SecretOperands<B>,
    ct: &[u8],
) -> [u8; 32] {
    let (ct_b, ct_m) = ct.split_at(L * POLY_P_BYTES);
    let mut b_prime = packed_p(ct_b);
    let mut m = [0u8; 32];
    sum_of_products::<B, L>(
        backend,
        |backend, acc, j| s.mul_acc_once(backend, acc, j, &mut b_prime),
        |v| m = decode_message::<V, ET>(v, ct_m),
    );
    m
}

// --- Groups of operations -----------------------------------------------------------------------

/// Each operation's matrix A and secret stream, for the operations of a group: squeezed in
/// advance, together, where the hasher says lanes pay and the plan may hold them
/// ([`InAdvance`]); otherwise streamed by each operation as its products go ([`Streamed`]).
trait GroupSources {
    /// Runs `f` on operation `i`'s matrix, row-major.
    fn with_matrix<R>(&self, i: usize, f: impl FnOnce(&mut dyn MatrixSource) -> R) -> R;
    /// Operation `i`'s secret stream.
    fn secret(&self, i: usize) -> SecretBytes<'_>;
}

/// Streamed from the XOF.
struct Streamed<'a, V, const L: usize> {
    hasher: &'a Hasher,
    matrix_seeds: &'a [&'a [u8; 32]],
    secret_seeds: &'a [&'a [u8; 32]],
    variant: core::marker::PhantomData<V>,
}

impl<V: Variant, const L: usize> GroupSources for Streamed<'_, V, L> {
    fn with_matrix<R>(&self, i: usize, f: impl FnOnce(&mut dyn MatrixSource) -> R) -> R {
        with_streamed_matrix::<V, L, R>(self.hasher, self.matrix_seeds[i], f)
    }

    fn secret(&self, i: usize) -> SecretBytes<'_> {
        SecretBytes::Seed(self.hasher, self.secret_seeds[i])
    }
}

impl<M: ByteArray, const G: usize> GroupSources for InAdvance<M, G> {
    fn with_matrix<R>(&self, i: usize, f: impl FnOnce(&mut dyn MatrixSource) -> R) -> R {
        f(&mut InAdvance::matrix(self, i))
    }

    fn secret(&self, i: usize) -> SecretBytes<'_> {
        SecretBytes::Squeezed(InAdvance::secret(self, i))
    }
}

/// Whether a group's sources are squeezed in advance.
fn squeezes_in_advance<P: MemoryPlan>(hasher: &Hasher) -> bool {
    P::MAY_SQUEEZE_IN_ADVANCE && hasher.squeezes_in_advance()
}

/// The IND-CPA key generation of each operation of a group: `seeds_a[i]` (hashed) and
/// `seeds_s[i]` into `out[i] = (pack_p(b), sk)`, `sk` with [`MemoryPlan::keygen_buffer`] bytes; `M`
/// holds a matrix squeezed in advance.
pub(crate) fn keygen_group<
    V: Variant,
    Bk: Backend,
    M: ByteArray,
    const L: usize,
    const MU: usize,
    const G: usize,
>(
    backend: &mut Bk,
    hasher: &Hasher,
    seeds_a: &[&[u8; 32]],
    seeds_s: &[&[u8; 32]],
    out: &mut [Option<(&mut [u8], &mut [u8])>],
) {
    if squeezes_in_advance::<Bk::Plan>(hasher) {
        return keygen_in_advance::<V, Bk, M, L, MU, G>(backend, hasher, seeds_a, seeds_s, out);
    }
    let sources = Streamed::<V, L> {
        hasher,
        matrix_seeds: seeds_a,
        secret_seeds: seeds_s,
        variant: core::marker::PhantomData,
    };
    keygen_each::<V, Bk, L, MU>(backend, &sources, out);
}

/// [`keygen_group`] squeezed in advance. Not inlined: the squeezed bytes live only in this call.
#[inline(never)]
fn keygen_in_advance<
    V: Variant,
    Bk: Backend,
    M: ByteArray,
    const L: usize,
    const MU: usize,
    const G: usize,
>(
    backend: &mut Bk,
    hasher: &Hasher,
    seeds_a: &[&[u8; 32]],
    seeds_s: &[&[u8; 32]],
    out: &mut [Option<(&mut [u8], &mut [u8])>],
) {
    let mut squeezed = InAdvance::<M, G>::new();
    squeezed.squeeze::<V, L, MU>(
        hasher,
        seeds_s.iter().map(|seed| SecretSeed::Seed(seed)),
        seeds_a.iter().copied(),
        &mut [],
    );
    keygen_each::<V, Bk, L, MU>(backend, &squeezed, out);
}

fn keygen_each<V: Variant, Bk: Backend, const L: usize, const MU: usize>(
    backend: &mut Bk,
    sources: &impl GroupSources,
    out: &mut [Option<(&mut [u8], &mut [u8])>],
) {
    for (i, (pk, sk)) in out.iter_mut().flatten().enumerate() {
        sources.with_matrix(i, |mut matrix| {
            keygen::<V, Bk::Plan, Bk::Mul, L, MU>(
                backend.mul(),
                &mut matrix,
                sources.secret(i),
                pk,
                sk,
            )
        });
    }
}

/// Saber.PKE.Enc for each operation of a group, as the FO transform calls it (Algorithms 5 and
/// 6): (K̂, r) = G(`messages[i]` ‖ `hpks[i]`) into `kr[i]`, then `messages[i]` encrypted with
/// the coins r into `sinks[i]`; the `extra` jobs run beside the encryption's own hashing
/// (decapsulation's H(c)). G is computed here so that, where the streams are squeezed in
/// advance, it is the first step of the secret stream's job, on lanes beside the other streams.
pub(crate) trait EncryptGroup<Bk> {
    /// Encrypts every operation of the group.
    #[allow(clippy::too_many_arguments)]
    fn encrypt(
        &self,
        backend: &mut Bk,
        hasher: &Hasher,
        messages: &[[u8; 32]],
        hpks: &[&[u8; 32]],
        kr: &mut [[[u8; 32]; 2]],
        sinks: &mut [Option<CiphertextSink<'_>>],
        extra: &mut [Option<Job<'_>>],
    );
}

/// (K̂, r) = G(m ‖ H(pk)) of each operation (§2.6, Algorithms 5 and 6), on its own. Not inlined:
/// its job list lives only in this call, not in the frame of the encryption that runs the products
/// next (low-memory mode).
#[inline(never)]
pub(crate) fn hash_kr(
    hasher: &Hasher,
    messages: &[[u8; 32]],
    hpks: &[&[u8; 32]],
    kr: &mut [[[u8; 32]; 2]],
) {
    hasher.run(g_jobs(messages, hpks, kr));
}

/// The jobs (K̂, r) = G(m ‖ H(pk)) of each operation, into `kr`.
fn g_jobs<'a>(
    messages: &'a [[u8; 32]],
    hpks: &'a [&'a [u8; 32]],
    kr: &'a mut [[[u8; 32]; 2]],
) -> impl Iterator<Item = Job<'a>> {
    messages
        .iter()
        .zip(hpks)
        .zip(kr.iter_mut())
        .map(|((m, hpk), kr)| Job::g([m, *hpk], kr))
}

/// The coins r of each operation, the second half of its `kr`.
fn coins_of<const G: usize>(kr: &[[[u8; 32]; 2]]) -> [&[u8; 32]; G] {
    core::array::from_fn(|i| kr.get(i).map_or(&[0; 32], |kr| &kr[1]))
}

/// Encryption under public keys given as bytes (`pk = pack_p(b) ‖ seed_A`), one per operation;
/// `M` holds a matrix squeezed in advance.
pub(crate) struct PublicKeys<
    'k,
    V,
    M,
    const L: usize,
    const MU: usize,
    const ET: usize,
    const G: usize,
> {
    keys: &'k [&'k [u8]],
    types: core::marker::PhantomData<(V, M)>,
}

impl<'k, V, M, const L: usize, const MU: usize, const ET: usize, const G: usize>
    PublicKeys<'k, V, M, L, MU, ET, G>
{
    /// The public keys of a group's operations.
    pub(crate) fn new(keys: &'k [&'k [u8]]) -> Self {
        Self {
            keys,
            types: core::marker::PhantomData,
        }
    }
}

/// The public seed of A at the end of a public key.
fn public_seed(pk: &[u8]) -> &[u8; 32] {
    let (_, seed) = pk.split_at(pk.len() - SEED_BYTES);
    match seed.try_into() {
        Ok(seed) => seed,
        Err(_) => unreachable!("a public key ends with its 32-byte seed"),
    }
}

impl<
    V: Variant,
    Bk: Backend,
    M: ByteArray,
    const L: usize,
    const MU: usize,
    const ET: usize,
    const G: usize,
> EncryptGroup<Bk> for PublicKeys<'_, V, M, L, MU, ET, G>
{
    fn encrypt(
        &self,
        backend: &mut Bk,
        hasher: &Hasher,
        messages: &[[u8; 32]],
        hpks: &[&[u8; 32]],
        kr: &mut [[[u8; 32]; 2]],
        sinks: &mut [Option<CiphertextSink<'_>>],
        extra: &mut [Option<Job<'_>>],
    ) {
        if squeezes_in_advance::<Bk::Plan>(hasher) {
            return self.encrypt_in_advance(backend, hasher, messages, hpks, kr, sinks, extra);
        }
        hasher.run(extra.iter_mut().filter_map(Option::take));
        hash_kr(hasher, messages, hpks, kr);
        let seeds: [&[u8; 32]; G] =
            core::array::from_fn(|i| public_seed(self.keys[i.min(self.keys.len() - 1)]));
        let coins = coins_of::<G>(kr);
        let sources = Streamed::<V, L> {
            hasher,
            matrix_seeds: &seeds,
            secret_seeds: &coins,
            variant: core::marker::PhantomData,
        };
        self.encrypt_each(backend, &sources, messages, sinks);
    }
}

impl<V: Variant, M: ByteArray, const L: usize, const MU: usize, const ET: usize, const G: usize>
    PublicKeys<'_, V, M, L, MU, ET, G>
{
    /// [`EncryptGroup::encrypt`] squeezed in advance. Not inlined: the squeezed bytes live only
    /// in this call.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn encrypt_in_advance<Bk: Backend>(
        &self,
        backend: &mut Bk,
        hasher: &Hasher,
        messages: &[[u8; 32]],
        hpks: &[&[u8; 32]],
        kr: &mut [[[u8; 32]; 2]],
        sinks: &mut [Option<CiphertextSink<'_>>],
        extra: &mut [Option<Job<'_>>],
    ) {
        let mut squeezed = InAdvance::<M, G>::new();
        let secret_seeds = g_jobs(messages, hpks, kr).map(SecretSeed::AfterG);
        let seeds = self.keys.iter().map(|pk| public_seed(pk));
        squeezed.squeeze::<V, L, MU>(hasher, secret_seeds, seeds, extra);
        self.encrypt_each(backend, &squeezed, messages, sinks);
    }

    fn encrypt_each<Bk: Backend>(
        &self,
        backend: &mut Bk,
        sources: &impl GroupSources,
        messages: &[[u8; 32]],
        sinks: &mut [Option<CiphertextSink<'_>>],
    ) {
        for (i, ((pk, m), sink)) in self
            .keys
            .iter()
            .zip(messages)
            .zip(sinks.iter_mut().flatten())
            .enumerate()
        {
            sources.with_matrix(i, |mut matrix| {
                encrypt::<V, Bk::Plan, Bk::Mul, L, MU, ET>(
                    backend.mul(),
                    &mut matrix,
                    &mut packed_p(&pk[..L * POLY_P_BYTES]),
                    sources.secret(i),
                    m,
                    sink,
                )
            });
        }
    }
}

/// Encryption with A and b already in the backend's domain (an expanded key's cache).
pub(crate) struct Cached<'k, V, B: PolyMulPublic, const L: usize, const MU: usize, const ET: usize>
{
    matrix: &'k [B::PreparedPublic],
    public_b: &'k [B::PreparedPublic],
    variant: core::marker::PhantomData<V>,
}

impl<'k, V, B: PolyMulPublic, const L: usize, const MU: usize, const ET: usize>
    Cached<'k, V, B, L, MU, ET>
{
    /// A row-major and b, prepared.
    pub(crate) fn new(matrix: &'k [B::PreparedPublic], public_b: &'k [B::PreparedPublic]) -> Self {
        Self {
            matrix,
            public_b,
            variant: core::marker::PhantomData,
        }
    }
}

impl<V: Variant, B: PolyMulPublic, const L: usize, const MU: usize, const ET: usize> EncryptGroup<B>
    for Cached<'_, V, B, L, MU, ET>
{
    fn encrypt(
        &self,
        backend: &mut B,
        hasher: &Hasher,
        messages: &[[u8; 32]],
        hpks: &[&[u8; 32]],
        kr: &mut [[[u8; 32]; 2]],
        sinks: &mut [Option<CiphertextSink<'_>>],
        extra: &mut [Option<Job<'_>>],
    ) {
        hasher.run(extra.iter_mut().filter_map(Option::take));
        hash_kr(hasher, messages, hpks, kr);
        let coins = kr.iter().map(|kr| &kr[1]);
        for ((m, coins), sink) in messages.iter().zip(coins).zip(sinks.iter_mut().flatten()) {
            encrypt::<V, Fast, B, L, MU, ET>(
                backend,
                &mut PreparedOperands(self.matrix.iter()),
                &mut PreparedOperands(self.public_b.iter()),
                SecretBytes::Seed(hasher, coins),
                m,
                sink,
            );
        }
    }
}
