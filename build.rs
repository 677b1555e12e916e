//! Tells the NTT kernels which assembly the target can run: stable Rust does not expose the ARM
//! architecture version to `cfg`, so `saber_armv7m` is set here for the bare-metal ARMv7-M,
//! ARMv7E-M and ARMv8-M Mainline targets (Cortex-M3/M4/M7/M33: `smull`, `mls`, Thumb-2), and
//! not for ARMv6-M or ARMv8-M Baseline (Cortex-M0/M0+/M23).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-check-cfg=cfg(saber_armv7m)");
    let target = std::env::var("TARGET").unwrap_or_default();
    let armv7m = ["thumbv7m-", "thumbv7em-", "thumbv8m.main-"]
        .iter()
        .any(|prefix| target.starts_with(prefix));
    if armv7m {
        println!("cargo:rustc-cfg=saber_armv7m");
    }
}
