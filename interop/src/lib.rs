//! Tests only: see `tests/interop.rs`.
