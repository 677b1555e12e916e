//! The ESP32 RSA driver on the strict host model: products of every accepted length on every
//! register generation, the power-up sequence, the protocol errors the model must reject, and the
//! multiplication counts of the Kronecker backend.

use saber_kem::hw::Mmio;
use saber_kem::hw::esp32_model::{
    Esp32RsaModel, Violation, enable_clock_and_memory, kronecker_on_model,
};
use saber_kem::hw::esp32_rsa::{
    Chip, Esp32, Esp32C3, Esp32C6, Esp32H2, Esp32Rsa, Esp32S2, Esp32S3, Generation, offsets,
};
use saber_kem::polymul::kronecker::BigMul;
use saber_kem::polymul::{Kronecker, PolyMul, Schoolbook, SoftwareBigMul};
use saber_kem::polymul::{Poly, SecretPoly};

/// Deterministic operand words (xorshift), including all-ones words at the ends.
fn operands(n: usize, seed: u64) -> ([u32; 64], [u32; 64]) {
    let mut state = seed | 1;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as u32
    };
    let mut x = [0u32; 64];
    let mut y = [0u32; 64];
    for i in 0..n {
        x[i] = next();
        y[i] = next();
    }
    x[n - 1] = u32::MAX;
    y[0] = u32::MAX;
    (x, y)
}

fn check_all_lengths<C: Chip>() {
    let mut rsa = Esp32Rsa::<_, C>::new(Esp32RsaModel::<C>::powered());
    let layout = C::LAYOUT;
    let mut tested = 0;
    for n in 1..=64 {
        if !layout.accepts_operand_words(n) {
            continue;
        }
        let (x, y) = operands(n, n as u64 * 0x9E37_79B9);
        let mut got = [0u32; 128];
        let mut want = [0u32; 128];
        rsa.multiply(&x[..n], &y[..n], &mut got[..2 * n]);
        SoftwareBigMul::<64>.mul(&x[..n], &y[..n], &mut want[..2 * n]);
        assert_eq!(got[..2 * n], want[..2 * n], "{} n = {n}", C::NAME);
        assert!(
            !rsa.mmio().memories_hold_data(),
            "{}: operands left behind",
            C::NAME
        );
        tested += 1;
    }
    let expected = match layout.generation {
        Generation::V1 => 4,
        Generation::V2 => 64,
        Generation::V3 => 48,
    };
    assert_eq!(tested, expected, "{}", C::NAME);
    assert_eq!(rsa.mmio().violations(), 0);
    assert_eq!(rsa.mmio().stats().multiplications(), expected);
}

#[test]
fn driver_multiplies_every_accepted_length_on_every_chip() {
    check_all_lengths::<Esp32>();
    check_all_lengths::<Esp32S2>();
    check_all_lengths::<Esp32S3>();
    check_all_lengths::<Esp32C3>();
    check_all_lengths::<Esp32C6>();
    check_all_lengths::<Esp32H2>();
}

#[test]
#[should_panic(expected = "not supported")]
fn driver_rejects_lengths_the_esp32_cannot_multiply() {
    let mut rsa = Esp32Rsa::<_, Esp32>::new(Esp32RsaModel::<Esp32>::powered());
    rsa.multiply(&[1; 20], &[1; 20], &mut [0; 40]);
}

#[test]
#[should_panic(expected = "not supported")]
fn driver_rejects_c3_operands_over_1536_bits() {
    let mut rsa = Esp32Rsa::<_, Esp32C3>::new(Esp32RsaModel::<Esp32C3>::powered());
    rsa.multiply(&[1; 49], &[1; 49], &mut [0; 98]);
}

fn check_power_up<C: Chip>() {
    // Without the power-up sequence, the first access is rejected (the strict model panics).
    let cold = std::panic::catch_unwind(|| {
        let mut rsa = Esp32Rsa::<_, C>::new(Esp32RsaModel::<C>::cold());
        rsa.multiply(&[3; 16], &[5; 16], &mut [0; 32]);
    });
    let message = cold.expect_err("a cold peripheral must be rejected");
    let message = message.downcast_ref::<String>().expect("panic message");
    assert!(message.contains("Unpowered"), "{}: {message}", C::NAME);

    let mut rsa = Esp32Rsa::<_, C>::new(Esp32RsaModel::<C>::cold());
    enable_clock_and_memory(&mut rsa);
    let mut product = [0u32; 32];
    rsa.multiply(&[3; 16], &[5; 16], &mut product);
    let mut want = [0u32; 32];
    SoftwareBigMul::<64>.mul(&[3; 16], &[5; 16], &mut want);
    assert_eq!(product, want, "{}", C::NAME);
}

#[test]
fn power_up_sequence_powers_a_cold_peripheral() {
    check_power_up::<Esp32>();
    check_power_up::<Esp32S3>();
    check_power_up::<Esp32C3>();
    check_power_up::<Esp32C6>();
    check_power_up::<Esp32H2>();
}

/// Raw register access on a powered, counting model.
struct Raw<C: Chip> {
    model: Esp32RsaModel<C>,
}

impl<C: Chip> Raw<C> {
    fn new() -> Self {
        let mut model = Esp32RsaModel::<C>::powered();
        model.set_panic_on_violation(false);
        Self { model }
    }
    fn reg(&self, offset: usize) -> usize {
        C::LAYOUT.base + offset
    }
    fn mode(&mut self, value: u32) {
        let address = C::LAYOUT.mode_register();
        self.model.write(address, value);
    }
    fn start(&mut self) {
        let address = C::LAYOUT.start_register();
        self.model.write(address, 1);
    }
    fn wait(&mut self) {
        let address = C::LAYOUT.done_register();
        while self.model.read(address) & 1 == 0 {}
    }
    fn clear(&mut self) {
        let address = C::LAYOUT.interrupt_clear_register();
        self.model.write(address, 1);
    }
    fn last(&self) -> Option<Violation> {
        self.model.last_violation()
    }
}

#[test]
fn model_rejects_protocol_errors() {
    // Wrong modes.
    let mut v1 = Raw::<Esp32>::new();
    v1.mode(10);
    v1.start();
    assert_eq!(v1.last(), Some(Violation::IllegalMode));
    let mut c3 = Raw::<Esp32C3>::new();
    c3.mode(2 * 49 - 1);
    c3.start();
    assert_eq!(
        c3.last(),
        Some(Violation::IllegalMode),
        "C3 operands beyond 48 words"
    );
    let mut s3 = Raw::<Esp32S3>::new();
    s3.mode(2);
    s3.start();
    assert_eq!(s3.last(), Some(Violation::IllegalMode), "odd output length");

    // Operand longer than the mode says: X_MEM[n] non-zero.
    let mut c3 = Raw::<Esp32C3>::new();
    c3.mode(2 * 8 - 1);
    let x8 = C3_X(8);
    c3.model.write(x8, 1);
    c3.start();
    assert_eq!(c3.last(), Some(Violation::OperandTooLong));

    // Start while busy, write while busy, read before done.
    let mut c3 = Raw::<Esp32C3>::new();
    c3.mode(2 * 8 - 1);
    c3.start();
    assert_eq!(c3.model.violations(), 0);
    c3.start();
    assert_eq!(c3.last(), Some(Violation::StartWhileBusy));
    c3.model.write(C3_X(0), 7);
    assert_eq!(c3.last(), Some(Violation::WriteWhileBusy));
    c3.mode(2 * 4 - 1);
    assert_eq!(c3.model.violations(), 3);
    c3.model.read(C3_Z(0));
    assert_eq!(c3.last(), Some(Violation::ReadBeforeDone));
    c3.wait();
    let before = c3.model.violations();
    c3.model.read(C3_Z(0));
    assert_eq!(c3.model.violations(), before, "reading after done is fine");

    // A new start before the interrupt was cleared (on V1 the stale flag would end the next wait
    // at once).
    let mut v1 = Raw::<Esp32>::new();
    v1.mode(9);
    v1.start();
    v1.wait();
    v1.start();
    assert_eq!(v1.last(), Some(Violation::InterruptNotCleared));
    v1.clear();
    let before = v1.model.violations();
    v1.start();
    assert_eq!(v1.model.violations(), before);

    // Memory beyond the C3's 96-word block, modular registers, foreign addresses, misalignment.
    let mut c3 = Raw::<Esp32C3>::new();
    c3.model.write(C3_X(96), 1);
    assert_eq!(c3.last(), Some(Violation::OutsideBlock));
    let m_prime = c3.reg(0x800);
    c3.model.write(m_prime, 1);
    assert_eq!(c3.last(), Some(Violation::UnsupportedRegister));
    let modexp_start = c3.reg(0x80C);
    c3.model.write(modexp_start, 1);
    assert_eq!(c3.last(), Some(Violation::UnsupportedRegister));
    c3.model.read(0x6000_0000);
    assert_eq!(c3.last(), Some(Violation::UnknownAddress));
    c3.model.read(C3_X(0) + 2);
    assert_eq!(c3.last(), Some(Violation::Misaligned));
}

#[allow(non_snake_case)]
fn C3_X(i: usize) -> usize {
    Esp32C3::LAYOUT.word(offsets::X_MEM, i)
}

#[allow(non_snake_case)]
fn C3_Z(i: usize) -> usize {
    Esp32C3::LAYOUT.word(offsets::Z_MEM, i)
}

fn sample_inputs() -> (Poly, SecretPoly) {
    let mut a = Poly::ZERO;
    let mut s = SecretPoly::ZERO;
    for i in 0..256 {
        a.coeffs[i] = (i as u16).wrapping_mul(40_503);
        s.coeffs[i] = [5, -5, 3, 0, -1, 4, -4, 2][i & 7];
    }
    (a, s)
}

/// Multiplications per polynomial product and their operand lengths, per chip.
fn check_counts<C: Chip>(expected_by_words: &[(usize, u32)]) {
    let mut backend = kronecker_on_model::<C>();
    let (a, s) = sample_inputs();
    let got = backend.mul(&a, &s);
    assert_eq!(
        got.coeffs.map(|c| c & 0x1fff),
        Schoolbook.mul(&a, &s).coeffs.map(|c| c & 0x1fff)
    );
    let stats = *backend.engine().mmio().stats();
    let mut expected = [0u32; 65];
    for &(words, count) in expected_by_words {
        expected[words] = count;
    }
    assert_eq!(
        stats.multiplications_by_operand_words,
        expected,
        "{}",
        C::NAME
    );
    assert_eq!(
        stats.multiplications() as usize,
        Kronecker::<Esp32Rsa<Esp32RsaModel<C>, C>>::MULTIPLICATIONS_PER_PRODUCT
    );
}

#[test]
fn kronecker_multiplication_counts_per_product() {
    // ESP32: 512-bit granularity, 7 products (two at 1536, five at 2048 bits).
    check_counts::<Esp32>(&[(48, 2), (64, 5)]);
    // S3: 7 products of 44, 52, 60 words.
    check_counts::<Esp32S3>(&[(44, 2), (52, 2), (60, 3)]);
    // C3: KS1 at 0 and ∞, KS2 (two products) at the five other points.
    check_counts::<Esp32C3>(&[(44, 2), (27, 4), (31, 6)]);
}

/// Coprocessor multiplications per KEM operation (the figures in `docs/esp32-figures.md`):
/// key generation L² products, encapsulation L² + L, decapsulation L + (L² + L) (the
/// re-encryption), times the plan's multiplications per product.
fn check_kem_counts<
    C: Chip,
    V: saber_kem::Variant,
    const L: usize,
    const MU: usize,
    const ET: usize,
>(
    per_product: u32,
) where
    saber_kem::SaberKem<V, L, MU, ET>: saber_kem::ParameterSet,
{
    type Kem<V, const L: usize, const MU: usize, const ET: usize> =
        saber_kem::SaberKem<V, L, MU, ET>;
    let mut backend = kronecker_on_model::<C>();
    let count = |b: &mut saber_kem::hw::esp32_model::ModelKronecker<C>| {
        let n = b.engine().mmio().stats().multiplications();
        b.engine_mut().mmio_mut().reset_stats();
        n
    };
    let (dk, ek) = Kem::<V, L, MU, ET>::generate_deterministic_with(
        &mut backend,
        &[1; 32],
        &[2; 32],
        &[3; 32],
    );
    let keygen = count(&mut backend);
    let (ct, ss) = ek.encapsulate_deterministic_with(&mut backend, &[4; 32]);
    let encaps = count(&mut backend);
    assert!(dk.decapsulate_with(&mut backend, &ct) == ss);
    let decaps = count(&mut backend);
    let l = L as u32;
    assert_eq!(
        [keygen, encaps, decaps],
        [l * l, l * l + l, l * l + 2 * l].map(|products| products * per_product),
        "{} L = {L}",
        C::NAME
    );
}

#[test]
fn kem_operations_use_the_expected_number_of_multiplications() {
    use saber_kem::Round3;
    check_kem_counts::<Esp32, Round3, 3, 8, 4>(7);
    check_kem_counts::<Esp32S3, Round3, 2, 10, 3>(7);
    check_kem_counts::<Esp32C3, Round3, 4, 6, 6>(12);
}
