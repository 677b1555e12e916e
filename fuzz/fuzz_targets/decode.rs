//! cargo-fuzz target; the logic is `saber_kem_fuzz::decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| saber_kem_fuzz::decode(data));
