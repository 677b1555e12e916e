//! Prints the NIST `.rsp` known-answer file of a parameter set, byte-identical to the official
//! one (and to `../shared/kat/SaberPlus/` for the Saber+ sets).
//!
//! ```text
//! cargo run --release --example genkat -- <set> [--backend <name>]
//! cargo run --release --example genkat -- saber --backend help    # lists the backends
//! ```
//!
//! Sets: lightsaber, saber, firesaber, lightsaber-90s, saber-90s, firesaber-90s, ulightsaber,
//! usaber, ufiresaber, ulightsaber-90s, usaber-90s, ufiresaber-90s, lightsaber-plus, saber-plus,
//! firesaber-plus.

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::Write;
use std::process::ExitCode;

use saber_kem::{
    Nineties, ParameterSet, Plus, PolyMul, Round3, SaberKem, Uniform, UniformNineties, Variant,
};
use support::kat::{records, rsp_text};

const USAGE: &str = "usage: genkat <set> [--backend <name>|help]\n\
    sets: lightsaber saber firesaber lightsaber-90s saber-90s firesaber-90s ulightsaber usaber \
    ufiresaber ulightsaber-90s usaber-90s ufiresaber-90s lightsaber-plus saber-plus firesaber-plus";

fn print<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
) -> ExitCode
where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let text = rsp_text(
        <SaberKem<V, L, MU, ET> as ParameterSet>::NAME,
        &records::<V, B, L, MU, ET>(backend),
    );
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("genkat: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run<B: PolyMul>(variant: &str, backend: &mut B) -> ExitCode {
    match variant {
        "lightsaber" => print::<Round3, B, 2, 10, 3>(backend),
        "saber" => print::<Round3, B, 3, 8, 4>(backend),
        "firesaber" => print::<Round3, B, 4, 6, 6>(backend),
        "lightsaber-90s" => print::<Nineties, B, 2, 10, 3>(backend),
        "saber-90s" => print::<Nineties, B, 3, 8, 4>(backend),
        "firesaber-90s" => print::<Nineties, B, 4, 6, 6>(backend),
        "ulightsaber" => print::<Uniform, B, 2, 10, 3>(backend),
        "usaber" => print::<Uniform, B, 3, 8, 4>(backend),
        "ufiresaber" => print::<Uniform, B, 4, 6, 6>(backend),
        "ulightsaber-90s" => print::<UniformNineties, B, 2, 10, 3>(backend),
        "usaber-90s" => print::<UniformNineties, B, 3, 8, 4>(backend),
        "ufiresaber-90s" => print::<UniformNineties, B, 4, 6, 6>(backend),
        "lightsaber-plus" => print::<Plus, B, 2, 10, 3>(backend),
        "saber-plus" => print::<Plus, B, 3, 8, 4>(backend),
        "firesaber-plus" => print::<Plus, B, 4, 6, 6>(backend),
        other => {
            eprintln!("genkat: unknown variant `{other}`\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (variant, backend) = match args.as_slice() {
        [v] => (v.as_str(), "default"),
        [v, flag, b] if flag == "--backend" => (v.as_str(), b.as_str()),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    if backend == "help" {
        println!("default");
        macro_rules! list {
            ($id:ident, $name:expr, $ctor:expr) => {
                println!("{}", $name);
            };
        }
        support::backends::for_each_backend!(list);
        support::backends::Backends::here().report();
        return ExitCode::SUCCESS;
    }
    if backend == "default" {
        return run(variant, &mut saber_kem::DefaultPolyMul::default());
    }
    macro_rules! dispatch {
        ($id:ident, $name:expr, $ctor:expr) => {
            if backend == $name {
                return run(variant, &mut $ctor);
            }
        };
    }
    let backends = support::backends::Backends::here();
    support::backends::for_each_backend!(dispatch, backends);
    if let Some((_, why)) = backends.skipped.iter().find(|(name, _)| *name == backend) {
        eprintln!("genkat: backend `{backend}` does not run here: {why}");
        return ExitCode::FAILURE;
    }
    eprintln!("genkat: unknown backend `{backend}` (try --backend help)");
    ExitCode::from(2)
}
