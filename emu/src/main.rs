//! Emulator firmware: saber-kem's ESP32-C3 RSA driver, unchanged and at the real register
//! addresses, on RV32IMC. `esp32c3.py` runs it under Unicorn with the RSA block (0x6003_C000),
//! the SYSTEM clock registers (0x600C_0000) and UART0's FIFO (0x6000_0000) modelled.
//!
//! Checks: the power-up sequence; big-integer products of every plan size against the software
//! engine, and one after another user left the interrupt pending; polynomial products against
//! schoolbook; a full KEM round trip for LightSaber, Saber, FireSaber and their Saber+ forms
//! (with the `full` feature, `emu/run --full`, for all fifteen sets) whose keys, ciphertexts and
//! shared secrets equal the schoolbook backend's.
//! `emu_mark(id)` brackets each KEM operation so the harness can count instructions and
//! coprocessor work per operation.
//!
//! Two workers: every operation of every set runs once more through `saber_kem::two_worker`
//! with [`Marked`] workers (the crate's `InTurn`: worker 1 to completion, then worker 2, on this
//! one hart, with a hand-off of the whole matrix) and must give the same bytes, implicit
//! rejection included. Worker 2 has the RSA coprocessor (Kronecker backend) or the NTT
//! (`NttLowStack`, RV32IM assembly); worker 1 has the NTT. The harness times each worker between
//! the marks `join` sets and at each hand-off point, and computes from them the critical path
//! of the two workers running at once (`esp32c3.py`). The NTT also runs every operation on one
//! worker, for the single-worker figures of that backend.
//!
//! The 90s sets: every operation of the six on the NTT with SHA-256 and AES-256 in software and
//! on the SHA and AES accelerators (`saber_kem::Accelerated`, the drivers at their real
//! addresses), which must give the same bytes; marked for the harness's figures with and without
//! the engines.
//!
//! Prints `emu: N passed, M failed` and exits through `emu_exit`.
#![no_std]
#![no_main]

use core::fmt::Write;

#[cfg(feature = "full")]
use saber_kem::Uniform;
use saber_kem::hw::esp32_rsa::Esp32C3;
use saber_kem::hw::esp32_rsa::{Esp32Rsa, TargetChip};
use saber_kem::hw::volatile::{VolatileMmio, enable_clock_and_memory};
use saber_kem::hw::volatile::{enable_sha_aes, sha2aes_engines};
use saber_kem::polymul::kronecker::BigMul;
use saber_kem::polymul::{Kronecker, NttLowStack, PolyMul, Schoolbook, SoftwareBigMul};
use saber_kem::polymul::{Poly, SecretPoly};
use saber_kem::two_worker::{InTurn, Schedule, TwoWorkers, Workers};
use saber_kem::{
    Accelerated, Backend, Ciphertext, DecapsulationKey, EncapsulationKey, Nineties, ParameterSet,
    Plus, Round3, SaberKem, Sha2AesEngines, SharedSecret, UniformNineties, Variant,
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

/// Marks that [`Marked::join`] sets: worker 1 starts, worker 2 starts, both are done.
const WORKER_1: u32 = 1001;
const WORKER_2: u32 = 1002;
const JOINED: u32 = 1003;

/// The crate's [`InTurn`] (worker 1 to completion, then worker 2), each worker bracketed by
/// marks so that the harness can time them apart.
struct Marked;

impl Workers for Marked {
    const IN_TURN: bool = true;

    fn join<A, RA, B, RB>(&mut self, second: A, here: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        RA: Send,
        B: FnOnce() -> RB,
    {
        emu_mark(WORKER_1);
        let joined = InTurn.join(
            || {
                let second = second();
                emu_mark(WORKER_2);
                second
            },
            here,
        );
        emu_mark(JOINED);
        joined
    }
}

/// A hand-off of 16 entries (the largest matrix, FireSaber's); the NTT on worker 1.
type Split = TwoWorkers<Marked, NttLowStack, 16>;

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
fn generate<B: Backend, V: Variant, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
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
fn encapsulate<B: Backend, V: Variant, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    ek: &EncapsulationKey<SaberKem<V, L, MU, ET>>,
    m: &[u8; 32],
) -> (Ciphertext<SaberKem<V, L, MU, ET>>, SharedSecret)
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    ek.encapsulate_deterministic_with(backend, m)
}

#[inline(never)]
fn decapsulate<B: Backend, V: Variant, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    dk: &DecapsulationKey<SaberKem<V, L, MU, ET>>,
    ct: &Ciphertext<SaberKem<V, L, MU, ET>>,
) -> SharedSecret
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    dk.decapsulate_with(backend, ct)
}

#[inline(never)]
fn generate_split<B: PolyMul, V: Variant, const L: usize, const MU: usize, const ET: usize>(
    workers: &mut Split,
    backend: &mut B,
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
fn encapsulate_split<B: PolyMul, V: Variant, const L: usize, const MU: usize, const ET: usize>(
    workers: &mut Split,
    backend: &mut B,
    ek: &EncapsulationKey<SaberKem<V, L, MU, ET>>,
    m: &[u8; 32],
) -> (Ciphertext<SaberKem<V, L, MU, ET>>, SharedSecret)
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    ek.encapsulate_deterministic_with_workers(workers, backend, m)
}

#[inline(never)]
fn decapsulate_split<B: PolyMul, V: Variant, const L: usize, const MU: usize, const ET: usize>(
    workers: &mut Split,
    backend: &mut B,
    dk: &DecapsulationKey<SaberKem<V, L, MU, ET>>,
    ct: &Ciphertext<SaberKem<V, L, MU, ET>>,
) -> SharedSecret
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    dk.decapsulate_with_workers(workers, backend, ct)
}

/// The keys, ciphertext and shared secrets of one round trip, and the rejection key of a
/// tampered ciphertext.
struct RoundTrip<V: Variant, const L: usize, const MU: usize, const ET: usize>
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    dk: DecapsulationKey<SaberKem<V, L, MU, ET>>,
    ek: EncapsulationKey<SaberKem<V, L, MU, ET>>,
    ct: Ciphertext<SaberKem<V, L, MU, ET>>,
    ss: SharedSecret,
    tampered: Ciphertext<SaberKem<V, L, MU, ET>>,
    rejected: SharedSecret,
}

const SEED_A: [u8; 32] = [0x11; 32];
const SEED_S: [u8; 32] = [0x22; 32];
const Z: [u8; 32] = [0x33; 32];
const M: [u8; 32] = [0x44; 32];

/// The round trip on the schoolbook backend, the reference of the others.
fn reference<V: Variant, const L: usize, const MU: usize, const ET: usize>()
-> RoundTrip<V, L, MU, ET>
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let (dk, ek) = SaberKem::<V, L, MU, ET>::generate_deterministic_with(
        &mut Schoolbook,
        &SEED_A,
        &SEED_S,
        &Z,
    );
    let (ct, ss) = ek.encapsulate_deterministic_with(&mut Schoolbook, &M);
    let mut bad = [0u8; 2048];
    let len = ct.as_bytes().len();
    bad[..len].copy_from_slice(ct.as_bytes());
    bad[7] ^= 1;
    let tampered = Ciphertext::from_bytes(&bad[..len]).expect("length is right");
    let rejected = dk.decapsulate_with(&mut Schoolbook, &tampered);
    RoundTrip {
        dk,
        ek,
        ct,
        ss,
        tampered,
        rejected,
    }
}

/// Marks of an operation on two workers: those of the same operation on one worker plus this.
const SPLIT_MARKS: u32 = 200;

/// One KEM round trip on `backend` (marked for the harness: base + 10·k + 1 key generation,
/// then 2 encapsulation, 3 decapsulation, 4 end), compared with the reference; then the same
/// operations on two workers with `backend` on worker 2 (marks base + `SPLIT_MARKS` + 10·k +
/// 1 to 4), and the rejection of a tampered ciphertext on both paths.
fn check_kem<B: PolyMul, V: Variant, const L: usize, const MU: usize, const ET: usize>(
    name: &str,
    mark: u32,
    backend: &mut B,
    schedule: Schedule,
    want: &RoundTrip<V, L, MU, ET>,
    tally: &mut Tally,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let backend_name = backend.name();
    let (dk, ek, ct, ss, ss_dec) = marked_operations::<B, V, L, MU, ET>(mark, backend);
    tally.check(
        ek == want.ek && dk.to_bytes().as_ref() == want.dk.to_bytes().as_ref(),
        format_args!("{name} on {backend_name}: keys equal schoolbook's"),
    );
    tally.check(
        ct == want.ct && ss == want.ss && ss_dec == want.ss,
        format_args!("{name} on {backend_name}: ciphertext and shared secrets equal schoolbook's"),
    );
    tally.check(
        dk.decapsulate_with(backend, &want.tampered) == want.rejected,
        format_args!("{name} on {backend_name}: tampered ciphertext is rejected"),
    );

    let workers = &mut Split::with_slots(Marked, NttLowStack).with_schedule(schedule);
    emu_mark(mark + SPLIT_MARKS + 1);
    let (dk2, ek2) = core::hint::black_box(generate_split::<B, V, L, MU, ET>)(
        workers, backend, &SEED_A, &SEED_S, &Z,
    );
    emu_mark(mark + SPLIT_MARKS + 2);
    let (ct2, ss2) =
        core::hint::black_box(encapsulate_split::<B, V, L, MU, ET>)(workers, backend, &ek, &M);
    emu_mark(mark + SPLIT_MARKS + 3);
    let ss2_dec =
        core::hint::black_box(decapsulate_split::<B, V, L, MU, ET>)(workers, backend, &dk, &ct);
    emu_mark(mark + SPLIT_MARKS + 4);
    tally.check(
        ek2 == want.ek && dk2.to_bytes().as_ref() == want.dk.to_bytes().as_ref(),
        format_args!("{name} on {backend_name}: two workers generate the same keys"),
    );
    tally.check(
        ct2 == want.ct && ss2 == want.ss && ss2_dec == want.ss,
        format_args!(
            "{name} on {backend_name}: two workers encapsulate and decapsulate the same bytes"
        ),
    );
    tally.check(
        decapsulate_split::<B, V, L, MU, ET>(workers, backend, &dk, &want.tampered)
            == want.rejected,
        format_args!("{name} on {backend_name}: two workers reject the tampered ciphertext alike"),
    );
}

/// Key generation, encapsulation and decapsulation on `backend`, marked for the harness from
/// `mark` (+ 1 key generation, + 2 encapsulation, + 3 decapsulation, + 4 end): the keys, the
/// ciphertext, and the shared secret of both sides.
#[allow(clippy::type_complexity)]
fn marked_operations<B: Backend, V: Variant, const L: usize, const MU: usize, const ET: usize>(
    mark: u32,
    backend: &mut B,
) -> (
    DecapsulationKey<SaberKem<V, L, MU, ET>>,
    EncapsulationKey<SaberKem<V, L, MU, ET>>,
    Ciphertext<SaberKem<V, L, MU, ET>>,
    SharedSecret,
    SharedSecret,
)
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    // Each operation runs in its own non-inlined function, so that the stack it uses lies below
    // the stack pointer seen at the mark before it.
    emu_mark(mark + 1);
    let (dk, ek) =
        core::hint::black_box(generate::<B, V, L, MU, ET>)(backend, &SEED_A, &SEED_S, &Z);
    emu_mark(mark + 2);
    let (ct, ss) = core::hint::black_box(encapsulate::<B, V, L, MU, ET>)(backend, &ek, &M);
    emu_mark(mark + 3);
    let ss_dec = core::hint::black_box(decapsulate::<B, V, L, MU, ET>)(backend, &dk, &ct);
    emu_mark(mark + 4);
    (dk, ek, ct, ss, ss_dec)
}

/// Marks of the 90s sets' operations on the NTT in software start here, on the SHA and AES
/// accelerators at `ENGINE_MARKS`.
const NINETIES_MARKS: u32 = 800;
const ENGINE_MARKS: u32 = 900;

/// A 90s set on the NTT (set k's operations marked from 10·k): with SHA-256 and AES in
/// software, then on the accelerators, which must give the same bytes (the software path is the
/// one the KATs check on the host), implicit rejection included.
fn check_nineties<V: Variant, const L: usize, const MU: usize, const ET: usize>(
    name: &str,
    k: u32,
    engines: Sha2AesEngines,
    tally: &mut Tally,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let software = &mut NttLowStack;
    let (dk, ek, ct, ss, ss_dec) =
        marked_operations::<_, V, L, MU, ET>(NINETIES_MARKS + 10 * k, software);
    let accelerated = &mut Accelerated(NttLowStack, engines);
    let (dk2, ek2, ct2, ss2, ss2_dec) =
        marked_operations::<_, V, L, MU, ET>(ENGINE_MARKS + 10 * k, accelerated);
    tally.check(
        ss == ss_dec && ek2 == ek && dk2.to_bytes().as_ref() == dk.to_bytes().as_ref(),
        format_args!("{name}: keys on the SHA and AES accelerators equal software's"),
    );
    tally.check(
        ct2 == ct && ss2 == ss && ss2_dec == ss,
        format_args!("{name}: ciphertext and secrets on the accelerators equal software's"),
    );
    let mut bad = [0u8; 2048];
    let len = ct.as_bytes().len();
    bad[..len].copy_from_slice(ct.as_bytes());
    bad[len - 1] ^= 1;
    let tampered = Ciphertext::from_bytes(&bad[..len]).expect("length is right");
    let rejected = dk.decapsulate_with(software, &tampered);
    tally.check(
        rejected != ss && dk.decapsulate_with(accelerated, &tampered) == rejected,
        format_args!("{name}: the accelerators reject the tampered ciphertext alike"),
    );
}

/// Marks of the NTT's operations start here (the coprocessor's at 0); with set numbers up to 15
/// and `SPLIT_MARKS`, the coprocessor's marks are 11–154 and 211–354, the NTT's 411–554 and
/// 611–754, below the 90s sets' (from `NINETIES_MARKS`) and [`WORKER_1`].
const NTT_MARKS: u32 = 400;

/// A set on both backends: set k's operations are marked from 10·k.
fn check_set<V: Variant, const L: usize, const MU: usize, const ET: usize>(
    name: &str,
    k: u32,
    rsa: &mut Kronecker<Rsa>,
    tally: &mut Tally,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let want = reference::<V, L, MU, ET>();
    check_kem(name, 10 * k, rsa, Schedule::default(), &want, tally);
    check_kem(
        name,
        NTT_MARKS + 10 * k,
        &mut NttLowStack,
        Schedule::CHEAP_PRODUCTS,
        &want,
        tally,
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
    // Set numbers as in `SETS` of esp32c3.py.
    check_set::<Round3, 2, 10, 3>("LightSaber", 1, &mut backend, &mut tally);
    check_set::<Round3, 3, 8, 4>("Saber", 2, &mut backend, &mut tally);
    check_set::<Round3, 4, 6, 6>("FireSaber", 3, &mut backend, &mut tally);
    check_set::<Plus, 2, 10, 3>("LightSaber+", 13, &mut backend, &mut tally);
    check_set::<Plus, 3, 8, 4>("Saber+", 14, &mut backend, &mut tally);
    check_set::<Plus, 4, 6, 6>("FireSaber+", 15, &mut backend, &mut tally);
    // The nine other round-3 sets only under `emu/run --full` (the `full` feature): they add
    // more to CI's run than its time allows.
    #[cfg(feature = "full")]
    {
        check_set::<Nineties, 2, 10, 3>("LightSaber-90s", 4, &mut backend, &mut tally);
        check_set::<Nineties, 3, 8, 4>("Saber-90s", 5, &mut backend, &mut tally);
        check_set::<Nineties, 4, 6, 6>("FireSaber-90s", 6, &mut backend, &mut tally);
        check_set::<Uniform, 2, 10, 3>("uLightSaber", 7, &mut backend, &mut tally);
        check_set::<Uniform, 3, 8, 4>("uSaber", 8, &mut backend, &mut tally);
        check_set::<Uniform, 4, 6, 6>("uFireSaber", 9, &mut backend, &mut tally);
        check_set::<UniformNineties, 2, 10, 3>("uLightSaber-90s", 10, &mut backend, &mut tally);
        check_set::<UniformNineties, 3, 8, 4>("uSaber-90s", 11, &mut backend, &mut tally);
        check_set::<UniformNineties, 4, 6, 6>("uFireSaber-90s", 12, &mut backend, &mut tally);
    }
    // SAFETY: nothing else on this (emulated) chip uses the SHA and AES accelerators or the
    // clock registers; single-threaded firmware, no interrupts; the two-worker split (which would
    // run engines on two workers) never gets them.
    let engines = unsafe {
        enable_sha_aes::<Esp32C3>();
        sha2aes_engines::<Esp32C3>()
    };
    check_nineties::<Nineties, 2, 10, 3>("LightSaber-90s", 1, engines, &mut tally);
    check_nineties::<Nineties, 3, 8, 4>("Saber-90s", 2, engines, &mut tally);
    check_nineties::<Nineties, 4, 6, 6>("FireSaber-90s", 3, engines, &mut tally);
    check_nineties::<UniformNineties, 2, 10, 3>("uLightSaber-90s", 4, engines, &mut tally);
    check_nineties::<UniformNineties, 3, 8, 4>("uSaber-90s", 5, engines, &mut tally);
    check_nineties::<UniformNineties, 4, 6, 6>("uFireSaber-90s", 6, engines, &mut tally);
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
