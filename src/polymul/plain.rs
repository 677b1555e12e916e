//! The backends whose domain is the plain coefficient domain (`Prepared` is the secret itself,
//! `Accumulator` the plain sum, `prepare` and `finish` copies): one definition of those steps.

/// `a ← sum + a · s` for a plain-domain backend whose product needs `a` throughout: the sum in
/// a polynomial of its own, multiplied into by `mul_acc`.
pub(crate) fn mul_add_beside<S: ?Sized>(
    a: &mut crate::poly::Poly,
    s: &S,
    sum: impl FnOnce(&mut crate::poly::Poly),
    mul_acc: impl FnOnce(&mut crate::poly::Poly, &crate::poly::Poly, &S),
) {
    let mut total = crate::poly::Poly::ZERO;
    sum(&mut total);
    mul_acc(&mut total, a, s);
    a.coeffs = total.coeffs;
    zeroize::Zeroize::zeroize(&mut total);
}

/// Implements [`PolyMul`](crate::polymul::PolyMul) for `$backend` in the plain domain, with
/// `mul_acc` done by `$mul_acc(acc, a, s)` and `mul_add_plain` by [`mul_add_beside`] over it.
/// The secret is prepared as a [`SecretPoly`](crate::poly::SecretPoly), or with `packed` as a
/// [`PackedSecret`](crate::polymul::PackedSecret) (half the bytes; the low-memory plan's
/// secrets are then used where they are, [`PolyMul::with_packed`](crate::polymul::PolyMul)).
macro_rules! plain_domain_polymul {
    ($backend:ty, $name:expr, $mul_acc:expr) => {
        impl $crate::polymul::PolyMul for $backend {
            type Prepared = $crate::poly::SecretPoly;
            fn prepares_in_slot(&self) -> bool {
                true
            }

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

            fn prepare_in(
                &mut self,
                s: &$crate::poly::SecretPoly,
                slot: &mut Option<$crate::poly::SecretPoly>,
            ) {
                slot.get_or_insert($crate::poly::SecretPoly::ZERO).coeffs = s.coeffs;
            }

            plain_domain_polymul!(@common $name, $mul_acc, $crate::poly::SecretPoly);
        }
    };
    ($backend:ty, $name:expr, $mul_acc:expr, packed) => {
        impl $crate::polymul::PolyMul for $backend {
            type Prepared = $crate::polymul::PackedSecret;
            fn prepares_in_slot(&self) -> bool {
                true
            }

            fn prepare(&mut self, s: &$crate::poly::SecretPoly) -> $crate::polymul::PackedSecret {
                $crate::polymul::packed_secret(s)
            }

            fn prepare_into(
                &mut self,
                s: &$crate::poly::SecretPoly,
                out: &mut $crate::polymul::PackedSecret,
            ) {
                $crate::polymul::pack_secret(s, out);
            }

            fn prepare_in(
                &mut self,
                s: &$crate::poly::SecretPoly,
                slot: &mut Option<$crate::polymul::PackedSecret>,
            ) {
                $crate::polymul::pack_secret(s, slot.get_or_insert([0; $crate::polymul::N >> 1]));
            }

            fn with_packed(
                &mut self,
                s: &$crate::polymul::PackedSecret,
                f: impl FnOnce(&mut Self, &$crate::polymul::PackedSecret),
            ) {
                f(self, s)
            }

            plain_domain_polymul!(@common $name, $mul_acc, $crate::polymul::PackedSecret);
        }
    };
    (@common $name:expr, $mul_acc:expr, $prepared:ty) => {
        type Accumulator = $crate::poly::Poly;

        fn accumulator(&mut self) -> $crate::poly::Poly {
            $crate::poly::Poly::ZERO
        }

        fn mul_acc(&mut self, acc: &mut $crate::poly::Poly, a: &$crate::poly::Poly, s: &$prepared) {
            $mul_acc(acc, a, s)
        }

        fn finish(&mut self, acc: &$crate::poly::Poly) -> $crate::poly::Poly {
            acc.clone()
        }

        fn mul_add_plain(
            &mut self,
            a: &mut $crate::poly::Poly,
            s: &$prepared,
            sum: impl FnOnce(&mut $crate::poly::Poly),
        ) {
            $crate::polymul::plain::mul_add_beside(a, s, sum, $mul_acc)
        }

        fn name(&self) -> &'static str {
            $name
        }
    };
}
