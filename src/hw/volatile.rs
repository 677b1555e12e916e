//! Real-register access for the ESP32 drivers (feature `esp32`): the only `unsafe` code of the
//! hardware path.
//!
//! [`VolatileMmio`] performs volatile 32-bit loads and stores, restricted to the RSA block of
//! chip `C` and the registers of `C`'s power-up sequence, so that the safe [`Mmio`] methods cannot
//! reach other memory; [`VolatileCryptoMmio`] does the same for the SHA and AES blocks. Their
//! constructors are `unsafe`: the caller hands over the peripheral.
#![allow(unsafe_code)]

use core::marker::PhantomData;

use crate::hash::Sha2AesEngines;
use crate::hw::Mmio;
use crate::hw::esp32_rsa::{Chip, Esp32Rsa, RsaError};
use crate::hw::esp32_sha_aes::{CryptoChip, Esp32Aes, Esp32Sha, power_up};
use crate::polymul::Kronecker;

/// Size in bytes of the RSA block's address window (four memories and the registers).
const RSA_WINDOW: usize = 0x1000;

/// Volatile access to the RSA accelerator of chip `C` at its real address.
///
/// Neither `Clone` nor `Copy`: the one value made by [`Self::new`] is the one handle on the
/// peripheral (see "One owner" in [`crate::hw::esp32_rsa`]).
#[derive(Debug)]
pub struct VolatileMmio<C: Chip> {
    chip: PhantomData<C>,
}

impl<C: Chip> VolatileMmio<C> {
    /// Access to the RSA block of `C`.
    ///
    /// # Safety
    /// The program runs on chip `C`, and nothing else uses the RSA accelerator while the
    /// returned value (or a driver built on it) lives: no other driver instance, no esp-hal or
    /// esp-idf RSA/MPI/DS user, no interrupt handler. On a dual-core ESP32 the other core must
    /// not access DPORT/APB space concurrently (DPORT erratum), or must use esp-idf's protection.
    pub unsafe fn new() -> Self {
        Self { chip: PhantomData }
    }

    /// The first of `count` consecutive words from `address`, all inside the RSA block's
    /// operand memories (panics otherwise; [`crate::hw::esp32_rsa::RsaLayout::contains_operand_words`]
    /// checks without overflow, so a huge `count` cannot wrap the span into range).
    fn checked_span(address: usize, count: usize) -> *mut u32 {
        assert!(
            C::LAYOUT.contains_operand_words(address, count),
            "span outside the RSA operand memories"
        );
        address as *mut u32
    }

    /// Whether `address` is a word of the RSA block or a power-up register of `C`.
    fn permitted(address: usize) -> bool {
        let base = C::LAYOUT.base;
        (address >= base && address < base + RSA_WINDOW && address & 3 == 0)
            || C::POWER_UP.iter().any(|step| step.address == address)
    }
}

impl<C: Chip> Mmio for VolatileMmio<C> {
    fn read(&mut self, address: usize) -> u32 {
        assert!(
            Self::permitted(address),
            "address outside the RSA peripheral"
        );
        // SAFETY: `address` is an aligned word of C's RSA block or one of its power-up
        // registers (checked above); the constructor's contract makes them ours to access.
        unsafe { core::ptr::read_volatile(address as *const u32) }
    }

    fn write(&mut self, address: usize, value: u32) {
        assert!(
            Self::permitted(address),
            "address outside the RSA peripheral"
        );
        // SAFETY: as in `read`.
        unsafe { core::ptr::write_volatile(address as *mut u32, value) }
    }

    fn write_words(&mut self, address: usize, words: &[u32]) {
        let start = Self::checked_span(address, words.len());
        for (i, &word) in words.iter().enumerate() {
            // SAFETY: inside the RSA block's operand memories (checked_span); ours by the
            // constructor's contract.
            unsafe { core::ptr::write_volatile(start.add(i), word) }
        }
    }

    fn fill_words(&mut self, address: usize, count: usize, value: u32) {
        let start = Self::checked_span(address, count);
        for i in 0..count {
            // SAFETY: as in `write_words`.
            unsafe { core::ptr::write_volatile(start.add(i), value) }
        }
    }

    fn read_words(&mut self, address: usize, out: &mut [u32]) {
        let start = Self::checked_span(address, out.len());
        for (i, word) in out.iter_mut().enumerate() {
            // SAFETY: as in `write_words`.
            *word = unsafe { core::ptr::read_volatile(start.add(i)) };
        }
    }
}

/// Enables the RSA accelerator's clock, releases its reset, powers its memories, and waits until
/// they are initialised (the steps of [`Chip::POWER_UP`], documented in
/// [`crate::hw::esp32_rsa`]). Fails with [`RsaError::NotInitialised`] if CLEAN does not come.
///
/// # Safety
/// Read-modify-writes shared clock/reset/power registers of the SYSTEM/DPORT/PCR block: no other
/// code (another driver, an interrupt handler, the other core) may modify these registers
/// concurrently, and resetting the RSA block must be acceptable to the rest of the program
/// (on the ESP32 this also releases the digital-signature reset).
pub unsafe fn enable_clock_and_memory<C: Chip>(
    rsa: &mut Esp32Rsa<VolatileMmio<C>, C>,
) -> Result<(), RsaError> {
    rsa.power_up()
}

/// The Kronecker backend on the chip selected with `--cfg saber_esp32_chip`.
#[cfg(any(
    saber_esp32_chip = "esp32",
    saber_esp32_chip = "esp32s2",
    saber_esp32_chip = "esp32s3",
    saber_esp32_chip = "esp32c3",
    saber_esp32_chip = "esp32c6",
    saber_esp32_chip = "esp32h2"
))]
pub type Esp32Kronecker = Kronecker<
    Esp32Rsa<VolatileMmio<crate::hw::esp32_rsa::TargetChip>, crate::hw::esp32_rsa::TargetChip>,
>;

/// The Kronecker backend on chip `C`'s RSA accelerator.
pub type Esp32KroneckerOn<C> = Kronecker<Esp32Rsa<VolatileMmio<C>, C>>;

/// Size in bytes of the SHA and AES blocks' address windows.
const CRYPTO_WINDOW: usize = 0x100;

/// Volatile access to the SHA and AES accelerators of chip `C` (and their clock/reset registers)
/// at their real addresses. Not `Clone`: one value is one handle on the blocks.
#[derive(Debug)]
pub struct VolatileCryptoMmio<C: CryptoChip> {
    chip: PhantomData<C>,
}

impl<C: CryptoChip> VolatileCryptoMmio<C> {
    /// Access to the SHA and AES blocks of `C`.
    ///
    /// # Safety
    /// The program runs on chip `C`, and nothing else uses the SHA or AES accelerator while the
    /// returned value lives (no esp-hal/esp-idf SHA, AES, HMAC, digital-signature or
    /// flash-encryption user, no interrupt handler, no other core).
    pub unsafe fn new() -> Self {
        Self { chip: PhantomData }
    }

    /// Whether `address` is a word of the SHA or AES block or a power-up register of `C`.
    fn permitted(address: usize) -> bool {
        let inside = |base: usize| address >= base && address < base + CRYPTO_WINDOW;
        ((inside(C::SHA_BASE) || inside(C::AES_BASE)) && address & 3 == 0)
            || C::CRYPTO_POWER_UP
                .iter()
                .any(|step| step.address == address)
    }
}

impl<C: CryptoChip> Mmio for VolatileCryptoMmio<C> {
    fn read(&mut self, address: usize) -> u32 {
        assert!(
            Self::permitted(address),
            "address outside the SHA and AES blocks"
        );
        // SAFETY: `address` is an aligned word of C's SHA or AES block or one of their power-up
        // registers (checked above); the constructor's contract makes them ours to access.
        unsafe { core::ptr::read_volatile(address as *const u32) }
    }

    fn write(&mut self, address: usize, value: u32) {
        assert!(
            Self::permitted(address),
            "address outside the SHA and AES blocks"
        );
        // SAFETY: as in `read`.
        unsafe { core::ptr::write_volatile(address as *mut u32, value) }
    }
}

/// SHA-256 and the AES-256 keystream on chip `C`'s accelerators, as [`Sha2AesEngines`] for
/// [`crate::Accelerated`]. An engine that times out (or finds its block busy) returns false, and
/// the hash layer computes the same bytes in software.
///
/// # Safety
/// As for [`VolatileCryptoMmio::new`], for as long as the engines (or a copy) are in use, and the
/// blocks are clocked and out of reset (the application's, or [`enable_sha_aes`]). The engines
/// must not run on two cores at once (the two-worker split hashes in software).
pub unsafe fn sha2aes_engines<C: CryptoChip>() -> Sha2AesEngines {
    Sha2AesEngines {
        sha256: sha256_on::<C>,
        aes256_ctr: aes256_ctr_on::<C>,
    }
}

fn sha256_on<C: CryptoChip>(parts: &[&[u8]], digest: &mut [u8; 32]) -> bool {
    // SAFETY: the contract of `sha2aes_engines`, which made this engine: the SHA block is ours.
    let mmio = unsafe { VolatileCryptoMmio::<C>::new() };
    Esp32Sha::<_, C>::new(mmio).sha256(parts, digest).is_ok()
}

fn aes256_ctr_on<C: CryptoChip>(key: &[u8; 32], position: u32, out: &mut [u8]) -> bool {
    // SAFETY: as in `sha256_on`, for the AES block.
    let mmio = unsafe { VolatileCryptoMmio::<C>::new() };
    Esp32Aes::<_, C>::new(mmio)
        .ctr_keystream(key, position, out)
        .is_ok()
}

/// Enables the SHA and AES accelerators' clocks and releases their resets
/// ([`CryptoChip::CRYPTO_POWER_UP`]).
///
/// # Safety
/// Read-modify-writes shared clock/reset registers: no other code may modify them concurrently,
/// and resetting the SHA and AES blocks (and releasing the digital-signature and HMAC resets)
/// must be acceptable to the rest of the program; the blocks are ours as for
/// [`VolatileCryptoMmio::new`].
pub unsafe fn enable_sha_aes<C: CryptoChip>() {
    // SAFETY: the caller's contract.
    power_up::<C>(&mut unsafe { VolatileCryptoMmio::<C>::new() });
}
