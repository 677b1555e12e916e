//! The backends whose domain is the plain coefficient domain (`Prepared` is the secret itself,
//! `Accumulator` the plain sum, `prepare` and `finish` copies): one definition of those steps.

/// `a ← sum + a · s` for a plain-domain backend whose product needs `a` throughout: the sum in
/// a polynomial of its own, multiplied into by `mul_acc`.
pub(crate) fn mul_add_beside(
    a: &mut crate::poly::Poly,
    s: &crate::poly::SecretPoly,
    sum: impl FnOnce(&mut crate::poly::Poly),
    mul_acc: impl FnOnce(&mut crate::poly::Poly, &crate::poly::Poly, &crate::poly::SecretPoly),
) {
    let mut total = crate::poly::Poly::ZERO;
    sum(&mut total);
    mul_acc(&mut total, a, s);
    a.coeffs = total.coeffs;
    zeroize::Zeroize::zeroize(&mut total);
}

/// Implements [`PolyMul`](crate::polymul::PolyMul) for `$backend` in the plain domain, with
/// `mul_acc` done by `$mul_acc(acc, a, s)` and `mul_add_plain` by `$mul_add_plain(a, s, sum)`
/// (default: [`mul_add_beside`] over `$mul_acc`).
macro_rules! plain_domain_polymul {
    ($backend:ty, $name:expr, $mul_acc:expr) => {
        plain_domain_polymul!($backend, $name, $mul_acc, |a, s, sum| {
            $crate::polymul::plain::mul_add_beside(a, s, sum, $mul_acc)
        });
    };
    ($backend:ty, $name:expr, $mul_acc:expr, $mul_add_plain:expr) => {
        impl $crate::polymul::PolyMul for $backend {
            type Prepared = $crate::poly::SecretPoly;
            type Accumulator = $crate::poly::Poly;

            fn prepare(&mut self, s: &$crate::poly::SecretPoly) -> $crate::poly::SecretPoly {
                s.clone()
            }

            fn prepare_into(
                &mut self,
                s: &$crate::poly::SecretPoly,
                out: &mut $crate::poly::SecretPoly,
            ) {
                out.coeffs = s.coeffs;
            }

            fn accumulator(&mut self) -> $crate::poly::Poly {
                $crate::poly::Poly::ZERO
            }

            fn mul_acc(
                &mut self,
                acc: &mut $crate::poly::Poly,
                a: &$crate::poly::Poly,
                s: &$crate::poly::SecretPoly,
            ) {
                $mul_acc(acc, a, s)
            }

            fn finish(&mut self, acc: &$crate::poly::Poly) -> $crate::poly::Poly {
                acc.clone()
            }

            fn mul_add_plain(
                &mut self,
                a: &mut $crate::poly::Poly,
                s: &$crate::poly::SecretPoly,
                sum: impl FnOnce(&mut $crate::poly::Poly),
            ) {
                $mul_add_plain(a, s, sum)
            }

            fn name(&self) -> &'static str {
                $name
            }
        }
    };
}
