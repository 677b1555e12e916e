//! The batch API against one-at-a-time calls: all NIST KAT records through the batch path (both
//! through the seeded entry points and through an RNG; per backend, and per lane path, each path
//! chosen explicitly), property tests for batch sizes that leave partial groups, and implicit
//! rejection. (The lane runner itself is tested against the `sha3`/`shake` crates in the crate's
//! unit tests.)

use crate::support;

use proptest::prelude::*;
use saber_kem::batch::{KeySeeds, Lanes};
use saber_kem::{
    Ciphertext, Nineties, ParameterSet, Plus, PolyMul, Round3, SaberKem, Symmetric, Uniform,
    UniformNineties, Variant,
};
use support::drbg::{NistDrbg, kat_seeds};
use support::kat::check;

/// Every lane path this CPU runs must be among those tested.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_vector_paths_are_tested_on_machines_that_have_them() {
    use saber_kem::hazmat::{Isa, isa_cap};
    let names: Vec<&str> = Lanes::all().map(|lanes| lanes.name()).collect();
    assert!(names.contains(&"one at a time") && names.contains(&"portable"));
    // Within the instruction-set cap (`--cfg saber_isa`, CI's capped levels), which no test
    // here changes.
    let avx2 = std::is_x86_feature_detected!("avx2") && isa_cap() >= Isa::Avx2;
    let avx512 = std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512vl")
        && isa_cap() >= Isa::Avx512;
    assert_eq!(avx2, names.contains(&"avx2"));
    assert_eq!(
        avx512,
        names.contains(&"avx512") && names.contains(&"avx512x8")
    );
    let fastest = Lanes::fastest().name();
    if avx512 {
        assert_eq!(fastest, "avx512x8");
    } else if avx2 {
        assert_eq!(fastest, "avx2");
    } else {
        assert_eq!(fastest, "one at a time");
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
    lanes: Lanes,
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
        let pairs =
            SaberKem::<V, L, MU, ET>::generate_batch_deterministic_with(backend, lanes, &key_seeds);
        let encapsulated = SaberKem::<V, L, MU, ET>::encapsulate_batch_deterministic_with(
            backend,
            lanes,
            pairs.each_ref().map(|p| &p.1),
            &ms,
        );
        let recovered = SaberKem::<V, L, MU, ET>::decapsulate_batch_with_lanes::<_, KAT_BATCH>(
            backend,
            lanes,
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
                                Lanes::fastest(),
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
mod lane_path_kats {
    use super::*;

    macro_rules! one_set {
        ($test:ident, $alias:ident, $v:ty, $l:literal, $mu:literal, $et:literal) => {
            #[test]
            fn $test() {
                let mut backend = saber_kem::DefaultPolyMul::default();
                // The 90s sets have no lanes: every choice is the same path, run once.
                let paths = match <$v as Variant>::SYMMETRIC {
                    Symmetric::Sha3 => usize::MAX,
                    Symmetric::Sha2Aes => 1,
                };
                for lanes in Lanes::all().take(paths) {
                    check::<saber_kem::$alias>(
                        &format!("default (batch, seeded, lanes {})", lanes.name()),
                        &kat_records_seeded::<$v, _, $l, $mu, $et>(&mut backend, lanes),
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
    let lanes = Lanes::fastest();
    let pairs = Kem::<V, L, MU, ET>::generate_batch_deterministic_with(&mut backend, lanes, &seeds);
    let encapsulated = Kem::<V, L, MU, ET>::encapsulate_batch_deterministic_with(
        &mut backend,
        lanes,
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
        assert_eq!(
            pairs[i].0.to_seed().as_deref(),
            dk.to_seed().as_deref(),
            "seed of key {i} of {N}"
        );
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
    lightsaber_90s_batches_equal_single_calls: Nineties, 2, 10, 3;
    saber_90s_batches_equal_single_calls: Nineties, 3, 8, 4;
    firesaber_90s_batches_equal_single_calls: Nineties, 4, 6, 6;
    ulightsaber_batches_equal_single_calls: Uniform, 2, 10, 3;
    usaber_batches_equal_single_calls: Uniform, 3, 8, 4;
    ufiresaber_batches_equal_single_calls: Uniform, 4, 6, 6;
    ulightsaber_90s_batches_equal_single_calls: UniformNineties, 2, 10, 3;
    usaber_90s_batches_equal_single_calls: UniformNineties, 3, 8, 4;
    ufiresaber_90s_batches_equal_single_calls: UniformNineties, 4, 6, 6;
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
