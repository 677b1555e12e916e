//! cargo-fuzz target; the logic is `saber_kem_fuzz::polymul_differential`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| saber_kem_fuzz::polymul_differential(data));
