//! Hazardous materials (feature `hazmat`): the pieces under the KEM, for known-answer tests,
//! benchmarks and protocol designers. Nothing here is needed to use the KEM, and misuse of most
//! of it breaks its security.
//!
//! - The IND-CPA scheme Saber.PKE on bytes: [`SaberKem::pke_keygen`](crate::SaberKem),
//!   `pke_encrypt`, `pke_decrypt` (round-3 spec §2.5), with checked lengths.
//! - Deterministic key generation and encapsulation from seeds: methods of the KEM types
//!   marked *hazmat* (`generate_deterministic_with`, `encapsulate_deterministic_with`, the
//!   byte-level `keypair_into`, `encapsulate_into`, `decapsulate_from`), and the batch API's
//!   `*_deterministic_with` on explicit [`Lanes`](crate::batch::Lanes).
//! - The key selection of implicit rejection as a type parameter ([`KeySelect`]), so tests can
//!   prove their checks catch a broken one.
//! - The crate's hash functions on this CPU's path, for benchmarks.

use crate::error::{Error, check_length};
use crate::hash::Hasher;
use crate::kem::{Algorithms, ParameterSet, SaberKem};
use crate::params::{Symmetric, Variant, sizes};
use crate::pke::{self, Backend, CiphertextSink, OnDemand, SecretBytes, SecretKey, packed_p};
use crate::sampling::StreamedMatrix;

pub use crate::ct::{ConstantTimeSelect, KeySelect};

/// SHA3-256 of the concatenation of `parts`, as the crate computes it on this CPU.
pub fn sha3_256(parts: &[&[u8]]) -> [u8; 32] {
    Hasher::for_operation(Symmetric::Sha3).h(parts)
}

/// SHA3-512 of the concatenation of `parts`, as the crate computes it on this CPU.
pub fn sha3_512(parts: &[&[u8]]) -> [u8; 64] {
    Hasher::for_operation(Symmetric::Sha3).g(parts)
}

/// The first `out.len()` bytes of SHAKE128 of the concatenation of `parts`, as the crate
/// computes it on this CPU.
pub fn shake128(parts: &[&[u8]], out: &mut [u8]) {
    Hasher::for_operation(Symmetric::Sha3).xof(parts).read(out)
}

impl<V: Variant, const L: usize, const MU: usize, const ET: usize> SaberKem<V, L, MU, ET>
where
    Self: ParameterSet,
{
    /// Saber.PKE.KeyGen with seed_A already hashed: writes `pk` and the IND-CPA secret key
    /// `sk_cpa` (the first bytes of the KEM's secret key).
    pub fn pke_keygen<B: Backend>(
        backend: &mut B,
        seed_a: &[u8; 32],
        seed_s: &[u8; 32],
        pk: &mut [u8],
        sk_cpa: &mut [u8],
    ) -> Result<(), Error> {
        check_length(pk, sizes::public_key(L))?;
        check_length(sk_cpa, sizes::secret_cpa::<V>(L))?;
        let hasher = Self::hasher();
        let mut buffer = crate::ct::Wiped([0u8; crate::kem::MAX_KEYGEN_BUFFER]);
        let buffer = &mut buffer[..<B::Plan as pke::MemoryPlan>::keygen_buffer::<V, L>()];
        pke::keygen::<V, B::Plan, B::Mul, L, MU>(
            backend.mul(),
            &mut StreamedMatrix::new::<V, L>(&hasher, seed_a),
            SecretBytes::Seed(&hasher, seed_s),
            &mut pk[..L * sizes::POLY_P_BYTES],
            buffer,
        );
        pk[L * sizes::POLY_P_BYTES..].copy_from_slice(seed_a);
        sk_cpa.copy_from_slice(&buffer[..sk_cpa.len()]);
        Ok(())
    }

    /// Saber.PKE.Enc of `m` with the coins `coins` under `pk`, into `ct`.
    pub fn pke_encrypt<B: Backend>(
        backend: &mut B,
        pk: &[u8],
        m: &[u8; 32],
        coins: &[u8; 32],
        ct: &mut [u8],
    ) -> Result<(), Error> {
        check_length(pk, sizes::public_key(L))?;
        check_length(ct, sizes::ciphertext(L, ET))?;
        let hasher = Self::hasher();
        let (packed_b, seed_a) = pk.split_at(L * sizes::POLY_P_BYTES);
        let mut seed = [0u8; 32];
        seed.copy_from_slice(seed_a);
        pke::encrypt::<V, B::Plan, B::Mul, L, MU, ET>(
            backend.mul(),
            &mut StreamedMatrix::new::<V, L>(&hasher, &seed),
            &mut packed_p(packed_b),
            SecretBytes::Seed(&hasher, coins),
            m,
            &mut CiphertextSink::Write(ct),
        );
        Ok(())
    }

    /// Saber.PKE.Dec of `ct` with the IND-CPA secret key `sk_cpa` (not range-checked: it must
    /// come from key generation).
    pub fn pke_decrypt<B: Backend>(
        backend: &mut B,
        sk_cpa: &[u8],
        ct: &[u8],
    ) -> Result<[u8; 32], Error> {
        check_length(sk_cpa, sizes::secret_cpa::<V>(L))?;
        check_length(ct, sizes::ciphertext(L, ET))?;
        Ok(pke::decrypt::<V, B::Mul, L, ET>(
            backend.mul(),
            &mut OnDemand(SecretKey::<V>::new(sk_cpa)),
            ct,
        ))
    }
}

/// The Keccak layer (FIPS 202): the permutations, the one-state driver and the lane runner, for
/// benchmarks and the embedded harness. Unstable.
pub mod keccak {
    pub use crate::keccak::{Function, Job, Multi, Shake128Stream, Single, Then, permute};
}

/// The x86 instruction-set cap: the crate uses at most this level (AVX-512 → AVX2 → portable)
/// on a machine that has more, for tests and benchmarks (also `--cfg saber_isa="avx2"` or
/// `"portable"` at build time, or `SABER_ISA_CAP=avx2` or `portable` in the environment with the
/// `std` feature). Backends built before a cap keep their path.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub use crate::cpu::{Isa, cap_isa, isa_cap};
