#![allow(missing_docs)]
//! Four-way Keccak and the batch API against single operations.
//!
//! `cargo bench --bench batch` (filter with e.g. `-- 'batch/Saber/'` or `-- keccak`).
//!
//! Groups:
//! - `keccak`: one four-way permutation per path, and 3744 bytes of SHAKE128 (Saber's matrix)
//!   four streams at a time against one stream from the `shake` crate.
//! - `batch/<set>`: `keygen|encaps|decaps` × `single|batch4` (and `batch1` for Saber+, whose
//!   matrix entries are squeezed four at a time inside one operation), per backend. Throughput is
//!   set to the number of operations, so criterion's `thrpt` line is operations per second and
//!   its time is for the whole batch.
//!
//! Time is the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID` on Linux, wall time
//! elsewhere): the development machine is shared, and CPU time leaves out the time the thread
//! waits for a core. Set `BATCH_BENCH_WALL=1` for wall time.

#[path = "../tests/support/backends.rs"]
mod backends;

use std::convert::Infallible;
use std::hint::black_box;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand_core::{TryCryptoRng, TryRng};
use saber_kem::batch::BatchVariant;
use saber_kem::keccak::{KeccakX4, Shake128X4, StateX4};
use saber_kem::{ParameterSet, PolyMul, SaberKem};
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

fn keccak(c: &mut Crit) {
    let mut group = c.benchmark_group("keccak");
    #[allow(unused_mut)]
    let mut paths = vec![KeccakX4::portable()];
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    paths.extend(KeccakX4::avx2());
    for k in &paths {
        let mut state = StateX4::new();
        group.throughput(Throughput::Elements(4));
        group.bench_function(format!("f1600x4/{}", k.name()), |b| {
            b.iter(|| k.permute(black_box(&mut state)))
        });
        let seeds = [[1u8; 32], [2; 32], [3; 32], [4; 32]];
        let mut out = [[0u8; 3744]; 4];
        group.bench_function(format!("shake128_3744/x4-{}", k.name()), |b| {
            b.iter(|| {
                let mut xof = Shake128X4::new(k, seeds.each_ref().map(|s| &s[..]));
                let [o0, o1, o2, o3] = &mut out;
                xof.squeeze(&mut [o0, o1, o2, o3]);
            })
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

fn bench_set<V: BatchVariant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    c: &mut Crit,
    backend_name: &str,
    backend: &mut B,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    type Kem<V, const L: usize, const MU: usize, const ET: usize> = SaberKem<V, L, MU, ET>;
    let name = <Kem<V, L, MU, ET> as ParameterSet>::NAME;
    let plus = V::SUFFIX == "+";
    let mut rng = BenchRng(1);
    let mut group = c.benchmark_group(format!("batch/{name}"));

    group.throughput(Throughput::Elements(1));
    group.bench_function(format!("keygen/single/{backend_name}"), |b| {
        b.iter(|| Kem::<V, L, MU, ET>::try_generate_with(backend, &mut rng).unwrap())
    });
    if plus {
        group.bench_function(format!("keygen/batch1/{backend_name}"), |b| {
            b.iter(|| Kem::<V, L, MU, ET>::try_generate_batch_with::<_, 1, _>(backend, &mut rng))
        });
    }
    group.throughput(Throughput::Elements(4));
    group.bench_function(format!("keygen/batch4/{backend_name}"), |b| {
        b.iter(|| Kem::<V, L, MU, ET>::try_generate_batch_with::<_, 4, _>(backend, &mut rng))
    });

    let Ok(pairs) = Kem::<V, L, MU, ET>::try_generate_batch_with::<_, 4, _>(backend, &mut rng);
    let keys = pairs.each_ref().map(|p| &p.1);
    group.throughput(Throughput::Elements(1));
    group.bench_function(format!("encaps/single/{backend_name}"), |b| {
        b.iter(|| keys[0].try_encapsulate_with(backend, &mut rng).unwrap())
    });
    if plus {
        group.bench_function(format!("encaps/batch1/{backend_name}"), |b| {
            b.iter(|| Kem::<V, L, MU, ET>::try_encapsulate_batch_with(backend, [keys[0]], &mut rng))
        });
    }
    group.throughput(Throughput::Elements(4));
    group.bench_function(format!("encaps/batch4/{backend_name}"), |b| {
        b.iter(|| Kem::<V, L, MU, ET>::try_encapsulate_batch_with(backend, keys, &mut rng))
    });

    let Ok(encapsulated) = Kem::<V, L, MU, ET>::try_encapsulate_batch_with(backend, keys, &mut rng);
    let jobs: [_; 4] = core::array::from_fn(|i| (&pairs[i].0, &encapsulated[i].0));
    group.throughput(Throughput::Elements(1));
    group.bench_function(format!("decaps/single/{backend_name}"), |b| {
        b.iter(|| jobs[0].0.decapsulate_with(backend, black_box(jobs[0].1)))
    });
    if plus {
        group.bench_function(format!("decaps/batch1/{backend_name}"), |b| {
            b.iter(|| Kem::<V, L, MU, ET>::decapsulate_batch_with(backend, black_box([jobs[0]])))
        });
    }
    group.throughput(Throughput::Elements(4));
    group.bench_function(format!("decaps/batch4/{backend_name}"), |b| {
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
    backends::for_each_backend!(each);
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadTime::new());
    targets = keccak, batch
}
criterion_main!(benches);
