//! Statistical constant-time test in the style of dudect (Reparaz, Balasch and Verbauwhede,
//! "Dude, is my code constant time?", DATE 2017), for the paths Valgrind cannot check: the
//! AVX-512 NTT and the AVX-512 Keccak (four- and eight-way, and one state of the four-way one).
//! The same test runs on the AVX2 and portable NTT and Keccak paths of this CPU, and on a
//! deliberately leaky variant (the negative control) that it must flag.
//!
//! # Method
//!
//! - Two classes of secret input: *fixed* (all-zero secret coefficients, then in a second pass
//!   all −5; all-zero Keccak input) and *random* (uniform coefficients in [−5, 5]; uniform
//!   bytes). The class of each measurement is drawn at random, so that drift and bursts of
//!   load on the machine fall on both classes alike.
//! - Each measurement times one operation with `Instant` (a monotonic nanosecond clock): one
//!   whole product `a·s` (prepare, multiply-accumulate, finish) for an NTT path with a fixed
//!   public `a`; SHAKE128 of 32 secret bytes into 168 bytes on every lane of a multi-way Keccak,
//!   or SHA3-256 of 64 secret bytes on a single-state one. Before the clock starts the input is
//!   written by one branch-free code path for both classes: random values are drawn for both and
//!   each input byte is `random & mask | fixed & !mask` with an all-ones or all-zero `mask`, so
//!   that the classes differ in the values only, not in the instructions or the addresses the
//!   harness touches. (Writing zeros one way and random bytes another showed as |t| ≈ 15 on the
//!   portable Keccak; copying from one of two source buffers, as |t| = 11–42 on the `keccak`
//!   crate's permutation, its sign changing from run to run with the stack addresses: a 0.3 %
//!   difference in the harness, not in the code under test.) A warm-up of `WARM_UP` untimed
//!   operations precedes the measurements.
//! - Welch's t statistic between the classes, on all measurements and on those below the
//!   50th, 75th, 90th, 95th and 99th percentiles of both classes together (cropping the long
//!   tail of interrupts and preemption, as dudect does); the verdict takes the largest |t|.
//! - Verdict: a leak when, on one crop, |t| > `THRESHOLD` = 10 (dudect's "definitely not
//!   constant time"; its 4.5 is reported as "suspicious" but does not fail, since this runs on
//!   shared CI machines and the largest of 12 statistics per target is taken) *and* the class
//!   means differ by `MIN_SHIFT` = 0.5 % of the operation or more (about 2 ns on a single-state
//!   Keccak call, 5 ns on an AVX2 product: one mispredicted branch). With identical instructions
//!   and addresses in both classes, this machine still showed |t| = 10–17 for differences of
//!   0.05–0.2 % (the all-zero class of the AVX2 product and of the BMI Keccak slightly faster),
//!   a value-dependent effect below the code (both paths are Valgrind-clean: no secret-dependent
//!   branch or address). A leak is measured once more and fails if it shows again; a negative
//!   control not flagged is measured once more and must be flagged then.
//! - Measurements: `SABER_DUDECT_MEASUREMENTS` per pass and target (default 40 000; two passes
//!   per NTT target, one per Keccak target), each target also stopping after `TIME_CAP` per
//!   pass. About 5 s in all on this 2-core machine (release build).
//! - Negative controls, which must be flagged: the scalar NTT product with an early return for
//!   an all-zero secret (a gross leak), and the same product with one secret-dependent branch
//!   that adds a little work (its size, about 8 % of the operation here, is printed: a 1 % one
//!   went unflagged twice in a row on a CI machine, |t| = 4.2 and 4.9).
//!
//! # Limits (also in SECURITY.md)
//!
//! A pass is evidence, not proof: it only sees timing differences between these two classes
//! that are large against the noise for this many measurements, on this CPU and compiler build;
//! leaks through the cache state of other processes, through inputs not varied here (the public
//! polynomial), or smaller than `MIN_SHIFT` or the resolution are not seen. AVX-512 targets run
//! only on CPUs with AVX-512; elsewhere they are skipped with a visible reason, and a CPU that
//! reports the feature within the instruction-set cap but whose constructor returns `None`
//! fails the test.
//!
//! Run: `cargo test --release --test dudect` (`.ci/ct.sh` runs it); in a debug build (a plain
//! `cargo test`) only the negative controls run, with a SKIPPED line. A `harness = false` test:
//! it prints `dudect run: <n> (<targets>); skipped: <m> (<reasons>)` and one line per target.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use saber_kem::hazmat::keccak::{Function, Job, Multi, Single};
use saber_kem::polymul::{N, Poly, PolyMul, SecretPoly};

/// |t| above which a target is reported as leaking.
const THRESHOLD: f64 = 10.0;
/// Smallest difference of the class means, in % of the operation, reported as a leak.
const MIN_SHIFT: f64 = 0.5;
/// |t| above which a target is reported as suspicious (not a failure).
const SUSPICIOUS: f64 = 4.5;
/// Default measurements per pass and target.
const MEASUREMENTS: usize = 40_000;
/// Untimed operations before the measurements.
const WARM_UP: usize = 2_000;
/// Wall-clock bound per pass and target.
const TIME_CAP: Duration = Duration::from_secs(4);
/// Percentiles below which the cropped statistics are taken (plus all measurements).
const CROPS: [f64; 5] = [0.50, 0.75, 0.90, 0.95, 0.99];

/// xorshift64*: the class coin and the random inputs (fast; no statistical subtlety needed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let word = self.next().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

/// Running mean and variance (Welford).
#[derive(Clone, Copy, Default)]
struct Moments {
    n: f64,
    mean: f64,
    m2: f64,
}

impl Moments {
    fn push(&mut self, x: f64) {
        self.n += 1.0;
        let d = x - self.mean;
        self.mean += d / self.n;
        self.m2 += d * (x - self.mean);
    }

    fn variance(&self) -> f64 {
        self.m2 / (self.n - 1.0)
    }
}

/// Welch's t between two classes (0 when either has fewer than two measurements).
fn welch(a: &Moments, b: &Moments) -> f64 {
    if a.n < 2.0 || b.n < 2.0 {
        return 0.0;
    }
    let se = (a.variance() / a.n + b.variance() / b.n).sqrt();
    if se == 0.0 {
        0.0
    } else {
        (a.mean - b.mean) / se
    }
}

/// The result of one pass: the largest |t| over the crops, the crop it came from, the
/// difference of the class means on that crop (fixed − random, in % of their mean), whether a
/// crop shows a leak, the number of measurements and the medians of the two classes (ns).
struct Verdict {
    t: f64,
    crop: &'static str,
    shift: f64,
    leaks: bool,
    count: usize,
    median: [f64; 2],
}

fn verdict(samples: &[(bool, u64)]) -> Verdict {
    let mut sorted: Vec<u64> = samples.iter().map(|&(_, t)| t).collect();
    sorted.sort_unstable();
    let cut = |p: f64| sorted[((sorted.len() - 1) as f64 * p) as usize];
    let mut best = (0.0f64, "all", 0.0f64);
    let mut leaks = false;
    let names = ["p50", "p75", "p90", "p95", "p99"];
    let limits = [(u64::MAX, "all")]
        .into_iter()
        .chain(CROPS.iter().zip(names).map(|(&p, name)| (cut(p), name)));
    for (limit, name) in limits {
        let mut classes = [Moments::default(); 2];
        for &(class, time) in samples {
            if time <= limit {
                classes[usize::from(class)].push(time as f64);
            }
        }
        let t = welch(&classes[0], &classes[1]);
        let [fixed, random] = classes.map(|c| c.mean);
        let shift = 200.0 * (fixed - random) / (fixed + random);
        // A leak is a difference both certain (|t|) and large enough (`MIN_SHIFT`).
        leaks |= t.abs() > THRESHOLD && shift.abs() >= MIN_SHIFT;
        if t.abs() > best.0.abs() {
            best = (t, name, shift);
        }
    }
    let median = [false, true].map(|class| {
        let mut times: Vec<u64> = samples
            .iter()
            .filter(|&&(c, _)| c == class)
            .map(|&(_, t)| t)
            .collect();
        times.sort_unstable();
        times.get(times.len() / 2).copied().unwrap_or(0) as f64
    });
    Verdict {
        t: best.0,
        crop: best.1,
        shift: best.2,
        leaks,
        count: samples.len(),
        median,
    }
}

/// One pass: `prepare(class, rng)` writes the input of a measurement of that class (`true`:
/// random, `false`: fixed), `operation` is timed.
fn pass<I>(
    count: usize,
    input: &mut I,
    mut prepare: impl FnMut(&mut I, bool, &mut Rng),
    mut operation: impl FnMut(&I),
) -> Verdict {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for i in 0..WARM_UP {
        prepare(input, i % 2 == 1, &mut rng);
        operation(black_box(&*input));
    }
    let start = Instant::now();
    let mut samples = Vec::with_capacity(count);
    while samples.len() < count && start.elapsed() < TIME_CAP {
        let class = rng.next() & 1 == 1;
        prepare(input, class, &mut rng);
        let input = black_box(&*input);
        let t0 = Instant::now();
        operation(input);
        let elapsed = t0.elapsed();
        samples.push((class, elapsed.as_nanos() as u64));
    }
    verdict(&samples)
}

/// Writes into `out`, element by element, `random` (class `true`) or `fixed` (class `false`)
/// through an all-ones or all-zero mask: the same instructions and addresses for both classes.
fn select_into(out: &mut [u8], class: bool, random: &[u8], fixed: &[u8]) {
    let mask = black_box(0u8.wrapping_sub(u8::from(class)));
    for ((o, &r), &f) in out.iter_mut().zip(random).zip(fixed) {
        *o = (r & mask) | (f & !mask);
    }
}

/// Fills `s` with the fixed value or uniform coefficients in [−5, 5] (see [`select_into`]):
/// random coefficients are drawn for both classes.
fn secret_input(fixed: i8) -> impl FnMut(&mut SecretPoly, bool, &mut Rng) {
    let fixed = [fixed as u8; N];
    let mut random = [0u8; N];
    let mut selected = [0u8; N];
    move |s, class, rng| {
        for c in random.iter_mut() {
            *c = ((rng.next() % 11) as i8 - 5) as u8;
        }
        select_into(&mut selected, class, &random, &fixed);
        for (c, &b) in s.coeffs.iter_mut().zip(&selected) {
            *c = b as i8;
        }
    }
}

/// Fills `out` with zeros or uniform bytes (see [`select_into`]).
fn byte_input(out: &mut [u8], class: bool, rng: &mut Rng, random: &mut [u8], zeros: &[u8]) {
    rng.fill(random);
    select_into(out, class, random, zeros);
}

fn public_poly() -> Poly {
    let mut rng = Rng(7);
    let mut a = Poly::ZERO;
    for c in a.coeffs.iter_mut() {
        *c = rng.next() as u16 & 0x1FFF;
    }
    a
}

/// Both passes (fixed 0, fixed −5) of a product `a·s` through `product`.
fn product_target(
    count: usize,
    mut product: impl FnMut(&Poly, &SecretPoly) -> Poly,
) -> Vec<Verdict> {
    let a = public_poly();
    [0i8, -5]
        .into_iter()
        .map(|fixed| {
            let mut s = SecretPoly::ZERO;
            pass(count, &mut s, secret_input(fixed), |s| {
                black_box(product(&a, s));
            })
        })
        .collect()
}

/// SHAKE128 of a secret 32-byte seed into 168 bytes on every lane of `keccak`.
fn multi_target(count: usize, keccak: Multi) -> Vec<Verdict> {
    let ways = keccak.ways();
    let mut seeds = vec![[0u8; 32]; ways];
    let mut outputs = vec![[0u8; 168]; ways];
    let (mut random, zeros) = ([0u8; 32], [0u8; 32]);
    let prepare = |seeds: &mut Vec<[u8; 32]>, class: bool, rng: &mut Rng| {
        for seed in seeds.iter_mut() {
            byte_input(seed, class, rng, &mut random, &zeros);
        }
    };
    vec![pass(count, &mut seeds, prepare, |seeds| {
        keccak.run(seeds.iter().zip(outputs.iter_mut()).map(|(seed, out)| Job {
            function: Function::Shake128,
            input: [seed, &[]],
            output: out,
            then: None,
        }));
        black_box(&outputs);
    })]
}

/// SHA3-256 of 64 secret bytes on one single-state implementation.
fn single_target(count: usize, keccak: Single) -> Vec<Verdict> {
    let mut input = [0u8; 64];
    let mut digest = [0u8; 32];
    let (mut random, zeros) = ([0u8; 64], [0u8; 64]);
    let prepare = |input: &mut [u8; 64], class: bool, rng: &mut Rng| {
        byte_input(input, class, rng, &mut random, &zeros);
    };
    vec![pass(count, &mut input, prepare, |input| {
        keccak.hash(Function::Sha3_256, &[input], &mut digest);
        black_box(&digest);
    })]
}

/// Negative control 1: the scalar NTT product, returning at once for an all-zero secret.
fn leaky_early_return(a: &Poly, s: &SecretPoly) -> Poly {
    if s.coeffs.iter().all(|&c| c == 0) {
        return Poly::ZERO;
    }
    saber_kem::polymul::NttScalar.mul(a, s)
}

/// Negative control 2: the scalar NTT product plus a little work when the first secret
/// coefficient is zero (one secret-dependent branch).
fn leaky_branch(a: &Poly, s: &SecretPoly) -> Poly {
    let mut out = saber_kem::polymul::NttScalar.mul(a, s);
    if s.coeffs[0] == 0 {
        for i in 0..LEAK_WORK {
            out.coeffs[i % N] = black_box(out.coeffs[i % N].wrapping_mul(3));
        }
    }
    out
}

/// Iterations of the control's extra work (about 500 ns here, 8 % of the product).
const LEAK_WORK: usize = 320;

/// What the CPU reports, to tell a legitimate skip from a constructor that failed.
fn cpu_has(features: &[&str]) -> bool {
    features.iter().all(|&f| match f {
        "avx2" => std::is_x86_feature_detected!("avx2"),
        "avx512f" => std::is_x86_feature_detected!("avx512f"),
        "avx512bw" => std::is_x86_feature_detected!("avx512bw"),
        "avx512vl" => std::is_x86_feature_detected!("avx512vl"),
        other => panic!("unknown feature {other}"),
    })
}

/// Why a path needing `features` at `level` is absent; `Err` when it should be there.
fn absent(name: &str, features: &[&str], level: saber_kem::hazmat::Isa) -> Result<String, String> {
    let cap = saber_kem::hazmat::isa_cap();
    if !cpu_has(features) {
        Ok(format!("this CPU has no {}", features.join("+")))
    } else if cap < level {
        Ok(format!("instruction-set cap {cap:?}"))
    } else {
        Err(format!(
            "{name}: the CPU has {} within the cap ({cap:?}) but the path is not constructible",
            features.join("+")
        ))
    }
}

type Run = Box<dyn FnMut(usize) -> Vec<Verdict>>;

/// The targets to run, the skipped ones with the reason, and the paths that should exist here
/// but do not.
#[derive(Default)]
struct Plan {
    targets: Vec<(String, Run)>,
    skipped: Vec<(String, String)>,
    errors: Vec<String>,
}

impl Plan {
    /// A path that needs `features` within the cap `level`: its run, or why it is absent.
    fn optional(
        &mut self,
        name: &str,
        run: Option<Run>,
        features: &[&str],
        level: saber_kem::hazmat::Isa,
    ) {
        match run {
            Some(run) => self.targets.push((name.into(), run)),
            None => match absent(name, features, level) {
                Ok(why) => self.skipped.push((name.into(), why)),
                Err(error) => self.errors.push(error),
            },
        }
    }
}

fn main() -> ExitCode {
    use saber_kem::hazmat::Isa;
    if std::env::args().any(|a| a == "--list") {
        println!("dudect: test");
        return ExitCode::SUCCESS;
    }
    // Debug builds (overflow checks, debug assertions, other code) are not what users run: there
    // only the negative controls run, so that the harness itself stays tested.
    let release = !cfg!(debug_assertions);
    let count = std::env::var("SABER_DUDECT_MEASUREMENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MEASUREMENTS);

    let mut plan = Plan::default();

    // NTT paths.
    plan.optional(
        "ntt-avx512",
        saber_kem::polymul::ntt::NttAvx512::new()
            .map(|mut b| -> Run { Box::new(move |n| product_target(n, |a, s| b.mul(a, s))) }),
        &["avx512f", "avx512bw"],
        Isa::Avx512,
    );
    plan.optional(
        "ntt-avx2",
        saber_kem::polymul::NttAvx2::new()
            .map(|mut b| -> Run { Box::new(move |n| product_target(n, |a, s| b.mul(a, s))) }),
        &["avx2"],
        Isa::Avx2,
    );
    let portable: [(&str, Run); 3] = [
        (
            "ntt-scalar",
            Box::new(|n| product_target(n, |a, s| saber_kem::polymul::NttScalar.mul(a, s))),
        ),
        (
            "ntt-lowstack",
            Box::new(|n| product_target(n, |a, s| saber_kem::polymul::NttLowStack.mul(a, s))),
        ),
        (
            "karatsuba",
            Box::new(|n| product_target(n, |a, s| saber_kem::polymul::Karatsuba.mul(a, s))),
        ),
    ];
    for (name, run) in portable {
        plan.targets.push((name.into(), run));
    }

    // Keccak paths: every multi-way and single-state implementation this CPU runs, and the
    // AVX-512 ones checked for presence.
    let multis: Vec<Multi> = Multi::all().collect();
    let singles: Vec<Single> = Single::all().collect();
    for keccak in &multis {
        let keccak = *keccak;
        plan.targets.push((
            format!("keccak-lanes-{}", keccak.name()),
            Box::new(move |n| multi_target(n, keccak)),
        ));
    }
    for keccak in &singles {
        let keccak = *keccak;
        plan.targets.push((
            format!("keccak-single-{}", keccak.name()),
            Box::new(move |n| single_target(n, keccak)),
        ));
    }
    let avx512_keccak = ["avx2", "avx512f", "avx512vl"];
    for (name, present) in [
        (
            "keccak-lanes-avx512",
            multis.iter().any(|k| k.name() == "avx512"),
        ),
        (
            "keccak-lanes-avx512x8",
            multis.iter().any(|k| k.name() == "avx512x8"),
        ),
        (
            "keccak-single-x4-avx512",
            singles.iter().any(|k| k.name() == "x4-avx512"),
        ),
    ] {
        if !present {
            plan.optional(name, None, &avx512_keccak, Isa::Avx512);
        }
    }
    if !multis.iter().any(|k| k.name() == "avx2") {
        plan.optional("keccak-lanes-avx2", None, &["avx2"], Isa::Avx2);
    }

    let controls: [(&str, Run); 2] = [
        (
            "negative/early-return",
            Box::new(|n| product_target(n, leaky_early_return)),
        ),
        (
            "negative/branch",
            Box::new(|n| product_target(n, leaky_branch)),
        ),
    ];

    let Plan {
        targets,
        skipped,
        errors,
    } = plan;
    let names: Vec<&str> = targets.iter().map(|(n, _)| n.as_str()).collect();
    let reasons: Vec<String> = skipped
        .iter()
        .map(|(n, why)| format!("{n}: {why}"))
        .collect();
    {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "dudect run: {} ({}); skipped: {} ({})",
            names.len(),
            names.join(", "),
            skipped.len(),
            reasons.join(", ")
        );
    }
    println!(
        "dudect: {count} measurements per pass, threshold |t| > {THRESHOLD} (suspicious > \
         {SUSPICIOUS}), instruction-set cap {:?}",
        saber_kem::hazmat::isa_cap()
    );

    let mut failed = errors.len();
    for error in &errors {
        println!("FAIL {error}");
    }
    // The largest |t| of the passes, and whether one of them shows a leak.
    let report = |name: &str, verdicts: &[Verdict]| -> (f64, bool) {
        let mut worst = (0.0f64, false);
        for v in verdicts {
            println!(
                "  {name}: {} measurements, max |t| = {:.2} ({}, difference {:+.2}%), medians \
                 {:.0} / {:.0} ns (fixed / random)",
                v.count,
                v.t.abs(),
                v.crop,
                v.shift,
                v.median[0],
                v.median[1]
            );
            worst = (worst.0.max(v.t.abs()), worst.1 || v.leaks);
        }
        worst
    };
    if !release {
        println!(
            "SKIPPED: dudect targets in a debug build (timing is meaningful in release builds \
             only: cargo test --release --test dudect); the negative controls run"
        );
    }
    for (name, mut run) in targets.into_iter().filter(|_| release) {
        let (mut worst, mut leaks) = report(&name, &run(count));
        if leaks {
            // A leak repeats; a burst of load on a shared machine rarely does twice.
            println!("  {name}: a leak (|t| = {worst:.1}): measured once more");
            let again = report(&name, &run(count));
            (worst, leaks) = (worst.min(again.0), again.1);
        }
        if leaks {
            failed += 1;
            println!("FAIL {name}: timing depends on the secret class (|t| = {worst:.1})");
        } else if worst > SUSPICIOUS {
            println!(
                "ok   {name} (suspicious: |t| = {worst:.1} > {SUSPICIOUS}; a leak needs |t| > \
                 {THRESHOLD} and a difference of {MIN_SHIFT}% or more)"
            );
        } else {
            println!("ok   {name}");
        }
    }
    for (name, mut run) in controls {
        let mut verdicts = run(count);
        let (mut worst, mut flagged) = report(name, &verdicts[..1]);
        if !flagged {
            // The small control can drown in a burst of load: it must be flagged in one of
            // two runs.
            println!("  {name}: not flagged (|t| = {worst:.1}): measured once more");
            verdicts = run(count);
            (worst, flagged) = report(name, &verdicts[..1]);
        }
        // The fixed class of the first pass (all-zero secret) triggers the leak.
        let leak = verdicts[0].median[0] - verdicts[0].median[1];
        let size = 100.0 * leak / verdicts[0].median[1];
        if flagged {
            println!("ok   {name}: flagged (|t| = {worst:.1}; leak {leak:+.0} ns, {size:+.1}%)");
        } else {
            failed += 1;
            println!(
                "FAIL {name}: the leaky control was not flagged (|t| = {worst:.1}; leak \
                 {leak:+.0} ns, {size:+.1}%)"
            );
        }
    }
    println!("dudect: {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
