//! Driver for the plain big-integer multiplication of the ESP32-family RSA accelerator.
//!
//! The peripheral has four operand memories (M, Z, Y, X at offsets 0x000, 0x200, 0x400, 0x600
//! from its base; little-endian 32-bit words) and control registers from offset 0x800. Three
//! register generations exist (`docs/esp32-and-embedded.md` §1.2–1.4, from the ESP32 TRM ch. 24,
//! esp-idf `mpi_ll.h`, esp-hal `rsa/v1..v3.rs`, the esp-pacs SVDs and Espressif's QEMU models):
//!
//! | generation | chips | base | block | operands | mode register | done flag |
//! |---|---|---|---|---|---|---|
//! | [`Generation::V1`] | ESP32 | 0x3FF0_2000 | 128 words | n ∈ {16, 32, 48, 64} words | MULT_MODE 0x80C = n/8 + 7 | INTERRUPT 0x814 = 1 |
//! | [`Generation::V2`] | ESP32-S2, S3 | 0x6003_C000 | 128 words | 1 ≤ n ≤ 64 | MODE 0x804 = 2n − 1 | IDLE 0x818 = 1 |
//! | [`Generation::V3`] | ESP32-C3 (0x6003_C000), C6, H2 (0x6008_A000) | | 96 words | 1 ≤ n ≤ 48 | MODE 0x804 = 2n − 1 | IDLE 0x818 = 1 |
//!
//! # The multiplication protocol ([`Esp32Rsa::multiply`])
//!
//! 1. Make sure the peripheral is idle (V2/V3: IDLE reads 1; on V1, which has no idle flag, only
//!    an operation of ours that timed out can be waited for) and clear a pending interrupt
//!    (V1: write 1 to INTERRUPT, which must then read 0; V2/V3: write 1 to INT_CLR 0x81C). A
//!    flag left set by another user would otherwise end step 5 at once, before the product is
//!    there.
//! 2. Write the mode (output length 2n words).
//! 3. X → X_MEM[0..n) and zeros to X_MEM[n..2n); **Y → Z_MEM[n..2n)** (the operand-placement
//!    quirk: Y goes into the Z block at word offset n, not into Y_MEM) and zeros to Z_MEM[0..n).
//!    The zeros are conservative: the hardware reads X as a 2n-word number.
//! 4. Write 1 to the start register (MULT_START: 0x810 on V1, 0x814 on V2/V3).
//! 5. Poll the done flag (V1: INTERRUPT reads 1; V2/V3: IDLE reads 1).
//! 6. Read the product from Z_MEM[0..2n).
//! 7. Clear the interrupt.
//! 8. Clear the operand blocks (X_MEM[0..n), Z_MEM[0..2n)): the operands and product are
//!    secret-derived and must not stay in the peripheral.
//!
//! Nothing is written while an operation is in flight; the memories are only read after the done
//! flag was seen. The driver never touches the interrupt enable, the modular modes, or any register
//! outside the RSA block, except in the explicit power-up call.
//!
//! Every poll (steps 1 and 5, and CLEAN after power-up) gives up after [`POLL_LIMIT`] reads with
//! an [`RsaError`]; the product is then all zeros, never a stale or partial one. After a
//! [`RsaError::Timeout`] the operands stay in the peripheral until the operation ends (the next
//! call waits for it and clears all operand memory) or the block is reset.
//!
//! # One owner
//!
//! One [`Esp32Rsa`] owns the peripheral: it holds its [`Mmio`] handle by value, is neither `Clone`
//! nor `Copy`, and every operation takes `&mut self`; the real-register handle
//! (`volatile::VolatileMmio`) can only be made with an `unsafe` constructor whose contract is
//! that nothing else uses the block. The checks of step 1 catch a user that left the peripheral
//! busy or its interrupt pending (on V2/V3; on V1 only the pending interrupt), not one that runs
//! concurrently.
//!
//! # Errors through [`BigMul`]
//!
//! [`BigMul::mul`] cannot return an error. When the peripheral fails there, the driver computes
//! that product with the software engine ([`SoftwareBigMul`], constant time) instead, records the
//! error ([`Esp32Rsa::fault`], [`Esp32Rsa::take_fault`]), and leaves the peripheral alone (software
//! products only) until the error is taken. Results of [`crate::polymul::Kronecker`] on this
//! driver are therefore always correct; `take_fault()` tells the application that the
//! accelerator failed (and the operation ran at software speed), e.g. to reset it. Which engine
//! ran depends on the peripheral's behaviour, not on secrets.

//! # Clock, reset and memory power
//!
//! [`Esp32Rsa::new`] assumes the peripheral is clocked, out of reset, its memories powered and
//! initialised (CLEAN seen). The application normally does that (esp-hal's `Rsa::new`, esp-idf's
//! `esp_mpi_enable_hardware_hw_op`). Otherwise `volatile::enable_clock_and_memory` (feature
//! `esp32`, `unsafe`: read-modify-write of shared clock registers) runs [`Chip::POWER_UP`]:
//! - ESP32: DPORT_PERI_CLK_EN 0x3FF0_001C bit 2 set; DPORT_PERI_RST_EN 0x3FF0_0020 bit 2 pulsed
//!   1 → 0 and bit 4 (digital signature, which otherwise holds RSA in reset) cleared;
//!   DPORT_RSA_PD_CTRL 0x3FF0_0490 bit 0 cleared.
//! - ESP32-S3: SYSTEM_PERIP_CLK_EN1 0x600C_001C bit 3 set; SYSTEM_PERIP_RST_EN1 0x600C_0024 bit 3
//!   pulsed, bit 4 cleared; SYSTEM_RSA_PD_CTRL 0x600C_0040: MEM_PD (bit 0) and FORCE_PD (bit 2)
//!   cleared, FORCE_PU (bit 1) set.
//! - ESP32-C3: the same bits at 0x600C_0014, 0x600C_001C and 0x600C_0038.
//! - ESP32-C6/H2: PCR_RSA_CONF 0x6009_60D0 bit 0 (clock) set, bit 1 (reset) pulsed;
//!   PCR_RSA_PD_CTRL 0x6009_60D4 MEM_PD and FORCE_PD cleared. (The C6/H2 digital-signature reset,
//!   which esp-idf also releases, is not covered: use esp-idf/esp-hal if it is held.)
//! - ESP32-S2: no sequence is provided (not researched); enable it with esp-idf or esp-hal.
//!
//! then waits for CLEAN (0x818 on V1, 0x808 on V2/V3) to read 1.
//!
//! # Choosing the chip
//!
//! The chip is a type parameter ([`Esp32`], [`Esp32S2`], [`Esp32S3`], [`Esp32C3`], [`Esp32C6`],
//! [`Esp32H2`]); the layout is a constant of that type, so the choice is made at build time and
//! all generations are compiled and tested on the host. For convenience, building with
//! `RUSTFLAGS='--cfg saber_esp32_chip="esp32c3"'` (values `esp32`, `esp32s2`, `esp32s3`,
//! `esp32c3`, `esp32c6`, `esp32h2`) defines `TargetChip` (and, with feature `esp32`,
//! `volatile::Esp32Kronecker`).
//!
//! # Dual-core ESP32
//!
//! The original ESP32's RSA block is on the DPORT bus; its erratum (a DPORT read concurrent with
//! an APB read on the other core may return corrupted data) requires esp-idf's DPORT access
//! protection when both cores run. Use this driver from single-core code or pin the other core.

use core::marker::PhantomData;

use crate::hw::Mmio;
use crate::polymul::kronecker::{BigMul, SoftwareBigMul};

/// Register generation of the RSA block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    /// ESP32 (Xtensa LX6): MULT_MODE / INTERRUPT handshake, 512-bit operand granularity.
    V1,
    /// ESP32-S2/S3: MODE / IDLE handshake, 128-word blocks.
    V2,
    /// ESP32-C3/C6/H2: MODE / IDLE handshake, 96-word blocks.
    V3,
}

/// Byte offsets of the operand memories from the RSA base.
pub mod offsets {
    /// Modulus memory (unused by plain multiplication).
    pub const M_MEM: usize = 0x000;
    /// Result memory; also holds the Y operand at word offset n.
    pub const Z_MEM: usize = 0x200;
    /// Y memory (unused by plain multiplication).
    pub const Y_MEM: usize = 0x400;
    /// X operand memory.
    pub const X_MEM: usize = 0x600;

    /// V1 (ESP32): modular-multiplication / plain-multiplication mode.
    pub const V1_MULT_MODE: usize = 0x80C;
    /// V1: start a (modular) multiplication.
    pub const V1_MULT_START: usize = 0x810;
    /// V1: reads 1 when done; write 1 to clear.
    pub const V1_INTERRUPT: usize = 0x814;
    /// V1: reads 1 once the memories are initialised.
    pub const V1_CLEAN: usize = 0x818;

    /// V2/V3: operation length register (output words − 1 for plain multiplication).
    pub const MODE: usize = 0x804;
    /// V2/V3: reads 1 once the memories are initialised.
    pub const CLEAN: usize = 0x808;
    /// V2/V3: start a plain multiplication.
    pub const MULT_START: usize = 0x814;
    /// V2/V3: reads 1 when idle.
    pub const IDLE: usize = 0x818;
    /// V2/V3: write 1 to clear the interrupt.
    pub const INT_CLR: usize = 0x81C;
}

/// Where the RSA block is and what its plain multiplication accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RsaLayout {
    /// Register generation.
    pub generation: Generation,
    /// Bus address of the block (M_MEM).
    pub base: usize,
    /// Words per operand memory (128 or 96).
    pub block_words: usize,
    /// Longest plain-multiplication operand in words (half a block).
    pub max_mult_words: usize,
    /// Operand lengths must be multiples of this (16 words on V1).
    pub mult_granule_words: usize,
}

impl RsaLayout {
    /// Whether the plain multiplication accepts `n`-word operands.
    pub const fn accepts_operand_words(&self, n: usize) -> bool {
        n >= 1 && n <= self.max_mult_words && n.next_multiple_of(self.mult_granule_words) == n
    }

    /// The mode register value for `n`-word operands (V1: MULT_MODE = 2N/512 − 1 + 8 =
    /// n/8 + 7; V2/V3: MODE = 2n − 1).
    pub const fn mult_mode(&self, n: usize) -> u32 {
        match self.generation {
            Generation::V1 => ((n >> 3) + 7) as u32,
            Generation::V2 | Generation::V3 => (2 * n - 1) as u32,
        }
    }

    /// Address of the start register.
    pub const fn start_register(&self) -> usize {
        self.base
            + match self.generation {
                Generation::V1 => offsets::V1_MULT_START,
                Generation::V2 | Generation::V3 => offsets::MULT_START,
            }
    }

    /// Address of the mode register.
    pub const fn mode_register(&self) -> usize {
        self.base
            + match self.generation {
                Generation::V1 => offsets::V1_MULT_MODE,
                Generation::V2 | Generation::V3 => offsets::MODE,
            }
    }

    /// Address of the CLEAN (memory initialised) register.
    pub const fn clean_register(&self) -> usize {
        self.base
            + match self.generation {
                Generation::V1 => offsets::V1_CLEAN,
                Generation::V2 | Generation::V3 => offsets::CLEAN,
            }
    }

    /// Address of the register that reads 1 when an operation is done (V1 INTERRUPT, V2/V3
    /// IDLE).
    pub const fn done_register(&self) -> usize {
        self.base
            + match self.generation {
                Generation::V1 => offsets::V1_INTERRUPT,
                Generation::V2 | Generation::V3 => offsets::IDLE,
            }
    }

    /// Address of the register that clears the interrupt when written with 1.
    pub const fn interrupt_clear_register(&self) -> usize {
        self.base
            + match self.generation {
                Generation::V1 => offsets::V1_INTERRUPT,
                Generation::V2 | Generation::V3 => offsets::INT_CLR,
            }
    }

    /// Address of word `i` of the memory block at byte offset `block`.
    pub const fn word(&self, block: usize, i: usize) -> usize {
        self.base + block + 4 * i
    }

    /// Whether the `count` words from `address` are aligned and all inside the four operand
    /// memories (`base .. base + 0x800`). Computed without overflow: a span whose end does not
    /// fit in `usize` (which, wrapped, could look small) is outside.
    pub const fn contains_operand_words(&self, address: usize, count: usize) -> bool {
        let Some(bytes) = count.checked_mul(4) else {
            return false;
        };
        let Some(end) = address.checked_add(bytes) else {
            return false;
        };
        address >= self.base && address & 3 == 0 && end <= self.base + OPERAND_MEMORY_BYTES
    }
}

/// Bytes of the four operand memories (M, Z, Y, X) from the RSA base; the registers follow.
const OPERAND_MEMORY_BYTES: usize = 0x800;

/// One read-modify-write step of the power-up sequence: `reg = (reg | set) & !clear`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterUpdate {
    /// Register address.
    pub address: usize,
    /// Bits to set.
    pub set: u32,
    /// Bits to clear (applied after `set`).
    pub clear: u32,
}

/// A chip of the ESP32 family with an RSA accelerator.
pub trait Chip {
    /// Chip name as used by `--cfg saber_esp32_chip`.
    const NAME: &'static str;
    /// The RSA block.
    const LAYOUT: RsaLayout;
    /// Clock / reset / memory-power steps (module docs); empty when not provided.
    const POWER_UP: &'static [RegisterUpdate];
    /// Name of the Kronecker backend on this chip.
    const BACKEND_NAME: &'static str;
}

const fn update(address: usize, set: u32, clear: u32) -> RegisterUpdate {
    RegisterUpdate {
        address,
        set,
        clear,
    }
}

const V1_LAYOUT: RsaLayout = RsaLayout {
    generation: Generation::V1,
    base: 0x3FF0_2000,
    block_words: 128,
    max_mult_words: 64,
    mult_granule_words: 16,
};
const V2_LAYOUT: RsaLayout = RsaLayout {
    generation: Generation::V2,
    base: 0x6003_C000,
    block_words: 128,
    max_mult_words: 64,
    mult_granule_words: 1,
};
const fn v3_layout(base: usize) -> RsaLayout {
    RsaLayout {
        generation: Generation::V3,
        base,
        block_words: 96,
        max_mult_words: 48,
        mult_granule_words: 1,
    }
}

/// Clock enable bit, reset bit, digital-signature reset bit of the S3/C3 SYSTEM registers.
const SYSTEM_RSA: u32 = 1 << 3;
const SYSTEM_DS: u32 = 1 << 4;
/// RSA_PD_CTRL bits: memory power-down, force power-up, force power-down.
const MEM_PD: u32 = 1 << 0;
const FORCE_PU: u32 = 1 << 1;
const FORCE_PD: u32 = 1 << 2;

macro_rules! chip {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $layout:expr, $power_up:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $ty;

        impl Chip for $ty {
            const NAME: &'static str = $name;
            const LAYOUT: RsaLayout = $layout;
            const POWER_UP: &'static [RegisterUpdate] = $power_up;
            const BACKEND_NAME: &'static str = concat!("kronecker-", $name);
        }
    };
}

chip!(
    /// The original ESP32 (Xtensa LX6; RSA on the DPORT bus).
    Esp32,
    "esp32",
    V1_LAYOUT,
    &[
        update(0x3FF0_001C, 1 << 2, 0),
        update(0x3FF0_0020, 1 << 2, 0),
        update(0x3FF0_0020, 0, (1 << 2) | (1 << 4)),
        update(0x3FF0_0490, 0, 1),
    ]
);
chip!(
    /// ESP32-S2 (Xtensa LX7). No power-up sequence is provided.
    Esp32S2,
    "esp32s2",
    V2_LAYOUT,
    &[]
);
chip!(
    /// ESP32-S3 (Xtensa LX7).
    Esp32S3,
    "esp32s3",
    V2_LAYOUT,
    &[
        update(0x600C_001C, SYSTEM_RSA, 0),
        update(0x600C_0024, SYSTEM_RSA, 0),
        update(0x600C_0024, 0, SYSTEM_RSA | SYSTEM_DS),
        update(0x600C_0040, FORCE_PU, MEM_PD | FORCE_PD),
    ]
);
chip!(
    /// ESP32-C3 (RISC-V RV32IMC).
    Esp32C3,
    "esp32c3",
    v3_layout(0x6003_C000),
    &[
        update(0x600C_0014, SYSTEM_RSA, 0),
        update(0x600C_001C, SYSTEM_RSA, 0),
        update(0x600C_001C, 0, SYSTEM_RSA | SYSTEM_DS),
        update(0x600C_0038, 0, MEM_PD | FORCE_PD),
    ]
);
chip!(
    /// ESP32-C6 (RISC-V RV32IMAC).
    Esp32C6,
    "esp32c6",
    v3_layout(0x6008_A000),
    &[
        update(0x6009_60D0, 1, 0),
        update(0x6009_60D0, 2, 0),
        update(0x6009_60D0, 0, 2),
        update(0x6009_60D4, 0, MEM_PD | FORCE_PD),
    ]
);
chip!(
    /// ESP32-H2 (RISC-V RV32IMAC); same RSA and PCR layout as the C6.
    Esp32H2,
    "esp32h2",
    v3_layout(0x6008_A000),
    &[
        update(0x6009_60D0, 1, 0),
        update(0x6009_60D0, 2, 0),
        update(0x6009_60D0, 0, 2),
        update(0x6009_60D4, 0, MEM_PD | FORCE_PD),
    ]
);

cfg_if::cfg_if! {
    if #[cfg(saber_esp32_chip = "esp32")] {
        /// The chip selected with `--cfg saber_esp32_chip`.
        pub type TargetChip = Esp32;
    } else if #[cfg(saber_esp32_chip = "esp32s2")] {
        /// The chip selected with `--cfg saber_esp32_chip`.
        pub type TargetChip = Esp32S2;
    } else if #[cfg(saber_esp32_chip = "esp32s3")] {
        /// The chip selected with `--cfg saber_esp32_chip`.
        pub type TargetChip = Esp32S3;
    } else if #[cfg(saber_esp32_chip = "esp32c3")] {
        /// The chip selected with `--cfg saber_esp32_chip`.
        pub type TargetChip = Esp32C3;
    } else if #[cfg(saber_esp32_chip = "esp32c6")] {
        /// The chip selected with `--cfg saber_esp32_chip`.
        pub type TargetChip = Esp32C6;
    } else if #[cfg(saber_esp32_chip = "esp32h2")] {
        /// The chip selected with `--cfg saber_esp32_chip`.
        pub type TargetChip = Esp32H2;
    }
}

/// Status-register reads a poll makes before it gives up with an [`RsaError`]. A 2048-bit plain
/// multiplication takes a few thousand peripheral cycles and memory initialisation about as long,
/// so 2^20 reads (each at least one bus cycle) leave a wide margin; a peripheral that takes
/// longer does not respond.
pub const POLL_LIMIT: u32 = 1 << 20;

/// Why the RSA accelerator did not multiply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RsaError {
    /// Operand lengths the chip's plain multiplication does not accept
    /// ([`RsaLayout::accepts_operand_words`]), or a product buffer that is not twice as long.
    UnsupportedLength,
    /// Before the start, an operation (another user's, or one of ours that timed out) was still
    /// running after [`POLL_LIMIT`] polls.
    Busy,
    /// The interrupt flag still read 1 after it was cleared (V1): the peripheral does not respond.
    InterruptStuck,
    /// The done flag did not come within [`POLL_LIMIT`] polls after the start.
    Timeout,
    /// CLEAN did not report the operand memories initialised within [`POLL_LIMIT`] polls.
    NotInitialised,
}

/// The RSA accelerator of chip `C`, accessed through `M`; a [`BigMul`] engine for
/// [`crate::polymul::Kronecker`].
///
/// The only owner of the peripheral (module docs, "One owner"). An error of [`BigMul::mul`] is
/// kept until [`Self::take_fault`], and products are computed in software meanwhile.
#[derive(Debug)]
pub struct Esp32Rsa<M: Mmio, C: Chip> {
    mmio: M,
    /// The first error of a [`BigMul::mul`] not yet taken.
    fault: Option<RsaError>,
    /// An operation of ours was started and its end not yet seen (it timed out).
    in_flight: bool,
    chip: PhantomData<C>,
}

impl<M: Mmio, C: Chip> Esp32Rsa<M, C> {
    /// The driver on a peripheral that is clocked, out of reset, with its memories powered and
    /// initialised (see the module docs for how to get there).
    pub fn new(mmio: M) -> Self {
        Self {
            mmio,
            fault: None,
            in_flight: false,
            chip: PhantomData,
        }
    }

    /// The MMIO handle (e.g. the model, to read its counters).
    pub fn mmio(&self) -> &M {
        &self.mmio
    }

    /// The MMIO handle, mutably. Raw register access bypasses the driver's checks.
    pub fn mmio_mut(&mut self) -> &mut M {
        &mut self.mmio
    }

    /// Gives the MMIO handle back.
    pub fn into_mmio(self) -> M {
        self.mmio
    }

    /// The first error of a [`BigMul::mul`] since the last [`Self::take_fault`], if any: since
    /// then, products through [`BigMul`] are computed in software.
    pub fn fault(&self) -> Option<RsaError> {
        self.fault
    }

    /// Returns and clears the recorded [`BigMul::mul`] error, so that the next multiplication
    /// uses the peripheral again (waiting for, or giving up on, an operation that timed out).
    pub fn take_fault(&mut self) -> Option<RsaError> {
        self.fault.take()
    }

    /// Runs [`Chip::POWER_UP`] and waits for CLEAN. Reached through the `unsafe`
    /// `volatile::enable_clock_and_memory` on hardware and the safe
    /// [`crate::hw::esp32_model::enable_clock_and_memory`] on the model.
    pub(crate) fn power_up(&mut self) -> Result<(), RsaError> {
        for step in C::POWER_UP {
            let value = self.mmio.read(step.address);
            self.mmio
                .write(step.address, (value | step.set) & !step.clear);
        }
        if !C::POWER_UP.is_empty() {
            // The sequence pulses the block's reset, which ends any operation.
            self.in_flight = false;
        }
        self.wait_until_clean()
    }

    /// Polls CLEAN until the operand memories are initialised (after reset or power-up), at most
    /// [`POLL_LIMIT`] times.
    pub fn wait_until_clean(&mut self) -> Result<(), RsaError> {
        self.poll(C::LAYOUT.clean_register())
            .then_some(())
            .ok_or(RsaError::NotInitialised)
    }

    /// Whether bit 0 of `register` reads 1 within [`POLL_LIMIT`] reads.
    fn poll(&mut self, register: usize) -> bool {
        (0..POLL_LIMIT).any(|_| self.mmio.read(register) & 1 == 1)
    }

    /// `product = x · y` for `n`-word operands (`n` accepted by [`RsaLayout::accepts_operand_words`]),
    /// `product` of `2n` words, following the protocol in the module docs. On an error `product`
    /// is all zeros.
    pub fn multiply(&mut self, x: &[u32], y: &[u32], product: &mut [u32]) -> Result<(), RsaError> {
        let n = x.len();
        let result = if C::LAYOUT.accepts_operand_words(n) && y.len() == n && product.len() == 2 * n
        {
            self.run_multiplication(x, y, product)
        } else {
            Err(RsaError::UnsupportedLength)
        };
        if result.is_err() {
            product.fill(0);
        }
        result
    }

    /// Steps 1 to 8 of the protocol, on lengths already checked.
    fn run_multiplication(
        &mut self,
        x: &[u32],
        y: &[u32],
        product: &mut [u32],
    ) -> Result<(), RsaError> {
        let layout = C::LAYOUT;
        let n = x.len();
        let x_mem = layout.word(offsets::X_MEM, 0);
        let z_mem = layout.word(offsets::Z_MEM, 0);
        self.wait_until_idle()?;
        let mmio = &mut self.mmio;
        mmio.write(layout.interrupt_clear_register(), 1);
        if layout.generation == Generation::V1 && mmio.read(layout.done_register()) & 1 != 0 {
            return Err(RsaError::InterruptStuck);
        }
        mmio.write(layout.mode_register(), layout.mult_mode(n));
        mmio.write_words(x_mem, x);
        mmio.fill_words(x_mem + 4 * n, n, 0);
        mmio.fill_words(z_mem, n, 0);
        mmio.write_words(z_mem + 4 * n, y);
        mmio.write(layout.start_register(), 1);
        self.in_flight = true;
        if !self.poll(layout.done_register()) {
            return Err(RsaError::Timeout);
        }
        self.in_flight = false;
        let mmio = &mut self.mmio;
        mmio.read_words(z_mem, product);
        mmio.write(layout.interrupt_clear_register(), 1);
        mmio.fill_words(x_mem, n, 0);
        mmio.fill_words(z_mem, 2 * n, 0);
        Ok(())
    }

    /// Step 1's wait: on V2/V3 until IDLE reads 1; on V1 (no idle flag) until an operation of
    /// ours that timed out has raised its interrupt. Once that operation is over, its operands
    /// are wiped from all of X_MEM and Z_MEM.
    fn wait_until_idle(&mut self) -> Result<(), RsaError> {
        let layout = C::LAYOUT;
        let idle = match layout.generation {
            Generation::V1 => !self.in_flight || self.poll(layout.done_register()),
            Generation::V2 | Generation::V3 => self.poll(layout.done_register()),
        };
        if !idle {
            return Err(RsaError::Busy);
        }
        if self.in_flight {
            self.in_flight = false;
            let words = layout.block_words;
            self.mmio
                .fill_words(layout.word(offsets::X_MEM, 0), words, 0);
            self.mmio
                .fill_words(layout.word(offsets::Z_MEM, 0), words, 0);
        }
        Ok(())
    }
}

impl<M: Mmio, C: Chip> BigMul for Esp32Rsa<M, C> {
    const MAX_OPERAND_WORDS: usize = C::LAYOUT.max_mult_words;
    const OPERAND_WORDS_GRANULE: usize = C::LAYOUT.mult_granule_words;
    const BACKEND_NAME: &'static str = C::BACKEND_NAME;

    /// [`Esp32Rsa::multiply`]; on its error, and while an error is recorded (without touching
    /// the peripheral), the software engine's product. The first error is kept for
    /// [`Esp32Rsa::take_fault`].
    fn mul(&mut self, x: &[u32], y: &[u32], product: &mut [u32]) {
        if self.fault.is_none() {
            match self.multiply(x, y, product) {
                Ok(()) => return,
                Err(error) => self.fault = Some(error),
            }
        }
        SoftwareBigMul::<64>.mul(x, y, product);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operand_spans_inside_the_memories_are_accepted() {
        for layout in [Esp32::LAYOUT, Esp32C3::LAYOUT, Esp32C6::LAYOUT] {
            let base = layout.base;
            assert!(layout.contains_operand_words(base, 0));
            assert!(layout.contains_operand_words(base, 0x200));
            assert!(layout.contains_operand_words(base + 0x7FC, 1));
            assert!(layout.contains_operand_words(base + 0x800, 0));
            assert!(layout.contains_operand_words(layout.word(offsets::X_MEM, 0), 128));
        }
    }

    #[test]
    fn operand_spans_outside_the_memories_are_rejected() {
        for layout in [Esp32::LAYOUT, Esp32C3::LAYOUT, Esp32C6::LAYOUT] {
            let base = layout.base;
            // One word past the end, before the start, misaligned.
            assert!(!layout.contains_operand_words(base, 0x201));
            assert!(!layout.contains_operand_words(base + 0x7FC, 2));
            assert!(!layout.contains_operand_words(base + 0x800, 1));
            assert!(!layout.contains_operand_words(base - 4, 1));
            assert!(!layout.contains_operand_words(base + 2, 1));
        }
    }

    /// The check as it was, with the wrapping arithmetic of a release build.
    fn wrapping_check(layout: RsaLayout, address: usize, count: usize) -> bool {
        address >= layout.base
            && address & 3 == 0
            && address.wrapping_add(count.wrapping_mul(4)) <= layout.base + 0x800
    }

    /// Spans whose end overflows `usize`, so that `address + 4·count` with wrapping lands in the
    /// memories (on 32-bit targets `count` ≥ 2^30 is enough; these values wrap on every target).
    #[test]
    fn operand_spans_that_overflow_are_rejected() {
        for layout in [Esp32::LAYOUT, Esp32C3::LAYOUT, Esp32C6::LAYOUT] {
            let base = layout.base;
            let cases = [
                // 4·count wraps to 0 and to 4.
                (base, (usize::MAX >> 2) + 1),
                (base, (usize::MAX >> 2) + 2),
                // 4·count = 2^bits − 4 fits; address + 4·count wraps to address − 4.
                (base + 4, usize::MAX >> 2),
                // An address at the top of the address space whose span wraps to 4.
                (usize::MAX - 3, 2),
            ];
            for (address, count) in cases {
                assert!(
                    wrapping_check(layout, address, count),
                    "{address:#x} + 4·{count:#x} is not a wrapping case"
                );
                assert!(
                    !layout.contains_operand_words(address, count),
                    "{address:#x} + 4·{count:#x} accepted"
                );
            }
        }
    }
}
