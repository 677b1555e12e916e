//! Constant-time verification with Valgrind memcheck (the "ctgrind" technique,
//! `../shared/docs/style.md` §5.2).
//!
//! Every byte the test RNG hands out is marked *undefined*; memcheck then reports any
//! conditional jump, memory address or system-call argument computed from it. Key generation,
//! encapsulation and decapsulation (valid and tampered ciphertexts, keys from the RNG and keys
//! decoded from bytes, and expanded keys) run for every backend of `for_each_backend!`, plain
//! and under [`LowMemory`], and for all six parameter sets. Public results are marked defined only once
//! the computation is over, right before they are compared; the public key and ciphertext stay
//! secret-tainted throughout, so the code is also shown to be constant time in them.
//!
//! The batch API likewise (batches of two, the default backend), on each multi-way Keccak path
//! Valgrind runs: the portable one (hashes one at a time) and AVX2, both through the lane
//! runner's jobs. Valgrind does not emulate AVX-512, so the AVX-512 Keccak (`keccak/avx512.rs`,
//! the same straight-line macro with other instructions, four or eight lanes) is not checked
//! here: under Valgrind the CPU reports no AVX-512.
//!
//! Before a result is declassified, its V-bits are read back to prove that the taint really
//! reached it (a run in which nothing was classified would otherwise pass trivially).
//!
//! Negative controls, each in its own Valgrind process, must be *reported*: decapsulation with a
//! key selector that branches on the ciphertext comparison, one that indexes memory with it, and
//! a plain branch on an undeclassified shared secret.
//!
//! Not covered by memcheck: variable-latency instructions (division); `.ci/div-check.sh` checks
//! the release disassembly for them, and clippy denies integer division in the crate.
//!
//! This is a `harness = false` test. Without arguments it is the driver: it re-runs itself
//! under `valgrind` (`--child CASE…`, a dozen positive cases per process, each negative control
//! alone, as many processes at a time as the machine has cores) and checks each verdict (a
//! group that fails is re-run one case at a time, to name the case). If valgrind is
//! missing it says so and passes, unless `SABER_CT_REQUIRE_VALGRIND=1` (set by `.ci/ct.sh`).
//! The check is meaningful for release builds only: debug builds have overflow checks and debug
//! assertions (never taken, but on secret-derived values) that memcheck reports, so there the
//! positive cases run natively and only the negative controls run under Valgrind.
//! A plain `cargo test` runs a quick subset (LightSaber and LightSaber+ on every backend, the
//! lane jobs and the negative controls); `SABER_CT_FULL=1` runs every case.
//! `SABER_CT_FILTER=text[,text…]` runs only the cases whose name contains one of the texts.
//!
//! The backends are the run-time list of `tests/support/backends.rs` less those Valgrind cannot
//! run (asked by running `--list-backends` under it: Valgrind reports no AVX-512); the driver
//! prints the list (`backends run: …; skipped: …`) and the instruction-set cap it was built or
//! run with. A child given a case of a backend it cannot run fails.
//! Run: `.ci/ct.sh`, or `cargo test --release --test ct_valgrind`.
#![allow(unsafe_code)] // Valgrind client requests are inline assembly (module `valgrind`).

mod support;

use std::hint::black_box;
use std::process::{Command, ExitCode};

use rand_core::{TryCryptoRng, TryRng};
use saber_kem::ParameterSet;
use saber_kem::batch::{KeySeeds, Lanes};
use saber_kem::hazmat::KeySelect;
use saber_kem::hazmat::isa_cap;
use saber_kem::hazmat::keccak::{Function, Job, Multi, Single};
use saber_kem::polymul::PolyMulPublic;
use saber_kem::{Backend, Ciphertext, DecapsulationKey, LowMemory, SaberKem, Variant};
use saber_kem::{ExpandedDecapsulationKey, ExpandedEncapsulationKey};
use saber_kem::{Plus, Round3};
use sha3::{Digest, Sha3_256};
use subtle::Choice;
use support::backends::Backends;
use support::drbg::NistDrbg;

/// Valgrind client requests (`valgrind.h`, `memcheck.h`), issued with inline assembly.
mod valgrind {
    const MEMCHECK_BASE: usize = (b'M' as usize) << 24 | (b'C' as usize) << 16;
    const RUNNING_ON_VALGRIND: usize = 0x1001;
    const MAKE_MEM_UNDEFINED: usize = MEMCHECK_BASE + 1;
    const MAKE_MEM_DEFINED: usize = MEMCHECK_BASE + 2;
    const GET_VBITS: usize = MEMCHECK_BASE + 8;

    /// One client request; returns `default` when not running under Valgrind.
    #[cfg(target_arch = "x86_64")]
    fn request(default: usize, code: usize, a1: usize, a2: usize, a3: usize) -> usize {
        let args = [code, a1, a2, a3, 0, 0];
        let mut result = default;
        // SAFETY: the amd64 client-request preamble: four rotations of rdi adding up to 128 bits
        // (rdi is unchanged) and `xchg rbx, rbx` (a no-op), with rax pointing at `args`. Natively
        // it only clobbers flags; under Valgrind the request may read `args` and the ranges it
        // names and writes the result to rdx. No memory of ours is written except through
        // GET_VBITS, whose destination is a live `&mut` buffer passed by the caller.
        unsafe {
            core::arch::asm!(
                "rol rdi, 3", "rol rdi, 13", "rol rdi, 61", "rol rdi, 51", "xchg rbx, rbx",
                inout("rdx") result,
                in("rax") args.as_ptr(),
                options(nostack),
            );
        }
        result
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn request(default: usize, _: usize, _: usize, _: usize, _: usize) -> usize {
        default
    }

    /// Whether this process runs under Valgrind (always `false` off x86_64).
    pub fn running() -> bool {
        request(0, RUNNING_ON_VALGRIND, 0, 0, 0) != 0
    }

    /// Marks `bytes` secret (undefined).
    pub fn classify(bytes: &[u8]) {
        request(
            0,
            MAKE_MEM_UNDEFINED,
            bytes.as_ptr() as usize,
            bytes.len(),
            0,
        );
    }

    /// Marks `bytes` public (defined).
    pub fn declassify(bytes: &[u8]) {
        request(0, MAKE_MEM_DEFINED, bytes.as_ptr() as usize, bytes.len(), 0);
    }

    /// How many of `bytes` carry at least one undefined (secret-dependent) bit; `None` when not
    /// running under Valgrind.
    pub fn tainted_bytes(bytes: &[u8]) -> Option<usize> {
        let mut vbits = vec![0u8; bytes.len()];
        let status = request(
            0,
            GET_VBITS,
            bytes.as_ptr() as usize,
            vbits.as_mut_ptr() as usize,
            bytes.len(),
        );
        // 1 = success; 0 = not under Valgrind; 3 = unaddressable (cannot happen for a slice).
        (status == 1).then(|| vbits.iter().filter(|&&v| v != 0).count())
    }
}

/// The NIST DRBG with every output byte classified secret (TIMECOP style).
struct ClassifyingRng(NistDrbg);

impl TryRng for ClassifyingRng {
    type Error = core::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        let mut b = [0u8; 4];
        self.try_fill_bytes(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let mut b = [0u8; 8];
        self.try_fill_bytes(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.0.randombytes(dst);
        valgrind::classify(dst);
        Ok(())
    }
}

impl TryCryptoRng for ClassifyingRng {}

/// Under Valgrind, fails unless every byte of `bytes` depends on the secrets.
fn expect_tainted(what: &str, bytes: &[u8]) {
    match valgrind::tainted_bytes(bytes) {
        Some(tainted) => assert_eq!(
            tainted,
            bytes.len(),
            "{what}: only {tainted} of {} bytes depend on the classified randomness",
            bytes.len()
        ),
        None => assert!(!valgrind::running(), "GET_VBITS request failed"),
    }
}

fn sha3_256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha3_256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// Keygen, encapsulation, decapsulation of a valid and of two tampered ciphertexts, and
/// decapsulation with a key decoded from bytes, all with secrets classified; then the results
/// are declassified and checked.
fn exercise<B: Backend, V: Variant, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    type Kem<V, const L: usize, const MU: usize, const ET: usize> = SaberKem<V, L, MU, ET>;
    let mut rng = ClassifyingRng(NistDrbg::new(&[0xC7; 48]));
    let (dk, ek) = Kem::<V, L, MU, ET>::try_generate_with(backend, &mut rng).unwrap();
    expect_tainted("public key", ek.as_bytes());
    let (ct, ss) = ek.try_encapsulate_with(backend, &mut rng).unwrap();
    expect_tainted("ciphertext", ct.as_bytes());
    expect_tainted("shared secret", ss.as_bytes());
    let decapsulated = dk.decapsulate_with(backend, &ct);
    expect_tainted("decapsulated secret", decapsulated.as_bytes());

    // Tampered ciphertexts (first byte of b', last byte of c_m): implicit rejection.
    let mut tampered = Vec::new();
    let mut rejected = Vec::new();
    for position in [0, ct.as_bytes().len() - 1] {
        let mut bytes = ct.to_bytes();
        bytes.as_mut()[position] ^= 0x01;
        let bad = Ciphertext::<Kem<V, L, MU, ET>>::from_bytes(bytes.as_ref()).unwrap();
        let key = dk.decapsulate_with(backend, &bad);
        expect_tainted("rejection key", key.as_bytes());
        tampered.push(bad);
        rejected.push(key);
    }

    // A key decoded from bytes (decoding itself reveals whether the key is well formed, so it
    // runs on public bytes), classified as a whole struct afterwards.
    let sk_bytes = dk.to_bytes();
    valgrind::declassify(sk_bytes.as_ref());
    let decoded = DecapsulationKey::<Kem<V, L, MU, ET>>::from_bytes(sk_bytes.as_ref()).unwrap();
    // SAFETY: reads nothing; the request only changes Valgrind's shadow state of the struct.
    let decoded_memory = unsafe {
        core::slice::from_raw_parts(
            (&decoded as *const DecapsulationKey<_>).cast::<u8>(),
            size_of_val(&decoded),
        )
    };
    valgrind::classify(decoded_memory);
    let from_decoded = decoded.decapsulate_with(backend, &ct);
    let rejected_by_decoded = decoded.decapsulate_with(backend, &tampered[0]);
    expect_tainted("secret from a decoded key", from_decoded.as_bytes());

    // The computation is over: everything compared from here on is declassified first.
    for bytes in [
        ss.as_bytes(),
        decapsulated.as_bytes(),
        from_decoded.as_bytes(),
    ] {
        valgrind::declassify(bytes);
    }
    valgrind::declassify(rejected_by_decoded.as_bytes());
    valgrind::declassify(ct.as_bytes());
    for (bad, key) in tampered.iter().zip(&rejected) {
        valgrind::declassify(bad.as_bytes());
        valgrind::declassify(key.as_bytes());
    }
    let z = &sk_bytes.as_ref()[sk_bytes.as_ref().len() - 32..];
    assert!(ss == decapsulated, "decapsulation must recover the key");
    assert!(ss == from_decoded, "a decoded key must decapsulate alike");
    for (bad, key) in tampered.iter().zip(&rejected) {
        let want = sha3_256(&[z, &sha3_256(&[bad.as_bytes()])]);
        assert_eq!(key.as_bytes(), &want, "rejection key must be H(z || H(c'))");
        assert!(
            *key != ss,
            "a tampered ciphertext must not give the real key"
        );
    }
    assert!(rejected_by_decoded == rejected[0]);
}

/// The expanded-key paths (A, b, H(pk) and the secret cached in the backend's domain):
/// encapsulation and decapsulation of valid and tampered ciphertexts.
fn exercise_expanded<
    B: PolyMulPublic,
    V: Variant,
    const L: usize,
    const MU: usize,
    const ET: usize,
>(
    backend: &mut B,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let mut rng = ClassifyingRng(NistDrbg::new(&[0xE5; 48]));
    let (dk, ek) = SaberKem::<V, L, MU, ET>::try_generate_with(backend, &mut rng).unwrap();
    let expanded = ExpandedDecapsulationKey::new(backend, &dk);
    let expanded_ek = ExpandedEncapsulationKey::new(backend, &ek);
    let (ct, ss) = expanded_ek.try_encapsulate(backend, &mut rng).unwrap();
    expect_tainted("ciphertext (expanded)", ct.as_bytes());
    let decapsulated = expanded.decapsulate(backend, &ct);
    expect_tainted("decapsulated secret (expanded)", decapsulated.as_bytes());
    let mut bytes = ct.to_bytes();
    bytes.as_mut()[1] ^= 0x80;
    let bad = Ciphertext::<SaberKem<V, L, MU, ET>>::from_bytes(bytes.as_ref()).unwrap();
    let rejected = expanded.decapsulate(backend, &bad);
    expect_tainted("rejection key (expanded)", rejected.as_bytes());

    let sk_bytes = dk.to_bytes();
    for bytes in [ss.as_bytes(), decapsulated.as_bytes(), rejected.as_bytes()] {
        valgrind::declassify(bytes);
    }
    valgrind::declassify(bad.as_bytes());
    valgrind::declassify(sk_bytes.as_ref());
    let z = &sk_bytes.as_ref()[sk_bytes.as_ref().len() - 32..];
    assert!(
        ss == decapsulated,
        "expanded decapsulation must recover the key"
    );
    let want = sha3_256(&[z, &sha3_256(&[bad.as_bytes()])]);
    assert_eq!(rejected.as_bytes(), &want, "expanded rejection key");
}

/// A batch of two key generations, encapsulations and decapsulations (the second ciphertext
/// tampered) on `lanes`, with secrets classified; then the results are declassified and
/// checked (recovered key, rejection key).
fn exercise_batch<V: Variant, const L: usize, const MU: usize, const ET: usize>(lanes: Lanes)
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    type Kem<V, const L: usize, const MU: usize, const ET: usize> = SaberKem<V, L, MU, ET>;
    let mut backend = saber_kem::DefaultPolyMul::default();
    let mut rng = ClassifyingRng(NistDrbg::new(&[0xB4; 48]));
    let seeds: [KeySeeds; 2] = core::array::from_fn(|_| {
        let mut seeds = KeySeeds::default();
        for s in [&mut seeds.seed_a, &mut seeds.seed_s, &mut seeds.z] {
            let Ok(()) = rng.try_fill_bytes(s);
        }
        seeds
    });
    let pairs = Kem::<V, L, MU, ET>::generate_batch_deterministic_with(&mut backend, lanes, &seeds);
    let mut ms = [[0u8; 32]; 2];
    for m in &mut ms {
        let Ok(()) = rng.try_fill_bytes(m);
    }
    let keys = [&pairs[0].1, &pairs[1].1];
    let encapsulated =
        Kem::<V, L, MU, ET>::encapsulate_batch_deterministic_with(&mut backend, lanes, keys, &ms);
    let mut bytes = encapsulated[1].0.to_bytes();
    bytes.as_mut()[0] ^= 0x01;
    let bad = Ciphertext::<Kem<V, L, MU, ET>>::from_bytes(bytes.as_ref()).unwrap();
    let recovered = Kem::<V, L, MU, ET>::decapsulate_batch_with_lanes(
        &mut backend,
        lanes,
        [(&pairs[0].0, &encapsulated[0].0), (&pairs[1].0, &bad)],
    );
    for i in 0..2 {
        expect_tainted("public key (batch)", pairs[i].1.as_bytes());
        expect_tainted("ciphertext (batch)", encapsulated[i].0.as_bytes());
        expect_tainted("shared secret (batch)", encapsulated[i].1.as_bytes());
        expect_tainted("decapsulated secret (batch)", recovered[i].as_bytes());
    }

    // The computation is over: everything compared from here on is declassified first.
    let sk_bytes = pairs[1].0.to_bytes();
    valgrind::declassify(sk_bytes.as_ref());
    valgrind::declassify(bad.as_bytes());
    for i in 0..2 {
        valgrind::declassify(pairs[i].1.as_bytes());
        valgrind::declassify(encapsulated[i].0.as_bytes());
        valgrind::declassify(encapsulated[i].1.as_bytes());
        valgrind::declassify(recovered[i].as_bytes());
    }
    assert!(
        recovered[0] == encapsulated[0].1,
        "batch decapsulation must recover the key"
    );
    let z = &sk_bytes.as_ref()[sk_bytes.as_ref().len() - 32..];
    let want = sha3_256(&[z, &sha3_256(&[bad.as_bytes()])]);
    assert_eq!(recovered[1].as_bytes(), &want, "batch rejection key");
}

/// A selector that branches on the comparison result (the negative control for branches).
struct BranchingSelect;

impl KeySelect for BranchingSelect {
    fn select_into(dst: &mut [u8; 32], src: &[u8; 32], take_src: Choice) {
        if bool::from(take_src) {
            *dst = *src;
        }
    }
}

/// A selector that indexes memory with the comparison result (negative control for loads).
struct IndexingSelect;

impl KeySelect for IndexingSelect {
    fn select_into(dst: &mut [u8; 32], src: &[u8; 32], take_src: Choice) {
        let index = usize::from(take_src.unwrap_u8()) & 1; // `& 1`: no bounds-check branch
        for (d, s) in dst.iter_mut().zip(src) {
            let table = [*d, *s];
            *d = black_box(&table)[index];
        }
    }
}

/// LightSaber with the schoolbook backend and a broken selector; memcheck must report it.
fn broken_selector<S: KeySelect>() {
    let mut backend = saber_kem::polymul::Schoolbook;
    let mut rng = ClassifyingRng(NistDrbg::new(&[0x3C; 48]));
    let (dk, ek) = saber_kem::LightSaber::try_generate_with(&mut backend, &mut rng).unwrap();
    let (ct, _) = ek.try_encapsulate_with(&mut backend, &mut rng).unwrap();
    let ss = dk.decapsulate_with_selector::<_, S>(&mut backend, &ct);
    valgrind::declassify(ss.as_bytes());
    black_box(ss.as_bytes());
}

/// Branches on a shared secret that was never declassified; memcheck must report it.
fn undeclassified_output() {
    let mut backend = saber_kem::polymul::Schoolbook;
    let mut rng = ClassifyingRng(NistDrbg::new(&[0x3C; 48]));
    let (_, ek) = saber_kem::LightSaber::try_generate_with(&mut backend, &mut rng).unwrap();
    let (_, ss) = ek.try_encapsulate_with(&mut backend, &mut rng).unwrap();
    if ss.as_bytes()[0] == 0x42 {
        black_box(1);
    }
}

/// A case: its name, and the message memcheck must print (`None`: it must print nothing).
struct Case {
    name: String,
    expect_report: Option<&'static str>,
}

const SETS: [&str; 6] = [
    "LightSaber",
    "Saber",
    "FireSaber",
    "LightSaber+",
    "Saber+",
    "FireSaber+",
];

/// Without `SABER_CT_FULL=1` (a plain `cargo test`): the negative controls and these sets on
/// every backend, without the low-memory wrapper.
const QUICK_SETS: [&str; 2] = ["/LightSaber", "/LightSaber+"];

const BRANCH_REPORT: &str = "Conditional jump or move depends on uninitialised value";
const INDEX_REPORT: &str = "Use of uninitialised value of size 8";

/// The backends this check runs: the run-time list of this process, less those that do not run
/// under Valgrind (it reports no AVX-512), which are moved to the skipped ones. `valgrind`: the
/// Valgrind binary to ask (it runs `--list-backends` in a child), or `None` to take this
/// process's list as it is.
fn checked_backends(valgrind: Option<&str>) -> Backends {
    let mut backends = Backends::here();
    let Some(valgrind) = valgrind else {
        return backends;
    };
    let exe = std::env::current_exe().expect("test binary path");
    let output = Command::new(valgrind)
        .args(["-q", "--error-exitcode=99"])
        .arg(exe)
        .arg("--list-backends")
        .output()
        .expect("cannot start valgrind");
    assert!(
        output.status.success(),
        "--list-backends under Valgrind failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let under_valgrind = String::from_utf8_lossy(&output.stdout).into_owned();
    let under_valgrind: Vec<&str> = under_valgrind.lines().collect();
    for name in backends.run.clone() {
        if !under_valgrind.contains(&name) {
            backends.skip(name, "Valgrind does not emulate its instructions".into());
        }
    }
    backends
}

fn public_backend_names() -> Vec<&'static str> {
    let mut names = Vec::new();
    macro_rules! push_name {
        ($id:ident, $name:expr, $ctor:expr) => {
            names.push($name);
        };
    }
    support::backends::for_each_public_backend!(push_name);
    names
}

/// The single-state Keccak implementations Valgrind runs (not AVX-512).
fn single_keccak_paths() -> Vec<Single> {
    Single::all()
        .filter(|k| !k.name().contains("avx512"))
        .collect()
}

/// SHA3-512 and a SHAKE128 stream of a secret input on one single-state implementation (what
/// the hash layer runs: the `keccak` crate's permutation, the 32-bit one of 32-bit targets, a
/// state of a four-way one): nothing may branch on the input, every output byte must depend on
/// it.
fn exercise_single(keccak: Single) {
    let secret = [9u8; 200];
    valgrind::classify(&secret);
    let mut digest = [0u8; 64];
    keccak.run(Job::sha3_512_of(
        [&secret[..100], &secret[100..]],
        &mut digest,
    ));
    let mut stream = [0u8; 400];
    keccak.shake128(&[&secret]).read(&mut stream);
    expect_tainted("single digest", &digest);
    expect_tainted("single stream", &stream);
    valgrind::declassify(&digest);
    valgrind::declassify(&stream);
    black_box((&digest, &stream));
}

/// One decapsulation's lane jobs (`keccak::lanes`, what single operations run on AVX-512 CPUs,
/// where Valgrind cannot follow): a public matrix stream, a secret-stream job on a secret seed
/// and H of a secret input, sharing the four lanes. Nothing may branch on the secrets; every
/// byte of the secret jobs' outputs must depend on them.
fn exercise_lanes(keccak: Multi) {
    let public_seed = [3u8; 32];
    let secret_seed = [5u8; 32];
    let secret_message = [7u8; 1088];
    valgrind::classify(&secret_seed);
    valgrind::classify(&secret_message);
    let mut matrix = vec![0u8; 9 * 416];
    let mut stream = [0u8; 768];
    let mut digest = [0u8; 32];
    let jobs = [
        Job {
            function: Function::Shake128,
            input: [&public_seed, &[]],
            output: &mut matrix,
            then: None,
        },
        Job {
            function: Function::Shake128,
            input: [&secret_seed, &[]],
            output: &mut stream,
            then: None,
        },
        Job {
            function: Function::Sha3_256,
            input: [&secret_message, &[]],
            output: &mut digest,
            then: None,
        },
    ];
    keccak.run(jobs);
    expect_tainted("lane secret stream", &stream);
    expect_tainted("lane digest", &digest);
    valgrind::declassify(&stream);
    valgrind::declassify(&digest);
    black_box((&matrix, &stream, &digest));
}

/// The four-way Keccak paths Valgrind runs (not AVX-512, see the module docs).
fn lane_keccak_paths() -> Vec<Multi> {
    Multi::all()
        .filter(|k| !k.name().starts_with("avx512"))
        .collect()
}

/// The lane paths Valgrind runs (not AVX-512, see the module docs): one job at a time, the
/// portable four-way Keccak and the AVX2 one. Batch decapsulation puts secret streams and G of
/// secret messages on the same lanes as public matrix streams and H(c).
fn batch_lane_paths() -> Vec<Lanes> {
    Lanes::all()
        .filter(|lanes| !lanes.name().starts_with("avx512"))
        .collect()
}

/// A lane path's name without spaces, for case names.
fn lane_name(lanes: Lanes) -> String {
    lanes.name().replace(' ', "-")
}

fn run_set_batch(lanes: Lanes, set: &str) {
    match set {
        "LightSaber" => exercise_batch::<Round3, 2, 10, 3>(lanes),
        "Saber" => exercise_batch::<Round3, 3, 8, 4>(lanes),
        "FireSaber" => exercise_batch::<Round3, 4, 6, 6>(lanes),
        "LightSaber+" => exercise_batch::<Plus, 2, 10, 3>(lanes),
        "Saber+" => exercise_batch::<Plus, 3, 8, 4>(lanes),
        "FireSaber+" => exercise_batch::<Plus, 4, 6, 6>(lanes),
        other => panic!("unknown parameter set {other}"),
    }
}

fn cases(backends: &Backends) -> Vec<Case> {
    let mut cases = Vec::new();
    let plain = backends.run.iter().map(|&b| ("", b));
    let low_memory = backends.run.iter().map(|&b| ("low-memory ", b));
    let expanded = public_backend_names().into_iter().map(|b| ("expanded ", b));
    for (kind, backend) in plain.chain(low_memory).chain(expanded) {
        for set in SETS {
            cases.push(Case {
                name: format!("{kind}{backend}/{set}"),
                expect_report: None,
            });
        }
    }
    for path in single_keccak_paths() {
        cases.push(Case {
            name: format!("single keccak-{}/jobs", path.name()),
            expect_report: None,
        });
    }
    for path in lane_keccak_paths() {
        cases.push(Case {
            name: format!("lanes keccak-{}/jobs", path.name()),
            expect_report: None,
        });
    }
    for lanes in batch_lane_paths() {
        for set in SETS {
            cases.push(Case {
                name: format!("batch lanes-{}/{set}", lane_name(lanes)),
                expect_report: None,
            });
        }
    }
    for (name, report) in [
        ("negative/branching-selector", BRANCH_REPORT),
        ("negative/indexing-selector", INDEX_REPORT),
        ("negative/undeclassified-output", BRANCH_REPORT),
    ] {
        cases.push(Case {
            name: name.into(),
            expect_report: Some(report),
        });
    }
    cases
}

fn run_set_expanded<B: PolyMulPublic>(backend: &mut B, set: &str) {
    match set {
        "LightSaber" => exercise_expanded::<B, Round3, 2, 10, 3>(backend),
        "Saber" => exercise_expanded::<B, Round3, 3, 8, 4>(backend),
        "FireSaber" => exercise_expanded::<B, Round3, 4, 6, 6>(backend),
        "LightSaber+" => exercise_expanded::<B, Plus, 2, 10, 3>(backend),
        "Saber+" => exercise_expanded::<B, Plus, 3, 8, 4>(backend),
        "FireSaber+" => exercise_expanded::<B, Plus, 4, 6, 6>(backend),
        other => panic!("unknown parameter set {other}"),
    }
}

fn run_set<B: Backend>(backend: &mut B, set: &str) {
    match set {
        "LightSaber" => exercise::<B, Round3, 2, 10, 3>(backend),
        "Saber" => exercise::<B, Round3, 3, 8, 4>(backend),
        "FireSaber" => exercise::<B, Round3, 4, 6, 6>(backend),
        "LightSaber+" => exercise::<B, Plus, 2, 10, 3>(backend),
        "Saber+" => exercise::<B, Plus, 3, 8, 4>(backend),
        "FireSaber+" => exercise::<B, Plus, 4, 6, 6>(backend),
        other => panic!("unknown parameter set {other}"),
    }
}

/// Runs one case in this process.
fn run_case(name: &str) {
    match name {
        "negative/branching-selector" => return broken_selector::<BranchingSelect>(),
        "negative/indexing-selector" => return broken_selector::<IndexingSelect>(),
        "negative/undeclassified-output" => return undeclassified_output(),
        _ => {}
    }
    let (backend_part, set) = name.split_once('/').expect("case is BACKEND/SET");
    if let Some(path) = backend_part.strip_prefix("single keccak-") {
        let keccak = single_keccak_paths()
            .into_iter()
            .find(|k| k.name() == path)
            .unwrap_or_else(|| panic!("Keccak path {path} not on this CPU"));
        return exercise_single(keccak);
    }
    if let Some(path) = backend_part.strip_prefix("lanes keccak-") {
        let keccak = lane_keccak_paths()
            .into_iter()
            .find(|k| k.name() == path)
            .unwrap_or_else(|| panic!("Keccak path {path} not on this CPU"));
        return exercise_lanes(keccak);
    }
    if let Some(path) = backend_part.strip_prefix("batch lanes-") {
        let lanes = batch_lane_paths()
            .into_iter()
            .find(|lanes| lane_name(*lanes) == path)
            .unwrap_or_else(|| panic!("lane path {path} not on this CPU"));
        return run_set_batch(lanes, set);
    }
    macro_rules! try_backend {
        ($id:ident, $name:expr, $ctor:expr) => {
            if backend_part == $name {
                return run_set(&mut $ctor, set);
            }
            if backend_part.strip_prefix("low-memory ") == Some($name) {
                return run_set(&mut LowMemory($ctor), set);
            }
        };
    }
    let backends = Backends::here();
    support::backends::for_each_backend!(try_backend, backends);
    // A case of a backend this process cannot run fails (it must not pass by exiting 0).
    let backend = backend_part
        .strip_prefix("low-memory ")
        .unwrap_or(backend_part);
    if let Some((_, why)) = backends.skipped.iter().find(|(name, _)| *name == backend) {
        panic!("case {name}: backend {backend} does not run in this process ({why})");
    }
    macro_rules! try_public_backend {
        ($id:ident, $name:expr, $ctor:expr) => {
            if backend_part.strip_prefix("expanded ") == Some($name) {
                return run_set_expanded(&mut $ctor, set);
            }
        };
    }
    support::backends::for_each_public_backend!(try_public_backend);
    panic!("unknown case {name}");
}

/// What a child prints before each of its cases.
const CASE_MARKER: &str = "ct_valgrind case: ";

/// Positive cases per Valgrind process: its start (about 2 s, reading the binary) costs more
/// than a case, so cases share processes; a group that fails is re-run one case at a time, so
/// that the verdicts still name the cases.
const GROUP: usize = 12;

/// Runs `cases` under Valgrind, in groups of [`GROUP`] positive cases (each negative control in
/// a process of its own) on `workers` processes at a time; the verdicts, in the order of
/// `cases`.
fn check_all_under_valgrind(
    valgrind: &str,
    cases: &[Case],
    workers: usize,
) -> Vec<Result<(), String>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (at, case) in cases.iter().enumerate() {
        match groups.last_mut() {
            Some(group)
                if case.expect_report.is_none()
                    && group.len() < GROUP
                    && cases[group[0]].expect_report.is_none() =>
            {
                group.push(at)
            }
            _ => groups.push(vec![at]),
        }
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let verdicts = std::sync::Mutex::new(vec![Ok(()); cases.len()]);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(group) =
                    groups.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    let members: Vec<&Case> = group.iter().map(|&at| &cases[at]).collect();
                    let mut results = vec![check_under_valgrind(valgrind, &members)];
                    if results[0].is_err() && members.len() > 1 {
                        let alone: Vec<_> = members
                            .iter()
                            .map(|&case| check_under_valgrind(valgrind, &[case]))
                            .collect();
                        // A report that only shows in the group (one case reading what another
                        // left) fails every case of it.
                        if alone.iter().any(Result::is_err) {
                            results = alone;
                        }
                    }
                    let mut verdicts = verdicts.lock().unwrap();
                    for (i, &at) in group.iter().enumerate() {
                        verdicts[at] = results[i.min(results.len() - 1)].clone();
                    }
                }
            });
        }
    });
    verdicts.into_inner().unwrap()
}

/// Runs `cases` (positive ones, or one negative control) in one process under Valgrind and
/// checks the verdict; returns an error description.
fn check_under_valgrind(valgrind: &str, cases: &[&Case]) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let names = cases.iter().map(|case| case.name.as_str());
    let output = Command::new(valgrind)
        .args([
            "-q",
            "--error-exitcode=99",
            "--track-origins=yes",
            "--leak-check=no",
            "--num-callers=40",
        ])
        .arg(exe)
        .arg("--child")
        .args(names)
        .output()
        .map_err(|e| format!("cannot start {valgrind}: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let code = output.status.code();
    let ran = stderr.matches(CASE_MARKER).count();
    if ran != cases.len() {
        return Err(format!(
            "{ran} of {} cases started, exit {code:?}:\n{stderr}",
            cases.len()
        ));
    }
    let stderr = stderr
        .lines()
        .filter(|line| !line.starts_with(CASE_MARKER))
        .collect::<Vec<_>>()
        .join("\n");
    match cases[0].expect_report {
        None if code == Some(0) && !stderr.contains("==") => Ok(()),
        None => Err(format!("exit {code:?}, memcheck said:\n{stderr}")),
        Some(report) if code == Some(99) && stderr.contains(report) => Ok(()),
        Some(report) => Err(format!(
            "expected a report \"{report}\" (exit 99), got exit {code:?}:\n{stderr}"
        )),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        println!("ct_valgrind: test");
        return ExitCode::SUCCESS;
    }
    if let [flag, names @ ..] = args.as_slice()
        && flag == "--child"
    {
        for name in names {
            // The marker before each case: a memcheck report belongs to the case above it.
            eprintln!("{CASE_MARKER}{name}");
            run_case(name);
        }
        return ExitCode::SUCCESS;
    }
    if let [flag] = args.as_slice()
        && flag == "--list-backends"
    {
        for name in Backends::here().run {
            println!("{name}");
        }
        return ExitCode::SUCCESS;
    }

    let filter = std::env::var("SABER_CT_FILTER").unwrap_or_default();
    let filters: Vec<&str> = filter.split(',').collect();
    let full = std::env::var("SABER_CT_FULL").as_deref() == Ok("1");
    let valgrind = std::env::var("VALGRIND").unwrap_or_else(|_| "valgrind".into());
    let available = !valgrind::running()
        && Command::new(&valgrind)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    let backends = checked_backends(available.then_some(valgrind.as_str()));
    println!("ct_valgrind: instruction-set cap {:?}", isa_cap());
    backends.report();
    let selected: Vec<Case> = cases(&backends)
        .into_iter()
        .filter(|c| filters.iter().any(|f| c.name.contains(f)))
        .filter(|c| {
            full || c.expect_report.is_some()
                || c.name.starts_with("lanes ")
                || c.name.starts_with("single ")
                || QUICK_SETS.iter().any(|s| c.name.ends_with(s))
        })
        .filter(|c| full || !c.name.starts_with("low-memory "))
        .collect();

    if valgrind::running() {
        // Started under a Valgrind runner: run the positive cases in this process (the
        // negative controls need a process of their own each).
        for case in selected.iter().filter(|c| c.expect_report.is_none()) {
            run_case(&case.name);
            println!("ok (in-process) {}", case.name);
        }
        return ExitCode::SUCCESS;
    }

    if !available {
        if std::env::var("SABER_CT_REQUIRE_VALGRIND").as_deref() == Ok("1") {
            eprintln!("ct_valgrind: `{valgrind}` not found but SABER_CT_REQUIRE_VALGRIND=1");
            return ExitCode::FAILURE;
        }
        // Still exercise the code natively so that the test binary never rots.
        for case in selected.iter().filter(|c| c.expect_report.is_none()) {
            run_case(&case.name);
        }
        println!("ct_valgrind: valgrind not found; ran the cases natively without checking");
        return ExitCode::SUCCESS;
    }

    // Debug builds carry overflow checks and debug assertions (in `subtle` and in this crate)
    // that branch on secret-derived values; their direction never depends on the secrets, but
    // memcheck reports them. There only the negative controls run under Valgrind.
    let release = !cfg!(debug_assertions);
    let (mut passed, mut failed) = (0, 0);
    if !release {
        for case in selected.iter().filter(|c| c.expect_report.is_none()) {
            run_case(&case.name);
            println!("native {} (debug build: not checked)", case.name);
        }
    }
    let checked: Vec<Case> = selected
        .into_iter()
        .filter(|c| release || c.expect_report.is_some())
        .collect();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let verdicts = check_all_under_valgrind(&valgrind, &checked, workers);
    for (case, verdict) in checked.iter().zip(verdicts) {
        match verdict {
            Ok(()) => {
                passed += 1;
                println!("ok   {}", case.name);
            }
            Err(why) => {
                failed += 1;
                println!("FAIL {}: {why}", case.name);
            }
        }
    }
    if !release {
        println!("ct_valgrind: debug build; the constant-time check needs --release (.ci/ct.sh)");
        if std::env::var("SABER_CT_REQUIRE_VALGRIND").as_deref() == Ok("1") {
            return ExitCode::FAILURE;
        }
    }
    println!("ct_valgrind: {passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
