//! The ESP32 RSA driver on the strict host model: products of every accepted length on every
//! register generation, the power-up sequence, the protocol errors the model must reject, what
//! the driver does with a stale interrupt, a foreign operation and a peripheral that never
//! finishes, and the multiplication counts of the Kronecker backend.
//!
//! The ESP32-C3 SHA and AES drivers on their strict host model (`crypto` below): digests and
//! keystreams against `sha2` and `aes` for every length around the block boundaries, the power-up
//! sequence, protocol errors the model rejects, a block that never finishes (the hash layer
//! falls back to software), nothing secret left in the blocks, and the KATs of the six 90s sets
//! through `Accelerated` on the model.

use crate::support::operands::product_operands;
use saber_kem::hw::Mmio;
use saber_kem::hw::esp32_model::{
    ENDLESS_POLLS, Esp32RsaModel, Violation, enable_clock_and_memory, kronecker_on_model,
};
use saber_kem::hw::esp32_rsa::{
    Chip, Esp32, Esp32C3, Esp32C6, Esp32H2, Esp32Rsa, Esp32S2, Esp32S3, Generation, POLL_LIMIT,
    RsaError, offsets,
};
use saber_kem::polymul::kronecker::BigMul;
use saber_kem::polymul::{Kronecker, PolyMul, Schoolbook, SoftwareBigMul};

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
        rsa.multiply(&x[..n], &y[..n], &mut got[..2 * n])
            .expect("accepted length");
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
fn driver_rejects_lengths_the_chip_cannot_multiply() {
    let mut rsa = Esp32Rsa::<_, Esp32>::new(Esp32RsaModel::<Esp32>::powered());
    let mut product = [7; 40];
    assert_eq!(
        rsa.multiply(&[1; 20], &[1; 20], &mut product),
        Err(RsaError::UnsupportedLength)
    );
    assert_eq!(product, [0; 40]);
    let mut c3 = Esp32Rsa::<_, Esp32C3>::new(Esp32RsaModel::<Esp32C3>::powered());
    let too_long = c3.multiply(&[1; 49], &[1; 49], &mut [0; 98]);
    assert_eq!(too_long, Err(RsaError::UnsupportedLength), "over 1536 bits");
    let short_product = c3.multiply(&[1; 4], &[1; 4], &mut [0; 7]);
    assert_eq!(short_product, Err(RsaError::UnsupportedLength));
    let unequal = c3.multiply(&[1; 4], &[1; 5], &mut [0; 8]);
    assert_eq!(unequal, Err(RsaError::UnsupportedLength));
    assert_eq!(
        c3.mmio().stats().writes,
        0,
        "nothing reached the peripheral"
    );
}

fn check_power_up<C: Chip>() {
    // Without the power-up sequence, the first access is rejected (the strict model panics).
    let cold = std::panic::catch_unwind(|| {
        let mut rsa = Esp32Rsa::<_, C>::new(Esp32RsaModel::<C>::cold());
        let _ = rsa.multiply(&[3; 16], &[5; 16], &mut [0; 32]);
    });
    let message = cold.expect_err("a cold peripheral must be rejected");
    let message = message.downcast_ref::<String>().expect("panic message");
    assert!(message.contains("Unpowered"), "{}: {message}", C::NAME);

    let mut rsa = Esp32Rsa::<_, C>::new(Esp32RsaModel::<C>::cold());
    assert_eq!(enable_clock_and_memory(&mut rsa), Ok(()), "{}", C::NAME);
    let mut product = [0u32; 32];
    assert_eq!(rsa.multiply(&[3; 16], &[5; 16], &mut product), Ok(()));
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

/// `x · y` by the software engine, for 16-word operands.
fn software_product(x: &[u32], y: &[u32]) -> [u32; 32] {
    let mut want = [0u32; 32];
    SoftwareBigMul::<64>.mul(x, y, &mut want);
    want
}

/// A 16-word product on a powered model of `C` after `disturb` (what another user left behind):
/// it must be right and free of protocol violations. Returns the driver for further checks.
fn multiply_after<C: Chip>(disturb: fn(&mut Esp32RsaModel<C>)) -> Esp32Rsa<Esp32RsaModel<C>, C> {
    let mut rsa = Esp32Rsa::<_, C>::new(Esp32RsaModel::<C>::powered());
    disturb(rsa.mmio_mut());
    let (x, y) = operands(16, 0x5EED);
    let mut got = [0u32; 32];
    let result = rsa.multiply(&x[..16], &y[..16], &mut got);
    assert_eq!(result, Ok(()), "{}", C::NAME);
    assert_eq!(got, software_product(&x[..16], &y[..16]), "{}", C::NAME);
    assert_eq!(rsa.mmio().violations(), 0, "{}", C::NAME);
    rsa
}

/// A pending interrupt left by another user (on V1 it would end the done poll at once, before
/// the product is there): the driver clears it before the start. The strict model rejects a
/// start with the interrupt pending (`InterruptNotCleared`), so a driver that does not clear it
/// fails here.
#[test]
fn driver_clears_a_stale_interrupt_before_starting() {
    multiply_after::<Esp32>(Esp32RsaModel::inject_stale_interrupt);
    multiply_after::<Esp32S3>(Esp32RsaModel::inject_stale_interrupt);
    multiply_after::<Esp32C3>(Esp32RsaModel::inject_stale_interrupt);
    multiply_after::<Esp32C6>(Esp32RsaModel::inject_stale_interrupt);
}

/// Another user's operation still running at the start (V2/V3, which have an IDLE flag): the
/// driver waits for it, then clears its interrupt. Writing the mode or operands at once would be
/// `WriteWhileBusy` in the strict model.
#[test]
fn driver_waits_for_a_foreign_operation_to_end() {
    fn check<C: Chip>() {
        let rsa = multiply_after::<C>(Esp32RsaModel::start_foreign_multiplication);
        assert!(rsa.mmio().stats().busy_polls > 0, "{}: no wait", C::NAME);
    }
    check::<Esp32S2>();
    check::<Esp32S3>();
    check::<Esp32C3>();
    check::<Esp32H2>();
}

/// A peripheral that never finishes: the done poll gives up after [`POLL_LIMIT`] reads with
/// `Timeout` and an all-zero product; the next call finds the operation still running and gives
/// up with `Busy`; once the peripheral finishes, the driver waits for the old operation, wipes
/// its operands and multiplies again. A driver that polls without bound makes the model panic
/// (`EndlessPoll`, after [`ENDLESS_POLLS`] reads) instead of hanging the test.
fn check_stalled_peripheral<C: Chip>() {
    let mut rsa = Esp32Rsa::<_, C>::new(Esp32RsaModel::<C>::powered());
    rsa.mmio_mut().set_stalled(true);
    let (x, y) = operands(16, 0x57A1);
    let mut got = [0xA5A5_A5A5u32; 32];
    let result = rsa.multiply(&x[..16], &y[..16], &mut got);
    assert_eq!(result, Err(RsaError::Timeout), "{}", C::NAME);
    assert_eq!(got, [0; 32], "{}: a failed product must be zeros", C::NAME);
    assert_eq!(rsa.mmio().stats().busy_polls, u64::from(POLL_LIMIT));
    got = [0xA5A5_A5A5; 32];
    let result = rsa.multiply(&x[..16], &y[..16], &mut got);
    assert_eq!(result, Err(RsaError::Busy), "{}", C::NAME);
    assert_eq!(got, [0; 32], "{}", C::NAME);
    assert_eq!(rsa.mmio().stats().busy_polls, 2 * u64::from(POLL_LIMIT));
    assert_eq!(rsa.mmio().stats().multiplications(), 1, "{}", C::NAME);

    rsa.mmio_mut().set_stalled(false);
    let (x, y) = operands(16, 0x57A2);
    assert_eq!(
        rsa.multiply(&x[..16], &y[..16], &mut got),
        Ok(()),
        "{}",
        C::NAME
    );
    assert_eq!(got, software_product(&x[..16], &y[..16]), "{}", C::NAME);
    assert!(
        !rsa.mmio().memories_hold_data(),
        "{}: the timed-out operands were left behind",
        C::NAME
    );
    assert_eq!(rsa.mmio().violations(), 0, "{}", C::NAME);
}

#[test]
fn driver_gives_up_on_a_peripheral_that_never_finishes() {
    check_stalled_peripheral::<Esp32>();
    check_stalled_peripheral::<Esp32S3>();
    check_stalled_peripheral::<Esp32C3>();
}

fn check_memory_never_initialised<C: Chip>() {
    let mut rsa = Esp32Rsa::<_, C>::new(Esp32RsaModel::<C>::cold());
    rsa.mmio_mut().set_stalled(true);
    assert_eq!(
        enable_clock_and_memory(&mut rsa),
        Err(RsaError::NotInitialised),
        "{}",
        C::NAME
    );
    rsa.mmio_mut().set_stalled(false);
    assert_eq!(rsa.wait_until_clean(), Ok(()), "{}", C::NAME);
    assert_eq!(rsa.mmio().violations(), 0, "{}", C::NAME);
}

#[test]
fn power_up_gives_up_when_the_memories_never_initialise() {
    check_memory_never_initialised::<Esp32>();
    check_memory_never_initialised::<Esp32S3>();
    check_memory_never_initialised::<Esp32C3>();
    check_memory_never_initialised::<Esp32C6>();
}

/// The model's watchdog: a poll without bound is stopped with a panic, also when violations are
/// only counted.
#[test]
fn model_stops_a_poll_without_bound() {
    let mut raw = Raw::<Esp32C3>::new();
    raw.model.set_stalled(true);
    raw.mode(2 * 8 - 1);
    raw.start();
    let stopped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| raw.wait()));
    let message = stopped.expect_err("an endless poll must be stopped");
    let message = message.downcast_ref::<String>().expect("panic message");
    assert!(message.contains("EndlessPoll"), "{message}");
    assert_eq!(raw.model.stats().busy_polls, ENDLESS_POLLS + 1);
}

/// Through the Kronecker backend ([`BigMul`] cannot return an error): after a timeout the
/// products come from the software engine, so results stay correct; the first error is kept and
/// the peripheral left alone until `take_fault`, after which it is used again.
#[test]
fn kronecker_backend_falls_back_to_software_until_the_fault_is_taken() {
    let (a, s) = product_operands();
    let want = Schoolbook.mul(&a, &s).coeffs.map(|c| c & 0x1fff);
    let mut backend = kronecker_on_model::<Esp32C3>();
    let starts = |b: &saber_kem::hw::esp32_model::ModelKronecker<Esp32C3>| {
        b.engine().mmio().stats().multiplications() as usize
    };
    backend.engine_mut().mmio_mut().set_stalled(true);
    let got = backend.mul(&a, &s).coeffs.map(|c| c & 0x1fff);
    assert_eq!(got, want, "product with a stalled peripheral");
    assert_eq!(backend.engine().fault(), Some(RsaError::Timeout));
    assert_eq!(starts(&backend), 1, "no start after the fault");

    backend.engine_mut().mmio_mut().set_stalled(false);
    let got = backend.mul(&a, &s).coeffs.map(|c| c & 0x1fff);
    assert_eq!(got, want);
    assert_eq!(backend.engine().fault(), Some(RsaError::Timeout), "kept");
    assert_eq!(starts(&backend), 1, "still software only");

    assert_eq!(backend.engine_mut().take_fault(), Some(RsaError::Timeout));
    let got = backend.mul(&a, &s).coeffs.map(|c| c & 0x1fff);
    assert_eq!(got, want);
    assert_eq!(backend.engine().fault(), None);
    let per_product =
        Kronecker::<Esp32Rsa<Esp32RsaModel<Esp32C3>, Esp32C3>>::MULTIPLICATIONS_PER_PRODUCT;
    assert_eq!(starts(&backend), 1 + per_product, "the peripheral again");
    assert_eq!(backend.engine().mmio().violations(), 0);
    assert!(!backend.engine().mmio().memories_hold_data());
}

#[allow(non_snake_case)]
fn C3_X(i: usize) -> usize {
    Esp32C3::LAYOUT.word(offsets::X_MEM, i)
}

#[allow(non_snake_case)]
fn C3_Z(i: usize) -> usize {
    Esp32C3::LAYOUT.word(offsets::Z_MEM, i)
}

/// Multiplications per polynomial product and their operand lengths, per chip.
fn check_counts<C: Chip>(expected_by_words: &[(usize, u32)]) {
    let mut backend = kronecker_on_model::<C>();
    let (a, s) = product_operands();
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

mod crypto {
    use std::cell::RefCell;

    use saber_kem::hw::Mmio;
    use saber_kem::hw::esp32_crypto_model::{CryptoViolation, Esp32C3CryptoModel};
    use saber_kem::hw::esp32_rsa::Esp32C3;
    use saber_kem::hw::esp32_sha_aes::{CryptoChip, CryptoError, Esp32Aes, Esp32Sha, aes, sha};
    use saber_kem::polymul::DefaultPolyMul;
    use saber_kem::{Accelerated, LowMemory, Nineties, Sha2AesEngines, UniformNineties};
    use sha2::{Digest, Sha256};

    use crate::support::kat::{check, records};

    thread_local! {
        /// The model the engines of this thread run on.
        static MODEL: RefCell<Esp32C3CryptoModel> = RefCell::new(Esp32C3CryptoModel::powered());
    }

    fn model_sha256(parts: &[&[u8]], digest: &mut [u8; 32]) -> bool {
        MODEL.with(|model| {
            let mut model = model.borrow_mut();
            Esp32Sha::<_, Esp32C3>::new(&mut *model)
                .sha256(parts, digest)
                .is_ok()
        })
    }

    fn model_aes256_ctr(key: &[u8; 32], position: u32, out: &mut [u8]) -> bool {
        MODEL.with(|model| {
            let mut model = model.borrow_mut();
            Esp32Aes::<_, Esp32C3>::new(&mut *model)
                .ctr_keystream(key, position, out)
                .is_ok()
        })
    }

    /// The engines on this thread's model.
    const ON_MODEL: Sha2AesEngines = Sha2AesEngines {
        sha256: model_sha256,
        aes256_ctr: model_aes256_ctr,
    };

    /// The AES-256-CTR keystream of the 90s XOF, computed with `aes` and `ctr` directly.
    fn reference_keystream(key: &[u8; 32], position: usize, len: usize) -> Vec<u8> {
        use ::aes::cipher::{BlockCipherEncrypt, KeyInit};
        let cipher = ::aes::Aes256Enc::new(key.into());
        let mut stream = vec![0u8; position + len + 16];
        for (n, block) in stream.chunks_exact_mut(16).enumerate() {
            block[12..].copy_from_slice(&(n as u32).to_be_bytes());
            cipher.encrypt_block(block.try_into().unwrap());
        }
        stream[position..position + len].to_vec()
    }

    #[test]
    fn sha256_of_every_length_around_the_blocks() {
        let message: Vec<u8> = (0..300u32).map(|i| (i * 37 + 11) as u8).collect();
        let mut sha = Esp32Sha::<_, Esp32C3>::new(Esp32C3CryptoModel::powered());
        for len in (0..=200).chain([255, 256, 300]) {
            let (a, b) = message[..len].split_at(len / 3);
            let mut digest = [0u8; 32];
            sha.sha256(&[a, b], &mut digest).unwrap();
            assert_eq!(
                digest[..],
                Sha256::digest(&message[..len])[..],
                "length {len}"
            );
            assert!(!sha.mmio_mut().holds_data(), "length {len}: data left");
        }
        let blocks = sha.mmio_mut().stats().sha_blocks;
        assert!(
            blocks > 200,
            "every digest ran on the engine ({blocks} blocks)"
        );
    }

    #[test]
    fn keystream_at_every_offset() {
        let key: [u8; 32] = core::array::from_fn(|i| (i * 7 + 3) as u8);
        let mut aes = Esp32Aes::<_, Esp32C3>::new(Esp32C3CryptoModel::powered());
        for position in [0usize, 1, 15, 16, 17, 100, 4000] {
            for len in [0usize, 1, 15, 16, 17, 33, 104, 160] {
                let mut out = vec![0u8; len];
                aes.ctr_keystream(&key, position as u32, &mut out).unwrap();
                assert_eq!(
                    out,
                    reference_keystream(&key, position, len),
                    "at {position}+{len}"
                );
                assert!(!aes.mmio_mut().holds_data(), "key left in the block");
            }
        }
    }

    #[test]
    fn power_up_is_needed_and_enough() {
        let mut cold = Esp32C3CryptoModel::cold();
        cold.set_panic_on_violation(false);
        let mut digest = [0u8; 32];
        let _ = Esp32Sha::<_, Esp32C3>::new(&mut cold).sha256(&[b"abc"], &mut digest);
        assert_eq!(cold.last_violation(), Some(CryptoViolation::Unpowered));
        let mut model = Esp32C3CryptoModel::cold();
        saber_kem::hw::esp32_sha_aes::power_up::<Esp32C3>(&mut model);
        Esp32Sha::<_, Esp32C3>::new(&mut model)
            .sha256(&[b"abc"], &mut digest)
            .unwrap();
        assert_eq!(digest[..], Sha256::digest(b"abc")[..]);
        assert_eq!(model.violations(), 0);
    }

    /// Each protocol error the model must reject, made by hand.
    #[test]
    fn the_model_rejects_protocol_errors() {
        type Misuse = fn(&mut Esp32C3CryptoModel);
        let cases: [(&str, CryptoViolation, Misuse); 9] = [
            (
                "continue first",
                CryptoViolation::ContinueWithoutStart,
                |m| {
                    m.write(Esp32C3::SHA_BASE + sha::MODE, 2);
                    m.write(Esp32C3::SHA_BASE + sha::CONTINUE, 1);
                },
            ),
            ("SHA-512 mode", CryptoViolation::IllegalMode, |m| {
                m.write(Esp32C3::SHA_BASE + sha::MODE, 4);
            }),
            ("message while busy", CryptoViolation::WriteWhileBusy, |m| {
                m.write(Esp32C3::SHA_BASE + sha::MODE, 2);
                m.write(Esp32C3::SHA_BASE + sha::START, 1);
                m.write(Esp32C3::SHA_BASE + sha::M_MEM, 1);
            }),
            ("digest while busy", CryptoViolation::ReadWhileBusy, |m| {
                m.write(Esp32C3::SHA_BASE + sha::MODE, 2);
                m.write(Esp32C3::SHA_BASE + sha::START, 1);
                m.read(Esp32C3::SHA_BASE + sha::H_MEM);
            }),
            ("trigger while busy", CryptoViolation::StartWhileBusy, |m| {
                m.write(Esp32C3::AES_BASE + aes::MODE, 2);
                m.write(Esp32C3::AES_BASE + aes::TRIGGER, 1);
                m.write(Esp32C3::AES_BASE + aes::TRIGGER, 1);
            }),
            ("output while busy", CryptoViolation::ReadWhileBusy, |m| {
                m.write(Esp32C3::AES_BASE + aes::MODE, 2);
                m.write(Esp32C3::AES_BASE + aes::TRIGGER, 1);
                m.read(Esp32C3::AES_BASE + aes::TEXT_OUT);
            }),
            ("DMA mode", CryptoViolation::DmaRegister, |m| {
                m.write(Esp32C3::AES_BASE + aes::MODE, 2);
                m.write(Esp32C3::AES_BASE + aes::DMA_ENABLE, 1);
                m.write(Esp32C3::AES_BASE + aes::TRIGGER, 1);
            }),
            ("AES-192", CryptoViolation::IllegalMode, |m| {
                m.write(Esp32C3::AES_BASE + aes::MODE, 1);
            }),
            ("misaligned", CryptoViolation::Misaligned, |m| {
                m.read(Esp32C3::AES_BASE + 2);
            }),
        ];
        for (name, want, misuse) in cases {
            let mut model = Esp32C3CryptoModel::powered();
            model.set_panic_on_violation(false);
            misuse(&mut model);
            assert_eq!(model.last_violation(), Some(want), "{name}");
        }
    }

    /// A block that never finishes: the drivers give up, the engines report it, and the hash
    /// layer computes the same bytes in software.
    #[test]
    fn a_stalled_block_falls_back_to_software() {
        let mut model = Esp32C3CryptoModel::powered();
        model.set_stalled(true);
        let mut digest = [1u8; 32];
        let got = Esp32Sha::<_, Esp32C3>::new(&mut model).sha256(&[b"abc"], &mut digest);
        assert_eq!(got, Err(CryptoError::Timeout));
        assert_eq!(digest, [0; 32]);
        let mut stalled_aes = Esp32C3CryptoModel::powered();
        stalled_aes.set_stalled(true);
        let mut out = [1u8; 20];
        let got =
            Esp32Aes::<_, Esp32C3>::new(&mut stalled_aes).ctr_keystream(&[7; 32], 0, &mut out);
        assert_eq!(got, Err(CryptoError::Timeout));
        assert_eq!(out, [0; 20]);
        // Through the KEM: the keys of the software path, with every engine call failing.
        fn failing_sha(_: &[&[u8]], _: &mut [u8; 32]) -> bool {
            false
        }
        fn failing_aes(_: &[u8; 32], _: u32, _: &mut [u8]) -> bool {
            false
        }
        let failing = Sha2AesEngines {
            sha256: failing_sha,
            aes256_ctr: failing_aes,
        };
        let recs =
            records::<Nineties, _, 2, 10, 3>(&mut Accelerated(DefaultPolyMul::default(), failing));
        check::<saber_kem::LightSaber90s>("failing engines", &recs);
    }

    macro_rules! kat_on_engines {
        ($test:ident, $alias:ident, $v:ty, $l:literal, $mu:literal, $et:literal) => {
            #[test]
            fn $test() {
                MODEL.with(|model| *model.borrow_mut() = Esp32C3CryptoModel::powered());
                let mut backend = Accelerated(DefaultPolyMul::default(), ON_MODEL);
                let recs = records::<$v, _, $l, $mu, $et>(&mut backend);
                check::<saber_kem::$alias>("SHA and AES accelerators (C3 model)", &recs);
                let mut low = Accelerated(LowMemory(DefaultPolyMul::default()), ON_MODEL);
                let recs = records::<$v, _, $l, $mu, $et>(&mut low);
                check::<saber_kem::$alias>("low memory, SHA and AES accelerators", &recs);
                MODEL.with(|model| {
                    let model = model.borrow();
                    let stats = model.stats();
                    assert!(stats.sha_blocks > 0 && stats.aes_blocks > 0, "{stats:?}");
                    assert_eq!(model.violations(), 0);
                    assert!(!model.holds_data());
                });
            }
        };
    }

    kat_on_engines!(lightsaber_90s, LightSaber90s, Nineties, 2, 10, 3);
    kat_on_engines!(saber_90s, Saber90s, Nineties, 3, 8, 4);
    kat_on_engines!(firesaber_90s, FireSaber90s, Nineties, 4, 6, 6);
    kat_on_engines!(ulightsaber_90s, ULightSaber90s, UniformNineties, 2, 10, 3);
    kat_on_engines!(usaber_90s, USaber90s, UniformNineties, 3, 8, 4);
    kat_on_engines!(ufiresaber_90s, UFireSaber90s, UniformNineties, 4, 6, 6);
}
