#![no_std]
#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs, unused_qualifications)]
// Secret-dependent division is variable time on most CPUs (KyberSlash); public index
// arithmetic uses shifts and masks instead, so the whole library can be held to this.
#![deny(clippy::integer_division_remainder_used)]

#[cfg(test)]
extern crate std;

// Modules in dependency order: each uses only those above it.

pub mod batch;
/// Run-time detection of x86 instruction-set extensions.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod cpu;
/// Constant-time comparison and selection, wiped buffers.
mod ct;
/// Bit packing, rounding, message and secret-key coding (spec §2.2, §2.5).
mod encoding;
mod error;
pub mod expanded;
/// The symmetric primitives H, G and the XOF (spec §2.3), and how they run on this CPU.
mod hash;
#[cfg(feature = "hazmat")]
pub mod hazmat;
pub mod hw;
/// Keccak-f\[1600\] permutations and FIPS 202 sponges (FIPS 202 §3–6).
mod keccak;
/// Saber.KEM, the FO transform (spec §2.6, Algorithms 4–6), and the key types.
mod kem;
#[cfg(feature = "kem")]
mod kem_traits;
/// Parameter sets and scheme variants, as data (round-3 spec §2.2).
mod params;
/// Saber.PKE, the IND-CPA scheme (spec §2.5, Algorithms 1–3).
mod pke;
/// Polynomials of R_q and small secrets (spec §2.4).
mod poly;
pub mod polymul;
/// GenMatrix and GenSecret (spec §2.4.1, §2.4.2).
mod sampling;
pub mod two_worker;

pub use error::Error;
pub use expanded::{ExpandedDecapsulationKey, ExpandedEncapsulationKey};
pub use hash::Sha2AesEngines;
pub use kem::{
    Ciphertext, DecapsulationKey, EncapsulationKey, FireSaber, FireSaber90s, FireSaberPlus,
    KEY_SEED_BYTES, LightSaber, LightSaber90s, LightSaberPlus, ParameterSet, Saber, Saber90s,
    SaberKem, SaberPlus, SharedSecret, UFireSaber, UFireSaber90s, ULightSaber, ULightSaber90s,
    USaber, USaber90s,
};
pub use params::{
    ByteArray, MatrixDerivation, Nineties, Plus, Round3, SecretLayout, Secrets, Segment, Symmetric,
    Uniform, UniformNineties, Variant,
};
pub use pke::{Accelerated, Backend, LowMemory};
pub use polymul::{DefaultPolyMul, PolyMul, PolyMulPublic};
