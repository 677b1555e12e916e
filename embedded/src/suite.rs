//! The measured matrix: every parameter set × selected backend × memory mode × operation, and
//! the Keccak-f\[1600\] permutation of each single-state implementation.
//!
//! Everything measured belongs to a numbered unit (a `unit,<n>,…` line first): `../run` restarts
//! a run that stopped in a unit (an operation that outgrew the RAM) with `skip=<n + 1>`.

use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use saber_kem::hazmat::keccak::Single;
use saber_kem::hazmat::{sha3_256, shake128};
use saber_kem::polymul::{Poly, SecretPoly};
use saber_kem::{
    Backend, FireSaber, FireSaber90s, FireSaberPlus, LightSaber, LightSaber90s, LightSaberPlus,
    LowMemory, ParameterSet, PolyMul, Saber, Saber90s, SaberPlus, UFireSaber, UFireSaber90s,
    ULightSaber, ULightSaber90s, USaber, USaber90s,
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
    fn generate<B: Backend>(b: &mut B, pk: &mut [u8], sk: &mut [u8]) -> bool;
    fn encaps<B: Backend>(b: &mut B, pk: &[u8], ct: &mut [u8]) -> Option<[u8; 32]>;
    fn decaps<B: Backend>(b: &mut B, sk: &[u8], ct: &[u8]) -> Option<[u8; 32]>;
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
            fn generate<B: Backend>(b: &mut B, pk: &mut [u8], sk: &mut [u8]) -> bool {
                <$p>::keypair_into(b, &SEED_A, &SEED_S, &Z, pk, sk).is_ok()
            }
            fn encaps<B: Backend>(b: &mut B, pk: &[u8], ct: &mut [u8]) -> Option<[u8; 32]> {
                <$p>::encapsulate_into(b, pk, &MESSAGE, ct).ok().map(|ss| *ss.as_bytes())
            }
            fn decaps<B: Backend>(b: &mut B, sk: &[u8], ct: &[u8]) -> Option<[u8; 32]> {
                <$p>::decapsulate_from(b, sk, ct).ok().map(|ss| *ss.as_bytes())
            }
        }
    )*};
}
impl_kem!(
    LightSaber,
    Saber,
    FireSaber,
    LightSaber90s,
    Saber90s,
    FireSaber90s,
    ULightSaber,
    USaber,
    UFireSaber,
    ULightSaber90s,
    USaber90s,
    UFireSaber90s,
    LightSaberPlus,
    SaberPlus,
    FireSaberPlus
);

/// The next unit's number, and how many to skip (single-threaded: plain loads and stores,
/// which every core here has).
static NEXT_UNIT: AtomicUsize = AtomicUsize::new(0);
static SKIP_UNITS: AtomicUsize = AtomicUsize::new(0);
/// Whether the units that are not a backend's are left out (`platform::Arguments::no_shared`).
static NO_SHARED: AtomicBool = AtomicBool::new(false);

/// Starts the next unit: whether to run it (not among the skipped ones), with its `unit` line.
fn unit(what: core::fmt::Arguments<'_>) -> bool {
    let n = NEXT_UNIT.load(Ordering::Relaxed);
    NEXT_UNIT.store(n + 1, Ordering::Relaxed);
    if n < SKIP_UNITS.load(Ordering::Relaxed) {
        return false;
    }
    outln!("unit,{n},{what}");
    true
}

/// [`unit`] for the units that are not a backend's: numbered, but not run in an image that
/// leaves them out.
fn shared_unit(what: core::fmt::Arguments<'_>) -> bool {
    if NO_SHARED.load(Ordering::Relaxed) {
        NEXT_UNIT.store(NEXT_UNIT.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        return false;
    }
    unit(what)
}

/// Announces an operation (`begin` line, with the stack bytes it has before the RAM ends):
/// `../run` names it if the core stops in it.
fn begin(variant: &str, backend: &str, mode: &str, op: &str) {
    outln!(
        "begin,{ISA},{variant},{backend},{mode},{op},{}",
        platform::stack_available()
    );
}

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
/// shared secrets agree and that a tampered ciphertext is implicitly rejected. Not inlined (nor
/// are the other measuring functions): the buffers of one parameter set at a time on the stack,
/// which the Cortex-M0's 16 KB of RAM need.
#[inline(never)]
fn run_one<P: Kem, B: Backend>(backend: &mut B, backend_name: &str, mode: &str) -> bool {
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
    begin(variant, backend_name, mode, "keygen");
    let Some(m) = platform::measure(&mut || ok = P::generate(backend, pk, sk)) else {
        return fail("keygen measurement overflow");
    };
    if !ok {
        return fail("keygen");
    }
    row(variant, backend_name, mode, "keygen", &m);

    let mut sent = None;
    begin(variant, backend_name, mode, "encaps");
    let Some(m) = platform::measure(&mut || sent = P::encaps(backend, pk, ct)) else {
        return fail("encaps measurement overflow");
    };
    let Some(sent) = sent else {
        return fail("encaps");
    };
    row(variant, backend_name, mode, "encaps", &m);

    let mut received = None;
    begin(variant, backend_name, mode, "decaps");
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
fn run_sets<B: Backend>(backend: &mut B, name: &str, mode: &str) -> bool {
    let mut ok = true;
    macro_rules! set {
        ($p:ty, $name:literal) => {
            #[cfg(any(embedded_variant = "all", embedded_variant = $name))]
            if unit(format_args!("{},{name},{mode}", $name)) {
                ok &= run_one::<$p, B>(backend, name, mode);
            }
        };
    }
    set!(LightSaber, "LightSaber");
    set!(Saber, "Saber");
    set!(FireSaber, "FireSaber");
    set!(LightSaber90s, "LightSaber-90s");
    set!(Saber90s, "Saber-90s");
    set!(FireSaber90s, "FireSaber-90s");
    set!(ULightSaber, "uLightSaber");
    set!(USaber, "uSaber");
    set!(UFireSaber, "uFireSaber");
    set!(ULightSaber90s, "uLightSaber-90s");
    set!(USaber90s, "uSaber-90s");
    set!(UFireSaber90s, "uFireSaber-90s");
    set!(LightSaberPlus, "LightSaber+");
    set!(SaberPlus, "Saber+");
    set!(FireSaberPlus, "FireSaber+");
    ok
}

/// Cost of one product `a · s` (prepare, multiply-accumulate, finish) with `backend`.
#[inline(never)]
fn micro_product<B: PolyMul>(backend: &mut B, name: &str) {
    let mut a = Poly::ZERO;
    let mut s = SecretPoly::ZERO;
    for (k, (x, y)) in a.coeffs.iter_mut().zip(s.coeffs.iter_mut()).enumerate() {
        *x = (k as u16).wrapping_mul(0x9E37) & 0x1FFF;
        *y = ((k * 7) % 11) as i8 - 5;
    }
    let mut out = Poly::ZERO;
    begin("-", name, "-", "product");
    if let Some(m) = platform::measure(&mut || out = backend.mul(&a, &s)) {
        outln!(
            "micro,{ISA},{name},product,{},{}",
            m.instructions,
            m.stack_bytes
        );
    }
    core::hint::black_box(&out);
}

/// One Keccak-f\[1600\] permutation per single-state implementation, as `keccak-f1600` rows
/// (backend: the implementation): nine permutations minus one, over eight, so that neither the
/// conversion to and from the implementation's layout nor the counter's resolution enters.
#[inline(never)]
fn keccak_rows() {
    for single in Single::all() {
        let mut state = [0u64; 25];
        let name = single.name();
        begin("-", name, "-", "keccak-f1600");
        let once = platform::measure(&mut || single.permute(&mut state, 1));
        let nine = platform::measure(&mut || single.permute(&mut state, 9));
        if let (Some(once), Some(nine)) = (once, nine) {
            let one = Measurement {
                instructions: (nine.instructions - once.instructions) / 8,
                stack_bytes: once.stack_bytes,
            };
            row("-", name, "-", "keccak-f1600", &one);
        }
        core::hint::black_box(&state);
    }
}

/// Cost of the symmetric primitives: one SHA3-256 of 32 bytes (one Keccak-f[1600] and padding),
/// and the XOF bytes of one matrix polynomial (416 bytes of SHAKE128).
#[inline(never)]
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
    let mut entry = [0u8; 416];
    if let Some(m) = platform::measure(&mut || shake128(&[&input], &mut entry)) {
        outln!(
            "micro,{ISA},-,shake128(416 B),{},{}",
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
#[inline(never)]
fn profile_without_products<P: Kem, B: Backend>(backend: &mut B, mode: &str) {
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
    begin(variant, "no-products", mode, "keygen");
    report(
        "keygen",
        platform::measure(&mut || {
            P::generate(backend, pk, sk);
        }),
    );
    begin(variant, "no-products", mode, "encaps");
    report(
        "encaps",
        platform::measure(&mut || {
            P::encaps(backend, pk, ct);
        }),
    );
    begin(variant, "no-products", mode, "decaps");
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
    if unit(format_args!("-,{name},product")) {
        micro_product(&mut make(), name);
    }
    let mut ok = run_sets(&mut make(), name, "speed");
    ok &= run_sets(&mut LowMemory(make()), name, "low-memory");
    ok
}

/// Every backend of `tests/support/backends.rs` that the build selected
/// (`SABER_EMBEDDED_BACKENDS`; default: every software backend, see `build.rs`).
pub fn run_all() -> bool {
    let (per_count, calibrated) = platform::calibrate();
    outln!("calibration,{ISA},{per_count}");
    #[allow(unused_mut)]
    let mut ok = calibrated;
    if !calibrated {
        outln!("fail,{ISA},calibration");
    }
    let arguments = platform::arguments();
    SKIP_UNITS.store(arguments.skip, Ordering::Relaxed);
    NO_SHARED.store(arguments.no_shared, Ordering::Relaxed);
    if shared_unit(format_args!("-,-,symmetric")) {
        keccak_rows();
        micro_hash();
    }
    #[cfg(any(embedded_variant = "all", embedded_variant = "Saber"))]
    {
        if shared_unit(format_args!("Saber,no-products,speed")) {
            profile_without_products::<Saber, _>(&mut NoProducts, "speed");
        }
        if shared_unit(format_args!("Saber,no-products,low-memory")) {
            profile_without_products::<Saber, _>(&mut LowMemory(NoProducts), "low-memory");
        }
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
