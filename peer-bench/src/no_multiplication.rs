//! The multiplier that does no work, shared by the table (`main.rs`) and the instruction counter
//! (`bin/opcount.rs`).

use std::hint::black_box;

use saber_kem::polymul::{Poly, SecretPoly};

/// A multiplier that does no work (outputs zero): the row timed with it is what the KEM core
/// costs besides multiplication, a lower bound for every backend. Results are wrong, of course
/// (decapsulation takes the implicit-rejection path, at the same cost).
#[derive(Clone, Copy, Default)]
pub struct NoMultiplication;

impl saber_kem::PolyMul for NoMultiplication {
    type Prepared = u8;
    type Accumulator = u8;

    fn prepare(&mut self, s: &SecretPoly) -> u8 {
        black_box(s);
        0
    }

    fn accumulator(&mut self) -> u8 {
        0
    }

    fn mul_acc(&mut self, acc: &mut u8, a: &Poly, _: &u8) {
        black_box(a);
        *acc = 1;
    }

    fn finish(&mut self, _: &u8) -> Poly {
        Poly::ZERO
    }

    fn name(&self) -> &'static str {
        "no multiplication"
    }
}

/// Public operands "prepared" into nothing: the expanded-key paths without multiplication.
impl saber_kem::PolyMulPublic for NoMultiplication {
    type PreparedPublic = u8;

    fn prepare_public(&mut self, a: &Poly) -> u8 {
        black_box(a);
        0
    }

    fn mul_acc_prepared(&mut self, acc: &mut u8, a: &u8, _: &u8) {
        black_box(a);
        *acc = 1;
    }
}
