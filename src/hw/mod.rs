//! Hardware engines: big-integer products for the Kronecker backend
//! ([`crate::polymul::kronecker`]), SHA-256 and AES for the 90s sets ([`crate::Sha2AesEngines`]).
//!
//! - [`esp32_rsa`]: a register-level driver for the plain-multiplication mode of the ESP32
//!   family's RSA accelerator (ESP32; ESP32-S2/S3; ESP32-C3/C6/H2), generic over [`Mmio`].
//! - [`esp32_model`]: a strict software model of that peripheral implementing [`Mmio`], so the
//!   unchanged driver runs in host tests and rejects protocol errors.
//! - [`esp32_sha_aes`]: drivers for the ESP32-C3's SHA and AES accelerators, generic over
//!   [`Mmio`]; [`esp32_crypto_model`]: their strict model.
//! - `volatile` (feature `esp32`): the real-register [`Mmio`]s and the engines on them, the only
//!   `unsafe` code here.
//!
//! Register facts and their sources: `docs/esp32-and-embedded.md` §1 (project research notes).

pub mod esp32_crypto_model;
pub mod esp32_model;
pub mod esp32_rsa;
pub mod esp32_sha_aes;
#[cfg(feature = "esp32")]
pub mod volatile;

/// 32-bit memory-mapped I/O at absolute bus addresses.
///
/// The driver only ever goes through this trait; implementations are the volatile register
/// access on the chip and the host model.
pub trait Mmio {
    /// Reads the 32-bit register or memory word at `address`.
    fn read(&mut self, address: usize) -> u32;
    /// Writes the 32-bit register or memory word at `address`.
    fn write(&mut self, address: usize, value: u32);

    /// Writes `words` to consecutive words from `address` (operand memories). Implementations
    /// may check the span once instead of per word.
    fn write_words(&mut self, address: usize, words: &[u32]) {
        for (i, &word) in words.iter().enumerate() {
            self.write(address + 4 * i, word);
        }
    }

    /// Writes `value` to `count` consecutive words from `address`.
    fn fill_words(&mut self, address: usize, count: usize, value: u32) {
        for i in 0..count {
            self.write(address + 4 * i, value);
        }
    }

    /// Reads consecutive words from `address` into `out`.
    fn read_words(&mut self, address: usize, out: &mut [u32]) {
        for (i, word) in out.iter_mut().enumerate() {
            *word = self.read(address + 4 * i);
        }
    }
}

impl<T: Mmio + ?Sized> Mmio for &mut T {
    fn read(&mut self, address: usize) -> u32 {
        (**self).read(address)
    }

    fn write(&mut self, address: usize, value: u32) {
        (**self).write(address, value)
    }

    fn write_words(&mut self, address: usize, words: &[u32]) {
        (**self).write_words(address, words)
    }

    fn fill_words(&mut self, address: usize, count: usize, value: u32) {
        (**self).fill_words(address, count, value)
    }

    fn read_words(&mut self, address: usize, out: &mut [u32]) {
        (**self).read_words(address, out)
    }
}
