//! Criterion benchmarks of every polynomial-multiplication backend in `for_each_backend!`.
//!
//! - `polymul/mul`: one complete product (prepare, multiply-accumulate, finish).
//! - `polymul/prepare`, `polymul/mul_acc`, `polymul/finish`: the three steps on their own.
//! - `polymul/matrix_vector/L`: the KEM's shape, an L × L matrix times a vector of L secrets:
//!   L secrets prepared once, then per row one accumulator, L `mul_acc` and one `finish`.
//!
//! Run briefly on a shared machine:
//! `cargo bench --bench polymul -- --warm-up-time 1 --measurement-time 3`.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use saber_kem::polymul::PolyMul;
use saber_kem::polymul::{Poly, SECRET_BOUND, SecretPoly};

#[path = "../tests/support/backends.rs"]
mod backends;

/// Deterministic inputs (xorshift32): benchmark data only needs to be varied.
struct InputRng(u32);

impl InputRng {
    fn next_u32(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }

    fn poly(&mut self) -> Poly {
        let mut p = Poly::ZERO;
        for c in p.coeffs.iter_mut() {
            *c = (self.next_u32() >> 19) as u16;
        }
        p
    }

    fn secret(&mut self) -> SecretPoly {
        let mut s = SecretPoly::ZERO;
        let width = 2 * SECRET_BOUND as u32 + 1;
        for c in s.coeffs.iter_mut() {
            // A slightly biased but in-range value; benchmarks need no uniformity.
            let r = (self.next_u32() >> 8) & 0xff;
            *c = ((r * width) >> 8) as i8 - SECRET_BOUND;
        }
        s
    }
}

/// `out[i] = Σ_j a[i][j] · s[j]`, the matrix-vector product the KEM computes.
fn matrix_vector<B: PolyMul>(backend: &mut B, a: &[Vec<Poly>], s: &[SecretPoly]) -> Vec<Poly> {
    let prepared: Vec<B::Prepared> = s.iter().map(|sj| backend.prepare(sj)).collect();
    a.iter()
        .map(|row| {
            let mut acc = backend.accumulator();
            for (aij, sj) in row.iter().zip(prepared.iter()) {
                backend.mul_acc(&mut acc, aij, sj);
            }
            backend.finish(&acc)
        })
        .collect()
}

fn bench_backend<B: PolyMul>(c: &mut Criterion, mut backend: B) {
    let name = backend.name();
    let mut rng = InputRng(0x5abe_4c0d);
    let a = rng.poly();
    let s = rng.secret();

    c.benchmark_group("polymul/mul").bench_function(name, |b| {
        b.iter(|| backend.mul(black_box(&a), black_box(&s)))
    });

    c.benchmark_group("polymul/prepare")
        .bench_function(name, |b| b.iter(|| backend.prepare(black_box(&s))));

    let prepared = backend.prepare(&s);
    let mut acc = backend.accumulator();
    c.benchmark_group("polymul/mul_acc")
        .bench_function(name, |b| {
            b.iter(|| backend.mul_acc(black_box(&mut acc), black_box(&a), black_box(&prepared)))
        });
    c.benchmark_group("polymul/finish")
        .bench_function(name, |b| b.iter(|| backend.finish(black_box(&acc))));

    let mut group = c.benchmark_group("polymul/matrix_vector");
    for rank in [2usize, 3, 4] {
        let matrix: Vec<Vec<Poly>> = (0..rank)
            .map(|_| (0..rank).map(|_| rng.poly()).collect())
            .collect();
        let secrets: Vec<SecretPoly> = (0..rank).map(|_| rng.secret()).collect();
        group.bench_with_input(BenchmarkId::new(name, rank), &rank, |b, _| {
            b.iter(|| matrix_vector(&mut backend, black_box(&matrix), black_box(&secrets)))
        });
    }
    group.finish();
}

fn all_backends(c: &mut Criterion) {
    macro_rules! bench_one {
        ($id:ident, $name:expr, $ctor:expr) => {
            bench_backend(c, $ctor);
        };
    }
    let backends = backends::Backends::here();
    backends.report();
    backends::for_each_backend!(bench_one, backends);
}

criterion_group!(benches, all_backends);
criterion_main!(benches);
