#![no_std]
#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs, unused_qualifications)]
// Secret-dependent division is variable time on most CPUs (KyberSlash); public index
// arithmetic uses shifts and masks instead, so the whole library can be held to this.
#![deny(clippy::integer_division_remainder_used)]

#[cfg(feature = "std")]
extern crate std;

pub mod batch;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod cpu;
pub mod ct;
pub mod encoding;
pub mod error;
pub mod expanded;
pub mod hash;
pub mod hw;
// Keccak-f[1600] and the sponges: crate-internal, reachable with `hazmat` for tests, benchmarks
// and the embedded harness (unstable).
#[cfg(feature = "hazmat")]
#[doc(hidden)]
pub mod keccak;
#[cfg(not(feature = "hazmat"))]
mod keccak;
pub mod kem;
#[cfg(feature = "kem")]
pub mod kem_traits;
mod lowmem;
pub mod params;
pub mod pke;
pub mod poly;
pub mod polymul;
pub mod polyvec;
pub mod sampling;

/// The x86 instruction-set cap (unstable; for tests and benchmarks).
#[cfg(all(feature = "hazmat", any(target_arch = "x86", target_arch = "x86_64")))]
#[doc(hidden)]
pub use cpu::{Isa, cap_isa, isa_cap};
pub use error::Error;
pub use expanded::{ExpandedDecapsulationKey, ExpandedEncapsulationKey};
pub use kem::{Ciphertext, DecapsulationKey, EncapsulationKey, SaberKem, SharedSecret};
pub use params::{
    FireSaber, FireSaberPlus, LightSaber, LightSaberPlus, ParameterSet, Plus, Round3, Saber,
    SaberPlus, Variant,
};
pub use polymul::{DefaultPolyMul, PolyMul, PolyMulPublic};
pub use polyvec::LowMemory;
