//! Unit tests: the layer-count variants against the oracle, the scalar and AVX-512 paths against
//! each other at every step (prepared secrets, accumulators, outputs: bit for bit), the AVX2
//! path (two 16-bit primes, its own domain layout) against the scalar outputs, and the SIMD
//! paths' `finish_into` wiping the sums.

extern crate std;

use std::vec;
use std::vec::Vec;

use proptest::prelude::*;

use super::*;
use crate::poly::{Q_MASK, SECRET_BOUND};
use crate::polymul::{PolyMulPublic, Schoolbook};

fn poly_strategy() -> impl Strategy<Value = Poly> {
    prop_oneof![
        proptest::collection::vec(any::<u16>(), N),
        proptest::collection::vec(prop::sample::select(vec![0u16, 4095, 4096, 8191]), N),
    ]
    .prop_map(|v| Poly {
        coeffs: v.try_into().unwrap(),
    })
}

fn secret_strategy() -> impl Strategy<Value = SecretPoly> {
    let b = SECRET_BOUND;
    prop_oneof![
        proptest::collection::vec(-b..=b, N),
        proptest::collection::vec(prop::sample::select(vec![-b, b]), N),
    ]
    .prop_map(|v| SecretPoly {
        coeffs: v.try_into().unwrap(),
    })
}

fn sum_with<B: PolyMul>(mut backend: B, terms: &[(Poly, SecretPoly)]) -> Poly {
    let mut acc = backend.accumulator();
    for (a, s) in terms {
        let prepared = backend.prepare(s);
        backend.mul_acc(&mut acc, a, &prepared);
    }
    backend.finish(&acc)
}

fn masked(p: &Poly) -> [u16; N] {
    p.coeffs.map(|c| c & Q_MASK)
}

/// The largest sum the contract allows: four products of 4096·x^i-style extremes with ±5.
fn extreme_terms() -> Vec<(Poly, SecretPoly)> {
    let a = Poly { coeffs: [4096; N] };
    let s = SecretPoly {
        coeffs: [SECRET_BOUND; N],
    };
    (0..4).map(|_| (a.clone(), s.clone())).collect()
}

#[test]
fn layer_variants_match_schoolbook_on_the_extreme_sum() {
    let terms = extreme_terms();
    let want = masked(&sum_with(Schoolbook, &terms));
    assert_eq!(masked(&sum_with(NttScalarLayers::<5>, &terms)), want);
    assert_eq!(masked(&sum_with(NttScalarLayers::<6>, &terms)), want);
    assert_eq!(masked(&sum_with(NttScalarLayers::<7>, &terms)), want);
    assert_eq!(masked(&sum_with(NttScalarLayers::<8>, &terms)), want);
    assert_eq!(masked(&sum_with(NttScalar, &terms)), want);
    assert_eq!(masked(&sum_with(NttMerged, &terms)), want);
    assert_eq!(masked(&sum_with(NttLowStack, &terms)), want);
}

#[test]
fn output_is_the_exact_integer_wrapped_to_u16() {
    // (4096·Σx^i)·(5·Σx^i) has coefficient k = 4096·5·((k + 1) − (255 − k)) in Z; summed four
    // times, coefficient 255 is 4·4096·5·256 = 20,971,520, the contract's extreme.
    for got in [
        sum_with(NttScalar, &extreme_terms()),
        sum_with(NttMerged, &extreme_terms()),
        sum_with(NttLowStack, &extreme_terms()),
    ] {
        for (k, &c) in got.coeffs.iter().enumerate() {
            let exact = 4 * 4096 * 5 * (2 * k as i64 + 2 - 256);
            assert_eq!(c, exact as u16, "coefficient {k}");
        }
    }
}

/// The merged NTT's accumulator holds zero when made and again once finished in place (its sums
/// are stored anew by the next product, not added to), and its prepared secret is rewritten in
/// place whatever it held.
fn merged_accumulator_restarts<B: PolyMul>(mut backend: B, terms: &[(Poly, SecretPoly)]) {
    let mut acc = backend.accumulator();
    assert_eq!(backend.finish(&acc), Poly::ZERO, "{}", backend.name());
    let mut out = Poly { coeffs: [1; N] };
    backend.finish_into(&mut acc, &mut out);
    assert_eq!(out, Poly::ZERO, "{}", backend.name());
    let mut prepared = backend.prepare(&terms[0].1);
    for (a, s) in terms {
        backend.prepare_into(s, &mut prepared);
        backend.mul_acc(&mut acc, a, &prepared);
        backend.finish_into(&mut acc, &mut out);
        assert_eq!(
            masked(&out),
            masked(&sum_with(Schoolbook, &[(a.clone(), s.clone())])),
            "{}",
            backend.name()
        );
    }
    prepared.zeroize();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn merged_accumulators_restart_from_zero(
        terms in proptest::collection::vec((poly_strategy(), secret_strategy()), 1..=4)
    ) {
        merged_accumulator_restarts(NttMerged, &terms);
        merged_accumulator_restarts(NttMergedPortable, &terms);
    }

    #[test]
    fn layer_variants_match_schoolbook(
        terms in proptest::collection::vec((poly_strategy(), secret_strategy()), 1..=4)
    ) {
        let want = masked(&sum_with(Schoolbook, &terms));
        prop_assert_eq!(masked(&sum_with(NttScalarLayers::<5>, &terms)), want);
        prop_assert_eq!(masked(&sum_with(NttScalarLayers::<7>, &terms)), want);
        prop_assert_eq!(masked(&sum_with(NttScalarLayers::<8>, &terms)), want);
        prop_assert_eq!(masked(&sum_with(NttMerged, &terms)), want);
        prop_assert_eq!(masked(&sum_with(NttLowStack, &terms)), want);
    }

    #[test]
    fn scalar_and_avx2_outputs_agree_bit_for_bit(
        terms in proptest::collection::vec((poly_strategy(), secret_strategy()), 1..=4)
    ) {
        match NttAvx2::new() {
            Some(avx2) => avx2_agrees_with_scalar(avx2, &terms)?,
            None => std::eprintln!("note: CPU without AVX2, scalar/AVX2 comparison skipped"),
        }
    }

    #[test]
    fn scalar_and_avx512_agree_bit_for_bit(
        terms in proptest::collection::vec((poly_strategy(), secret_strategy()), 1..=4)
    ) {
        match NttAvx512::new() {
            Some(avx512) => simd_agrees_with_scalar(avx512, &terms)?,
            None => std::eprintln!("note: CPU without AVX-512, scalar/AVX-512 comparison skipped"),
        }
    }
}

/// Every step of `simd` against the scalar path, bit for bit: prepared secrets, accumulators
/// (also of mixed steps: each path accepts the other's state), outputs, cached public operands.
fn simd_agrees_with_scalar<B>(
    mut simd: B,
    terms: &[(Poly, SecretPoly)],
) -> Result<(), TestCaseError>
where
    B: PolyMulPublic<
            Prepared = NttPrepared,
            Accumulator = NttAccumulator,
            PreparedPublic = NttPublic,
        >,
{
    let mut scalar = NttScalar;
    let mut acc_scalar = scalar.accumulator();
    let mut acc_simd = simd.accumulator();
    let mut acc_mixed = scalar.accumulator();
    let mut acc_cached = simd.accumulator();
    for (a, s) in terms {
        let p_scalar = scalar.prepare(s);
        let p_simd = simd.prepare(s);
        prop_assert_eq!(p_scalar.columns, p_simd.columns);
        scalar.mul_acc(&mut acc_scalar, a, &p_scalar);
        simd.mul_acc(&mut acc_simd, a, &p_simd);
        prop_assert_eq!(acc_scalar.sums, acc_simd.sums);
        simd.mul_acc(&mut acc_mixed, a, &p_scalar);
        let public_scalar = scalar.prepare_public(a);
        let public_simd = simd.prepare_public(a);
        prop_assert_eq!(public_scalar.coeffs, public_simd.coeffs);
        simd.mul_acc_prepared(&mut acc_cached, &public_simd, &p_scalar);
    }
    prop_assert_eq!(acc_mixed.sums, acc_scalar.sums);
    prop_assert_eq!(acc_cached.sums, acc_scalar.sums);
    let out_scalar = scalar.finish(&acc_scalar);
    prop_assert_eq!(out_scalar.coeffs, simd.finish(&acc_scalar).coeffs);
    prop_assert_eq!(out_scalar.coeffs, simd.finish(&acc_simd).coeffs);
    finish_into_wipes(&mut simd, &mut acc_simd, &out_scalar)
}

/// `finish_into` of a SIMD path gives `finish`'s sum and leaves every one of the accumulator's
/// sums zero (the kernel wipes them as it reads them).
fn finish_into_wipes<B: PolyMul<Accumulator = NttAccumulator>>(
    backend: &mut B,
    acc: &mut NttAccumulator,
    want: &Poly,
) -> Result<(), TestCaseError> {
    let mut out = Poly::ZERO;
    backend.finish_into(acc, &mut out);
    prop_assert_eq!(out.coeffs, want.coeffs);
    prop_assert!(acc.sums.iter().all(|&x| x == 0), "{}", backend.name());
    Ok(())
}

/// The AVX2 path against the scalar one: its domain values are its own (two primes), so the
/// outputs are compared bit for bit, after every product (`finish` leaves the sum in place), and
/// its cached public operands and its products of unprepared secrets (`mul_acc_once`) give its
/// own `mul_acc` accumulators exactly.
fn avx2_agrees_with_scalar(
    mut avx2: NttAvx2,
    terms: &[(Poly, SecretPoly)],
) -> Result<(), TestCaseError> {
    let mut scalar = NttScalar;
    let mut acc_scalar = scalar.accumulator();
    let mut acc_avx2 = avx2.accumulator();
    let mut acc_cached = avx2.accumulator();
    let mut acc_once = avx2.accumulator();
    for (a, s) in terms {
        let p_scalar = scalar.prepare(s);
        let p_avx2 = avx2.prepare(s);
        scalar.mul_acc(&mut acc_scalar, a, &p_scalar);
        avx2.mul_acc(&mut acc_avx2, a, &p_avx2);
        // Without the prepared image: the same accumulator.
        avx2.mul_acc_once(&mut acc_once, a, s);
        prop_assert_eq!(acc_once.sums, acc_avx2.sums);
        prop_assert_eq!(
            scalar.finish(&acc_scalar).coeffs,
            avx2.finish(&acc_avx2).coeffs
        );
        let public = avx2.prepare_public(a);
        avx2.mul_acc_prepared(&mut acc_cached, &public, &p_avx2);
        prop_assert_eq!(acc_cached.sums, acc_avx2.sums);
    }
    let want = scalar.finish(&acc_scalar);
    finish_into_wipes(&mut avx2, &mut acc_avx2, &want)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// A cached public operand gives the very accumulator `mul_acc` gives (the SIMD paths are
    /// compared with the scalar one in `simd_agrees_with_scalar`).
    #[test]
    fn cached_public_operands_match_mul_acc(
        terms in proptest::collection::vec((poly_strategy(), secret_strategy()), 1..=4)
    ) {
        let mut scalar = NttScalar;
        let mut want = scalar.accumulator();
        let mut got = scalar.accumulator();
        for (a, s) in &terms {
            let prepared = scalar.prepare(s);
            scalar.mul_acc(&mut want, a, &prepared);
            let public = scalar.prepare_public(a);
            scalar.mul_acc_prepared(&mut got, &public, &prepared);
        }
        prop_assert_eq!(got.sums, want.sums);
        let want_poly = masked(&sum_with(Schoolbook, &terms));
        prop_assert_eq!(masked(&scalar.finish(&got)), want_poly);
    }
}

#[test]
fn simd_paths_agree_with_scalar_on_the_extreme_sums() {
    // The contract's extremes of both signs, for the AVX2 path's 16-bit bounds.
    let negated = extreme_terms()
        .into_iter()
        .map(|(a, mut s)| {
            s.coeffs = s.coeffs.map(|c| -c);
            (a, s)
        })
        .collect::<Vec<_>>();
    let mixed = (0..4)
        .map(|k| {
            let a = Poly {
                coeffs: [if k & 1 == 0 { 4095 } else { 4096 }; N],
            };
            let s = SecretPoly {
                coeffs: core::array::from_fn(|i| {
                    if i.is_multiple_of(3) {
                        -SECRET_BOUND
                    } else {
                        SECRET_BOUND
                    }
                }),
            };
            (a, s)
        })
        .collect::<Vec<_>>();
    if let Some(avx2) = NttAvx2::new() {
        avx2_agrees_with_scalar(avx2, &negated).unwrap();
        avx2_agrees_with_scalar(avx2, &mixed).unwrap();
    }
    let terms = extreme_terms();
    if let Some(avx2) = NttAvx2::new() {
        avx2_agrees_with_scalar(avx2, &terms).unwrap();
    }
    if let Some(avx512) = NttAvx512::new() {
        simd_agrees_with_scalar(avx512, &terms).unwrap();
    }
}

#[test]
fn auto_backend_picks_the_widest_simd_path_present() {
    let expected = if NttAvx512::new().is_some() {
        "ntt-avx512"
    } else if NttAvx2::new().is_some() {
        "ntt-avx2"
    } else {
        "ntt-scalar"
    };
    assert_eq!(Ntt::new().name(), expected);
}

/// The slots' niche holds: `Option` of a prepared secret or an accumulator has no tag of its
/// own, so that a slot is zero-filled in place (`Niche`).
#[test]
fn slots_need_no_tag() {
    use core::mem::size_of;
    assert_eq!(size_of::<Option<NttPrepared>>(), size_of::<NttPrepared>());
    assert_eq!(
        size_of::<Option<NttAccumulator>>(),
        size_of::<NttAccumulator>()
    );
}
