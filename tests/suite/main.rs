//! The integration tests in one binary, one module per subject: the KEM instances (fifteen
//! sets × every backend × every path) are then compiled once for all of them instead of once
//! per test file. Run one subject with a filter, e.g. `cargo test --test suite rejection::`.
//!
//! Kept apart, in binaries of their own: `isa_cap` (it changes the process-wide instruction-set
//! cap), `ct_secrets` (Miri runs it alone), `ct_valgrind` and `dudect` (their own harnesses).

#[path = "../support/mod.rs"]
mod support;

mod backends;
mod batch;
mod esp32_model;
mod expanded;
mod kat;
mod kem;
mod rejection;
mod two_worker;
