//! A strict software model of the ESP32-C3's SHA and AES accelerators in typical mode, behind
//! the same [`Mmio`] trait as the real registers, so the unchanged drivers
//! ([`crate::hw::esp32_sha_aes`]) run in host tests.
//!
//! It computes with its own means, not the drivers': the SHA-256 compression function of `sha2`
//! on the block in M_MEM (from the initial hash on START, from H_MEM on CONTINUE; H_MEM holds
//! the state words byte-swapped, as the hardware shows them), and AES-256 block encryption of
//! `aes` on TEXT_IN. It rejects, as a [`CryptoViolation`]:
//! - accesses outside the two blocks and the clock/reset registers, misaligned accesses;
//! - any access to a block while its clock is off or it (or the digital-signature or HMAC block
//!   that holds it) is in reset;
//! - writes, starts, or reads of results (H_MEM, TEXT_OUT) while the block is busy;
//! - CONTINUE before any START since the block came out of reset;
//! - a mode the model does not know (SHA: not 0–2; AES: anything but 2, AES-256 encryption, the
//!   only one the drivers use), a trigger with DMA_ENABLE set, the DMA and interrupt registers;
//! - a poll without bound: more than [`ENDLESS_POLLS`] consecutive busy reads (always a panic).
//!
//! By default a violation panics; [`Esp32C3CryptoModel::set_panic_on_violation`] switches to
//! counting, for negative tests. [`Esp32C3CryptoModel::set_stalled`] makes operations never
//! finish (the drivers must give up).

use ::aes::Aes256Enc;
use ::aes::cipher::{BlockCipherEncrypt, KeyInit};
use sha2::block_api::compress256;

use crate::hw::Mmio;
use crate::hw::esp32_rsa::Esp32C3;
use crate::hw::esp32_sha_aes::{CryptoChip, aes, power_up, sha};

/// A protocol error detected by the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CryptoViolation {
    /// Address outside the SHA and AES blocks and the clock/reset registers.
    UnknownAddress,
    /// Address not a multiple of 4.
    Misaligned,
    /// Access while the block's clock is off or it is held in reset.
    Unpowered,
    /// A register written while the block is busy.
    WriteWhileBusy,
    /// START, CONTINUE or TRIGGER while the block is busy.
    StartWhileBusy,
    /// H_MEM or TEXT_OUT read while the block is busy.
    ReadWhileBusy,
    /// CONTINUE with no hash state (no START since reset).
    ContinueWithoutStart,
    /// A mode the model does not know.
    IllegalMode,
    /// A trigger with DMA_ENABLE set, or a DMA or interrupt register touched.
    DmaRegister,
    /// A write-only register read, or a read-only register written.
    WrongDirection,
}

/// Consecutive busy reads after which the model assumes the driver polls forever (four times
/// the drivers' limit).
pub const ENDLESS_POLLS: u32 = 4 * crate::hw::esp32_rsa::POLL_LIMIT;

/// Busy reads after a start before the block is done.
const LATENCY_POLLS: u32 = 2;

/// What the drivers did, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CryptoStats {
    /// SHA blocks hashed.
    pub sha_blocks: u32,
    /// AES blocks encrypted.
    pub aes_blocks: u32,
    /// Register reads.
    pub reads: u32,
    /// Register writes.
    pub writes: u32,
}

/// The SHA block's state.
#[derive(Default)]
struct ShaBlock {
    mode: u32,
    /// The hash state (SHA words); H_MEM shows them byte-swapped.
    state: [u32; 8],
    message: [u32; 16],
    started: bool,
    busy: Option<u32>,
}

/// The AES block's state.
#[derive(Default)]
struct AesBlock {
    key: [u32; 8],
    text_in: [u32; 4],
    text_out: [u32; 4],
    mode: u32,
    dma: u32,
    busy: Option<u32>,
}

/// The SHA and AES blocks of the ESP32-C3 and its SYSTEM clock/reset registers.
pub struct Esp32C3CryptoModel {
    clock: u32,
    reset: u32,
    sha: ShaBlock,
    aes: AesBlock,
    stats: CryptoStats,
    panic_on_violation: bool,
    violations: u32,
    last_violation: Option<CryptoViolation>,
    stalled: bool,
    busy_reads: u32,
}

/// SYSTEM_PERIP_CLK_EN1 and SYSTEM_PERIP_RST_EN1, and the model's bits of them.
const CLOCK: usize = 0x600C_0014;
const RESET: usize = 0x600C_001C;
const AES_BIT: u32 = 1 << 1;
const SHA_BIT: u32 = 1 << 2;
const DS_BIT: u32 = 1 << 4;
const HMAC_BIT: u32 = 1 << 5;

/// SHA-256's initial hash (FIPS 180-4 §5.3.3).
const SHA256_IV: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

impl Esp32C3CryptoModel {
    /// After power-on reset: clocks off, blocks in reset.
    pub fn cold() -> Self {
        Self {
            clock: 0,
            reset: AES_BIT | SHA_BIT | DS_BIT | HMAC_BIT,
            sha: ShaBlock::default(),
            aes: AesBlock::default(),
            stats: CryptoStats::default(),
            panic_on_violation: true,
            violations: 0,
            last_violation: None,
            stalled: false,
            busy_reads: 0,
        }
    }

    /// Clocked and out of reset (the drivers' [`power_up`] run on a cold model).
    pub fn powered() -> Self {
        let mut model = Self::cold();
        power_up::<Esp32C3>(&mut model);
        model.stats = CryptoStats::default();
        model
    }

    /// Panic at a violation (the default), or count it.
    pub fn set_panic_on_violation(&mut self, panic: bool) {
        self.panic_on_violation = panic;
    }

    /// Violations counted so far.
    pub fn violations(&self) -> u32 {
        self.violations
    }

    /// The last violation.
    pub fn last_violation(&self) -> Option<CryptoViolation> {
        self.last_violation
    }

    /// Operations never finish while stalled.
    pub fn set_stalled(&mut self, stalled: bool) {
        self.stalled = stalled;
    }

    /// What the drivers did.
    pub fn stats(&self) -> CryptoStats {
        self.stats
    }

    /// Whether a key, message, input block or hash state word is non-zero (something secret was
    /// left in the blocks; TEXT_OUT after the drivers' wipe holds AES of zeros, which is public).
    pub fn holds_data(&self) -> bool {
        let sha = self.sha.message.iter().chain(&self.sha.state);
        let aes = self.aes.key.iter().chain(&self.aes.text_in);
        sha.chain(aes).any(|&word| word != 0)
    }

    fn violation(&mut self, kind: CryptoViolation) {
        self.violations += 1;
        self.last_violation = Some(kind);
        assert!(
            !self.panic_on_violation,
            "ESP32-C3 crypto protocol violation: {kind:?}"
        );
    }

    fn sha_powered(&self) -> bool {
        self.clock & SHA_BIT != 0 && self.reset & (SHA_BIT | DS_BIT | HMAC_BIT) == 0
    }

    fn aes_powered(&self) -> bool {
        self.clock & AES_BIT != 0 && self.reset & (AES_BIT | DS_BIT) == 0
    }

    /// A busy-flag read: counts down the latency, then finishes the operation.
    fn poll(busy: &mut Option<u32>, stalled: bool, busy_reads: &mut u32) -> Option<bool> {
        match busy {
            None => {
                *busy_reads = 0;
                Some(false)
            }
            Some(0) if !stalled => {
                *busy = None;
                *busy_reads = 0;
                None
            }
            Some(left) => {
                *left = left.saturating_sub(1);
                *busy_reads += 1;
                assert!(*busy_reads <= ENDLESS_POLLS, "the driver polls forever");
                Some(true)
            }
        }
    }

    fn sha_read(&mut self, offset: usize) -> u32 {
        match offset {
            sha::BUSY => match Self::poll(&mut self.sha.busy, self.stalled, &mut self.busy_reads) {
                Some(busy) => u32::from(busy),
                None => {
                    self.finish_sha();
                    0
                }
            },
            sha::MODE => self.sha.mode,
            o if (sha::H_MEM..sha::H_MEM + 32).contains(&o) => {
                if self.sha.busy.is_some() {
                    self.violation(CryptoViolation::ReadWhileBusy);
                }
                self.sha.state[(o - sha::H_MEM) >> 2].swap_bytes()
            }
            o if (sha::M_MEM..sha::M_MEM + 64).contains(&o) => {
                self.sha.message[(o - sha::M_MEM) >> 2]
            }
            sha::START | sha::CONTINUE => {
                self.violation(CryptoViolation::WrongDirection);
                0
            }
            0x0C | 0x1C..=0x2C => {
                self.violation(CryptoViolation::DmaRegister);
                0
            }
            _ => {
                self.violation(CryptoViolation::UnknownAddress);
                0
            }
        }
    }

    fn sha_write(&mut self, offset: usize, value: u32) {
        if self.sha.busy.is_some() {
            let kind = match offset {
                sha::START | sha::CONTINUE => CryptoViolation::StartWhileBusy,
                _ => CryptoViolation::WriteWhileBusy,
            };
            return self.violation(kind);
        }
        match offset {
            sha::MODE if value <= 2 => self.sha.mode = value,
            sha::MODE => self.violation(CryptoViolation::IllegalMode),
            sha::START | sha::CONTINUE if value & 1 == 1 => {
                if self.sha.mode != sha::MODE_SHA256 {
                    // SHA-1 and SHA-224 exist but are not modelled.
                    return self.violation(CryptoViolation::IllegalMode);
                }
                if offset == sha::START {
                    self.sha.state = SHA256_IV;
                    self.sha.started = true;
                } else if !self.sha.started {
                    return self.violation(CryptoViolation::ContinueWithoutStart);
                }
                self.sha.busy = Some(LATENCY_POLLS);
            }
            sha::START | sha::CONTINUE => {}
            o if (sha::H_MEM..sha::H_MEM + 32).contains(&o) => {
                self.sha.state[(o - sha::H_MEM) >> 2] = value.swap_bytes()
            }
            o if (sha::M_MEM..sha::M_MEM + 64).contains(&o) => {
                self.sha.message[(o - sha::M_MEM) >> 2] = value
            }
            sha::BUSY => self.violation(CryptoViolation::WrongDirection),
            0x0C | 0x1C..=0x2C => self.violation(CryptoViolation::DmaRegister),
            _ => self.violation(CryptoViolation::UnknownAddress),
        }
    }

    fn finish_sha(&mut self) {
        let mut block = [0u8; 64];
        for (bytes, word) in block.chunks_exact_mut(4).zip(&self.sha.message) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        compress256(&mut self.sha.state, &[block]);
        self.stats.sha_blocks += 1;
    }

    fn aes_read(&mut self, offset: usize) -> u32 {
        match offset {
            aes::STATE => {
                match Self::poll(&mut self.aes.busy, self.stalled, &mut self.busy_reads) {
                    Some(busy) => u32::from(busy),
                    None => {
                        self.finish_aes();
                        0
                    }
                }
            }
            aes::MODE => self.aes.mode,
            aes::DMA_ENABLE => self.aes.dma,
            o if (aes::TEXT_OUT..aes::TEXT_OUT + 16).contains(&o) => {
                if self.aes.busy.is_some() {
                    self.violation(CryptoViolation::ReadWhileBusy);
                }
                self.aes.text_out[(o - aes::TEXT_OUT) >> 2]
            }
            o if (aes::KEY..aes::TEXT_OUT).contains(&o) => {
                // KEY and TEXT_IN read back; the drivers never do, but the hardware allows it.
                if o < aes::TEXT_IN {
                    self.aes.key[o >> 2]
                } else {
                    self.aes.text_in[(o - aes::TEXT_IN) >> 2]
                }
            }
            aes::TRIGGER => {
                self.violation(CryptoViolation::WrongDirection);
                0
            }
            0x50..=0x8C | 0x94..=0xB8 => {
                self.violation(CryptoViolation::DmaRegister);
                0
            }
            _ => {
                self.violation(CryptoViolation::UnknownAddress);
                0
            }
        }
    }

    fn aes_write(&mut self, offset: usize, value: u32) {
        if self.aes.busy.is_some() {
            let kind = if offset == aes::TRIGGER {
                CryptoViolation::StartWhileBusy
            } else {
                CryptoViolation::WriteWhileBusy
            };
            return self.violation(kind);
        }
        match offset {
            o if (aes::KEY..aes::TEXT_IN).contains(&o) => self.aes.key[o >> 2] = value,
            o if (aes::TEXT_IN..aes::TEXT_OUT).contains(&o) => {
                self.aes.text_in[(o - aes::TEXT_IN) >> 2] = value
            }
            aes::MODE if value == aes::MODE_AES256_ENCRYPT => self.aes.mode = value,
            aes::MODE => self.violation(CryptoViolation::IllegalMode),
            aes::DMA_ENABLE => self.aes.dma = value,
            aes::TRIGGER if value & 1 == 1 => {
                if self.aes.dma != 0 {
                    return self.violation(CryptoViolation::DmaRegister);
                }
                if self.aes.mode != aes::MODE_AES256_ENCRYPT {
                    return self.violation(CryptoViolation::IllegalMode);
                }
                self.aes.busy = Some(LATENCY_POLLS);
            }
            aes::TRIGGER => {}
            o if (aes::TEXT_OUT..aes::TEXT_OUT + 16).contains(&o) || o == aes::STATE => {
                self.violation(CryptoViolation::WrongDirection)
            }
            0x50..=0x8C | 0x94..=0xB8 => self.violation(CryptoViolation::DmaRegister),
            _ => self.violation(CryptoViolation::UnknownAddress),
        }
    }

    fn finish_aes(&mut self) {
        let mut key = [0u8; 32];
        for (bytes, word) in key.chunks_exact_mut(4).zip(&self.aes.key) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        let mut block = [0u8; 16];
        for (bytes, word) in block.chunks_exact_mut(4).zip(&self.aes.text_in) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        Aes256Enc::new(&key.into()).encrypt_block((&mut block).into());
        for (word, bytes) in self.aes.text_out.iter_mut().zip(block.chunks_exact(4)) {
            *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        self.stats.aes_blocks += 1;
    }

    /// Which block `address` is in, with its offset, if it is powered (else a violation).
    fn route(&mut self, address: usize) -> Option<(bool, usize)> {
        if address & 3 != 0 {
            self.violation(CryptoViolation::Misaligned);
            return None;
        }
        let (is_sha, offset) = if (Esp32C3::SHA_BASE..Esp32C3::SHA_BASE + 0x100).contains(&address)
        {
            (true, address - Esp32C3::SHA_BASE)
        } else if (Esp32C3::AES_BASE..Esp32C3::AES_BASE + 0x100).contains(&address) {
            (false, address - Esp32C3::AES_BASE)
        } else {
            self.violation(CryptoViolation::UnknownAddress);
            return None;
        };
        let powered = if is_sha {
            self.sha_powered()
        } else {
            self.aes_powered()
        };
        if !powered {
            self.violation(CryptoViolation::Unpowered);
            return None;
        }
        Some((is_sha, offset))
    }

    /// The clock/reset registers: a block that leaves reset forgets everything.
    fn write_system(&mut self, address: usize, value: u32) {
        if address == CLOCK {
            self.clock = value;
        } else {
            self.reset = value;
            if value & SHA_BIT != 0 {
                self.sha = ShaBlock::default();
            }
            if value & AES_BIT != 0 {
                self.aes = AesBlock::default();
            }
        }
    }
}

impl Default for Esp32C3CryptoModel {
    fn default() -> Self {
        Self::powered()
    }
}

impl Mmio for Esp32C3CryptoModel {
    fn read(&mut self, address: usize) -> u32 {
        self.stats.reads += 1;
        match address {
            CLOCK => self.clock,
            RESET => self.reset,
            _ => match self.route(address) {
                Some((true, offset)) => self.sha_read(offset),
                Some((false, offset)) => self.aes_read(offset),
                None => 0,
            },
        }
    }

    fn write(&mut self, address: usize, value: u32) {
        self.stats.writes += 1;
        match address {
            CLOCK | RESET => self.write_system(address, value),
            _ => match self.route(address) {
                Some((true, offset)) => self.sha_write(offset, value),
                Some((false, offset)) => self.aes_write(offset, value),
                None => {}
            },
        }
    }
}
