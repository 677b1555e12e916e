//! A strict software model of the ESP32-family RSA accelerator's plain multiplication, behind the
//! same [`Mmio`] trait as the real registers, so the unchanged driver runs in host tests.
//!
//! The model follows Espressif's QEMU models and the TRM protocol (`docs/esp32-and-embedded.md`
//! §1.5): a start with mode value `m` produces `L` output words (V1: `(m − 7)·16`; V2/V3:
//! `m + 1`), `n = L/2`, and `Z_MEM[0..L) = X_MEM[0..L) × Z_MEM[n..L)`. It computes the product
//! with its own schoolbook code (independent of the software engine) and rejects, as a
//! [`Violation`]:
//! - accesses outside the RSA block and the chip's clock registers, misaligned accesses, memory
//!   words beyond the block (96 words on C3/C6/H2);
//! - any RSA access while the clock is off, the block is in reset, or its memory is powered down;
//!   memory accesses before CLEAN reported the initialisation finished;
//! - an illegal mode at start (V1: not 9, 11, 13 or 15; V2/V3: odd output length or longer than the
//!   block), an X operand longer than the mode says (non-zero `X_MEM[n..L)`);
//! - writes to the memories or the mode, or a start, while busy; a start while the previous
//!   completion's interrupt is still pending;
//! - reading the memories after a start before the done flag was observed;
//! - touching the modular-arithmetic registers (M', modexp/modmult starts), which this backend
//!   never needs;
//! - a poll without bound: more than [`ENDLESS_POLLS`] consecutive reads of a status register
//!   that reports "not yet" (always a panic, as the driver would otherwise hang the test).
//!
//! It also simulates what another user or a broken peripheral leaves behind:
//! [`Esp32RsaModel::inject_stale_interrupt`] (a completion whose interrupt was never cleared),
//! [`Esp32RsaModel::start_foreign_multiplication`] (an operation still running when the driver
//! starts) and [`Esp32RsaModel::set_stalled`] (operations and memory initialisation that never
//! finish).
//!
//! By default a violation panics (with its kind), so a test fails at the offending access;
//! [`Esp32RsaModel::set_panic_on_violation`] switches to counting, for negative tests.
//!
//! The power-up model uses its own transcription of the clock/reset/power bits (reset values from
//! the PAC/SVD where known, otherwise assumed "off / in reset"), so a wrong bit in the driver's
//! [`Chip::POWER_UP`] table shows up as an unpowered access.

use core::marker::PhantomData;

use crate::hw::Mmio;
use crate::hw::esp32_rsa::{Chip, Esp32Rsa, Generation, RsaError, offsets};
use crate::polymul::Kronecker;

/// A protocol error detected by the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Violation {
    /// Address outside the RSA block and the chip's power registers.
    UnknownAddress,
    /// Address not a multiple of 4.
    Misaligned,
    /// RSA access while clock off, in reset, or memory powered down.
    Unpowered,
    /// Memory access before CLEAN reported the memories initialised.
    NotInitialised,
    /// Memory word beyond the block size.
    OutsideBlock,
    /// Memory or mode written while an operation runs.
    WriteWhileBusy,
    /// Start while an operation runs.
    StartWhileBusy,
    /// Start while the previous completion's interrupt was not cleared.
    InterruptNotCleared,
    /// Start with a mode value the plain multiplication does not accept.
    IllegalMode,
    /// X operand longer than the mode's operand length.
    OperandTooLong,
    /// Memory read after a start before the done flag was seen.
    ReadBeforeDone,
    /// Access to a register plain multiplication does not use (modular operations, unknown).
    UnsupportedRegister,
    /// More than [`ENDLESS_POLLS`] consecutive "not yet" reads of a status register.
    EndlessPoll,
}

/// Counters kept by the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelStats {
    /// Plain multiplications started, indexed by operand length in words.
    pub multiplications_by_operand_words: [u32; 65],
    /// MMIO reads (registers and memories).
    pub reads: u64,
    /// MMIO writes.
    pub writes: u64,
    /// Reads of the done flag that returned "busy".
    pub busy_polls: u64,
}

impl ModelStats {
    const ZERO: Self = Self {
        multiplications_by_operand_words: [0; 65],
        reads: 0,
        writes: 0,
        busy_polls: 0,
    };

    /// Total plain multiplications.
    pub fn multiplications(&self) -> u32 {
        self.multiplications_by_operand_words.iter().sum()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    /// Started; the done flag reads "busy" this many more times.
    Busy(u32),
    /// Completed and observed through the done flag.
    Done,
}

/// One clock/reset/power condition: `(register & mask) == required` once enabled.
#[derive(Clone, Copy)]
struct PowerCondition {
    address: usize,
    reset_value: u32,
    mask: u32,
    required: u32,
}

const fn condition(address: usize, reset_value: u32, mask: u32, required: u32) -> PowerCondition {
    PowerCondition {
        address,
        reset_value,
        mask,
        required,
    }
}

/// The model's own view of what "clocked, out of reset, memory powered" means per chip.
fn power_conditions(chip: &str) -> &'static [PowerCondition] {
    const ESP32: [PowerCondition; 3] = [
        condition(0x3FF0_001C, 0, 1 << 2, 1 << 2),
        condition(0x3FF0_0020, 0b1_0100, 0b1_0100, 0),
        condition(0x3FF0_0490, 1, 1, 0),
    ];
    const S3: [PowerCondition; 3] = [
        condition(0x600C_001C, 0, 1 << 3, 1 << 3),
        condition(0x600C_0024, 0x1FE, 0b1_1000, 0),
        condition(0x600C_0040, 1, 0b101, 0),
    ];
    const C3: [PowerCondition; 3] = [
        condition(0x600C_0014, 0x200, 1 << 3, 1 << 3),
        condition(0x600C_001C, 0x1FE, 0b1_1000, 0),
        condition(0x600C_0038, 1, 0b101, 0),
    ];
    const C6_H2: [PowerCondition; 2] = [
        condition(0x6009_60D0, 0b11, 0b11, 0b01),
        condition(0x6009_60D4, 0b11, 0b101, 0),
    ];
    match chip {
        "esp32" => &ESP32,
        "esp32s3" => &S3,
        "esp32c3" => &C3,
        "esp32c6" | "esp32h2" => &C6_H2,
        _ => &[],
    }
}

/// Status reads that report "busy" after each start.
const LATENCY_POLLS: u32 = 2;
/// CLEAN reads that report "not yet" after power-up.
const CLEAN_POLLS: u32 = 2;
/// Consecutive "not yet" status reads after which the model reports [`Violation::EndlessPoll`]:
/// well above the driver's bound, so only a poll without one gets there.
pub const ENDLESS_POLLS: u64 = 4 * crate::hw::esp32_rsa::POLL_LIMIT as u64;

/// The model of chip `C`'s RSA accelerator.
#[derive(Clone, Debug)]
pub struct Esp32RsaModel<C: Chip> {
    /// M, Z, Y, X memories (index = byte offset / 0x200).
    memory: [[u32; 128]; 4],
    mode: u32,
    state: State,
    interrupt_pending: bool,
    clean_polls_left: u32,
    /// Operations and memory initialisation never finish.
    stalled: bool,
    /// Consecutive status reads that reported "not yet".
    polls_without_progress: u64,
    system: [u32; 3],
    powered: bool,
    panic_on_violation: bool,
    violations: u32,
    last_violation: Option<Violation>,
    stats: ModelStats,
    chip: PhantomData<C>,
}

impl<C: Chip> Default for Esp32RsaModel<C> {
    fn default() -> Self {
        Self::powered()
    }
}

impl<C: Chip> Esp32RsaModel<C> {
    /// The peripheral as after a chip reset: clock off, in reset, memory powered down (as far as
    /// modelled; a chip without a power-up table starts powered).
    pub fn cold() -> Self {
        let mut system = [0; 3];
        for (value, c) in system.iter_mut().zip(power_conditions(C::NAME)) {
            *value = c.reset_value;
        }
        let mut model = Self {
            memory: [[0; 128]; 4],
            mode: 0,
            state: State::Idle,
            interrupt_pending: false,
            clean_polls_left: 0,
            stalled: false,
            polls_without_progress: 0,
            system,
            powered: false,
            panic_on_violation: true,
            violations: 0,
            last_violation: None,
            stats: ModelStats::ZERO,
            chip: PhantomData,
        };
        model.update_power();
        model
    }

    /// The peripheral clocked, out of reset, memory powered and initialised (CLEAN seen).
    pub fn powered() -> Self {
        let mut model = Self::cold();
        for (value, c) in model.system.iter_mut().zip(power_conditions(C::NAME)) {
            *value = (*value & !c.mask) | c.required;
        }
        model.update_power();
        model.clean_polls_left = 0;
        model
    }

    /// Panic at the first violation (default) or only count them.
    pub fn set_panic_on_violation(&mut self, panic: bool) {
        self.panic_on_violation = panic;
    }

    /// Number of violations so far.
    pub fn violations(&self) -> u32 {
        self.violations
    }

    /// The most recent violation.
    pub fn last_violation(&self) -> Option<Violation> {
        self.last_violation
    }

    /// Counters.
    pub fn stats(&self) -> &ModelStats {
        &self.stats
    }

    /// Resets the counters (not the peripheral state).
    pub fn reset_stats(&mut self) {
        self.stats = ModelStats::ZERO;
    }

    /// Another user's multiplication completed and its interrupt was never cleared: the
    /// interrupt is pending, and on V1 the done flag reads 1 before any start.
    pub fn inject_stale_interrupt(&mut self) {
        self.interrupt_pending = true;
    }

    /// Another user starts a 16-word multiplication (of whatever the memories hold) just
    /// before the driver: the peripheral is busy for a few status reads, then completes with its
    /// interrupt pending. Not counted in [`ModelStats`].
    pub fn start_foreign_multiplication(&mut self) {
        self.mode = match C::LAYOUT.generation {
            Generation::V1 => 9,
            Generation::V2 | Generation::V3 => 2 * 16 - 1,
        };
        self.state = State::Busy(LATENCY_POLLS);
    }

    /// From now on (`true`), a started operation and the memory initialisation after power-up
    /// never finish; `false` lets them finish again.
    pub fn set_stalled(&mut self, stalled: bool) {
        self.stalled = stalled;
    }

    /// Whether any word of the operand memories is non-zero (for checking that secrets are
    /// cleared after use).
    pub fn memories_hold_data(&self) -> bool {
        self.memory.iter().flatten().any(|&w| w != 0)
    }

    fn violation(&mut self, kind: Violation) {
        self.violations = self.violations.saturating_add(1);
        self.last_violation = Some(kind);
        assert!(
            !self.panic_on_violation && kind != Violation::EndlessPoll,
            "ESP32 RSA protocol violation: {kind:?}"
        );
    }

    /// Counts a status read that reported "not yet".
    fn no_progress(&mut self) {
        self.polls_without_progress += 1;
        if self.polls_without_progress > ENDLESS_POLLS {
            self.violation(Violation::EndlessPoll);
        }
    }

    fn update_power(&mut self) {
        let was = self.powered;
        self.powered = power_conditions(C::NAME)
            .iter()
            .zip(self.system)
            .all(|(c, value)| value & c.mask == c.required);
        if self.powered && !was {
            // Power-up / reset release: the hardware clears the memories, then reports CLEAN.
            self.memory = [[0; 128]; 4];
            self.state = State::Idle;
            self.interrupt_pending = false;
            self.clean_polls_left = CLEAN_POLLS;
        }
    }

    fn system_index(address: usize) -> Option<usize> {
        power_conditions(C::NAME)
            .iter()
            .position(|c| c.address == address)
    }

    /// Output words of a plain multiplication with mode value `mode`, if legal.
    fn output_words(mode: u32) -> Option<usize> {
        let layout = C::LAYOUT;
        let words = match layout.generation {
            Generation::V1 => match mode {
                9 | 11 | 13 | 15 => (mode as usize - 7) * 16,
                _ => return None,
            },
            Generation::V2 | Generation::V3 => mode as usize + 1,
        };
        (words & 1 == 0 && words <= layout.block_words).then_some(words)
    }

    fn start(&mut self) {
        if matches!(self.state, State::Busy(_)) {
            return self.violation(Violation::StartWhileBusy);
        }
        if self.interrupt_pending {
            return self.violation(Violation::InterruptNotCleared);
        }
        let Some(words) = Self::output_words(self.mode) else {
            return self.violation(Violation::IllegalMode);
        };
        let n = words >> 1;
        if self.memory[3][n..words].iter().any(|&w| w != 0) {
            return self.violation(Violation::OperandTooLong);
        }
        self.stats.multiplications_by_operand_words[n] += 1;
        self.state = State::Busy(LATENCY_POLLS);
    }

    /// Z[0..2n) = X[0..n) · Z[n..2n).
    fn complete(&mut self) {
        let words = Self::output_words(self.mode).unwrap_or(0);
        let n = words >> 1;
        let mut y = [0u32; 64];
        y[..n].copy_from_slice(&self.memory[1][n..words]);
        let mut out = [0u32; 128];
        for i in 0..n {
            let mut carry = 0u64;
            for j in 0..n {
                let t = self.memory[3][i] as u64 * y[j] as u64 + out[i + j] as u64 + carry;
                out[i + j] = t as u32;
                carry = t >> 32;
            }
            out[i + n] = carry as u32;
        }
        self.memory[1][..words].copy_from_slice(&out[..words]);
        self.state = State::Done;
        self.interrupt_pending = true;
    }

    /// Reads of the done flag: "busy" for a few reads after a start, then completion.
    fn read_done_flag(&mut self) -> u32 {
        match self.state {
            State::Busy(0) if !self.stalled => {
                self.complete();
                1
            }
            State::Busy(left) => {
                self.state = State::Busy(left.saturating_sub(1));
                self.stats.busy_polls += 1;
                self.no_progress();
                0
            }
            State::Idle | State::Done => match C::LAYOUT.generation {
                Generation::V1 => self.interrupt_pending as u32,
                Generation::V2 | Generation::V3 => 1,
            },
        }
    }

    fn clear_interrupt(&mut self, value: u32) {
        if value & 1 == 1 {
            self.interrupt_pending = false;
            if self.state == State::Done {
                self.state = State::Idle;
            }
        }
    }

    /// The memory word at RSA offset `offset` (< 0x800), checked.
    fn memory_word(&mut self, offset: usize, writing: bool) -> Option<(usize, usize)> {
        let block = offset >> 9;
        let word = (offset & 0x1FF) >> 2;
        if word >= C::LAYOUT.block_words {
            self.violation(Violation::OutsideBlock);
            return None;
        }
        if self.clean_polls_left > 0 {
            self.violation(Violation::NotInitialised);
            return None;
        }
        match (self.state, writing) {
            (State::Busy(_), true) => {
                self.violation(Violation::WriteWhileBusy);
                None
            }
            (State::Busy(_), false) => {
                self.violation(Violation::ReadBeforeDone);
                None
            }
            _ => Some((block, word)),
        }
    }

    fn read_register(&mut self, offset: usize) -> u32 {
        let generation = C::LAYOUT.generation;
        match (generation, offset) {
            (Generation::V1, offsets::V1_MULT_MODE) => self.mode,
            (Generation::V1, offsets::V1_INTERRUPT) => self.read_done_flag(),
            (Generation::V1, offsets::V1_CLEAN) => self.read_clean(),
            (Generation::V2 | Generation::V3, offsets::MODE) => self.mode,
            (Generation::V2 | Generation::V3, offsets::CLEAN) => self.read_clean(),
            (Generation::V2 | Generation::V3, offsets::IDLE) => self.read_done_flag(),
            _ => {
                self.violation(Violation::UnsupportedRegister);
                0
            }
        }
    }

    fn read_clean(&mut self) -> u32 {
        if self.clean_polls_left > 0 {
            if !self.stalled {
                self.clean_polls_left -= 1;
            }
            self.no_progress();
            0
        } else {
            1
        }
    }

    fn write_register(&mut self, offset: usize, value: u32) {
        let generation = C::LAYOUT.generation;
        match (generation, offset) {
            (Generation::V1, offsets::V1_MULT_MODE)
            | (Generation::V2 | Generation::V3, offsets::MODE) => {
                if matches!(self.state, State::Busy(_)) {
                    return self.violation(Violation::WriteWhileBusy);
                }
                self.mode = value
                    & if generation == Generation::V1 {
                        0xF
                    } else {
                        0x7F
                    };
            }
            (Generation::V1, offsets::V1_MULT_START)
            | (Generation::V2 | Generation::V3, offsets::MULT_START) => {
                if value & 1 == 1 {
                    self.start();
                }
            }
            (Generation::V1, offsets::V1_INTERRUPT)
            | (Generation::V2 | Generation::V3, offsets::INT_CLR) => self.clear_interrupt(value),
            _ => self.violation(Violation::UnsupportedRegister),
        }
    }

    fn rsa_offset(address: usize) -> Option<usize> {
        let base = C::LAYOUT.base;
        (address >= base && address < base + 0x1000).then(|| address - base)
    }
}

impl<C: Chip> Mmio for Esp32RsaModel<C> {
    fn read(&mut self, address: usize) -> u32 {
        self.stats.reads += 1;
        let progress_before = self.polls_without_progress;
        let value = self.read_unrecorded(address);
        if self.polls_without_progress == progress_before {
            self.polls_without_progress = 0;
        }
        value
    }

    fn write(&mut self, address: usize, value: u32) {
        self.polls_without_progress = 0;
        self.write_unrecorded(address, value);
    }
}

impl<C: Chip> Esp32RsaModel<C> {
    /// [`Mmio::read`] apart from the poll watchdog.
    fn read_unrecorded(&mut self, address: usize) -> u32 {
        if address & 3 != 0 {
            self.violation(Violation::Misaligned);
            return 0;
        }
        if let Some(i) = Self::system_index(address) {
            return self.system[i];
        }
        let Some(offset) = Self::rsa_offset(address) else {
            self.violation(Violation::UnknownAddress);
            return 0;
        };
        if !self.powered {
            self.violation(Violation::Unpowered);
            return 0;
        }
        if offset < 0x800 {
            match self.memory_word(offset, false) {
                Some((block, word)) => self.memory[block][word],
                None => 0,
            }
        } else {
            self.read_register(offset)
        }
    }

    /// [`Mmio::write`] apart from the poll watchdog.
    fn write_unrecorded(&mut self, address: usize, value: u32) {
        self.stats.writes += 1;
        if address & 3 != 0 {
            return self.violation(Violation::Misaligned);
        }
        if let Some(i) = Self::system_index(address) {
            self.system[i] = value;
            return self.update_power();
        }
        let Some(offset) = Self::rsa_offset(address) else {
            return self.violation(Violation::UnknownAddress);
        };
        if !self.powered {
            return self.violation(Violation::Unpowered);
        }
        if offset < 0x800 {
            if let Some((block, word)) = self.memory_word(offset, true) {
                self.memory[block][word] = value;
            }
        } else {
            self.write_register(offset, value);
        }
    }
}

/// Runs the driver's power-up sequence on the model (safe here: nothing to race with).
pub fn enable_clock_and_memory<C: Chip>(
    rsa: &mut Esp32Rsa<Esp32RsaModel<C>, C>,
) -> Result<(), RsaError> {
    rsa.power_up()
}

/// The Kronecker backend on the model of chip `C`.
pub type ModelKronecker<C> = Kronecker<Esp32Rsa<Esp32RsaModel<C>, C>>;

/// The Kronecker backend on a powered model of chip `C`.
pub fn kronecker_on_model<C: Chip>() -> ModelKronecker<C> {
    Kronecker::new(Esp32Rsa::new(Esp32RsaModel::powered()))
}
