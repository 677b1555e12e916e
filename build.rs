//! Tells the NTT kernels which assembly the target can run, in one place: stable Rust does not
//! expose the ARM architecture version to `cfg`.
//! - `saber_armv7m`: bare-metal ARMv7-M, ARMv7E-M and ARMv8-M Mainline (Cortex-M3/M4/M7/M33:
//!   `smull`, `mls`, Thumb-2); not ARMv6-M or ARMv8-M Baseline (Cortex-M0/M0+/M23).
//! - `saber_rv32im`: RV32 with the M extension and 32 registers (not RV32E).
//! - `saber_ntt_asm`: either.

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for cfg in ["saber_armv7m", "saber_rv32im", "saber_ntt_asm"] {
        println!("cargo:rustc-check-cfg=cfg({cfg})");
    }
    let target = env::var("TARGET").unwrap_or_default();
    let variable = |name: &str| env::var(name).unwrap_or_default();
    let armv7m = ["thumbv7m-", "thumbv7em-", "thumbv8m.main-"]
        .iter()
        .any(|prefix| target.starts_with(prefix));
    let rv32im = variable("CARGO_CFG_TARGET_ARCH") == "riscv32"
        && variable("CARGO_CFG_TARGET_FEATURE")
            .split(',')
            .any(|feature| feature == "m")
        && variable("CARGO_CFG_TARGET_ABI") != "ilp32e";
    for (cfg, on) in [
        ("saber_armv7m", armv7m),
        ("saber_rv32im", rv32im),
        ("saber_ntt_asm", armv7m || rv32im),
    ] {
        if on {
            println!("cargo:rustc-cfg={cfg}");
        }
    }
}
