#![allow(missing_docs)]
//! Multi-way Keccak and the batch API against single operations.
//!
//! `cargo bench --bench batch` (filter with e.g. `-- 'batch/Saber/'` or `-- keccak`).
//!
//! Groups:
//! - `keccak`: one multi-way permutation per path (four states; eight for `avx512x8`), and
//!   3744 bytes of SHAKE128 (Saber's matrix) in as many streams at a time through the lane
//!   runner, against one stream from the `shake` crate.
//! - `batch/<set>`: `keygen|encaps|decaps` × `single|batch1|batch8`, per backend. A batch of one
//!   differs from a single operation by the batch path's packed matrix (A squeezed whole, then
//!   unpacked entry by entry), by not sharing lanes between its own streams and, for Saber+, by
//!   its matrix entries squeezed eight at a time. Throughput is set to the number of operations,
//!   so criterion's `thrpt` line is operations per second and its time is for the whole batch.
//!
//! `BATCH_RATIOS=1 cargo bench --bench batch` instead prints a table of per-operation times and
//! ratios for the default backend, measured in interleaved rounds (single, batch of eight, batch
//! of one, then again; `BATCH_ROUNDS`, default 9), which keeps ratios meaningful on a shared
//! machine where load changes over a run; the table shows the best round of each cell
//! (contention only adds time), as `docs/anchors.md` §4 does. `BATCH_BACKEND=<name>`
//! picks another backend of `tests/support/backends.rs`, `BATCH_SETS=Saber,Saber+` some sets,
//! `BATCH_KECCAK=avx512|avx2|portable` a four-way Keccak instead of the fastest multi-way one
//! (through the `hazmat` entry points, which take it as an argument).
//!
//! Time is the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID` on Linux, wall time
//! elsewhere): the development machine is shared, and CPU time leaves out the time the thread
//! waits for a core. Set `BATCH_BENCH_WALL=1` for wall time.

#[path = "../tests/support/backends.rs"]
mod backends;

use std::convert::Infallible;
use std::hint::black_box;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{Criterion, Throughput, criterion_group};
use rand_core::{TryCryptoRng, TryRng};
use saber_kem::batch::KeySeeds;
use saber_kem::batch::Lanes;
use saber_kem::hazmat::keccak::{Function, Job, Multi, Single};
use saber_kem::{ParameterSet, PolyMul, SaberKem, Variant};
use shake::{ExtendableOutput, Update, XofReader};

/// Thread CPU time in nanoseconds (wall time where unavailable or when asked for).
struct ThreadTime {
    wall: WallTime,
    use_wall: bool,
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
#[allow(unsafe_code)]
mod clock {
    #[repr(C)]
    struct Timespec {
        seconds: i64,
        nanoseconds: i64,
    }

    unsafe extern "C" {
        fn clock_gettime(clock: i32, out: *mut Timespec) -> i32;
    }

    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

    pub fn thread_cpu_ns() -> Option<u64> {
        let mut now = Timespec {
            seconds: 0,
            nanoseconds: 0,
        };
        // SAFETY: `now` is a valid, writable timespec (two 64-bit fields on 64-bit Linux).
        let status = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut now) };
        (status == 0).then(|| now.seconds as u64 * 1_000_000_000 + now.nanoseconds as u64)
    }
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
mod clock {
    pub fn thread_cpu_ns() -> Option<u64> {
        None
    }
}

impl ThreadTime {
    fn new() -> Self {
        let use_wall =
            std::env::var_os("BATCH_BENCH_WALL").is_some() || clock::thread_cpu_ns().is_none();
        Self {
            wall: WallTime,
            use_wall,
        }
    }

    fn now(&self) -> u64 {
        if self.use_wall {
            use std::sync::OnceLock;
            static ORIGIN: OnceLock<std::time::Instant> = OnceLock::new();
            ORIGIN
                .get_or_init(std::time::Instant::now)
                .elapsed()
                .as_nanos() as u64
        } else {
            clock::thread_cpu_ns().unwrap_or(0)
        }
    }
}

impl Measurement for ThreadTime {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        self.now()
    }
    fn end(&self, start: u64) -> u64 {
        self.now().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        // Values are nanoseconds, as for wall time.
        self.wall.formatter()
    }
}

/// SplitMix64: fast and deterministic; benchmarks only.
struct BenchRng(u64);

impl TryRng for BenchRng {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.try_next_u64()? as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Ok(z ^ (z >> 31))
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let word = self.try_next_u64()?.to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
        Ok(())
    }
}
impl TryCryptoRng for BenchRng {}

type Crit = Criterion<ThreadTime>;

/// Operations per batch: one group of the batch API.
const BATCH: usize = 8;

/// Every multi-way Keccak path on this CPU.
fn keccak_paths() -> Vec<Multi> {
    Multi::all().collect()
}

/// Permutations per measured iteration of the `f1600` benchmarks: the states are converted to
/// and from each implementation's layout once per iteration.
const PERMUTATIONS: usize = 64;

fn keccak(c: &mut Crit) {
    let mut group = c.benchmark_group("keccak");
    for k in keccak_paths() {
        let streams = k.ways();
        let mut states = [[0u64; 25]; 8];
        group.throughput(Throughput::Elements((PERMUTATIONS * streams) as u64));
        group.bench_function(format!("f1600/{}", k.name()), |b| {
            b.iter(|| k.permute(black_box(&mut states[..streams]), PERMUTATIONS))
        });
        group.throughput(Throughput::Elements(streams as u64));
        let seeds: [[u8; 32]; 8] = core::array::from_fn(|i| [i as u8; 32]);
        let mut out = [[0u8; 3744]; 8];
        group.bench_function(format!("shake128_3744/lanes-{}", k.name()), |b| {
            b.iter(|| {
                k.run(
                    seeds
                        .iter()
                        .zip(out.iter_mut())
                        .take(streams)
                        .map(|(seed, out)| Job::shake128(seed, out)),
                )
            })
        });
    }
    // The single-state functions, as the hash layer calls them: H of a 32-byte seed, G of
    // 64 bytes, and Saber's matrix stream.
    for k in Single::all() {
        let mut state = [0u64; 25];
        group.throughput(Throughput::Elements(PERMUTATIONS as u64));
        group.bench_function(format!("f1600/single-{}", k.name()), |b| {
            b.iter(|| k.permute(black_box(&mut state), PERMUTATIONS))
        });
        group.throughput(Throughput::Elements(1));
        let mut digest = [0u8; 64];
        group.bench_function(format!("sha3_256_32/single-{}", k.name()), |b| {
            b.iter(|| {
                k.hash(
                    Function::Sha3_256,
                    &[black_box(&[1u8; 32])],
                    &mut digest[..32],
                )
            })
        });
        group.bench_function(format!("sha3_512_64/single-{}", k.name()), |b| {
            b.iter(|| k.hash(Function::Sha3_512, &[black_box(&[1u8; 64])], &mut digest))
        });
        let mut out = [0u8; 3744];
        group.bench_function(format!("shake128_3744/single-{}", k.name()), |b| {
            b.iter(|| k.shake128(&[black_box(&[1u8; 32])]).read(&mut out))
        });
    }
    let mut out = [0u8; 3744];
    group.throughput(Throughput::Elements(1));
    group.bench_function("shake128_3744/crate", |b| {
        b.iter(|| {
            let mut x = shake::Shake128::default();
            x.update(black_box(&[1u8; 32]));
            x.finalize_xof().read(&mut out);
        })
    });
    group.finish();
}

fn bench_set<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    c: &mut Crit,
    backend_name: &str,
    backend: &mut B,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    type Kem<V, const L: usize, const MU: usize, const ET: usize> = SaberKem<V, L, MU, ET>;
    let name = <Kem<V, L, MU, ET> as ParameterSet>::NAME;
    let mut rng = BenchRng(1);
    let mut group = c.benchmark_group(format!("batch/{name}"));

    group.throughput(Throughput::Elements(1));
    group.bench_function(format!("keygen/single/{backend_name}"), |b| {
        b.iter(|| Kem::<V, L, MU, ET>::try_generate_with(backend, &mut rng).unwrap())
    });
    group.bench_function(format!("keygen/batch1/{backend_name}"), |b| {
        b.iter(|| Kem::<V, L, MU, ET>::try_generate_batch_with::<_, 1, _>(backend, &mut rng))
    });
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function(format!("keygen/batch{BATCH}/{backend_name}"), |b| {
        b.iter(|| Kem::<V, L, MU, ET>::try_generate_batch_with::<_, BATCH, _>(backend, &mut rng))
    });

    let Ok(pairs) = Kem::<V, L, MU, ET>::try_generate_batch_with::<_, BATCH, _>(backend, &mut rng);
    let keys = pairs.each_ref().map(|p| &p.1);
    group.throughput(Throughput::Elements(1));
    group.bench_function(format!("encaps/single/{backend_name}"), |b| {
        b.iter(|| keys[0].try_encapsulate_with(backend, &mut rng).unwrap())
    });
    group.bench_function(format!("encaps/batch1/{backend_name}"), |b| {
        b.iter(|| Kem::<V, L, MU, ET>::try_encapsulate_batch_with(backend, [keys[0]], &mut rng))
    });
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function(format!("encaps/batch{BATCH}/{backend_name}"), |b| {
        b.iter(|| Kem::<V, L, MU, ET>::try_encapsulate_batch_with(backend, keys, &mut rng))
    });

    let Ok(encapsulated) = Kem::<V, L, MU, ET>::try_encapsulate_batch_with(backend, keys, &mut rng);
    let jobs: [_; BATCH] = core::array::from_fn(|i| (&pairs[i].0, &encapsulated[i].0));
    group.throughput(Throughput::Elements(1));
    group.bench_function(format!("decaps/single/{backend_name}"), |b| {
        b.iter(|| jobs[0].0.decapsulate_with(backend, black_box(jobs[0].1)))
    });
    group.bench_function(format!("decaps/batch1/{backend_name}"), |b| {
        b.iter(|| Kem::<V, L, MU, ET>::decapsulate_batch_with(backend, black_box([jobs[0]])))
    });
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function(format!("decaps/batch{BATCH}/{backend_name}"), |b| {
        b.iter(|| Kem::<V, L, MU, ET>::decapsulate_batch_with(backend, black_box(jobs)))
    });
    group.finish();
}

fn bench_backend<B: PolyMul>(c: &mut Crit, name: &str, backend: &mut B) {
    use saber_kem::{Plus, Round3};
    bench_set::<Round3, B, 2, 10, 3>(c, name, backend);
    bench_set::<Round3, B, 3, 8, 4>(c, name, backend);
    bench_set::<Round3, B, 4, 6, 6>(c, name, backend);
    bench_set::<Plus, B, 2, 10, 3>(c, name, backend);
    bench_set::<Plus, B, 3, 8, 4>(c, name, backend);
    bench_set::<Plus, B, 4, 6, 6>(c, name, backend);
}

fn batch(c: &mut Crit) {
    bench_backend(c, "default", &mut saber_kem::DefaultPolyMul::default());
    macro_rules! each {
        ($id:ident, $name:expr, $ctor:expr) => {
            bench_backend(c, $name, &mut $ctor);
        };
    }
    let backends = backends::Backends::here();
    backends.report();
    backends::for_each_backend!(each, backends);
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadTime::new());
    targets = keccak, batch
}

/// Interleaved per-operation timing of single operations and batches.
mod ratios {
    use super::*;

    /// Thread CPU nanoseconds per operation of `run`, which performs `ops` operations, repeated
    /// until at least 20 ms have passed.
    fn per_op(clock: &ThreadTime, ops: usize, mut run: impl FnMut()) -> f64 {
        let mut calls = 0u64;
        let start = clock.start();
        let mut elapsed;
        loop {
            run();
            calls += 1;
            elapsed = clock.end(start);
            if elapsed >= 20_000_000 {
                break;
            }
        }
        elapsed as f64 / (calls as f64 * ops as f64)
    }

    /// The least-disturbed round: on a shared machine, contention only ever adds time.
    fn best(xs: Vec<f64>) -> f64 {
        xs.into_iter().fold(f64::INFINITY, f64::min)
    }

    /// One table row: the best over rounds of single, batch and batch-of-one per-operation
    /// times.
    fn row(
        name: &str,
        op: &str,
        rounds: usize,
        single: &mut dyn FnMut(),
        batch: &mut dyn FnMut(),
        mut batch1: Option<&mut dyn FnMut()>,
    ) {
        let clock = ThreadTime::new();
        let (mut s, mut bn, mut b1) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            s.push(per_op(&clock, 1, &mut *single));
            bn.push(per_op(&clock, BATCH, &mut *batch));
            if let Some(f) = batch1.as_mut() {
                b1.push(per_op(&clock, 1, &mut **f));
            }
        }
        let (s, bn) = (best(s) / 1e3, best(bn) / 1e3);
        let one = if b1.is_empty() {
            "| — | —".to_string()
        } else {
            let b1 = best(b1) / 1e3;
            format!("| {b1:.1} | {:.2}×", s / b1)
        };
        println!(
            "| {name} | {op} | {s:.1} | {bn:.1} | {:.2}× {one} |",
            s / bn
        );
    }

    /// The inputs of `N` key generations, drawn as the RNG entry points draw them.
    fn key_seeds<const N: usize>(rng: &mut BenchRng) -> [KeySeeds; N] {
        core::array::from_fn(|_| {
            let mut seeds = KeySeeds::default();
            for s in [&mut seeds.seed_a, &mut seeds.seed_s, &mut seeds.z] {
                let Ok(()) = rng.try_fill_bytes(s);
            }
            seeds
        })
    }

    /// The inputs of `N` encapsulations.
    fn messages<const N: usize>(rng: &mut BenchRng) -> [[u8; 32]; N] {
        core::array::from_fn(|_| {
            let mut m = [0u8; 32];
            let Ok(()) = rng.try_fill_bytes(&mut m);
            m
        })
    }

    /// Batches run through the `hazmat` entry points, which take the lanes.
    fn set<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
        rounds: usize,
        backend: &mut B,
        keccak: Lanes,
    ) where
        SaberKem<V, L, MU, ET>: ParameterSet,
    {
        type Kem<V, const L: usize, const MU: usize, const ET: usize> = SaberKem<V, L, MU, ET>;
        let name = <Kem<V, L, MU, ET> as ParameterSet>::NAME;
        if let Ok(sets) = std::env::var("BATCH_SETS")
            && !sets.split(',').any(|s| s == name)
        {
            return;
        }
        let rng = &mut BenchRng(1);
        let Ok(pairs) = Kem::<V, L, MU, ET>::try_generate_batch_with::<_, BATCH, _>(backend, rng);
        let keys = pairs.each_ref().map(|p| &p.1);
        let Ok(encapsulated) = Kem::<V, L, MU, ET>::try_encapsulate_batch_with(backend, keys, rng);
        let jobs: [_; BATCH] = core::array::from_fn(|i| (&pairs[i].0, &encapsulated[i].0));

        // The closures share the backend and RNG; each runs alone.
        let cell = std::cell::RefCell::new((backend, rng));
        let mut keygen1 = || {
            let (b, r) = &mut *cell.borrow_mut();
            black_box(Kem::<V, L, MU, ET>::try_generate_with(*b, *r).unwrap());
        };
        let mut keygen_batch = || {
            let (b, r) = &mut *cell.borrow_mut();
            let seeds = key_seeds::<BATCH>(r);
            black_box(Kem::<V, L, MU, ET>::generate_batch_deterministic_with(
                *b, keccak, &seeds,
            ));
        };
        let mut keygen_b1 = || {
            let (b, r) = &mut *cell.borrow_mut();
            let seeds = key_seeds::<1>(r);
            black_box(Kem::<V, L, MU, ET>::generate_batch_deterministic_with(
                *b, keccak, &seeds,
            ));
        };
        row(
            name,
            "keygen",
            rounds,
            &mut keygen1,
            &mut keygen_batch,
            Some(&mut keygen_b1),
        );
        let mut encaps1 = || {
            let (b, r) = &mut *cell.borrow_mut();
            black_box(keys[0].try_encapsulate_with(*b, *r).unwrap());
        };
        let mut encaps_batch = || {
            let (b, r) = &mut *cell.borrow_mut();
            let ms = messages::<BATCH>(r);
            black_box(Kem::<V, L, MU, ET>::encapsulate_batch_deterministic_with(
                *b, keccak, keys, &ms,
            ));
        };
        let mut encaps_b1 = || {
            let (b, r) = &mut *cell.borrow_mut();
            let ms = messages::<1>(r);
            black_box(Kem::<V, L, MU, ET>::encapsulate_batch_deterministic_with(
                *b,
                keccak,
                [keys[0]],
                &ms,
            ));
        };
        row(
            name,
            "encaps",
            rounds,
            &mut encaps1,
            &mut encaps_batch,
            Some(&mut encaps_b1),
        );
        let mut decaps1 = || {
            let (b, _) = &mut *cell.borrow_mut();
            black_box(jobs[0].0.decapsulate_with(*b, black_box(jobs[0].1)));
        };
        let mut decaps_batch = || {
            let (b, _) = &mut *cell.borrow_mut();
            black_box(Kem::<V, L, MU, ET>::decapsulate_batch_with_lanes(
                *b,
                keccak,
                black_box(jobs),
            ));
        };
        let mut decaps_b1 = || {
            let (b, _) = &mut *cell.borrow_mut();
            black_box(Kem::<V, L, MU, ET>::decapsulate_batch_with_lanes(
                *b,
                keccak,
                black_box([jobs[0]]),
            ));
        };
        row(
            name,
            "decaps",
            rounds,
            &mut decaps1,
            &mut decaps_batch,
            Some(&mut decaps_b1),
        );
    }

    /// The fastest lanes, or the ones named by `BATCH_KECCAK` (`portable`, `avx2`, `avx512`,
    /// `avx512x8`, `one at a time`).
    fn keccak() -> Lanes {
        let Ok(wanted) = std::env::var("BATCH_KECCAK") else {
            return Lanes::fastest();
        };
        Lanes::all()
            .find(|k| k.name() == wanted)
            .unwrap_or_else(|| panic!("lane path {wanted} unknown or not on this CPU"))
    }

    fn table<B: PolyMul>(rounds: usize, backend: &mut B) {
        use saber_kem::{Plus, Round3};
        let keccak = keccak();
        println!(
            "backend {}, Keccak {}, {} clock, best of {rounds} interleaved rounds",
            backend.name(),
            keccak.name(),
            if ThreadTime::new().use_wall {
                "wall"
            } else {
                "thread CPU"
            },
        );
        println!();
        println!(
            "| set | op | single µs/op | batch of {BATCH} µs/op | speed-up | batch of 1 µs/op | speed-up |"
        );
        println!("|---|---|---:|---:|---:|---:|---:|");
        set::<Round3, B, 2, 10, 3>(rounds, backend, keccak);
        set::<Round3, B, 3, 8, 4>(rounds, backend, keccak);
        set::<Round3, B, 4, 6, 6>(rounds, backend, keccak);
        set::<Plus, B, 2, 10, 3>(rounds, backend, keccak);
        set::<Plus, B, 3, 8, 4>(rounds, backend, keccak);
        set::<Plus, B, 4, 6, 6>(rounds, backend, keccak);
    }

    /// The default backend, or the one named by `BATCH_BACKEND` (as in the backend list).
    pub fn run() {
        let rounds = std::env::var("BATCH_ROUNDS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(9);
        let Ok(wanted) = std::env::var("BATCH_BACKEND") else {
            table(rounds, &mut saber_kem::DefaultPolyMul::default());
            return;
        };
        macro_rules! each {
            ($id:ident, $name:expr, $ctor:expr) => {
                if wanted == $name {
                    table(rounds, &mut $ctor);
                    return;
                }
            };
        }
        let backends = backends::Backends::here();
        backends::for_each_backend!(each, backends);
        if let Some((_, why)) = backends.skipped.iter().find(|(name, _)| *name == wanted) {
            panic!("backend {wanted} does not run here: {why}");
        }
        panic!("unknown backend {wanted}");
    }
}

fn main() {
    if std::env::var_os("BATCH_RATIOS").is_some() {
        ratios::run();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
