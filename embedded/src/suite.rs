//! The measured matrix: every parameter set × selected backend × memory mode × operation.

use saber_kem::hash::sha3_256;
use saber_kem::poly::{Poly, SecretPoly};
use saber_kem::sampling::{MatrixSource, StreamMatrix};
use saber_kem::{
    FireSaber, FireSaberPlus, LightSaber, LightSaberPlus, LowMemory, ParameterSet, PolyMul, Saber,
    SaberPlus,
};

use crate::platform::{self, ISA, Measurement, outln};

/// Largest encodings (FireSaber).
const MAX_PK: usize = 1312;
const MAX_SK: usize = 3040;
const MAX_CT: usize = 1472;

/// Fixed inputs: the harness checks bytes, not randomness.
const SEED_A: [u8; 32] = [0x5A; 32];
const SEED_S: [u8; 32] = [0xC3; 32];
const Z: [u8; 32] = [0x7E; 32];
const MESSAGE: [u8; 32] = [0x21; 32];

/// Byte-level operations of one parameter set (the hazmat API of `SaberKem`).
trait Kem: ParameterSet {
    fn generate<B: PolyMul>(b: &mut B, pk: &mut [u8], sk: &mut [u8]) -> bool;
    fn encaps<B: PolyMul>(b: &mut B, pk: &[u8], ct: &mut [u8]) -> Option<[u8; 32]>;
    fn decaps<B: PolyMul>(b: &mut B, sk: &[u8], ct: &[u8]) -> Option<[u8; 32]>;
    fn lengths() -> (usize, usize, usize) {
        (
            size_of::<Self::PublicKeyBytes>(),
            size_of::<Self::SecretKeyBytes>(),
            size_of::<Self::CiphertextBytes>(),
        )
    }
}

macro_rules! impl_kem {
    ($($p:ty),*) => {$(
        impl Kem for $p {
            fn generate<B: PolyMul>(b: &mut B, pk: &mut [u8], sk: &mut [u8]) -> bool {
                <$p>::keypair_into(b, &SEED_A, &SEED_S, &Z, pk, sk).is_ok()
            }
            fn encaps<B: PolyMul>(b: &mut B, pk: &[u8], ct: &mut [u8]) -> Option<[u8; 32]> {
                <$p>::encapsulate_into(b, pk, &MESSAGE, ct).ok().map(|ss| *ss.as_bytes())
            }
            fn decaps<B: PolyMul>(b: &mut B, sk: &[u8], ct: &[u8]) -> Option<[u8; 32]> {
                <$p>::decapsulate_from(b, sk, ct).ok().map(|ss| *ss.as_bytes())
            }
        }
    )*};
}
impl_kem!(
    LightSaber,
    Saber,
    FireSaber,
    LightSaberPlus,
    SaberPlus,
    FireSaberPlus
);

fn row(variant: &str, backend: &str, mode: &str, op: &str, m: &Measurement) {
    outln!(
        "row,{ISA},{variant},{backend},{mode},{op},{},{}",
        m.instructions,
        m.stack_bytes
    );
}

fn hex(bytes: &[u8; 32]) -> heapless_hex::Hex {
    heapless_hex::Hex(*bytes)
}

/// Lower-case hex without allocation.
mod heapless_hex {
    pub struct Hex(pub [u8; 32]);
    impl core::fmt::Display for Hex {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            for b in self.0 {
                write!(f, "{b:02x}")?;
            }
            Ok(())
        }
    }
}

/// Key generation, encapsulation and decapsulation of `P` with `backend`; checks that the
/// shared secrets agree and that a tampered ciphertext is implicitly rejected.
fn run_one<P: Kem, B: PolyMul>(backend: &mut B, backend_name: &str, mode: &str) -> bool {
    let (pk_len, sk_len, ct_len) = P::lengths();
    let mut pk = [0u8; MAX_PK];
    let mut sk = [0u8; MAX_SK];
    let mut ct = [0u8; MAX_CT];
    let (pk, sk, ct) = (&mut pk[..pk_len], &mut sk[..sk_len], &mut ct[..ct_len]);
    let variant = P::NAME;
    let fail = |what: &str| {
        outln!("fail,{ISA},{variant},{backend_name},{mode},{what}");
        false
    };

    let mut ok = false;
    let Some(m) = platform::measure(&mut || ok = P::generate(backend, pk, sk)) else {
        return fail("keygen measurement overflow");
    };
    if !ok {
        return fail("keygen");
    }
    row(variant, backend_name, mode, "keygen", &m);

    let mut sent = None;
    let Some(m) = platform::measure(&mut || sent = P::encaps(backend, pk, ct)) else {
        return fail("encaps measurement overflow");
    };
    let Some(sent) = sent else {
        return fail("encaps");
    };
    row(variant, backend_name, mode, "encaps", &m);

    let mut received = None;
    let Some(m) = platform::measure(&mut || received = P::decaps(backend, sk, ct)) else {
        return fail("decaps measurement overflow");
    };
    let Some(received) = received else {
        return fail("decaps");
    };
    row(variant, backend_name, mode, "decaps", &m);

    let mut ok = true;
    if received != sent {
        ok = fail("shared secrets differ");
    }
    ct[3] ^= 0x10;
    match P::decaps(backend, sk, ct) {
        Some(rejected) if rejected != sent => {}
        _ => ok = fail("tampered ciphertext not rejected"),
    }
    ct[3] ^= 0x10;
    let digest = sha3_256(&[pk, sk, ct, &sent]);
    outln!("digest,{variant},{backend_name},{mode},{}", hex(&digest));
    ok
}

/// All selected parameter sets (`SABER_EMBEDDED_VARIANTS`, default all) with one backend in
/// one mode.
fn run_sets<B: PolyMul>(backend: &mut B, name: &str, mode: &str) -> bool {
    let mut ok = true;
    macro_rules! set {
        ($p:ty, $name:literal) => {
            #[cfg(any(embedded_variant = "all", embedded_variant = $name))]
            {
                ok &= run_one::<$p, B>(backend, name, mode);
            }
        };
    }
    set!(LightSaber, "LightSaber");
    set!(Saber, "Saber");
    set!(FireSaber, "FireSaber");
    set!(LightSaberPlus, "LightSaber+");
    set!(SaberPlus, "Saber+");
    set!(FireSaberPlus, "FireSaber+");
    ok
}

/// Cost of one product `a · s` (prepare, multiply-accumulate, finish) with `backend`.
fn micro_product<B: PolyMul>(backend: &mut B, name: &str) {
    let mut a = Poly::ZERO;
    let mut s = SecretPoly::ZERO;
    for (k, (x, y)) in a.coeffs.iter_mut().zip(s.coeffs.iter_mut()).enumerate() {
        *x = (k as u16).wrapping_mul(0x9E37) & 0x1FFF;
        *y = ((k * 7) % 11) as i8 - 5;
    }
    let mut out = Poly::ZERO;
    if let Some(m) = platform::measure(&mut || out = backend.mul(&a, &s)) {
        outln!(
            "micro,{ISA},{name},product,{},{}",
            m.instructions,
            m.stack_bytes
        );
    }
    core::hint::black_box(&out);
}

/// Cost of the symmetric primitives: one SHA3-256 of 32 bytes (one Keccak-f[1600] and padding),
/// and one matrix polynomial (416 bytes of SHAKE128 and 13-bit unpacking).
fn micro_hash() {
    let input = [7u8; 32];
    let mut out = [0u8; 32];
    if let Some(m) = platform::measure(&mut || out = sha3_256(&[&input])) {
        outln!(
            "micro,{ISA},-,sha3_256(32 B),{},{}",
            m.instructions,
            m.stack_bytes
        );
    }
    core::hint::black_box(&out);
    let mut entry = Poly::ZERO;
    let mut matrix = StreamMatrix::new(&input);
    if let Some(m) = platform::measure(&mut || matrix.next_entry(&mut entry)) {
        outln!(
            "micro,{ISA},-,matrix entry,{},{}",
            m.instructions,
            m.stack_bytes
        );
    }
    core::hint::black_box(&entry);
}

/// A backend that multiplies nothing: the KEM's code is constant time, so running it with this
/// backend costs exactly the KEM minus its products (hashing, sampling, packing). Profile only:
/// its results are wrong, so its rows are reported as `profile` lines, not checked.
#[derive(Default)]
struct NoProducts;

impl PolyMul for NoProducts {
    type Prepared = ();
    type Accumulator = ();
    fn prepare(&mut self, _: &SecretPoly) {}
    fn accumulator(&mut self) {}
    fn mul_acc(&mut self, _: &mut (), _: &Poly, _: &()) {}
    fn finish(&mut self, _: &()) -> Poly {
        Poly::ZERO
    }
    fn name(&self) -> &'static str {
        "no-products"
    }
}

/// Cost of everything but the products, per operation, for `P`.
fn profile_without_products<P: Kem, B: PolyMul>(backend: &mut B, mode: &str) {
    let (pk_len, sk_len, ct_len) = P::lengths();
    let mut pk = [0u8; MAX_PK];
    let mut sk = [0u8; MAX_SK];
    let mut ct = [0u8; MAX_CT];
    let (pk, sk, ct) = (&mut pk[..pk_len], &mut sk[..sk_len], &mut ct[..ct_len]);
    let variant = P::NAME;
    let report = |op: &str, m: Option<Measurement>| {
        if let Some(m) = m {
            outln!(
                "profile,{ISA},{variant},no-products,{mode},{op},{},{}",
                m.instructions,
                m.stack_bytes
            );
        }
    };
    report(
        "keygen",
        platform::measure(&mut || {
            P::generate(backend, pk, sk);
        }),
    );
    report(
        "encaps",
        platform::measure(&mut || {
            P::encaps(backend, pk, ct);
        }),
    );
    report(
        "decaps",
        platform::measure(&mut || {
            P::decaps(backend, sk, ct);
        }),
    );
}

/// One backend in both modes.
#[inline(never)]
fn run_backend<B: PolyMul>(mut make: impl FnMut() -> B, name: &str) -> bool {
    micro_product(&mut make(), name);
    let mut ok = run_sets(&mut make(), name, "speed");
    ok &= run_sets(&mut LowMemory(make()), name, "low-memory");
    ok
}

/// Every backend of `tests/support/backends.rs` that the build selected
/// (`SABER_EMBEDDED_BACKENDS`, default all).
pub fn run_all() -> bool {
    let (per_count, calibrated) = platform::calibrate();
    outln!("calibration,{ISA},{per_count}");
    #[allow(unused_mut)]
    let mut ok = calibrated;
    if !calibrated {
        outln!("fail,{ISA},calibration");
    }
    micro_hash();
    #[cfg(any(embedded_variant = "all", embedded_variant = "Saber"))]
    {
        profile_without_products::<Saber, _>(&mut NoProducts, "speed");
        profile_without_products::<Saber, _>(&mut LowMemory(NoProducts), "low-memory");
    }
    macro_rules! each {
        ($id:ident, $name:literal, $ctor:expr) => {
            #[cfg(any(embedded_backend = "all", embedded_backend = $name))]
            {
                ok &= run_backend(|| $ctor, $name);
            }
        };
    }
    crate::backends::for_each_backend!(each);
    ok
}
