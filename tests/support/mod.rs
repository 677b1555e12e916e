//! Shared test support: the backend list, the NIST DRBG and the KAT record generator.
#![allow(dead_code)]

pub mod backends;
