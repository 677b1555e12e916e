//! Interoperability with the C implementation of round-3 Saber in `pqcrypto-saber` 0.1.11
//! (PQClean's code; its AVX2 build where the CPU supports it), for LightSaber, Saber and
//! FireSaber, on every backend of `for_each_backend!`:
//!
//! - C key pair → our encapsulation → C decapsulation, and our decapsulation with the C secret
//!   key decoded by `DecapsulationKey::from_bytes`;
//! - our key pair → C encapsulation → our decapsulation, and C decapsulation with our secret key;
//! - a tampered ciphertext decapsulates to the same rejection key on both sides.
//!
//! `SABER_INTEROP_ROUNDS` (default 100) sets the rounds per parameter set and backend; each test
//! checks that it ran every round on every backend of the run-time list (the binary's
//! `backends_run_here` prints it: `backends run: …; skipped: …`). Saber+
//! has no C counterpart in pqcrypto-saber.

#[path = "../../tests/support/backends.rs"]
mod backends;

use backends::Backends;
#[path = "../../tests/support/drbg.rs"]
#[allow(dead_code)]
mod drbg;

use drbg::NistDrbg;
use pqcrypto_traits::kem::{Ciphertext as _, PublicKey as _, SecretKey as _, SharedSecret as _};
use saber_kem::{Ciphertext, DecapsulationKey, EncapsulationKey};

fn rounds() -> usize {
    std::env::var("SABER_INTEROP_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}

/// Flips one bit chosen by `round` (spread over b' and c_m).
fn tamper(ct: &[u8], round: usize) -> Vec<u8> {
    let mut bad = ct.to_vec();
    let bit = round.wrapping_mul(7919) % (ct.len() * 8);
    bad[bit / 8] ^= 1 << (bit % 8);
    bad
}

macro_rules! interop_tests {
    ($set:ident, $ours:ty, $c:path) => {
        mod $set {
            use super::*;
            use $c as c;
            type Ours = $ours;

            #[test]
            fn c_keys_our_encapsulation() {
                let mut rng = NistDrbg::new(&[0x11; 48]);
                let backends = Backends::here();
                let mut checked = 0;
                for round in 0..rounds() {
                    let (c_pk, c_sk) = c::keypair();
                    let ek = EncapsulationKey::<Ours>::from_bytes(c_pk.as_bytes()).unwrap();
                    let dk = DecapsulationKey::<Ours>::from_bytes(c_sk.as_bytes())
                        .expect("a C secret key must decode");
                    assert_eq!(dk.encapsulation_key(), &ek);
                    macro_rules! each_backend {
                        ($id:ident, $name:expr, $ctor:expr) => {
                            let mut backend = $ctor;
                            let (ct, ss) = ek.try_encapsulate_with(&mut backend, &mut rng).unwrap();
                            let c_ct = c::Ciphertext::from_bytes(ct.as_bytes()).unwrap();
                            assert_eq!(
                                c::decapsulate(&c_ct, &c_sk).as_bytes(),
                                ss.as_bytes(),
                                "{} round {round}: C decapsulation of our ciphertext",
                                $name
                            );
                            assert!(dk.decapsulate_with(&mut backend, &ct) == ss);
                            let bad = tamper(ct.as_bytes(), round);
                            let c_bad = c::Ciphertext::from_bytes(&bad).unwrap();
                            let ours_bad = Ciphertext::<Ours>::from_bytes(&bad).unwrap();
                            assert_eq!(
                                dk.decapsulate_with(&mut backend, &ours_bad).as_bytes(),
                                c::decapsulate(&c_bad, &c_sk).as_bytes(),
                                "{} round {round}: rejection keys differ",
                                $name
                            );
                            checked += 1;
                        };
                    }
                    backends::for_each_backend!(each_backend, backends);
                }
                // Every round on every backend this CPU runs (`backends_run_here` prints the list).
                assert!(!backends.run.is_empty() && rounds() > 0);
                assert_eq!(checked, rounds() * backends.run.len());
            }

            #[test]
            fn our_keys_c_encapsulation() {
                let mut rng = NistDrbg::new(&[0x22; 48]);
                let backends = Backends::here();
                let mut checked = 0;
                for round in 0..rounds() {
                    macro_rules! each_backend {
                        ($id:ident, $name:expr, $ctor:expr) => {
                            let mut backend = $ctor;
                            let (dk, ek) = Ours::try_generate_with(&mut backend, &mut rng).unwrap();
                            let c_pk = c::PublicKey::from_bytes(ek.as_bytes()).unwrap();
                            let c_sk = c::SecretKey::from_bytes(dk.to_bytes().as_ref()).unwrap();
                            let (c_ss, c_ct) = c::encapsulate(&c_pk);
                            let ct = Ciphertext::<Ours>::from_bytes(c_ct.as_bytes()).unwrap();
                            assert_eq!(
                                dk.decapsulate_with(&mut backend, &ct).as_bytes(),
                                c_ss.as_bytes(),
                                "{} round {round}: our decapsulation of a C ciphertext",
                                $name
                            );
                            assert_eq!(c::decapsulate(&c_ct, &c_sk).as_bytes(), c_ss.as_bytes());
                            let bad = tamper(c_ct.as_bytes(), round);
                            let c_bad = c::Ciphertext::from_bytes(&bad).unwrap();
                            let ours_bad = Ciphertext::<Ours>::from_bytes(&bad).unwrap();
                            assert_eq!(
                                dk.decapsulate_with(&mut backend, &ours_bad).as_bytes(),
                                c::decapsulate(&c_bad, &c_sk).as_bytes(),
                                "{} round {round}: rejection keys differ",
                                $name
                            );
                            checked += 1;
                        };
                    }
                    backends::for_each_backend!(each_backend, backends);
                }
                // Every round on every backend this CPU runs (`backends_run_here` prints the list).
                assert!(!backends.run.is_empty() && rounds() > 0);
                assert_eq!(checked, rounds() * backends.run.len());
            }
        }
    };
}

interop_tests!(
    lightsaber,
    saber_kem::LightSaber,
    pqcrypto_saber::lightsaber
);
interop_tests!(saber, saber_kem::Saber, pqcrypto_saber::saber);
interop_tests!(firesaber, saber_kem::FireSaber, pqcrypto_saber::firesaber);
