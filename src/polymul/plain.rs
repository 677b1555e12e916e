//! The backends whose domain is the plain coefficient domain (`Prepared` is the secret itself,
//! `Accumulator` the plain sum, `prepare` and `finish` copies): one definition of those steps.

/// Implements [`PolyMul`](crate::polymul::PolyMul) for `$backend` in the plain domain, with
/// `mul_acc` done by `$mul_acc(acc, a, s)`.
macro_rules! plain_domain_polymul {
    ($backend:ty, $name:expr, $mul_acc:expr) => {
        impl $crate::polymul::PolyMul for $backend {
            type Prepared = $crate::poly::SecretPoly;
            type Accumulator = $crate::poly::Poly;

            fn prepare(&mut self, s: &$crate::poly::SecretPoly) -> $crate::poly::SecretPoly {
                s.clone()
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

            fn name(&self) -> &'static str {
                $name
            }
        }
    };
}
