#![allow(missing_docs)]
//! The two-worker split on two host threads against the one-worker path, per operation
//! (`cargo bench --bench two_worker`). Worker 1 is a thread spawned per operation
//! (`two_worker::ScopedThreads`), so the thread start and the hand-off waits are in the
//! figures.

use criterion::{Criterion, criterion_group, criterion_main};
use saber_kem::polymul::{DefaultPolyMul, Karatsuba, PolyMul};
use saber_kem::two_worker::{ScopedThreads, TwoWorkers};
use saber_kem::{ParameterSet, SaberKem, Variant};
use std::hint::black_box;

fn bench_set<
    V: Variant,
    B: PolyMul + Default + Send,
    const L: usize,
    const MU: usize,
    const ET: usize,
>(
    c: &mut Criterion,
    backend_name: &str,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    type K<V, const L: usize, const MU: usize, const ET: usize> = SaberKem<V, L, MU, ET>;
    let name = K::<V, L, MU, ET>::NAME;
    let backend = &mut B::default();
    let workers = &mut TwoWorkers::new(ScopedThreads, B::default());
    let (seed_a, seed_s, z, m) = ([1u8; 32], [2u8; 32], [3u8; 32], [4u8; 32]);
    let (dk, ek) = K::<V, L, MU, ET>::generate_deterministic_with(backend, &seed_a, &seed_s, &z);
    let (ct, _) = ek.encapsulate_deterministic_with(backend, &m);
    let mut group = c.benchmark_group(format!("two_worker/{name}/{backend_name}"));
    group.bench_function("keygen/one", |b| {
        b.iter(|| K::<V, L, MU, ET>::generate_deterministic_with(backend, &seed_a, &seed_s, &z))
    });
    group.bench_function("keygen/two", |b| {
        b.iter(|| {
            K::<V, L, MU, ET>::generate_deterministic_with_workers(
                workers, backend, &seed_a, &seed_s, &z,
            )
        })
    });
    group.bench_function("encaps/one", |b| {
        b.iter(|| ek.encapsulate_deterministic_with(backend, black_box(&m)))
    });
    group.bench_function("encaps/two", |b| {
        b.iter(|| ek.encapsulate_deterministic_with_workers(workers, backend, black_box(&m)))
    });
    group.bench_function("decaps/one", |b| {
        b.iter(|| dk.decapsulate_with(backend, black_box(&ct)))
    });
    group.bench_function("decaps/two", |b| {
        b.iter(|| dk.decapsulate_with_workers(workers, backend, black_box(&ct)))
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    type Default = DefaultPolyMul;
    bench_set::<saber_kem::Round3, Default, 2, 10, 3>(c, "default");
    bench_set::<saber_kem::Round3, Default, 3, 8, 4>(c, "default");
    bench_set::<saber_kem::Round3, Default, 4, 6, 6>(c, "default");
    // A slower backend: products dominate more, as on a microcontroller.
    bench_set::<saber_kem::Round3, Karatsuba, 3, 8, 4>(c, "karatsuba");
}

criterion_group!(two_worker, benches);
criterion_main!(two_worker);
