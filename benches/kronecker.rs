#![allow(missing_docs)]
//! Kronecker backend variants: one polynomial product (prepare + multiply-accumulate + finish)
//! on the software engine with each plan shape (KS1 at 2048 bits, the ESP32-C3 plan at 1536
//! bits, all-KS2 at ≤ 1024 bits), on the ESP32 host models, and the raw engine multiplication.
//!
//! `cargo bench --bench kronecker -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

#[path = "../tests/support/operands.rs"]
mod operands;

use operands::product_operands;

use criterion::{Criterion, criterion_group, criterion_main};
use saber_kem::hw::esp32_model::kronecker_on_model;
use saber_kem::hw::esp32_rsa::{Esp32, Esp32C3};
use saber_kem::polymul::kronecker::BigMul;
use saber_kem::polymul::{Kronecker, PolyMul, Schoolbook, SoftwareBigMul};

fn product<B: PolyMul>(c: &mut Criterion, name: &str, mut backend: B) {
    let (a, s) = product_operands();
    c.bench_function(&format!("kronecker/product/{name}"), |b| {
        b.iter(|| backend.mul(black_box(&a), black_box(&s)))
    });
}

fn engine<E: BigMul>(c: &mut Criterion, name: &str, mut engine: E, words: usize) {
    let x = [0x9E37_79B9u32; 64];
    let y = [0x7F4A_7C15u32; 64];
    let mut out = [0u32; 128];
    c.bench_function(&format!("kronecker/bigmul/{name}/{words}-words"), |b| {
        b.iter(|| {
            engine.mul(
                black_box(&x[..words]),
                black_box(&y[..words]),
                &mut out[..2 * words],
            )
        })
    });
}

fn benches(c: &mut Criterion) {
    product(c, "schoolbook", Schoolbook);
    product(
        c,
        "soft-2048 (KS1, 7 mults)",
        Kronecker::<SoftwareBigMul<64>>::default(),
    );
    product(
        c,
        "soft-1536 (C3 plan, 12 mults)",
        Kronecker::<SoftwareBigMul<48>>::default(),
    );
    product(
        c,
        "soft-1024 (KS2, 14 mults)",
        Kronecker::<SoftwareBigMul<32>>::default(),
    );
    product(c, "esp32-model", kronecker_on_model::<Esp32>());
    product(c, "esp32c3-model", kronecker_on_model::<Esp32C3>());
    for words in [31, 60] {
        engine(c, "soft", SoftwareBigMul::<64>, words);
    }
}

criterion_group!(kronecker, benches);
criterion_main!(kronecker);
