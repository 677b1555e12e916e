#![allow(missing_docs)]
//! Key generation, encapsulation and decapsulation for every parameter set (the uSaber and 90s
//! ones with the default backend, the others with every backend).
//!
//! `cargo bench --bench kem` (filter with e.g. `-- Saber/`). Randomness comes from a cheap
//! deterministic generator so that only the KEM is timed.

#[path = "../tests/support/backends.rs"]
mod backends;

use std::convert::Infallible;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rand_core::{TryCryptoRng, TryRng};
use saber_kem::{ParameterSet, PolyMul, SaberKem, Variant};

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

fn bench_set<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    c: &mut Criterion,
    backend_name: &str,
    backend: &mut B,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let name = <SaberKem<V, L, MU, ET> as ParameterSet>::NAME;
    let mut rng = BenchRng(1);
    let mut group = c.benchmark_group(format!("kem/{name}"));
    group.bench_function(format!("keygen/{backend_name}"), |b| {
        b.iter(|| SaberKem::<V, L, MU, ET>::try_generate_with(backend, &mut rng).unwrap())
    });
    let Ok((dk, ek)) = SaberKem::<V, L, MU, ET>::try_generate_with(backend, &mut rng);
    group.bench_function(format!("encaps/{backend_name}"), |b| {
        b.iter(|| ek.try_encapsulate_with(backend, &mut rng).unwrap())
    });
    let Ok((ct, _)) = ek.try_encapsulate_with(backend, &mut rng);
    group.bench_function(format!("decaps/{backend_name}"), |b| {
        b.iter(|| dk.decapsulate_with(backend, black_box(&ct)))
    });
    group.finish();
}

fn bench_backend<B: PolyMul>(c: &mut Criterion, name: &str, backend: &mut B) {
    use saber_kem::{Plus, Round3};
    bench_set::<Round3, B, 2, 10, 3>(c, name, backend);
    bench_set::<Round3, B, 3, 8, 4>(c, name, backend);
    bench_set::<Round3, B, 4, 6, 6>(c, name, backend);
    bench_set::<Plus, B, 2, 10, 3>(c, name, backend);
    bench_set::<Plus, B, 3, 8, 4>(c, name, backend);
    bench_set::<Plus, B, 4, 6, 6>(c, name, backend);
}

/// The uSaber and 90s sets, with one backend (the six above run on every backend).
fn bench_variants<B: PolyMul>(c: &mut Criterion, name: &str, backend: &mut B) {
    use saber_kem::{Nineties, Uniform, UniformNineties};
    bench_set::<Nineties, B, 2, 10, 3>(c, name, backend);
    bench_set::<Nineties, B, 3, 8, 4>(c, name, backend);
    bench_set::<Nineties, B, 4, 6, 6>(c, name, backend);
    bench_set::<Uniform, B, 2, 10, 3>(c, name, backend);
    bench_set::<Uniform, B, 3, 8, 4>(c, name, backend);
    bench_set::<Uniform, B, 4, 6, 6>(c, name, backend);
    bench_set::<UniformNineties, B, 2, 10, 3>(c, name, backend);
    bench_set::<UniformNineties, B, 3, 8, 4>(c, name, backend);
    bench_set::<UniformNineties, B, 4, 6, 6>(c, name, backend);
}

fn kem(c: &mut Criterion) {
    bench_backend(c, "default", &mut saber_kem::DefaultPolyMul::default());
    bench_variants(c, "default", &mut saber_kem::DefaultPolyMul::default());
    macro_rules! each {
        ($id:ident, $name:expr, $ctor:expr) => {
            bench_backend(c, $name, &mut $ctor);
        };
    }
    let backends = backends::Backends::here();
    backends.report();
    backends::for_each_backend!(each, backends);
}

criterion_group!(benches, kem);
criterion_main!(benches);
