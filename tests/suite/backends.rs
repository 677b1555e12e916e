//! Differential tests: every backend equals the schoolbook oracle, on random and extreme inputs,
//! for single products and for sums of up to four products (the most the KEM accumulates).

use crate::support;

use proptest::prelude::*;
use saber_kem::polymul::{N, Poly, Q_MASK, SECRET_BOUND, SecretPoly};
use saber_kem::polymul::{PackedSecret, PolyMul, Schoolbook};

fn poly_strategy() -> impl Strategy<Value = Poly> {
    prop_oneof![
        // Uniform residues, with arbitrary garbage in the top three bits (only 13 bits count).
        proptest::collection::vec(any::<u16>(), N),
        // Extremes: everything 8191 (= -1), 4095, 4096, 0.
        prop::sample::select(vec![0u16, 4095, 4096, 8191]).prop_map(|c| vec![c; N]),
        proptest::collection::vec(prop::sample::select(vec![0u16, 4095, 4096, 8191]), N),
    ]
    .prop_map(|v| {
        let mut p = Poly::ZERO;
        p.coeffs.copy_from_slice(&v);
        p
    })
}

fn secret_strategy() -> impl Strategy<Value = SecretPoly> {
    let b = SECRET_BOUND;
    prop_oneof![
        proptest::collection::vec(-b..=b, N),
        prop::sample::select(vec![-b, b, -4, 4, -3, 3]).prop_map(|c| vec![c; N]),
        proptest::collection::vec(prop::sample::select(vec![-b, b]), N),
    ]
    .prop_map(|v| {
        let mut s = SecretPoly::ZERO;
        s.coeffs.copy_from_slice(&v);
        s
    })
}

fn masked(p: &Poly) -> [u16; N] {
    p.coeffs.map(|c| c & Q_MASK)
}

/// Σ a_k·s_k through the backend's accumulator, against the oracle (`finish` and `finish_into`);
/// with the products of unprepared secrets (`mul_acc_once`) in turn with prepared ones, the same
/// sum bit for bit.
fn check_sum<B: PolyMul>(mut backend: B, terms: &[(Poly, SecretPoly)]) {
    let mut oracle = Schoolbook;
    let mut want = oracle.accumulator();
    let mut acc = backend.accumulator();
    let mut mixed = backend.accumulator();
    for (k, (a, s)) in terms.iter().enumerate() {
        let p = oracle.prepare(s);
        oracle.mul_acc(&mut want, a, &p);
        let prepared = backend.prepare(s);
        backend.mul_acc(&mut acc, a, &prepared);
        if k % 2 == 0 {
            backend.mul_acc_once(&mut mixed, a, s);
        } else {
            backend.mul_acc(&mut mixed, a, &prepared);
        }
    }
    let got = backend.finish(&acc);
    assert_eq!(
        backend.finish(&mixed).coeffs,
        got.coeffs,
        "backend {}: mul_acc_once",
        backend.name()
    );
    // `finish_into`, the KEM's form (the backend's own or the default), gives the same sum.
    let mut into = Poly::ZERO;
    backend.finish_into(&mut acc, &mut into);
    assert_eq!(
        into.coeffs,
        got.coeffs,
        "backend {}: finish_into",
        backend.name()
    );
    // ... and leaves the sum wiped: nothing of it is finished again.
    assert_eq!(
        backend.finish(&acc),
        Poly::ZERO,
        "backend {}: finish_into leaves the accumulator wiped",
        backend.name()
    );
    assert_eq!(
        masked(&got),
        masked(&oracle.finish(&want)),
        "backend {}",
        backend.name()
    );
}

/// A secret prepared in a slot that held another one ([`PolyMul::prepare_in`] over a prepared
/// value: backends that build in place must leave nothing of the old one) multiplies as a fresh
/// one, and as the oracle.
fn check_prepared_over_another<B: PolyMul>(
    mut backend: B,
    a: &Poly,
    s: &SecretPoly,
    old: &SecretPoly,
) {
    let mut slot = None;
    backend.prepare_in(old, &mut slot);
    backend.prepare_in(s, &mut slot);
    let Some(in_place) = slot else {
        panic!("prepare_in left the slot empty");
    };
    let fresh = backend.prepare(s);
    let mut product = |prepared: &B::Prepared| {
        let mut acc = backend.accumulator();
        backend.mul_acc(&mut acc, a, prepared);
        masked(&backend.finish(&acc))
    };
    let (got, want) = (product(&in_place), product(&fresh));
    assert_eq!(got, want, "backend {}", backend.name());
    assert_eq!(got, oracle_product(a, s), "backend {}", backend.name());
}

/// A secret handed over packed, two coefficients per byte ([`PolyMul::with_packed`], the
/// low-memory plan's form), multiplies as the oracle.
fn check_packed<B: PolyMul>(mut backend: B, a: &Poly, s: &SecretPoly) {
    let packed: PackedSecret = core::array::from_fn(|k| {
        (s.coeffs[2 * k] as u8 & 0x0F) | ((s.coeffs[2 * k + 1] as u8) << 4)
    });
    let mut got = None;
    backend.with_packed(&packed, |backend, prepared| {
        let mut acc = backend.accumulator();
        backend.mul_acc(&mut acc, a, prepared);
        got = Some(masked(&backend.finish(&acc)));
    });
    assert_eq!(
        got,
        Some(oracle_product(a, s)),
        "backend {}",
        backend.name()
    );
}

/// `a · s` by the oracle, masked to 13 bits.
fn oracle_product(a: &Poly, s: &SecretPoly) -> [u16; N] {
    let mut oracle = Schoolbook;
    let mut acc = oracle.accumulator();
    let p = oracle.prepare(s);
    oracle.mul_acc(&mut acc, a, &p);
    masked(&oracle.finish(&acc))
}

/// The worst case for exact-integer backends: every term at the largest magnitude, same sign.
fn extreme_terms(count: usize, a_coeff: u16, s_coeff: i8) -> Vec<(Poly, SecretPoly)> {
    let mut a = Poly::ZERO;
    a.coeffs = [a_coeff; N];
    let mut s = SecretPoly::ZERO;
    s.coeffs = [s_coeff; N];
    (0..count).map(|_| (a.clone(), s.clone())).collect()
}

macro_rules! backend_tests {
    ($id:ident, $name:expr, $ctor:expr) => {
        mod $id {
            use super::*;

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(64))]
                #[test]
                fn single_product_matches_schoolbook(a in poly_strategy(), s in secret_strategy()) {
                    check_sum($ctor, &[(a, s)]);
                }

                #[test]
                fn sum_of_four_matches_schoolbook(
                    terms in proptest::collection::vec((poly_strategy(), secret_strategy()), 1..=4)
                ) {
                    check_sum($ctor, &terms);
                }

                #[test]
                fn prepared_over_another_secret_matches(
                    a in poly_strategy(),
                    s in secret_strategy(),
                    old in secret_strategy(),
                ) {
                    check_prepared_over_another($ctor, &a, &s, &old);
                }

                #[test]
                fn packed_secret_matches_schoolbook(a in poly_strategy(), s in secret_strategy()) {
                    check_packed($ctor, &a, &s);
                }
            }

            #[test]
            fn extreme_sums_match_schoolbook() {
                let b = SECRET_BOUND;
                for count in 1..=4 {
                    for (a, s) in [(4096u16, b), (4096, -b), (4095, b), (4095, -b), (8191, b)] {
                        check_sum($ctor, &extreme_terms(count, a, s));
                    }
                }
            }
        }
    };
}

support::backends::for_each_backend!(backend_tests);
