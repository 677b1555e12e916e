//! The lane runner of the multi-way Keccak against the `sha3`/`shake` crates on every path, and
//! the batch API against one-at-a-time calls: all NIST KAT records through the batch path (both
//! through the seeded entry points and through an RNG; per backend, and per Keccak path, each
//! path constructed explicitly), property tests for batch sizes that leave partial groups, and
//! implicit rejection.

mod support;

use proptest::prelude::*;
use saber_kem::batch::KeySeeds;
use saber_kem::keccak::{Function, Job, Multi, Single};
use saber_kem::{Ciphertext, ParameterSet, Plus, PolyMul, Round3, SaberKem, Variant};
use sha3::Digest;
use shake::{ExtendableOutput, Update, XofReader};
use support::drbg::{NistDrbg, kat_seeds};
use support::kat::check;

/// Every multi-way implementation this CPU runs.
fn keccak_paths() -> Vec<Multi> {
    Multi::all().collect()
}

/// The fastest multi-way Keccak: eight-way on AVX-512, else the vector four-way one, else the
/// portable four-way one (what the batch API's default is, but for the last, which it runs one
/// job at a time).
fn default_keccak() -> Multi {
    Multi::x8()
        .or_else(Multi::x4)
        .or_else(|| Multi::all().next())
        .expect("the portable four-way permutation exists on every target")
}

#[cfg(target_arch = "x86_64")]
#[test]
fn the_vector_paths_are_tested_on_machines_that_have_them() {
    use saber_kem::{Isa, isa_cap};
    // Within the instruction-set cap (`--cfg saber_isa`), which no test here changes.
    let avx2 = std::is_x86_feature_detected!("avx2") && isa_cap() >= Isa::Avx2;
    let avx512 = std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512vl")
        && isa_cap() >= Isa::Avx512;
    let names: Vec<&str> = Multi::all().map(Multi::name).collect();
    assert_eq!(names.contains(&"avx2"), avx2);
    assert_eq!(names.contains(&"avx512"), avx512);
    assert_eq!(Multi::x8().is_some(), avx512);
    if avx512 {
        assert_eq!(Multi::x4().map(Multi::name), Some("avx512"));
        assert_eq!(Multi::x8().map(Multi::name), Some("avx512x8"));
        assert_eq!(Single::fastest().name(), "x4-avx512");
    } else if avx2 {
        assert_eq!(Multi::x4().map(Multi::name), Some("avx2"));
        assert_eq!(Single::fastest().name(), "crates");
    } else {
        assert_eq!(Multi::x4().map(Multi::name), None);
    }
}

/// What the `sha3`/`shake` crates say `function` of `input` is, `len` bytes of it.
fn reference(function: Function, input: &[u8], len: usize) -> Vec<u8> {
    match function {
        Function::Shake128 => {
            let mut xof = shake::Shake128::default();
            xof.update(input);
            let mut out = vec![0; len];
            xof.finalize_xof().read(&mut out);
            out
        }
        Function::Sha3_256 => sha3::Sha3_256::digest(input).to_vec(),
        Function::Sha3_512 => sha3::Sha3_512::digest(input).to_vec(),
    }
}

fn function() -> impl Strategy<Value = Function> {
    prop_oneof![
        Just(Function::Shake128),
        Just(Function::Sha3_256),
        Just(Function::Sha3_512)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any number of jobs (fewer or more than the lanes), any mix of functions, input lengths
    /// around the rates, two-part inputs and output lengths, on every path and one at a time.
    #[test]
    fn lane_jobs_match_the_crates(
        jobs in prop::collection::vec(
            (function(), 0usize..400, 0usize..200, 0usize..700),
            0..20,
        ),
        data in prop::collection::vec(any::<u8>(), 600),
    ) {
        let output_len = |function, len| match function {
            Function::Shake128 => len,
            Function::Sha3_256 => 32,
            Function::Sha3_512 => 64,
        };
        let mut runs: Vec<Option<Multi>> = keccak_paths().into_iter().map(Some).collect();
        runs.push(None);
        for keccak in runs {
            let mut outputs: Vec<Vec<u8>> = jobs
                .iter()
                .map(|&(function, _, _, len)| vec![0; output_len(function, len)])
                .collect();
            let list = jobs.iter().zip(outputs.iter_mut()).map(|(&(function, head, tail, _), out)| {
                Job {
                    function,
                    input: [&data[..head], &data[head..head + tail]],
                    output: out,
                }
            });
            match keccak {
                Some(keccak) => keccak.run(list),
                None => list.for_each(|job| Single::fastest().run(job)),
            }
            let name = keccak.map_or("one by one", |k| k.name());
            for (&(function, head, tail, len), out) in jobs.iter().zip(&outputs) {
                let want = reference(function, &data[..head + tail], output_len(function, len));
                prop_assert_eq!(out, &want, "{} {:?} {}+{}", name, function, head, tail);
            }
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// One `.rsp` record, formatted as `support::kat::record` does.
fn record_text(
    count: usize,
    seed: &[u8; 48],
    pk: &[u8],
    sk: &[u8],
    ct: &[u8],
    ss: &[u8],
) -> String {
    format!(
        "count = {count}\nseed = {}\npk = {}\nsk = {}\nct = {}\nss = {}\n\n",
        hex(seed),
        hex(pk),
        hex(sk),
        hex(ct),
        hex(ss)
    )
}

/// Per-record DRBG draws in the KAT generator's order: seed_A, seed_s, z, then m.
fn kat_draws(seed: &[u8; 48]) -> (KeySeeds, [u8; 32]) {
    let mut rng = NistDrbg::new(seed);
    let mut seeds = KeySeeds::default();
    rng.randombytes(&mut seeds.seed_a);
    rng.randombytes(&mut seeds.seed_s);
    rng.randombytes(&mut seeds.z);
    let mut m = [0u8; 32];
    rng.randombytes(&mut m);
    (seeds, m)
}

/// Records per batch in the KAT tests.
const KAT_BATCH: usize = 10;

/// All 100 records, ten per batch (a full group of eight and a partial one), through the seeded batch entry points with the given
/// Keccak; decapsulation through the batch path too.
fn kat_records_seeded<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    keccak: Multi,
) -> Vec<String>
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let seeds = kat_seeds();
    let mut records = Vec::new();
    for (group, chunk) in seeds.chunks(KAT_BATCH).enumerate() {
        let draws: [(KeySeeds, [u8; 32]); KAT_BATCH] =
            core::array::from_fn(|i| kat_draws(&chunk[i]));
        let key_seeds = draws.each_ref().map(|d| d.0.clone());
        let ms = draws.each_ref().map(|d| d.1);
        let pairs = SaberKem::<V, L, MU, ET>::generate_batch_deterministic_with(
            backend, keccak, &key_seeds,
        );
        let encapsulated = SaberKem::<V, L, MU, ET>::encapsulate_batch_deterministic_with(
            backend,
            keccak,
            pairs.each_ref().map(|p| &p.1),
            &ms,
        );
        let recovered = SaberKem::<V, L, MU, ET>::decapsulate_batch_with_keccak::<_, KAT_BATCH>(
            backend,
            keccak,
            core::array::from_fn(|i| (&pairs[i].0, &encapsulated[i].0)),
        );
        for i in 0..KAT_BATCH {
            assert_eq!(
                recovered[i],
                encapsulated[i].1,
                "batch decapsulation, record {}",
                KAT_BATCH * group + i
            );
            records.push(record_text(
                KAT_BATCH * group + i,
                &chunk[i],
                pairs[i].1.as_bytes(),
                pairs[i].0.to_bytes().as_ref(),
                encapsulated[i].0.as_bytes(),
                encapsulated[i].1.as_bytes(),
            ));
        }
    }
    records
}

/// Hands each operation's draws to its own record's DRBG: the first `per_operation` calls go
/// to DRBG 0, the next ones to DRBG 1, … — the documented draw order of the batch API.
struct RoundRobin {
    drbgs: Vec<NistDrbg>,
    per_operation: usize,
    calls: usize,
}

impl rand_core::TryRng for RoundRobin {
    type Error = core::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        unimplemented!("the KEM draws byte strings")
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        unimplemented!("the KEM draws byte strings")
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        assert_eq!(dst.len(), 32, "the KEM draws 32 bytes per call");
        let operation = self.calls / self.per_operation;
        self.drbgs[operation].randombytes(dst);
        self.calls += 1;
        Ok(())
    }
}

impl rand_core::TryCryptoRng for RoundRobin {}

/// All 100 records, ten per batch, through the RNG entry points.
fn kat_records_rng<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
) -> Vec<String>
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let seeds = kat_seeds();
    let mut records = Vec::new();
    for (group, chunk) in seeds.chunks(KAT_BATCH).enumerate() {
        let mut rng = RoundRobin {
            drbgs: chunk.iter().map(NistDrbg::new).collect(),
            per_operation: 3,
            calls: 0,
        };
        let Ok(pairs) =
            SaberKem::<V, L, MU, ET>::try_generate_batch_with::<_, KAT_BATCH, _>(backend, &mut rng);
        assert_eq!(rng.calls, 3 * KAT_BATCH);
        rng.per_operation = 1;
        rng.calls = 0;
        let Ok(encapsulated) = SaberKem::<V, L, MU, ET>::try_encapsulate_batch_with(
            backend,
            pairs.each_ref().map(|p| &p.1),
            &mut rng,
        );
        for i in 0..KAT_BATCH {
            records.push(record_text(
                KAT_BATCH * group + i,
                &chunk[i],
                pairs[i].1.as_bytes(),
                pairs[i].0.to_bytes().as_ref(),
                encapsulated[i].0.as_bytes(),
                encapsulated[i].1.as_bytes(),
            ));
        }
    }
    records
}

/// Per backend: every record through the seeded batch entry points (and batch decapsulation).
macro_rules! batch_kats {
    ($backend:ident, $name:expr, $ctor:expr) => {
        mod $backend {
            use super::*;

            macro_rules! one_set {
                ($test:ident, $alias:ident, $v:ty, $l:literal, $mu:literal, $et:literal) => {
                    #[test]
                    fn $test() {
                        let mut backend = $ctor;
                        check::<saber_kem::$alias>(
                            &format!("{} (batch, seeded)", $name),
                            &kat_records_seeded::<$v, _, $l, $mu, $et>(
                                &mut backend,
                                default_keccak(),
                            ),
                        );
                    }
                };
            }

            crate::support::for_each_set!(one_set);
        }
    };
}

/// With the default backend: every record through each Keccak path this CPU runs, each
/// constructed explicitly (the per-backend tests take the fastest one).
mod keccak_path_kats {
    use super::*;

    macro_rules! one_set {
        ($test:ident, $alias:ident, $v:ty, $l:literal, $mu:literal, $et:literal) => {
            #[test]
            fn $test() {
                let mut backend = saber_kem::DefaultPolyMul::default();
                for keccak in keccak_paths() {
                    check::<saber_kem::$alias>(
                        &format!("default (batch, seeded, Keccak {})", keccak.name()),
                        &kat_records_seeded::<$v, _, $l, $mu, $et>(&mut backend, keccak),
                    );
                }
            }
        };
    }

    crate::support::for_each_set!(one_set);
}

/// Once (the draw order does not depend on the backend): every record through the RNG entry
/// points, each record's DRBG serving its operation's draws.
mod rng_draw_order {
    use super::*;

    macro_rules! one_set {
        ($test:ident, $alias:ident, $v:ty, $l:literal, $mu:literal, $et:literal) => {
            #[test]
            fn $test() {
                let mut backend = saber_kem::DefaultPolyMul::default();
                check::<saber_kem::$alias>(
                    "default (batch, RNG)",
                    &kat_records_rng::<$v, _, $l, $mu, $et>(&mut backend),
                );
            }
        };
    }

    crate::support::for_each_set!(one_set);
}

support::backends::for_each_backend!(batch_kats);

/// A batch of `N` from `bytes` (96 bytes of key seeds and 32 of m per operation) against `N`
/// one-at-a-time calls, and batch decapsulation of the ciphertexts (byte `tamper[i]` flipped
/// when odd) against the single call.
fn batch_equals_single<
    V: Variant,
    const L: usize,
    const MU: usize,
    const ET: usize,
    const N: usize,
>(
    bytes: &[u8],
    tamper: &[u16],
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    type Kem<V, const L: usize, const MU: usize, const ET: usize> = SaberKem<V, L, MU, ET>;
    let take32 = |at: usize| -> [u8; 32] { bytes[at..at + 32].try_into().unwrap() };
    let seeds: [KeySeeds; N] = core::array::from_fn(|i| KeySeeds {
        seed_a: take32(128 * i),
        seed_s: take32(128 * i + 32),
        z: take32(128 * i + 64),
    });
    let ms: [[u8; 32]; N] = core::array::from_fn(|i| take32(128 * i + 96));
    let mut backend = saber_kem::DefaultPolyMul::default();
    let keccak = default_keccak();
    let pairs =
        Kem::<V, L, MU, ET>::generate_batch_deterministic_with(&mut backend, keccak, &seeds);
    let encapsulated = Kem::<V, L, MU, ET>::encapsulate_batch_deterministic_with(
        &mut backend,
        keccak,
        pairs.each_ref().map(|p| &p.1),
        &ms,
    );
    let cts: [Ciphertext<Kem<V, L, MU, ET>>; N] = core::array::from_fn(|i| {
        let mut ct = encapsulated[i].0.to_bytes();
        let len = ct.as_ref().len();
        if tamper[i] & 1 == 1 {
            ct.as_mut()[usize::from(tamper[i] >> 1) % len] ^= 0x10;
        }
        Ciphertext::from_bytes(ct.as_ref()).unwrap()
    });
    let recovered = Kem::<V, L, MU, ET>::decapsulate_batch_with::<_, N>(
        &mut backend,
        core::array::from_fn(|i| (&pairs[i].0, &cts[i])),
    );
    for i in 0..N {
        let (dk, ek) = Kem::<V, L, MU, ET>::generate_deterministic_with(
            &mut backend,
            &seeds[i].seed_a,
            &seeds[i].seed_s,
            &seeds[i].z,
        );
        assert_eq!(ek, pairs[i].1, "public key {i} of {N}");
        assert!(dk == pairs[i].0, "secret key {i} of {N}");
        let (ct, ss) = ek.encapsulate_deterministic_with(&mut backend, &ms[i]);
        assert_eq!(ct, encapsulated[i].0, "ciphertext {i} of {N}");
        assert_eq!(ss, encapsulated[i].1, "shared secret {i} of {N}");
        assert_eq!(
            dk.decapsulate_with(&mut backend, &cts[i]),
            recovered[i],
            "decapsulation {i} of {N}"
        );
        assert_eq!(
            recovered[i] == ss,
            tamper[i] & 1 == 0,
            "rejection {i} of {N}"
        );
    }
}

macro_rules! batch_properties {
    ($($test:ident: $v:ty, $l:literal, $mu:literal, $et:literal;)*) => {
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(6))]
            $(
                #[test]
                fn $test(
                    bytes in prop::collection::vec(any::<u8>(), 128 * 9),
                    tamper in prop::collection::vec(any::<u16>(), 9),
                ) {
                    // Sizes 1, 3 and 9 leave partial groups of eight (idle lanes, single
                    // hashes), 8 is one whole group.
                    batch_equals_single::<$v, $l, $mu, $et, 1>(&bytes, &tamper);
                    batch_equals_single::<$v, $l, $mu, $et, 3>(&bytes, &tamper);
                    batch_equals_single::<$v, $l, $mu, $et, 8>(&bytes, &tamper);
                    batch_equals_single::<$v, $l, $mu, $et, 9>(&bytes, &tamper);
                }
            )*
        }
    };
}

batch_properties! {
    lightsaber_batches_equal_single_calls: Round3, 2, 10, 3;
    saber_batches_equal_single_calls: Round3, 3, 8, 4;
    firesaber_batches_equal_single_calls: Round3, 4, 6, 6;
    lightsaber_plus_batches_equal_single_calls: Plus, 2, 10, 3;
    saber_plus_batches_equal_single_calls: Plus, 3, 8, 4;
    firesaber_plus_batches_equal_single_calls: Plus, 4, 6, 6;
}

#[test]
fn an_empty_batch_is_empty() {
    let pairs: [_; 0] = saber_kem::Saber::generate_batch(&mut NistDrbg::new(&[0; 48]));
    assert!(pairs.is_empty());
}

#[test]
fn the_default_entry_points_draw_like_single_calls() {
    // Ten: a whole group of eight, then a partial one.
    let pairs = saber_kem::SaberPlus::generate_batch::<10>(&mut NistDrbg::new(&[7; 48]));
    let mut rng = NistDrbg::new(&[7; 48]);
    for (dk, ek) in &pairs {
        let (dk1, ek1) = saber_kem::SaberPlus::generate(&mut rng);
        assert_eq!(&ek1, ek);
        assert!(&dk1 == dk);
    }
    let keys = [0, 2, 0, 9, 8, 7, 6, 5, 4, 3].map(|i| &pairs[i].1);
    let encapsulated = saber_kem::SaberPlus::encapsulate_batch(keys, &mut NistDrbg::new(&[8; 48]));
    let mut rng = NistDrbg::new(&[8; 48]);
    for (key, (ct, ss)) in keys.iter().zip(&encapsulated) {
        let (ct1, ss1) = key.encapsulate(&mut rng);
        assert_eq!(&ct1, ct);
        assert_eq!(&ss1, ss);
    }
    let recovered = saber_kem::SaberPlus::decapsulate_batch([
        (&pairs[0].0, &encapsulated[0].0),
        (&pairs[2].0, &encapsulated[1].0),
        (&pairs[1].0, &encapsulated[2].0), // wrong key: implicit rejection
    ]);
    assert_eq!(recovered[0], encapsulated[0].1);
    assert_eq!(recovered[1], encapsulated[1].1);
    assert_eq!(recovered[2], pairs[1].0.decapsulate(&encapsulated[2].0));
    assert_ne!(recovered[2], encapsulated[2].1);
}

/// An RNG that fails on call `fail_at` (counting from 0).
struct FailingRng {
    calls: usize,
    fail_at: usize,
}

#[derive(Debug)]
struct RngFailure;

impl core::fmt::Display for RngFailure {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("RNG failure")
    }
}

impl core::error::Error for RngFailure {}

impl rand_core::TryRng for FailingRng {
    type Error = RngFailure;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        unimplemented!("the KEM draws byte strings")
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        unimplemented!("the KEM draws byte strings")
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.calls += 1;
        if self.calls > self.fail_at {
            return Err(RngFailure);
        }
        dst.fill(0x5A);
        Ok(())
    }
}

impl rand_core::TryCryptoRng for FailingRng {}

/// An RNG failure in any group (the first, or the partial second one) is returned, and nothing
/// is drawn after it.
#[test]
fn rng_failures_are_returned() {
    let mut backend = saber_kem::polymul::DefaultPolyMul::default();
    for fail_at in [0, 5, 3 * 8, 3 * 10 - 1] {
        let mut rng = FailingRng { calls: 0, fail_at };
        let result = saber_kem::Saber::try_generate_batch_with::<_, 10, _>(&mut backend, &mut rng);
        assert!(result.is_err(), "key generation, failure at draw {fail_at}");
        assert_eq!(rng.calls, fail_at + 1);
    }
    let mut rng = FailingRng {
        calls: 0,
        fail_at: usize::MAX,
    };
    let Ok(pairs) = saber_kem::Saber::try_generate_batch_with::<_, 10, _>(&mut backend, &mut rng)
    else {
        panic!("no failure expected");
    };
    for fail_at in [0, 7, 8, 9] {
        let mut rng = FailingRng { calls: 0, fail_at };
        let keys = pairs.each_ref().map(|p| &p.1);
        let result = saber_kem::Saber::try_encapsulate_batch_with(&mut backend, keys, &mut rng);
        assert!(result.is_err(), "encapsulation, failure at draw {fail_at}");
        assert_eq!(rng.calls, fail_at + 1);
    }
}
