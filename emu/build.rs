//! Links with `link.x` (flash-mapped text at 0x4200_0000, DRAM at 0x3FC8_0000, as on the C3).
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    println!("cargo:rustc-link-arg-bins=-T{dir}/link.x");
    println!("cargo:rerun-if-changed=link.x");
}
