//! Drivers for the SHA and AES accelerators of the ESP32-C3 in their typical (CPU-driven) mode:
//! SHA-256 (H of the 90s sets) and AES-256 encryption of counter blocks (the 90s sets' XOF, the
//! AES-256-CTR keystream), for [`crate::Sha2AesEngines`] through [`crate::Accelerated`].
//!
//! Registers (ESP32-C3 TRM ch. "SHA Accelerator" and "AES Accelerator"; esp-idf
//! `soc/esp32c3/include/soc/hwcrypto_reg.h`, `hal/esp32c3/include/hal/{sha,aes}_ll.h`):
//!
//! | block | base | registers (offsets) |
//! |---|---|---|
//! | SHA | 0x6003_B000 | MODE 0x00 (2 = SHA-256), START 0x10, CONTINUE 0x14, BUSY 0x18, H_MEM 0x40–0x5C, M_MEM 0x80–0xBC |
//! | AES | 0x6003_A000 | KEY 0x00–0x1C, TEXT_IN 0x20–0x2C, TEXT_OUT 0x30–0x3C, MODE 0x40 (2 = AES-256 encryption), TRIGGER 0x48, STATE 0x4C (0 idle, 1 busy), DMA_ENABLE 0x90 |
//!
//! Words are the bytes of the message, key and blocks in memory order read as little-endian
//! words (the engines take the byte order of memory: esp-idf copies buffers into the registers
//! word by word); the digest is H_MEM read the same way.
//!
//! # The protocols
//!
//! SHA-256 of a message ([`Esp32Sha::sha256`]): the driver pads the message itself (FIPS 180-4
//! §5.1.1); per 64-byte block it waits until BUSY reads 0, writes the block to M_MEM, the mode,
//! and 1 to START (first block, the engine loads the initial hash) or CONTINUE (the engine goes
//! on from H_MEM); after the last block and BUSY = 0 it reads H_MEM. It then overwrites M_MEM and
//! H_MEM with zeros: message and digest may be secret (H(m), K).
//!
//! The keystream ([`Esp32Aes::ctr_keystream`]): the driver waits until STATE reads 0, writes 0 to
//! DMA_ENABLE (typical mode), the mode and the key; per counter block (twelve zero bytes ‖ the
//! 32-bit big-endian block number) it writes TEXT_IN, 1 to TRIGGER, polls STATE until 0, and
//! reads TEXT_OUT. It then writes a zero key and block and runs one more encryption, so that
//! neither the key nor keystream stays in the peripheral.
//!
//! Every poll gives up after [`POLL_LIMIT`] reads with a [`CryptoError`]; through
//! [`crate::Sha2AesEngines`] the hash layer then computes the same bytes in software. After a
//! timeout the driver writes nothing more (a write while the block is busy is a protocol error):
//! the message or key stays in the block until its next use, which waits for the block and
//! overwrites it. SHA-512 (G) has no engine on the C3 and always runs in software.
//!
//! # Clock and reset
//!
//! Like the RSA driver, this one assumes the blocks are clocked and out of reset (esp-hal's
//! `Sha::new` / `Aes::new` do it); otherwise [`power_up`] runs [`CryptoChip::CRYPTO_POWER_UP`]:
//! SYSTEM_PERIP_CLK_EN1 0x600C_0014 bits 1 (AES) and 2 (SHA) set; SYSTEM_PERIP_RST_EN1
//! 0x600C_001C bits 1 and 2 pulsed, bits 4 (digital signature) and 5 (HMAC) cleared, which
//! otherwise hold AES and SHA in reset. Only the ESP32-C3 is provided (the S3 has the same blocks
//! at the same addresses but other clock registers, the C6/H2 other addresses, the original ESP32
//! another protocol: none of them researched here).

use core::marker::PhantomData;

use zeroize::Zeroize;

use crate::hw::Mmio;
use crate::hw::esp32_rsa::{Esp32C3, POLL_LIMIT, RegisterUpdate};

/// Register offsets of the SHA block.
pub mod sha {
    /// Algorithm: 0 SHA-1, 1 SHA-224, 2 SHA-256.
    pub const MODE: usize = 0x00;
    /// Write 1: hash the block in M_MEM from the initial hash.
    pub const START: usize = 0x10;
    /// Write 1: hash the block in M_MEM from H_MEM.
    pub const CONTINUE: usize = 0x14;
    /// Reads 1 while a block is hashed.
    pub const BUSY: usize = 0x18;
    /// The hash state, eight words.
    pub const H_MEM: usize = 0x40;
    /// The message block, sixteen words.
    pub const M_MEM: usize = 0x80;
    /// MODE for SHA-256.
    pub const MODE_SHA256: u32 = 2;
}

/// Register offsets of the AES block.
pub mod aes {
    /// The key, eight words.
    pub const KEY: usize = 0x00;
    /// The input block, four words.
    pub const TEXT_IN: usize = 0x20;
    /// The output block, four words.
    pub const TEXT_OUT: usize = 0x30;
    /// 0 AES-128 / 2 AES-256 encryption, 4 / 6 decryption.
    pub const MODE: usize = 0x40;
    /// Write 1: encrypt TEXT_IN.
    pub const TRIGGER: usize = 0x48;
    /// 0 idle, 1 busy (typical mode), 2 done (DMA mode).
    pub const STATE: usize = 0x4C;
    /// 0: typical mode.
    pub const DMA_ENABLE: usize = 0x90;
    /// MODE for AES-256 encryption.
    pub const MODE_AES256_ENCRYPT: u32 = 2;
}

/// A chip whose SHA and AES blocks these drivers know.
pub trait CryptoChip {
    /// Base address of the SHA block.
    const SHA_BASE: usize;
    /// Base address of the AES block.
    const AES_BASE: usize;
    /// Clock and reset steps that enable both blocks (module docs).
    const CRYPTO_POWER_UP: &'static [RegisterUpdate];
}

/// SYSTEM_PERIP_CLK_EN1 and SYSTEM_PERIP_RST_EN1 of the ESP32-C3.
const C3_CLOCK: usize = 0x600C_0014;
const C3_RESET: usize = 0x600C_001C;
/// Their AES, SHA, digital-signature and HMAC bits.
const AES_BIT: u32 = 1 << 1;
const SHA_BIT: u32 = 1 << 2;
const DS_BIT: u32 = 1 << 4;
const HMAC_BIT: u32 = 1 << 5;

impl CryptoChip for Esp32C3 {
    const SHA_BASE: usize = 0x6003_B000;
    const AES_BASE: usize = 0x6003_A000;
    const CRYPTO_POWER_UP: &'static [RegisterUpdate] = &[
        RegisterUpdate {
            address: C3_CLOCK,
            set: AES_BIT | SHA_BIT,
            clear: 0,
        },
        RegisterUpdate {
            address: C3_RESET,
            set: AES_BIT | SHA_BIT,
            clear: 0,
        },
        RegisterUpdate {
            address: C3_RESET,
            set: 0,
            clear: AES_BIT | SHA_BIT | DS_BIT | HMAC_BIT,
        },
    ];
}

/// Why an accelerator did not finish.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CryptoError {
    /// The block was busy (another user's operation) for [`POLL_LIMIT`] reads.
    Busy,
    /// An operation of ours did not finish within [`POLL_LIMIT`] reads.
    Timeout,
}

/// Runs chip `C`'s [`CryptoChip::CRYPTO_POWER_UP`] through `mmio` (read-modify-write of shared
/// clock/reset registers: the caller makes sure nothing else changes them meanwhile).
pub fn power_up<C: CryptoChip>(mmio: &mut impl Mmio) {
    for step in C::CRYPTO_POWER_UP {
        let value = mmio.read(step.address);
        mmio.write(step.address, (value | step.set) & !step.clear);
    }
}

/// Whether `register` reads 0 within [`POLL_LIMIT`] reads.
fn poll_zero(mmio: &mut impl Mmio, register: usize) -> bool {
    (0..POLL_LIMIT).any(|_| mmio.read(register) == 0)
}

/// The little-endian words of `bytes` (a multiple of four long) into `words`.
fn words_of(bytes: &[u8], words: &mut [u32]) {
    for (word, chunk) in words.iter_mut().zip(bytes.chunks_exact(4)) {
        *word = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
}

/// The SHA block of chip `C`, accessed through `M`.
pub struct Esp32Sha<M: Mmio, C: CryptoChip> {
    mmio: M,
    chip: PhantomData<C>,
}

impl<M: Mmio, C: CryptoChip> Esp32Sha<M, C> {
    /// The driver on `mmio` (the block clocked and out of reset).
    pub fn new(mmio: M) -> Self {
        Self {
            mmio,
            chip: PhantomData,
        }
    }

    /// The register access.
    pub fn mmio_mut(&mut self) -> &mut M {
        &mut self.mmio
    }

    /// SHA-256 of the concatenation of `parts` into `digest` (module docs). On an error the
    /// digest is all zeros.
    pub fn sha256(&mut self, parts: &[&[u8]], digest: &mut [u8; 32]) -> Result<(), CryptoError> {
        let result = self.hash(parts, digest);
        if result.is_ok() {
            let mmio = &mut self.mmio;
            mmio.fill_words(C::SHA_BASE + sha::M_MEM, 16, 0);
            mmio.fill_words(C::SHA_BASE + sha::H_MEM, 8, 0);
        } else {
            digest.fill(0);
        }
        result
    }

    fn hash(&mut self, parts: &[&[u8]], digest: &mut [u8; 32]) -> Result<(), CryptoError> {
        if !poll_zero(&mut self.mmio, C::SHA_BASE + sha::BUSY) {
            return Err(CryptoError::Busy);
        }
        let mut block = [0u8; 64];
        let mut filled = 0;
        let mut length: u64 = 0;
        let mut first = true;
        for part in parts {
            let mut rest = *part;
            while !rest.is_empty() {
                let take = rest.len().min(64 - filled);
                block[filled..filled + take].copy_from_slice(&rest[..take]);
                (filled, rest) = (filled + take, &rest[take..]);
                length += take as u64;
                if filled == 64 {
                    self.block(&block, &mut first)?;
                    filled = 0;
                }
            }
        }
        // FIPS 180-4 §5.1.1: 0x80, zeros, the bit length in the last eight bytes.
        block[filled] = 0x80;
        block[filled + 1..].fill(0);
        if filled >= 56 {
            self.block(&block, &mut first)?;
            block.fill(0);
        }
        block[56..].copy_from_slice(&(length * 8).to_be_bytes());
        self.block(&block, &mut first)?;
        block.zeroize();
        let mut state = [0u32; 8];
        self.mmio.read_words(C::SHA_BASE + sha::H_MEM, &mut state);
        for (bytes, word) in digest.chunks_exact_mut(4).zip(&state) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        state.zeroize();
        Ok(())
    }

    /// Hashes one block (after the previous one finished) and waits until the engine is done.
    fn block(&mut self, block: &[u8; 64], first: &mut bool) -> Result<(), CryptoError> {
        let mut words = [0u32; 16];
        words_of(block, &mut words);
        let mmio = &mut self.mmio;
        mmio.write_words(C::SHA_BASE + sha::M_MEM, &words);
        words.zeroize();
        mmio.write(C::SHA_BASE + sha::MODE, sha::MODE_SHA256);
        let start = if *first { sha::START } else { sha::CONTINUE };
        mmio.write(C::SHA_BASE + start, 1);
        *first = false;
        if poll_zero(mmio, C::SHA_BASE + sha::BUSY) {
            Ok(())
        } else {
            Err(CryptoError::Timeout)
        }
    }
}

/// The AES block of chip `C`, accessed through `M`.
pub struct Esp32Aes<M: Mmio, C: CryptoChip> {
    mmio: M,
    chip: PhantomData<C>,
}

impl<M: Mmio, C: CryptoChip> Esp32Aes<M, C> {
    /// The driver on `mmio` (the block clocked and out of reset).
    pub fn new(mmio: M) -> Self {
        Self {
            mmio,
            chip: PhantomData,
        }
    }

    /// The register access.
    pub fn mmio_mut(&mut self) -> &mut M {
        &mut self.mmio
    }

    /// The AES-256-CTR keystream of `key` (counter block = twelve zero bytes ‖ the 32-bit
    /// big-endian block number) from byte `position` on, into all of `out` (module docs). On an
    /// error `out` is all zeros.
    pub fn ctr_keystream(
        &mut self,
        key: &[u8; 32],
        position: u32,
        out: &mut [u8],
    ) -> Result<(), CryptoError> {
        let base = C::AES_BASE;
        if !poll_zero(&mut self.mmio, base + aes::STATE) {
            out.fill(0);
            return Err(CryptoError::Busy);
        }
        let mut words = [0u32; 8];
        words_of(key, &mut words);
        let mmio = &mut self.mmio;
        mmio.write(base + aes::DMA_ENABLE, 0);
        mmio.write(base + aes::MODE, aes::MODE_AES256_ENCRYPT);
        mmio.write_words(base + aes::KEY, &words);
        words.zeroize();
        let result = self.blocks(position, out);
        // A zero key and block, encrypted once more: nothing secret stays in the block.
        let wiped = result.is_ok() && {
            let mmio = &mut self.mmio;
            mmio.fill_words(base + aes::KEY, 8, 0);
            mmio.fill_words(base + aes::TEXT_IN, 4, 0);
            mmio.write(base + aes::TRIGGER, 1);
            poll_zero(mmio, base + aes::STATE)
        };
        if !wiped {
            out.fill(0);
            return Err(CryptoError::Timeout);
        }
        Ok(())
    }

    /// The keystream blocks covering `out`, the key already written.
    fn blocks(&mut self, position: u32, out: &mut [u8]) -> Result<(), CryptoError> {
        let base = C::AES_BASE;
        let mut number = position >> 4;
        let mut skip = (position & 15) as usize;
        let mut keystream = [0u32; 4];
        let mut done = 0;
        while done < out.len() {
            let mmio = &mut self.mmio;
            mmio.write_words(
                base + aes::TEXT_IN,
                &[0, 0, 0, u32::from_le_bytes(number.to_be_bytes())],
            );
            mmio.write(base + aes::TRIGGER, 1);
            if !poll_zero(mmio, base + aes::STATE) {
                keystream.zeroize();
                return Err(CryptoError::Timeout);
            }
            mmio.read_words(base + aes::TEXT_OUT, &mut keystream);
            let take = (16 - skip).min(out.len() - done);
            for (i, byte) in out[done..done + take].iter_mut().enumerate() {
                let at = skip + i;
                *byte = keystream[at >> 2].to_le_bytes()[at & 3];
            }
            (done, skip, number) = (done + take, 0, number.wrapping_add(1));
        }
        keystream.zeroize();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::esp32_crypto_model::Esp32C3CryptoModel;

    /// A block that never finishes: the drivers give up with zeros and write nothing while it
    /// is busy (the strict model panics at such a write); the next call, once the block is
    /// free again, works and leaves nothing behind.
    #[test]
    fn a_stalled_block_times_out_without_a_protocol_error() {
        let mut model = Esp32C3CryptoModel::powered();
        model.set_stalled(true);
        let mut digest = [1u8; 32];
        let got = Esp32Sha::<_, Esp32C3>::new(&mut model).sha256(&[b"abc"], &mut digest);
        assert_eq!((got, digest), (Err(CryptoError::Timeout), [0; 32]));
        let mut out = [1u8; 20];
        let got = Esp32Aes::<_, Esp32C3>::new(&mut model).ctr_keystream(&[7; 32], 0, &mut out);
        assert_eq!((got, out), (Err(CryptoError::Timeout), [0; 20]));
        assert_eq!(model.violations(), 0);
        model.set_stalled(false);
        Esp32Sha::<_, Esp32C3>::new(&mut model)
            .sha256(&[b"abc"], &mut digest)
            .unwrap();
        assert_eq!(
            digest[..4],
            [0xba, 0x78, 0x16, 0xbf],
            "SHA-256(abc) = ba7816bf…"
        );
        Esp32Aes::<_, Esp32C3>::new(&mut model)
            .ctr_keystream(&[7; 32], 0, &mut out)
            .unwrap();
        assert!(!model.holds_data());
    }
}
