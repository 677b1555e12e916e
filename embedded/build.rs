//! Puts the target's `memory.x` where the runtime crates' `link.x` looks for it, and turns the
//! backend and parameter-set selections (`SABER_EMBEDDED_BACKENDS`, `SABER_EMBEDDED_VARIANTS`:
//! comma-separated names, default `all`) into cfgs.

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let memory = match arch.as_str() {
        "riscv32" => Some("memory-riscv.x"),
        "arm" => Some("memory-cortex-m.x"),
        _ => None,
    };
    if let Some(file) = memory {
        fs::copy(file, out.join("memory.x")).unwrap();
        println!("cargo:rustc-link-search={}", out.display());
        println!("cargo:rerun-if-changed={file}");
    }
    select("SABER_EMBEDDED_BACKENDS", "embedded_backend");
    select("SABER_EMBEDDED_VARIANTS", "embedded_variant");
}

/// `cfg(key = "name")` for each comma-separated name in the variable (default `all`).
fn select(variable: &str, key: &str) {
    println!("cargo:rustc-check-cfg=cfg({key}, values(any()))");
    println!("cargo:rerun-if-env-changed={variable}");
    let selected = env::var(variable).unwrap_or_else(|_| "all".into());
    for name in selected.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        println!("cargo:rustc-cfg={key}=\"{name}\"");
    }
}
