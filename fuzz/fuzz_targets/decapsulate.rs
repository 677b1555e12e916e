//! cargo-fuzz target; the logic is `saber_kem_fuzz::decapsulate`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| saber_kem_fuzz::decapsulate(data));
