//! What differs per ISA: the instruction counter, the stack pointer, and output.
//!
//! Instruction counts are deterministic because QEMU runs with `-icount shift=0`:
//! - RV32IMC: the `minstret` CSR counts retired instructions exactly.
//! - Cortex-M4: QEMU does not implement the DWT cycle counter; under `-icount shift=0` one
//!   instruction takes 1 ns of virtual time and SysTick runs from the 25 MHz core clock of
//!   mps2-an386, so one tick is 40 instructions (checked at start-up by [`calibrate`]).
//! - Cortex-M0 (`microbit`, nRF51): the same with the 16 MHz core clock, 62.5 instructions per
//!   tick (±63 per figure).
//!
//! Peak stack is measured by painting: [`measure`] fills a window below the current stack
//! pointer with a pattern, runs the operation, and finds the lowest word that changed. On the
//! Cortex-M0 the window is all the RAM below the stack, and the stack sits below the statics
//! (`memory-microbit.x`): an operation that needs more stack than the 16 KB leave runs off the
//! bottom of RAM, which QEMU stops at once ("Lockup"), and `../run` reports it.

/// Instructions executed and stack bytes used by one operation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Measurement {
    /// Instructions executed (0 on the host).
    pub instructions: u64,
    /// Peak stack below the caller's stack pointer, in bytes (0 on the host).
    pub stack_bytes: usize,
}

/// Short ISA name used in the CSV.
#[cfg(all(target_os = "none", target_arch = "riscv32"))]
pub const ISA: &str = "rv32imc";
/// Short ISA name used in the CSV.
#[cfg(all(target_os = "none", embedded_isa = "cortex-m4"))]
pub const ISA: &str = "cortex-m4";
/// Short ISA name used in the CSV.
#[cfg(all(target_os = "none", embedded_isa = "cortex-m0"))]
pub const ISA: &str = "cortex-m0";
/// Short ISA name used in the CSV.
#[cfg(not(target_os = "none"))]
pub const ISA: &str = "host";

#[cfg(target_os = "none")]
macro_rules! outln {
    ($($arg:tt)*) => { semihosting::println!($($arg)*) };
}
#[cfg(not(target_os = "none"))]
macro_rules! outln {
    ($($arg:tt)*) => { std::println!($($arg)*) };
}
pub(crate) use outln;

#[cfg(target_os = "none")]
mod bare {
    use core::arch::asm;

    /// Bytes painted below the stack pointer; more than any operation uses (checked).
    #[cfg(not(embedded_isa = "cortex-m0"))]
    const WINDOW: usize = 64 * 1024;
    const PAINT: u32 = 0xDEAD_BEEF;

    /// The lowest address painted below `base`: a window, or on the Cortex-M0 the bottom of RAM
    /// (`memory-microbit.x` puts the stack below the statics).
    pub fn paint_bottom(base: usize) -> usize {
        #[cfg(not(embedded_isa = "cortex-m0"))]
        {
            (base - WINDOW) & !3
        }
        #[cfg(embedded_isa = "cortex-m0")]
        {
            let _ = base;
            0x2000_0000
        }
    }

    #[inline(always)]
    pub fn stack_pointer() -> usize {
        let sp: usize;
        // SAFETY: reads a register; no memory access.
        #[cfg(target_arch = "riscv32")]
        unsafe {
            asm!("mv {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags))
        };
        #[cfg(target_arch = "arm")]
        unsafe {
            asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags))
        };
        sp
    }

    /// Fills `[bottom, own stack pointer − 16)` with the pattern.
    #[inline(never)]
    pub fn paint(bottom: usize) {
        let top = (stack_pointer() - 16) & !3;
        let mut p = bottom;
        while p < top {
            // SAFETY: the window lies in RAM below the live stack (memory.x gives 16 MiB / 4 MiB
            // of RAM with the stack at its top and a tiny .bss at its bottom; on the Cortex-M0
            // the statics are above the stack and the window ends at the bottom of RAM).
            unsafe { core::ptr::write_volatile(p as *mut u32, PAINT) };
            p += 4;
        }
    }

    /// The lowest address in `[bottom, top)` whose word is not the pattern (or `top`).
    #[inline(never)]
    pub fn lowest_touched(bottom: usize, top: usize) -> usize {
        let mut p = bottom;
        // SAFETY: as in `paint`.
        while p < top && unsafe { core::ptr::read_volatile(p as *const u32) } == PAINT {
            p += 4;
        }
        p
    }

    #[cfg(target_arch = "riscv32")]
    pub fn init() {}

    /// Retired instructions (`minstret`/`minstreth`, read high-low-high).
    #[cfg(target_arch = "riscv32")]
    #[inline(always)]
    fn minstret() -> u64 {
        loop {
            let (hi, lo, hi2): (u32, u32, u32);
            // SAFETY: reads machine-mode counters; the harness runs in M-mode.
            unsafe {
                asm!("csrr {0}, minstreth", "csrr {1}, minstret", "csrr {2}, minstreth",
                     out(reg) hi, out(reg) lo, out(reg) hi2, options(nomem, nostack));
            }
            if hi == hi2 {
                return (u64::from(hi) << 32) | u64::from(lo);
            }
        }
    }

    /// Starts a count.
    #[cfg(target_arch = "riscv32")]
    #[inline(always)]
    pub fn start() -> u64 {
        minstret()
    }

    /// Instructions since `start`.
    #[cfg(target_arch = "riscv32")]
    #[inline(always)]
    pub fn elapsed(start: u64) -> Option<u64> {
        Some(minstret() - start)
    }

    /// Instructions per counter unit, as a fraction.
    #[cfg(target_arch = "riscv32")]
    pub const INSTRUCTIONS_PER_COUNT: (u64, u64) = (1, 1);

    #[cfg(target_arch = "arm")]
    const SYST_CSR: *mut u32 = 0xE000_E010 as *mut u32;
    #[cfg(target_arch = "arm")]
    const SYST_RVR: *mut u32 = 0xE000_E014 as *mut u32;
    #[cfg(target_arch = "arm")]
    const SYST_CVR: *mut u32 = 0xE000_E018 as *mut u32;
    #[cfg(target_arch = "arm")]
    const SYST_PERIOD: u32 = 1 << 24;
    #[cfg(target_arch = "arm")]
    const COUNTFLAG: u32 = 1 << 16;

    /// SysTick free-running from the core clock, no interrupt.
    #[cfg(target_arch = "arm")]
    pub fn init() {
        // SAFETY: SysTick registers of the Cortex-M system control space.
        unsafe {
            core::ptr::write_volatile(SYST_RVR, SYST_PERIOD - 1);
            core::ptr::write_volatile(SYST_CVR, 0);
            // ENABLE | CLKSOURCE = core clock.
            core::ptr::write_volatile(SYST_CSR, 0b101);
        }
    }

    /// Restarts SysTick: writing CVR clears it and COUNTFLAG; it reloads to PERIOD − 1 on the
    /// next tick and counts down.
    #[cfg(target_arch = "arm")]
    #[inline(always)]
    pub fn start() -> u64 {
        // SAFETY: as in `init`.
        unsafe {
            core::ptr::write_volatile(SYST_CVR, 0);
            let _ = core::ptr::read_volatile(SYST_CSR);
        }
        0
    }

    /// Ticks since `start`; `None` if the counter wrapped (more than 2^24 ticks, ~671 M
    /// instructions: no operation comes close).
    #[cfg(target_arch = "arm")]
    #[inline(always)]
    pub fn elapsed(_start: u64) -> Option<u64> {
        // SAFETY: as in `init`.
        let (value, csr) = unsafe {
            (
                core::ptr::read_volatile(SYST_CVR),
                core::ptr::read_volatile(SYST_CSR),
            )
        };
        if csr & COUNTFLAG != 0 {
            return None;
        }
        Some(u64::from(SYST_PERIOD - value))
    }

    /// Instructions per SysTick tick under `-icount shift=0` (1 ns per instruction, 25 MHz), as
    /// a fraction.
    #[cfg(embedded_isa = "cortex-m4")]
    pub const INSTRUCTIONS_PER_COUNT: (u64, u64) = (40, 1);
    /// Instructions per SysTick tick under `-icount shift=0` (1 ns per instruction, 16 MHz).
    #[cfg(embedded_isa = "cortex-m0")]
    pub const INSTRUCTIONS_PER_COUNT: (u64, u64) = (125, 2);

    /// `iterations` turns of a two-instruction loop.
    #[inline(never)]
    pub fn spin(iterations: u32) {
        // SAFETY: register-only loop.
        #[cfg(target_arch = "riscv32")]
        unsafe {
            asm!("2:", "addi {0}, {0}, -1", "bnez {0}, 2b", inout(reg) iterations => _,
                 options(nomem, nostack));
        }
        #[cfg(target_arch = "arm")]
        unsafe {
            asm!("2:", "subs {0}, {0}, #1", "bne 2b", inout(reg) iterations => _,
                 options(nomem, nostack));
        }
    }
}

/// What `../run` asks for on the semihosting command line (nothing on the host).
#[derive(Clone, Copy, Debug, Default)]
pub struct Arguments {
    /// The number of measured units to skip (`skip=N`: `../run` restarts a run after a unit that
    /// does not fit in RAM).
    pub skip: usize,
    /// Whether to leave out the units that are not a backend's (`noshared`: an image after the
    /// first of a core built one backend per image).
    pub no_shared: bool,
}

/// The semihosting command line's [`Arguments`].
pub fn arguments() -> Arguments {
    #[allow(unused_mut)]
    let mut arguments = Arguments::default();
    #[cfg(target_os = "none")]
    if let Ok(args) = semihosting::experimental::env::args::<64>() {
        for arg in (&args).filter_map(Result::ok) {
            if let Some(Ok(skip)) = arg.strip_prefix("skip=").map(str::parse) {
                arguments.skip = skip;
            }
            arguments.no_shared |= arg == "noshared";
        }
    }
    arguments
}

/// Bytes of stack an operation called from here could use before running out of RAM (the
/// painted window; 0 on the host).
#[inline(never)]
pub fn stack_available() -> usize {
    #[cfg(target_os = "none")]
    {
        let base = bare::stack_pointer();
        base - bare::paint_bottom(base)
    }
    #[cfg(not(target_os = "none"))]
    {
        0
    }
}

/// Starts the counters.
pub fn init() {
    #[cfg(target_os = "none")]
    bare::init();
}

/// Instructions per 1000 counter units measured on a known loop (0 on the host). The run fails
/// if it is not the documented value (to the nearest thousandth).
pub fn calibrate() -> (u64, bool) {
    #[cfg(target_os = "none")]
    {
        const ITERATIONS: u32 = 1_000_000;
        let start = bare::start();
        bare::spin(ITERATIONS);
        let counts = bare::elapsed(start).unwrap_or(0);
        let per_kilocount = (2_000 * u64::from(ITERATIONS) + counts / 2) / counts.max(1);
        let (numerator, denominator) = bare::INSTRUCTIONS_PER_COUNT;
        (
            per_kilocount,
            per_kilocount == 1000 * numerator / denominator,
        )
    }
    #[cfg(not(target_os = "none"))]
    {
        (0, true)
    }
}

/// Runs `op` once and measures it. `None` if the stack window or the counter overflowed.
#[inline(never)]
pub fn measure(op: &mut dyn FnMut()) -> Option<Measurement> {
    #[cfg(target_os = "none")]
    {
        let base = bare::stack_pointer();
        let bottom = bare::paint_bottom(base);
        bare::paint(bottom);
        let start = bare::start();
        op();
        let counts = bare::elapsed(start)?;
        let lowest = bare::lowest_touched(bottom, base);
        if lowest == bottom {
            return None;
        }
        let (numerator, denominator) = bare::INSTRUCTIONS_PER_COUNT;
        Some(Measurement {
            instructions: counts * numerator / denominator,
            stack_bytes: base - lowest,
        })
    }
    #[cfg(not(target_os = "none"))]
    {
        op();
        Some(Measurement::default())
    }
}
