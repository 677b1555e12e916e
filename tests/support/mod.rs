//! Shared test support: the backend list, the NIST DRBG and the KAT record generator.
//! Also included by `examples/genkat.rs` and the benches.
#![allow(dead_code)]

pub mod backends;
pub mod drbg;
pub mod kat;
