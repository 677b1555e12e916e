//! Puts the target's `memory.x` where the runtime crates' `link.x` looks for it, names the core
//! (`cfg(embedded_isa = "…")`: rv32imc, cortex-m4, cortex-m0), and turns the backend and
//! parameter-set selections (`SABER_EMBEDDED_BACKENDS`, `SABER_EMBEDDED_VARIANTS`:
//! comma-separated names; default every software backend and every parameter set) into cfgs.

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let target = env::var("TARGET").unwrap_or_default();
    let (isa, memory) = match target.split('-').next().unwrap_or_default() {
        "riscv32imc" => ("rv32imc", Some("memory-riscv.x")),
        "thumbv7em" => ("cortex-m4", Some("memory-cortex-m.x")),
        "thumbv6m" => ("cortex-m0", Some("memory-microbit.x")),
        _ => ("host", None),
    };
    println!(
        "cargo:rustc-check-cfg=cfg(embedded_isa, values(\"rv32imc\", \"cortex-m4\", \"cortex-m0\", \"host\"))"
    );
    println!("cargo:rustc-cfg=embedded_isa=\"{isa}\"");
    if let Some(file) = memory {
        fs::copy(file, out.join("memory.x")).unwrap();
        println!("cargo:rustc-link-search={}", out.display());
        println!("cargo:rerun-if-changed={file}");
    }
    println!("cargo:rerun-if-changed=../tests/support/backends.rs");
    select(
        "SABER_EMBEDDED_BACKENDS",
        "embedded_backend",
        &software_backends(),
    );
    select("SABER_EMBEDDED_VARIANTS", "embedded_variant", "all");
}

/// The software backends of `tests/support/backends.rs`: the first string of each
/// `$callback!(ident, "name", …)` entry, without x86 SIMD (`avx2`, `avx512`) and host models of hardware
/// (`esp32`), which do not apply to these cores.
fn software_backends() -> String {
    let list = fs::read_to_string("../tests/support/backends.rs").unwrap_or_default();
    list.split("$callback!(")
        .skip(1)
        .filter_map(|entry| entry.split('"').nth(1))
        .filter(|name| !name.contains("avx") && !name.contains("esp32"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `cfg(key = "name")` for each comma-separated name in the variable (or in `default`).
fn select(variable: &str, key: &str, default: &str) {
    println!("cargo:rustc-check-cfg=cfg({key}, values(any()))");
    println!("cargo:rerun-if-env-changed={variable}");
    let selected = env::var(variable).unwrap_or_else(|_| default.into());
    for name in selected.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        println!("cargo:rustc-cfg={key}=\"{name}\"");
    }
}
