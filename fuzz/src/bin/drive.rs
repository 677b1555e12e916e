//! A libFuzzer-free driver for the fuzz targets, for stable Rust and CI:
//!
//! ```text
//! drive TARGET [--seconds S] [--runs N] [--seed X] [PATH ...]
//! ```
//!
//! Replays every file under each PATH (files or directories: corpora, `regressions/TARGET`),
//! then feeds pseudorandom inputs (xorshift64, seed X, default 1) until S seconds or N runs
//! (default: 10 s). A panicking input is written to `artifacts/TARGET/crash-<n>` and the driver
//! exits with status 1. No coverage guidance: this is a smoke test, not a fuzzer.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

fn files_under(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for e in entries {
            files_under(&e, out);
        }
    } else if path.is_file() {
        out.push(path.to_path_buf());
    }
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn run_one(target: fn(&[u8]), name: &str, input: &[u8]) -> bool {
    if std::panic::catch_unwind(|| target(input)).is_ok() {
        return true;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("artifacts")
        .join(name);
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("crash-{:016x}", fnv1a(input)));
    let _ = std::fs::write(&path, input);
    eprintln!("drive: {name} panicked; input saved to {}", path.display());
    false
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(name) = args.next() else {
        eprintln!("usage: drive TARGET [--seconds S] [--runs N] [--seed X] [PATH ...]");
        return ExitCode::FAILURE;
    };
    let Some(&(_, target)) = saber_kem_fuzz::TARGETS.iter().find(|(n, _)| *n == name) else {
        eprintln!("drive: unknown target {name}");
        return ExitCode::FAILURE;
    };
    let (mut seconds, mut runs, mut seed) = (10u64, u64::MAX, 1u64);
    let mut paths = Vec::new();
    while let Some(arg) = args.next() {
        let mut value = || args.next().and_then(|v| v.parse().ok()).expect("number");
        match arg.as_str() {
            "--seconds" => seconds = value(),
            "--runs" => runs = value(),
            "--seed" => seed = value().max(1),
            _ => paths.push(PathBuf::from(arg)),
        }
    }

    // The backends the targets that loop over backends run here, and the skipped ones.
    saber_kem_fuzz::backends().report();
    let mut files = Vec::new();
    for p in &paths {
        files_under(p, &mut files);
    }
    for f in &files {
        let input = std::fs::read(f).unwrap_or_default();
        if !run_one(target, &name, &input) {
            return ExitCode::FAILURE;
        }
    }

    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut rng = XorShift(seed);
    let mut executed = 0u64;
    let mut input = Vec::new();
    while executed < runs && Instant::now() < deadline {
        let len = (rng.next() & 0xFFF) as usize; // up to 4 KiB: longer than any key
        input.clear();
        input.extend((0..len).map(|_| rng.next() as u8));
        if !run_one(target, &name, &input) {
            return ExitCode::FAILURE;
        }
        executed += 1;
    }
    println!(
        "drive {name}: {} files replayed, {executed} random inputs, no failure",
        files.len()
    );
    ExitCode::SUCCESS
}
