//! Bare-metal harness for the Saber KEM: runs key generation, encapsulation and decapsulation of
//! every parameter set, with each selected backend in speed and low-memory mode, and prints per
//! operation the instructions executed and the peak stack (see `measure`).
//!
//! Output lines (parsed by `../run`):
//! - `row,<isa>,<variant>,<backend>,<mode>,<op>,<instructions>,<stack_bytes>`
//! - `digest,<variant>,<backend>,<mode>,<hex>`: SHA3-256 of pk ‖ sk ‖ ct ‖ ss, compared with
//!   the host build's (which the KATs cover) so the target's bytes are checked too;
//! - `calibration,<isa>,<instructions per 1000 counter units>`;
//! - `fail,…` for any functional failure; the exit status is then 1.
//!
//! On the host (`cargo run --release` without a target) the same code runs with no counters:
//! it prints the reference digests.
#![cfg_attr(target_os = "none", no_std, no_main)]

mod platform;
mod suite;

#[path = "../../tests/support/backends.rs"]
mod backends;

#[cfg(all(target_os = "none", target_arch = "riscv32"))]
#[riscv_rt::entry]
fn main() -> ! {
    platform::init();
    let ok = suite::run_all();
    semihosting::process::exit(if ok { 0 } else { 1 })
}

#[cfg(all(target_os = "none", target_arch = "arm"))]
#[cortex_m_rt::entry]
fn main() -> ! {
    platform::init();
    let ok = suite::run_all();
    semihosting::process::exit(if ok { 0 } else { 1 })
}

#[cfg(not(target_os = "none"))]
fn main() {
    platform::init();
    if !suite::run_all() {
        std::process::exit(1);
    }
}
