//! NTT-specific benchmarks: the three steps (prepare, mul_acc, finish) of the scalar, AVX2 and
//! AVX-512 paths, the L = 3 matrix-vector product of the SIMD paths, and the same product for
//! 5- to 8-layer scalar kernels (the measurement behind the choice of six layers). All backends
//! side by side: `benches/polymul.rs`.
//!
//! `cargo bench --bench ntt -- --warm-up-time 1 --measurement-time 3`

// `criterion_group!` defines an undocumented function.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;

use saber_kem::polymul::ntt::{NttAvx512, NttScalarLayers};
use saber_kem::polymul::{N, Poly, SecretPoly};
use saber_kem::polymul::{NttAvx2, NttScalar, PolyMul};

/// Deterministic pseudo-random inputs (xorshift; quality is irrelevant here).
struct Inputs(u64);

impl Inputs {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn poly(&mut self) -> Poly {
        let mut p = Poly::ZERO;
        for c in p.coeffs.iter_mut() {
            *c = self.next() as u16 & 0x1fff;
        }
        p
    }

    fn secret(&mut self) -> SecretPoly {
        let mut s = SecretPoly::ZERO;
        for c in s.coeffs.iter_mut() {
            // A 3-bit value in [-4, 3]: the bench needs no exact distribution.
            *c = (self.next() & 7) as i8 - 4;
        }
        s
    }
}

/// `b = A·s` for an L×L matrix: L prepares, L² `mul_acc`, L finishes.
fn matrix_vector<B: PolyMul, const L: usize>(
    backend: &mut B,
    a: &[[Poly; L]; L],
    s: &[SecretPoly; L],
) -> [Poly; L] {
    let prepared: [B::Prepared; L] = core::array::from_fn(|j| backend.prepare(&s[j]));
    core::array::from_fn(|i| {
        let mut acc = backend.accumulator();
        for (a_ij, p) in a[i].iter().zip(prepared.iter()) {
            backend.mul_acc(&mut acc, a_ij, p);
        }
        backend.finish(&acc)
    })
}

fn bench_matrix_vector<B: PolyMul, const L: usize>(c: &mut Criterion, name: &str, mut backend: B) {
    let mut inputs = Inputs(0x5eed + L as u64);
    let a: [[Poly; L]; L] = core::array::from_fn(|_| core::array::from_fn(|_| inputs.poly()));
    let s: [SecretPoly; L] = core::array::from_fn(|_| inputs.secret());
    c.bench_with_input(
        BenchmarkId::new(format!("matrix_vector_L{L}"), name),
        &(),
        |b, _| b.iter(|| matrix_vector::<B, L>(&mut backend, black_box(&a), black_box(&s))),
    );
}

/// The three steps of the scalar, AVX2 and AVX-512 paths on their own (and, for the SIMD paths,
/// the L = 3 matrix-vector product).
fn bench_steps<B: PolyMul>(c: &mut Criterion, name: &str, mut backend: B) {
    let mut inputs = Inputs(7);
    let (a, s) = (inputs.poly(), inputs.secret());
    let prepared = backend.prepare(&s);
    let mut acc = backend.accumulator();
    backend.mul_acc(&mut acc, &a, &prepared);
    c.bench_with_input(BenchmarkId::new("step_prepare", name), &(), |b, _| {
        b.iter(|| backend.prepare(black_box(&s)))
    });
    c.bench_with_input(BenchmarkId::new("step_mul_acc", name), &(), |b, _| {
        b.iter(|| {
            let mut acc = backend.accumulator();
            backend.mul_acc(&mut acc, black_box(&a), black_box(&prepared));
            acc
        })
    });
    c.bench_with_input(BenchmarkId::new("step_finish", name), &(), |b, _| {
        b.iter(|| backend.finish(black_box(&acc)))
    });
}

fn steps(c: &mut Criterion) {
    bench_steps(c, "ntt-scalar", NttScalar);
    match NttAvx2::new() {
        Some(avx2) => {
            bench_steps(c, "ntt-avx2", avx2);
            bench_matrix_vector::<_, 3>(c, "ntt-avx2", avx2);
        }
        None => eprintln!("skipped: ntt-avx2 steps (CPU without AVX2)"),
    }
    match NttAvx512::new() {
        Some(avx512) => {
            bench_steps(c, "ntt-avx512", avx512);
            bench_matrix_vector::<_, 3>(c, "ntt-avx512", avx512);
        }
        None => eprintln!("skipped: ntt-avx512 steps (CPU without AVX-512)"),
    }
}

/// Scalar kernels with 5, 6, 7 and 8 (complete) layers, same prime and same code.
fn layer_counts(c: &mut Criterion) {
    bench_matrix_vector::<_, 3>(c, "scalar-5-layers", NttScalarLayers::<5>);
    bench_matrix_vector::<_, 3>(c, "scalar-6-layers", NttScalarLayers::<6>);
    bench_matrix_vector::<_, 3>(c, "scalar-7-layers", NttScalarLayers::<7>);
    bench_matrix_vector::<_, 3>(c, "scalar-8-layers", NttScalarLayers::<8>);
}

const _: () = assert!(N == 256);

criterion_group!(benches, steps, layer_counts);
criterion_main!(benches);
