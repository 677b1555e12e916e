//! The two-worker split (`saber_kem::two_worker`): byte-identical to the one-worker path.
//!
//! - All 100 official records of every parameter set, regenerated through the split on two
//!   threads (`ScopedThreads`) and compared with the digests in `kat/`, on the default backend
//!   and with hand-offs of one, two and four entries; with every schedule (no output, the
//!   default one, decapsulation's only, every output on worker 1); once more with workers that take turns
//!   (`InTurn`, one thread, a ring of the whole matrix), as the emulator measurements run them,
//!   with another backend on each worker.
//! - Implicit rejection: tampered ciphertexts decapsulate through the split to
//!   `SHA3-256(z ‖ SHA3-256(c'))`, computed here with `sha3`, and to what the one-worker path
//!   returns, with the re-encryption's rows on worker 2 and on worker 1.
//! - The ESP32-C3 RSA coprocessor backend (on the strict host model) on worker 2, a software
//!   backend on worker 1.
//!
//! The ring itself is tested under many interleavings in the crate's unit tests
//! (`two_worker::handoff`).

use crate::support;

use saber_kem::polymul::{DefaultPolyMul, Karatsuba, PolyMul};
use saber_kem::two_worker::{InTurn, Schedule, ScopedThreads, TwoWorkers, Workers};
use saber_kem::{Ciphertext, DecapsulationKey, ParameterSet, SaberKem, Variant};
use saber_kem::{Nineties, Plus, Round3, Uniform, UniformNineties};
use sha3::{Digest, Sha3_256};
use support::drbg::{NistDrbg, kat_seeds};
use support::kat::{check, each_record, format_record};

/// Every output of every operation on worker 1.
const ALL_ON_WORKER_1: Schedule = Schedule {
    keygen: usize::MAX,
    encapsulation: usize::MAX,
    decapsulation: usize::MAX,
};

/// The records of a set through the split: the DRBG drawn exactly as for the one-worker KAT
/// generator (seed_A, seed_s, z, then m).
fn records<
    V: Variant,
    W: Workers,
    M: PolyMul + Send,
    B: PolyMul,
    const L: usize,
    const MU: usize,
    const ET: usize,
    const SLOTS: usize,
>(
    workers: &mut TwoWorkers<W, M, SLOTS>,
    backend: &mut B,
) -> Vec<String>
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    each_record(|count, seed| {
        let mut rng = NistDrbg::new(seed);
        let (dk, ek) =
            SaberKem::<V, L, MU, ET>::try_generate_with_workers(workers, backend, &mut rng)
                .unwrap();
        let mut m = [0u8; 32];
        rng.randombytes(&mut m);
        let (ct, ss) = ek.encapsulate_deterministic_with_workers(workers, backend, &m);
        let recovered = dk.decapsulate_with_workers(workers, backend, &ct);
        assert_eq!(recovered, ss, "decapsulation failed at count {count}");
        format_record(count, seed, &ek, &dk, &ct, &ss)
    })
}

macro_rules! kat_sets {
    ($test:ident, $alias:ident, $v:ty, $l:literal, $mu:literal, $et:literal) => {
        mod $test {
            use super::*;

            #[test]
            fn kat_on_two_threads() {
                let mut workers = TwoWorkers::new(ScopedThreads, DefaultPolyMul::default());
                let recs = records::<$v, _, _, _, $l, $mu, $et, 2>(
                    &mut workers,
                    &mut DefaultPolyMul::default(),
                );
                check::<saber_kem::$alias>("two workers, 2 slots", &recs);
            }

            #[test]
            fn kat_with_one_and_four_slots() {
                let mut one = TwoWorkers::<_, _, 1>::with_slots(ScopedThreads, Karatsuba);
                let recs = records::<$v, _, _, _, $l, $mu, $et, 1>(
                    &mut one,
                    &mut DefaultPolyMul::default(),
                );
                check::<saber_kem::$alias>("two workers, 1 slot", &recs);
                let mut four = TwoWorkers::<_, _, 4>::with_slots(ScopedThreads, Karatsuba);
                let recs = records::<$v, _, _, _, $l, $mu, $et, 4>(
                    &mut four,
                    &mut DefaultPolyMul::default(),
                );
                check::<saber_kem::$alias>("two workers, 4 slots", &recs);
            }

            #[test]
            fn kat_with_every_schedule() {
                for (name, schedule) in [
                    ("matrix only", Schedule::MATRIX_ONLY),
                    ("cheap products", Schedule::CHEAP_PRODUCTS),
                    ("all outputs on worker 1", ALL_ON_WORKER_1),
                ] {
                    let mut workers = TwoWorkers::new(ScopedThreads, DefaultPolyMul::default())
                        .with_schedule(schedule);
                    let recs = records::<$v, _, _, _, $l, $mu, $et, 2>(
                        &mut workers,
                        &mut DefaultPolyMul::default(),
                    );
                    check::<saber_kem::$alias>(name, &recs);
                }
            }

            #[test]
            fn kat_taking_turns() {
                let mut workers =
                    TwoWorkers::<_, _, 16>::with_slots(InTurn, DefaultPolyMul::default());
                let recs = records::<$v, _, _, _, $l, $mu, $et, 16>(&mut workers, &mut Karatsuba);
                check::<saber_kem::$alias>("workers taking turns", &recs);
            }

            #[test]
            fn implicit_rejection() {
                rejection::<$v, $l, $mu, $et>();
            }
        }
    };
}

support::for_each_set!(kat_sets);

/// The set's H: SHA-256 for the 90s sets, SHA3-256 otherwise.
fn set_h(set: &str, parts: &[&[u8]]) -> [u8; 32] {
    if set.ends_with("-90s") {
        let mut h = sha2::Sha256::new();
        for p in parts {
            h.update(p);
        }
        h.finalize().into()
    } else {
        let mut h = Sha3_256::new();
        for p in parts {
            h.update(p);
        }
        h.finalize().into()
    }
}

/// Tampered ciphertexts (one flipped bit at both ends of b' and of c_m, and at pseudorandom
/// positions) decapsulate through the split to the rejection key and to the one-worker result;
/// the untampered one to the shared secret.
fn rejection<V: Variant, const L: usize, const MU: usize, const ET: usize>()
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    for schedule in [Schedule::default(), ALL_ON_WORKER_1] {
        rejection_with::<V, L, MU, ET>(schedule);
    }
}

fn rejection_with<V: Variant, const L: usize, const MU: usize, const ET: usize>(schedule: Schedule)
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let backend = &mut DefaultPolyMul::default();
    let workers =
        &mut TwoWorkers::new(ScopedThreads, DefaultPolyMul::default()).with_schedule(schedule);
    let mut rng = NistDrbg::new(&[7; 48]);
    let (dk, ek) =
        SaberKem::<V, L, MU, ET>::try_generate_with_workers(workers, backend, &mut rng).unwrap();
    let (ct, ss) = ek
        .try_encapsulate_with_workers(workers, backend, &mut rng)
        .unwrap();
    assert_eq!(dk.decapsulate_with_workers(workers, backend, &ct), ss);
    let sk = dk.to_bytes();
    let z = &sk.as_ref()[sk.as_ref().len() - 32..];
    let len = ct.as_bytes().len();
    let b_len = L * 320;
    let mut bits = vec![0, 8 * b_len - 1, 8 * b_len, 8 * len - 1];
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..12 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        bits.push((x % (8 * len as u64)) as usize);
    }
    for bit in bits {
        let mut bytes = ct.as_bytes().to_vec();
        bytes[bit >> 3] ^= 1 << (bit & 7);
        let tampered = Ciphertext::<SaberKem<V, L, MU, ET>>::from_bytes(&bytes).unwrap();
        let got = dk.decapsulate_with_workers(workers, backend, &tampered);
        assert_eq!(
            got.as_bytes(),
            &set_h(
                SaberKem::<V, L, MU, ET>::NAME,
                &[z, &set_h(SaberKem::<V, L, MU, ET>::NAME, &[&bytes])]
            ),
            "{}: bit {bit}",
            SaberKem::<V, L, MU, ET>::NAME
        );
        assert_eq!(got, dk.decapsulate_with(backend, &tampered));
    }
    // A ciphertext for another key is rejected too.
    check_other_key::<V, L, MU, ET>(&dk, &ct, workers, backend);
}

/// Decapsulation under a key the ciphertext was not made for gives that key's rejection key.
fn check_other_key<V: Variant, const L: usize, const MU: usize, const ET: usize>(
    dk: &DecapsulationKey<SaberKem<V, L, MU, ET>>,
    ct: &Ciphertext<SaberKem<V, L, MU, ET>>,
    workers: &mut TwoWorkers<ScopedThreads, DefaultPolyMul>,
    backend: &mut DefaultPolyMul,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let mut rng = NistDrbg::new(&[9; 48]);
    let (other, _) = SaberKem::<V, L, MU, ET>::try_generate_with(backend, &mut rng).unwrap();
    let sk = other.to_bytes();
    let z = &sk.as_ref()[sk.as_ref().len() - 32..];
    assert_eq!(
        other
            .decapsulate_with_workers(workers, backend, ct)
            .as_bytes(),
        &set_h(
            SaberKem::<V, L, MU, ET>::NAME,
            &[z, &set_h(SaberKem::<V, L, MU, ET>::NAME, &[ct.as_bytes()])]
        )
    );
    assert_ne!(
        other.decapsulate_with_workers(workers, backend, ct),
        dk.decapsulate_with_workers(workers, backend, ct)
    );
}

/// The ESP32-C3 RSA coprocessor backend (Kronecker on the strict host model of the C3's RSA
/// block) on worker 2 and a software backend on worker 1: the first KAT records of Saber and
/// Saber+.
#[test]
fn coprocessor_backend_on_worker_two() {
    use saber_kem::hw::esp32_model::kronecker_on_model;
    use saber_kem::hw::esp32_rsa::Esp32C3;
    fn first_records<V: Variant, const L: usize, const MU: usize, const ET: usize>()
    where
        SaberKem<V, L, MU, ET>: ParameterSet,
    {
        let mut model = kronecker_on_model::<Esp32C3>();
        let mut workers = TwoWorkers::new(ScopedThreads, DefaultPolyMul::default());
        for seed in &kat_seeds()[..3] {
            let mut rng = NistDrbg::new(seed);
            let (dk, ek) = SaberKem::<V, L, MU, ET>::try_generate_with_workers(
                &mut workers,
                &mut model,
                &mut rng,
            )
            .unwrap();
            let mut m = [0u8; 32];
            rng.randombytes(&mut m);
            let (ct, ss) = ek.encapsulate_deterministic_with_workers(&mut workers, &mut model, &m);
            let mut rng = NistDrbg::new(seed);
            let (dk1, ek1) = SaberKem::<V, L, MU, ET>::try_generate_with(
                &mut saber_kem::polymul::Schoolbook,
                &mut rng,
            )
            .unwrap();
            let (ct1, ss1) =
                ek1.encapsulate_deterministic_with(&mut saber_kem::polymul::Schoolbook, &m);
            assert!(dk == dk1 && ek == ek1 && ct == ct1 && ss == ss1);
            assert_eq!(
                dk.decapsulate_with_workers(&mut workers, &mut model, &ct),
                ss
            );
        }
        assert!(model.engine_mut().take_fault().is_none());
    }
    first_records::<Round3, 3, 8, 4>();
    first_records::<Plus, 3, 8, 4>();
}

/// A backend whose products panic.
struct Failing;

impl PolyMul for Failing {
    type Prepared = u8;
    type Accumulator = u8;
    fn prepare(&mut self, _: &saber_kem::polymul::SecretPoly) -> u8 {
        0
    }
    fn accumulator(&mut self) -> u8 {
        0
    }
    fn mul_acc(&mut self, _: &mut u8, _: &saber_kem::polymul::Poly, _: &u8) {
        panic!("backend failure");
    }
    fn finish(&mut self, _: &u8) -> saber_kem::polymul::Poly {
        saber_kem::polymul::Poly::ZERO
    }
    fn name(&self) -> &'static str {
        "failing"
    }
}

/// A panic on worker 2 reaches the caller, and worker 1 (waiting at a full hand-off) stops
/// instead of hanging the join.
#[test]
fn a_panic_on_worker_two_does_not_hang_worker_one() {
    let result = std::panic::catch_unwind(|| {
        let mut workers = TwoWorkers::<_, _, 1>::with_slots(ScopedThreads, Karatsuba);
        let mut rng = NistDrbg::new(&[1; 48]);
        let _ = saber_kem::Saber::try_generate_with_workers(&mut workers, &mut Failing, &mut rng);
    });
    assert!(result.is_err());
}

/// A panic on worker 1 (in its own products) reaches the caller, and worker 2 (waiting for an
/// entry or for worker 1's outputs) stops instead of hanging the join, in every operation.
#[test]
fn a_panic_on_worker_one_does_not_hang_worker_two() {
    let mut rng = NistDrbg::new(&[2; 48]);
    let (dk, ek) = saber_kem::Saber::try_generate_with(&mut Karatsuba, &mut rng).unwrap();
    let (ct, _) = ek.try_encapsulate_with(&mut Karatsuba, &mut rng).unwrap();
    let workers = || TwoWorkers::<_, _, 1>::with_slots(ScopedThreads, Failing);
    let keygen = std::panic::catch_unwind(|| {
        let mut rng = NistDrbg::new(&[1; 48]);
        let _ =
            saber_kem::Saber::try_generate_with_workers(&mut workers(), &mut Karatsuba, &mut rng);
    });
    let encaps = std::panic::catch_unwind(|| {
        let mut rng = NistDrbg::new(&[1; 48]);
        let _ = ek.try_encapsulate_with_workers(&mut workers(), &mut Karatsuba, &mut rng);
    });
    let decaps = std::panic::catch_unwind(|| {
        let _ = dk.decapsulate_with_workers(&mut workers(), &mut Karatsuba, &ct);
    });
    assert!(keygen.is_err() && encaps.is_err() && decaps.is_err());
}
