//! Emulator firmware: saber-kem's ESP32-C3 RSA driver, unchanged and at the real register
//! addresses, on RV32IMC. `esp32c3.py` runs it under Unicorn with the RSA block (0x6003_C000),
//! the SYSTEM clock registers (0x600C_0000) and UART0's FIFO (0x6000_0000) modelled.
//!
//! Checks: the power-up sequence; big-integer products of every plan size against the software
//! engine, and one after another user left the interrupt pending; polynomial products against
//! schoolbook; a full KEM round trip for each of the six sets (LightSaber, Saber, FireSaber and
//! their Saber+ forms) whose keys, ciphertexts and shared secrets equal the schoolbook backend's.
//! `emu_mark(id)` brackets each KEM operation so the harness can count instructions and
//! coprocessor work per operation.
//!
//! Two workers: every operation of every set runs once more through `saber_kem::two_worker`
//! with [`InTurn`] workers (worker 1 to completion, then worker 2, on this one hart, with a
//! hand-off of the whole matrix) and must give the same bytes, implicit rejection included. The
//! harness times each worker between the marks `join` sets and at each hand-off point, and
//! computes from them the critical path of the two workers running at once (`esp32c3.py`).
//!
//! Prints `emu: N passed, M failed` and exits through `emu_exit`.
#![no_std]
#![no_main]

use core::fmt::Write;

use saber_kem::hw::esp32_rsa::{Esp32Rsa, TargetChip};
use saber_kem::hw::volatile::{VolatileMmio, enable_clock_and_memory};
use saber_kem::polymul::kronecker::BigMul;
use saber_kem::polymul::{Kronecker, PolyMul, Schoolbook, SoftwareBigMul};
use saber_kem::polymul::{Poly, SecretPoly};
use saber_kem::two_worker::{TwoWorkers, Workers};
use saber_kem::{
    Ciphertext, DecapsulationKey, EncapsulationKey, ParameterSet, Plus, Round3, SaberKem,
    SharedSecret, Variant,
};

core::arch::global_asm!(
    r#"
    .section .text.start, "ax"
    .global _start
_start:
    .option push
    .option norelax
    la gp, __global_pointer$
    .option pop
    la sp, __stack_top
    la t0, __bss_start
    la t1, __bss_end
1:
    bgeu t0, t1, 2f
    sw zero, 0(t0)
    addi t0, t0, 4
    j 1b
2:
    call firmware_main
3:
    j 3b
"#
);

/// UART0 TX FIFO of the ESP32-C3 (the harness prints what is written there).
const UART0_FIFO: usize = 0x6000_0000;

struct Uart;

impl Write for Uart {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for b in s.bytes() {
            // SAFETY: UART0's FIFO register is a plain MMIO word; this firmware is the only user.
            unsafe { core::ptr::write_volatile(UART0_FIFO as *mut u32, b as u32) };
        }
        Ok(())
    }
}

/// The harness stops here and reads the exit code from a0.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn emu_exit(code: u32) -> ! {
    // SAFETY: an empty asm block that only keeps `code` live in a register.
    unsafe { core::arch::asm!("/* exit {0} */", in(reg) code) };
    loop {
        core::hint::spin_loop();
    }
}

/// The harness records the instruction count and coprocessor counters when this runs.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn emu_mark(id: u32) {
    // SAFETY: as in `emu_exit`.
    unsafe { core::arch::asm!("/* mark {0} */", in(reg) id) };
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let _ = writeln!(Uart, "panicked: {info}");
    emu_exit(101)
}

type Rsa = Esp32Rsa<VolatileMmio<TargetChip>, TargetChip>;

/// Marks that [`InTurn::join`] sets: worker 1 starts, worker 2 starts, both are done.
const WORKER_1: u32 = 1001;
const WORKER_2: u32 = 1002;
const JOINED: u32 = 1003;

/// Two workers on one hart, taking turns: worker 1 to completion, then worker 2 (the hand-off
/// holds the whole matrix), each bracketed by marks so that the harness can time them apart.
struct InTurn;

impl Workers for InTurn {
    const IN_TURN: bool = true;

    fn join<A, RA, B, RB>(&mut self, second: A, here: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        RA: Send,
        B: FnOnce() -> RB,
    {
        emu_mark(WORKER_1);
        let second = second();
        emu_mark(WORKER_2);
        let here = here();
        emu_mark(JOINED);
        (second, here)
    }
}

/// A hand-off of 16 entries: the largest matrix (FireSaber's).
type Split = TwoWorkers<InTurn, 16>;

struct Tally {
    passed: u32,
    failed: u32,
}

impl Tally {
    fn check(&mut self, ok: bool, what: core::fmt::Arguments) {
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
            let _ = writeln!(Uart, "FAILED: {what}");
        }
    }
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
}

fn check_big_products(rsa: &mut Rsa, tally: &mut Tally) {
    let mut rng = XorShift(0x1234_5678_9abc_def1);
    for n in [1usize, 2, 16, 27, 31, 44, 47, 48] {
        let mut x = [0u32; 48];
        let mut y = [0u32; 48];
        for i in 0..n {
            x[i] = rng.next();
            y[i] = rng.next();
        }
        x[n - 1] = u32::MAX;
        let mut got = [0u32; 96];
        let mut want = [0u32; 96];
        let done = rsa.multiply(&x[..n], &y[..n], &mut got[..2 * n]);
        SoftwareBigMul::<64>.mul(&x[..n], &y[..n], &mut want[..2 * n]);
        tally.check(
            done.is_ok() && got[..2 * n] == want[..2 * n],
            format_args!("product of {n}-word operands"),
        );
    }
}

/// Another user's multiplication, run through raw register access, ends without its interrupt
/// being cleared; the driver must clear it before its own start (the emulated peripheral stops
/// the run on a start with the interrupt pending).
fn check_stale_interrupt(rsa: &mut Rsa, tally: &mut Tally) {
    use saber_kem::hw::Mmio;
    use saber_kem::hw::esp32_rsa::Chip;
    let layout = TargetChip::LAYOUT;
    let mmio = rsa.mmio_mut();
    mmio.write(layout.mode_register(), layout.mult_mode(4));
    mmio.write(layout.start_register(), 1);
    while mmio.read(layout.done_register()) & 1 == 0 {}
    let x = [3, 1, 4, 1];
    let y = [5, 9, 2, 6];
    let mut got = [0u32; 8];
    let mut want = [0u32; 8];
    let done = rsa.multiply(&x, &y, &mut got);
    SoftwareBigMul::<64>.mul(&x, &y, &mut want);
    tally.check(
        done.is_ok() && got == want,
        format_args!("product after a stale interrupt"),
    );
}

fn random_inputs(rng: &mut XorShift) -> (Poly, SecretPoly) {
    let mut a = Poly::ZERO;
    let mut s = SecretPoly::ZERO;
    for (ac, sc) in a.coeffs.iter_mut().zip(s.coeffs.iter_mut()) {
        let r = rng.next();
        *ac = r as u16;
        *sc = ((((r >> 16) & 0xffff) * 11) >> 16) as i8 - 5;
    }
    (a, s)
}

fn check_poly_products(backend: &mut Kronecker<Rsa>, tally: &mut Tally) {
    let mut rng = XorShift(0x0ddb_a11c_afe5_eed5);
    for round in 0..3 {
        let mut terms: [(Poly, SecretPoly); 4] = Default::default();
        for (i, t) in terms.iter_mut().enumerate() {
            *t = random_inputs(&mut rng);
            if round == 0 {
                // Extremes: all coefficients -4096 and +-5.
                t.0.coeffs = [4096; 256];
                t.1.coeffs = [if i & 1 == 0 { 5 } else { -5 }; 256];
            }
        }
        let mut acc = backend.accumulator();
        let mut want = Schoolbook.accumulator();
        for (a, s) in &terms {
            let prepared = backend.prepare(s);
            backend.mul_acc(&mut acc, a, &prepared);
            let prepared = Schoolbook.prepare(s);
            Schoolbook.mul_acc(&mut want, a, &prepared);
        }
        let got = backend.finish(&acc).coeffs.map(|c| c & 0x1fff);
        let want = Schoolbook.finish(&want).coeffs.map(|c| c & 0x1fff);
        tally.check(
            got == want,
            format_args!("sum of four polynomial products, round {round}"),
        );
    }
}

type Keys<V, const L: usize, const MU: usize, const ET: usize> = (
    DecapsulationKey<SaberKem<V, L, MU, ET>>,
    EncapsulationKey<SaberKem<V, L, MU, ET>>,
);

#[inline(never)]
fn generate<V: Variant, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut Kronecker<Rsa>,
    seed_a: &[u8; 32],
    seed_s: &[u8; 32],
    z: &[u8; 32],
) -> Keys<V, L, MU, ET>
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    SaberKem::<V, L, MU, ET>::generate_deterministic_with(backend, seed_a, seed_s, z)
}

#[inline(never)]
fn encapsulate<V: Variant, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut Kronecker<Rsa>,
    ek: &EncapsulationKey<SaberKem<V, L, MU, ET>>,
    m: &[u8; 32],
) -> (Ciphertext<SaberKem<V, L, MU, ET>>, SharedSecret)
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    ek.encapsulate_deterministic_with(backend, m)
}

#[inline(never)]
fn decapsulate<V: Variant, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut Kronecker<Rsa>,
    dk: &DecapsulationKey<SaberKem<V, L, MU, ET>>,
    ct: &Ciphertext<SaberKem<V, L, MU, ET>>,
) -> SharedSecret
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    dk.decapsulate_with(backend, ct)
}

#[inline(never)]
fn generate_split<V: Variant, const L: usize, const MU: usize, const ET: usize>(
    workers: &mut Split,
    backend: &mut Kronecker<Rsa>,
    seed_a: &[u8; 32],
    seed_s: &[u8; 32],
    z: &[u8; 32],
) -> Keys<V, L, MU, ET>
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    SaberKem::<V, L, MU, ET>::generate_deterministic_with_workers(
        workers, backend, seed_a, seed_s, z,
    )
}

#[inline(never)]
fn encapsulate_split<V: Variant, const L: usize, const MU: usize, const ET: usize>(
    workers: &mut Split,
    backend: &mut Kronecker<Rsa>,
    ek: &EncapsulationKey<SaberKem<V, L, MU, ET>>,
    m: &[u8; 32],
) -> (Ciphertext<SaberKem<V, L, MU, ET>>, SharedSecret)
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    ek.encapsulate_deterministic_with_workers(workers, backend, m)
}

#[inline(never)]
fn decapsulate_split<V: Variant, const L: usize, const MU: usize, const ET: usize>(
    workers: &mut Split,
    backend: &mut Kronecker<Rsa>,
    dk: &DecapsulationKey<SaberKem<V, L, MU, ET>>,
    ct: &Ciphertext<SaberKem<V, L, MU, ET>>,
) -> SharedSecret
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    dk.decapsulate_with_workers(workers, backend, ct)
}

/// One KEM round trip on the coprocessor (marked for the harness: 10·k + 1 key generation,
/// + 2 encapsulation, + 3 decapsulation, + 4 end), compared with the schoolbook backend; then
/// the same operations on two workers (marks 100 + 10·k + …), compared with the one-worker
/// results.
fn check_kem<V: Variant, const L: usize, const MU: usize, const ET: usize>(
    name: &str,
    id: u32,
    backend: &mut Kronecker<Rsa>,
    tally: &mut Tally,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    type P<V, const L: usize, const MU: usize, const ET: usize> = SaberKem<V, L, MU, ET>;
    let seed_a = [0x11u8; 32];
    let seed_s = [0x22u8; 32];
    let z = [0x33u8; 32];
    let m = [0x44u8; 32];
    // Each operation runs in its own non-inlined function, so that the stack it uses lies below
    // the stack pointer seen at the mark before it.
    emu_mark(10 * id + 1);
    let (dk, ek) = core::hint::black_box(generate::<V, L, MU, ET>)(backend, &seed_a, &seed_s, &z);
    emu_mark(10 * id + 2);
    let (ct, ss) = core::hint::black_box(encapsulate::<V, L, MU, ET>)(backend, &ek, &m);
    emu_mark(10 * id + 3);
    let ss_dec = core::hint::black_box(decapsulate::<V, L, MU, ET>)(backend, &dk, &ct);
    emu_mark(10 * id + 4);
    tally.check(
        ss == ss_dec,
        format_args!("{name}: decapsulated secret equals encapsulated"),
    );

    let (dk_ref, ek_ref) =
        P::<V, L, MU, ET>::generate_deterministic_with(&mut Schoolbook, &seed_a, &seed_s, &z);
    let (ct_ref, ss_ref) = ek_ref.encapsulate_deterministic_with(&mut Schoolbook, &m);
    tally.check(
        ek == ek_ref,
        format_args!("{name}: public key equals schoolbook's"),
    );
    tally.check(
        dk.to_bytes().as_ref() == dk_ref.to_bytes().as_ref(),
        format_args!("{name}: secret key equals schoolbook's"),
    );
    tally.check(
        ct == ct_ref,
        format_args!("{name}: ciphertext equals schoolbook's"),
    );
    tally.check(
        ss == ss_ref,
        format_args!("{name}: shared secret equals schoolbook's"),
    );
    // A modified ciphertext must decapsulate to a different (implicit-rejection) secret.
    let mut bad = [0u8; 2048];
    let len = ct.as_bytes().len();
    bad[..len].copy_from_slice(ct.as_bytes());
    bad[7] ^= 1;
    let rejected = dk.decapsulate_slice(&bad[..len]).expect("length is right");
    tally.check(
        rejected != ss,
        format_args!("{name}: tampered ciphertext is rejected"),
    );

    let workers = &mut TwoWorkers::with_slots(InTurn);
    emu_mark(100 + 10 * id + 1);
    let (dk2, ek2) = core::hint::black_box(generate_split::<V, L, MU, ET>)(
        workers, backend, &seed_a, &seed_s, &z,
    );
    emu_mark(100 + 10 * id + 2);
    let (ct2, ss2) =
        core::hint::black_box(encapsulate_split::<V, L, MU, ET>)(workers, backend, &ek, &m);
    emu_mark(100 + 10 * id + 3);
    let ss2_dec =
        core::hint::black_box(decapsulate_split::<V, L, MU, ET>)(workers, backend, &dk, &ct);
    emu_mark(100 + 10 * id + 4);
    tally.check(
        ek2 == ek && dk2.to_bytes().as_ref() == dk.to_bytes().as_ref(),
        format_args!("{name}: two workers generate the same keys"),
    );
    tally.check(
        ct2 == ct && ss2 == ss && ss2_dec == ss,
        format_args!("{name}: two workers encapsulate and decapsulate the same bytes"),
    );
    let tampered = Ciphertext::from_bytes(&bad[..len]).expect("length is right");
    tally.check(
        decapsulate_split::<V, L, MU, ET>(workers, backend, &dk, &tampered) == rejected,
        format_args!("{name}: two workers reject the tampered ciphertext alike"),
    );
}

#[unsafe(no_mangle)]
extern "C" fn firmware_main() -> ! {
    let mut tally = Tally {
        passed: 0,
        failed: 0,
    };
    // SAFETY: nothing else on this (emulated) chip uses the RSA accelerator or the clock registers.
    let mut rsa: Rsa = Esp32Rsa::new(unsafe { VolatileMmio::new() });
    // SAFETY: as above; single-threaded firmware, no interrupts.
    let powered = unsafe { enable_clock_and_memory(&mut rsa) };
    tally.check(powered.is_ok(), format_args!("power-up: {powered:?}"));
    emu_mark(1);
    check_big_products(&mut rsa, &mut tally);
    check_stale_interrupt(&mut rsa, &mut tally);
    emu_mark(2);
    let mut backend = Kronecker::new(rsa);
    check_poly_products(&mut backend, &mut tally);
    emu_mark(3);
    check_kem::<Round3, 2, 10, 3>("LightSaber", 1, &mut backend, &mut tally);
    check_kem::<Round3, 3, 8, 4>("Saber", 2, &mut backend, &mut tally);
    check_kem::<Round3, 4, 6, 6>("FireSaber", 3, &mut backend, &mut tally);
    check_kem::<Plus, 2, 10, 3>("LightSaber+", 4, &mut backend, &mut tally);
    check_kem::<Plus, 3, 8, 4>("Saber+", 5, &mut backend, &mut tally);
    check_kem::<Plus, 4, 6, 6>("FireSaber+", 6, &mut backend, &mut tally);
    let fault = backend.engine_mut().take_fault();
    tally.check(
        fault.is_none(),
        format_args!("no peripheral error through the backend: {fault:?}"),
    );
    let _ = writeln!(
        Uart,
        "emu: {} passed, {} failed",
        tally.passed, tally.failed
    );
    emu_exit(if tally.failed == 0 { 0 } else { 1 })
}
