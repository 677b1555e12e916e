//! Times keygen / encaps / decaps of LightSaber, Saber and FireSaber in one run for:
//! saber-kem with its default backend, uncapped (AVX-512 where present), capped at AVX2
//! (`default avx2-only`) through `saber_kem::hazmat::cap_isa`, and the default of a build capped
//! to portable code (`default portable`: its backend, `ToomCook`, every path capped); saber-kem with each backend of the project's list
//! (`tests/support/backends.rs`; a backend this CPU lacks is skipped with a note); the expanded
//! keys (A, b and H(pk) cached in the backend's domain) with `Ntt` and with the default backend;
//! the batch API (batches of eight, default backend, per operation); saber-kem with a multiplier
//! that does nothing (what the KEM core costs besides multiplication); Saber+ (LightSaber+,
//! Saber+, FireSaber+ in the three variant slots) with the default backend and with toom-cook;
//! pqcrypto-saber (PQClean C, AVX2 picked at run time); PQClean's portable C code of the same
//! package (`pqcrypto-saber clean`); the same hash calls through saber-kem's own Keccak; and the
//! Keccak floor (the operation's SHAKE128 / SHA3 calls alone, one after the other, through the
//! `sha3`/`shake` crates: `shared/docs/anchors.md` §5). It prints µs with the ratios ours /
//! pqcrypto-saber, ours / Keccak floor and ours / PQClean clean; then the default backend per
//! level against its C counterpart (the AVX2 code, or the clean code for the portable level);
//! then each Saber+ row divided by the round-3 row of the same backend; then the batch row
//! against the single operations of the default backend.
//!
//! `cargo run --release --manifest-path peer-bench/Cargo.toml` (add `-- --quick` for fewer
//! samples, `-- --only default,no-mul` to time only the rows whose names contain one of the
//! words, besides the three references, `-- --rounds 30` for more rounds, `-- --fastest` to keep
//! each round's fastest call instead of its median, `-- --repeat 10` to measure everything ten
//! times and print each figure's median over the repetitions, then issue 18's targets with their
//! spread). Each cell is the minimum over 9 rounds of the median of up to 101 calls (or 15 ms);
//! the rounds of one cell interleave all rows.

use std::convert::Infallible;
use std::hint::black_box;
use std::time::{Duration, Instant};

use rand_core::{TryCryptoRng, TryRng};
use saber_kem::hazmat::{Isa, cap_isa, isa_cap};
use saber_kem::{
    ExpandedDecapsulationKey, FireSaber, FireSaberPlus, LightSaber, LightSaberPlus, Saber,
    SaberPlus,
};
use shake::XofReader;

/// The project's backend list, included as the tests include it.
#[path = "../../tests/support/backends.rs"]
mod backends;

/// splitmix64: cheap, deterministic; the benchmark's RNG cost stays negligible.
struct BenchRng(u64);

impl TryRng for BenchRng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.try_next_u64()? as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Ok(z ^ (z >> 31))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let x = self.try_next_u64()?.to_le_bytes();
            chunk.copy_from_slice(&x[..chunk.len()]);
        }
        Ok(())
    }
}

impl TryCryptoRng for BenchRng {}

mod no_multiplication;
use no_multiplication::NoMultiplication;

const OPS: [&str; 3] = ["keygen", "encaps", "decaps"];

/// Whether each round keeps its fastest call instead of the median (`--fastest`: for a machine
/// under sustained load, where even the median of a round is inflated).
static FASTEST: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Median (or, with `--fastest`, minimum) duration (ns) of up to `max_calls` calls of `f`, within
/// about `budget`.
fn median_ns(mut f: impl FnMut(), max_calls: usize, budget: Duration) -> f64 {
    for _ in 0..3 {
        f();
    }
    let start = Instant::now();
    let mut samples = Vec::with_capacity(max_calls);
    while samples.len() < max_calls && (samples.len() < 11 || start.elapsed() < budget) {
        let t = Instant::now();
        f();
        samples.push(t.elapsed().as_nanos() as f64);
    }
    samples.sort_by(f64::total_cmp);
    if FASTEST.load(std::sync::atomic::Ordering::Relaxed) {
        samples[0]
    } else {
        samples[samples.len() >> 1]
    }
}

/// One row of the table: a name and a closure timing op `i` of variant `v` (returns ns).
struct Row {
    name: String,
    time: Box<dyn FnMut(usize, usize, usize, Duration) -> f64>,
}

macro_rules! saber_kem_row {
    ($name:expr, $backend:expr) => {{
        let mut backend = $backend;
        Row {
            name: $name.to_string(),
            time: Box::new(move |variant, op, calls, budget| match variant {
                0 => time_saber_kem!(LightSaber, backend, op, calls, budget),
                1 => time_saber_kem!(Saber, backend, op, calls, budget),
                _ => time_saber_kem!(FireSaber, backend, op, calls, budget),
            }),
        }
    }};
}

/// Saber+ rows: the variant slots 0, 1, 2 hold LightSaber+, Saber+, FireSaber+ (the pqcrypto and
/// floor ratios are then against round-3 Saber's references; the closing table divides by the
/// row of the same backend with round-3 Saber).
macro_rules! plus_row {
    ($name:expr, $backend:expr) => {{
        let mut backend = $backend;
        Row {
            name: $name.to_string(),
            time: Box::new(move |variant, op, calls, budget| match variant {
                0 => time_saber_kem!(LightSaberPlus, backend, op, calls, budget),
                1 => time_saber_kem!(SaberPlus, backend, op, calls, budget),
                _ => time_saber_kem!(FireSaberPlus, backend, op, calls, budget),
            }),
        }
    }};
}

macro_rules! time_saber_kem {
    ($kem:ty, $backend:expr, $op:expr, $calls:expr, $budget:expr) => {{
        let mut rng = BenchRng(1);
        let backend = &mut $backend;
        let Ok((dk, ek)) = <$kem>::try_generate_with(backend, &mut rng);
        let Ok((ct, _)) = ek.try_encapsulate_with(backend, &mut rng);
        match $op {
            0 => median_ns(
                || {
                    black_box(<$kem>::try_generate_with(backend, &mut rng).ok());
                },
                $calls,
                $budget,
            ),
            1 => median_ns(
                || {
                    black_box(ek.try_encapsulate_with(backend, &mut rng).ok());
                },
                $calls,
                $budget,
            ),
            _ => median_ns(
                || {
                    black_box(dk.decapsulate_with(backend, black_box(&ct)));
                },
                $calls,
                $budget,
            ),
        }
    }};
}

/// Expanded keys (A, b and H(pk) cached in the backend's domain): keygen = key generation plus
/// building the expanded decapsulation key; encaps and decaps through the expanded keys.
macro_rules! time_expanded {
    ($kem:ty, $backend:expr, $op:expr, $calls:expr, $budget:expr) => {{
        let mut rng = BenchRng(3);
        let backend = &mut $backend;
        let Ok((dk, _)) = <$kem>::try_generate_with(backend, &mut rng);
        let xdk = ExpandedDecapsulationKey::new(backend, &dk);
        let xek = xdk.expanded_encapsulation_key();
        let (ct, _) = xek.encapsulate(backend, &mut rng);
        match $op {
            0 => median_ns(
                || {
                    let Ok((dk, _)) = <$kem>::try_generate_with(backend, &mut rng);
                    black_box(ExpandedDecapsulationKey::new(backend, &dk));
                },
                $calls,
                $budget,
            ),
            1 => median_ns(
                || {
                    black_box(xek.encapsulate(backend, &mut rng));
                },
                $calls,
                $budget,
            ),
            _ => median_ns(
                || {
                    black_box(xdk.decapsulate(backend, black_box(&ct)));
                },
                $calls,
                $budget,
            ),
        }
    }};
}

macro_rules! expanded_row {
    ($name:expr, $backend:expr) => {{
        let mut backend = $backend;
        Row {
            name: $name.to_string(),
            time: Box::new(move |variant, op, calls, budget| match variant {
                0 => time_expanded!(LightSaber, backend, op, calls, budget),
                1 => time_expanded!(Saber, backend, op, calls, budget),
                _ => time_expanded!(FireSaber, backend, op, calls, budget),
            }),
        }
    }};
}

/// Operations per batch in the batch rows: one group of the batch API.
const BATCH: usize = 8;

/// The batch API with the default backend, per operation: a batch of `BATCH` key generations,
/// encapsulations (to `BATCH` keys) or decapsulations, divided by `BATCH`.
macro_rules! time_batch {
    ($kem:ty, $op:expr, $calls:expr, $budget:expr) => {{
        let mut rng = BenchRng(4);
        let pairs = <$kem>::generate_batch::<BATCH>(&mut rng);
        let keys = pairs.each_ref().map(|(_, ek)| ek);
        let encapsulated = <$kem>::encapsulate_batch(keys, &mut rng);
        let jobs: [_; BATCH] = core::array::from_fn(|i| (&pairs[i].0, &encapsulated[i].0));
        let per_batch = match $op {
            0 => median_ns(
                || drop(black_box(<$kem>::generate_batch::<BATCH>(&mut rng))),
                $calls,
                $budget,
            ),
            1 => median_ns(
                || drop(black_box(<$kem>::encapsulate_batch(keys, &mut rng))),
                $calls,
                $budget,
            ),
            _ => median_ns(
                || drop(black_box(<$kem>::decapsulate_batch(black_box(jobs)))),
                $calls,
                $budget,
            ),
        };
        per_batch / BATCH as f64
    }};
}

macro_rules! default_row {
    ($name:expr, $light:ty, $saber:ty, $fire:ty) => {
        default_row!($name, Isa::Avx512, $light, $saber, $fire)
    };
    ($name:expr, $cap:expr, $light:ty, $saber:ty, $fire:ty) => {
        Row {
            name: $name.to_string(),
            time: Box::new(|variant, op, calls, budget| {
                capped($cap, || match variant {
                    0 => time_default!($light, op, calls, budget),
                    1 => time_default!($saber, op, calls, budget),
                    _ => time_default!($fire, op, calls, budget),
                })
            }),
        }
    };
}

/// The default of a build capped to portable code (`--cfg saber_isa="portable"`): its backend,
/// `ToomCook` on x86_64 (`saber_kem::DefaultPolyMul` under that cfg; the type is fixed at compile
/// time, so this build names it), with every run-time choice (hash paths, packing, sampling)
/// capped to portable code as well.
fn portable_default_row() -> Row {
    let mut time = saber_kem_row!("", saber_kem::polymul::ToomCook).time;
    Row {
        name: "saber-kem default portable".to_string(),
        time: Box::new(move |variant, op, calls, budget| {
            capped(Isa::Portable, || time(variant, op, calls, budget))
        }),
    }
}

/// `f()` with the instruction-set level capped at `cap` (`saber_kem::hazmat::cap_isa`), the cap
/// restored afterwards, so that the other rows of the cell run uncapped. The default backend and
/// the hash paths are chosen per operation, so every timed call follows the cap.
fn capped<T>(cap: Isa, f: impl FnOnce() -> T) -> T {
    let before = isa_cap();
    cap_isa(cap);
    let result = f();
    cap_isa(before);
    result
}

macro_rules! time_default {
    ($kem:ty, $op:expr, $calls:expr, $budget:expr) => {{
        let mut rng = BenchRng(2);
        let (dk, ek) = <$kem>::generate(&mut rng);
        let (ct, _) = ek.encapsulate(&mut rng);
        match $op {
            0 => median_ns(
                || drop(black_box(<$kem>::generate(&mut rng))),
                $calls,
                $budget,
            ),
            1 => median_ns(
                || drop(black_box(ek.encapsulate(&mut rng))),
                $calls,
                $budget,
            ),
            _ => median_ns(
                || drop(black_box(dk.decapsulate(black_box(&ct)))),
                $calls,
                $budget,
            ),
        }
    }};
}

macro_rules! time_pqcrypto {
    ($m:ident, $op:expr, $calls:expr, $budget:expr) => {{
        use pqcrypto_saber::$m;
        let (pk, sk) = $m::keypair();
        let (_, ct) = $m::encapsulate(&pk);
        match $op {
            0 => median_ns(
                || {
                    black_box($m::keypair());
                },
                $calls,
                $budget,
            ),
            1 => median_ns(
                || {
                    black_box($m::encapsulate(black_box(&pk)));
                },
                $calls,
                $budget,
            ),
            _ => median_ns(
                || {
                    black_box($m::decapsulate(black_box(&ct), black_box(&sk)));
                },
                $calls,
                $budget,
            ),
        }
    }};
}

/// PQClean's portable C code of the same package (`pqcrypto_saber::ffi::PQCLEAN_*_CLEAN_*`), which
/// pqcrypto-saber builds beside the AVX2 code but never calls on AVX2 CPUs.
macro_rules! time_pqclean {
    ($kem:ident, $sizes:expr, $op:expr, $calls:expr, $budget:expr) => {{
        use pqcrypto_saber::ffi;
        let (_, _, pk_len, ct_len) = $sizes;
        let (mut pk, mut sk, mut ct, mut ss) = ([0u8; 1312], [0u8; 3040], [0u8; 1472], [0u8; 32]);
        let (pk, sk, ct) = (&mut pk[..pk_len], &mut sk[..], &mut ct[..ct_len]);
        paste_pqclean!($kem, keypair, enc, dec);
        // SAFETY: the buffers are at least the sizes PQClean writes and reads (`SIZES`, the
        // largest secret key).
        unsafe {
            assert_eq!(keypair(pk.as_mut_ptr(), sk.as_mut_ptr()), 0);
            assert_eq!(enc(ct.as_mut_ptr(), ss.as_mut_ptr(), pk.as_ptr()), 0);
        }
        match $op {
            // SAFETY (all three): as above.
            0 => median_ns(
                || unsafe {
                    black_box(keypair(pk.as_mut_ptr(), sk.as_mut_ptr()));
                },
                $calls,
                $budget,
            ),
            1 => median_ns(
                || unsafe {
                    black_box(enc(
                        ct.as_mut_ptr(),
                        ss.as_mut_ptr(),
                        black_box(pk.as_ptr()),
                    ));
                },
                $calls,
                $budget,
            ),
            _ => median_ns(
                || unsafe {
                    black_box(dec(ss.as_mut_ptr(), black_box(ct.as_ptr()), sk.as_ptr()));
                },
                $calls,
                $budget,
            ),
        }
    }};
}

/// The three entry points of one PQClean clean parameter set, as local names.
macro_rules! paste_pqclean {
    (LIGHTSABER, $k:ident, $e:ident, $d:ident) => {
        let ($k, $e, $d) = (
            ffi::PQCLEAN_LIGHTSABER_CLEAN_crypto_kem_keypair,
            ffi::PQCLEAN_LIGHTSABER_CLEAN_crypto_kem_enc,
            ffi::PQCLEAN_LIGHTSABER_CLEAN_crypto_kem_dec,
        );
    };
    (SABER, $k:ident, $e:ident, $d:ident) => {
        let ($k, $e, $d) = (
            ffi::PQCLEAN_SABER_CLEAN_crypto_kem_keypair,
            ffi::PQCLEAN_SABER_CLEAN_crypto_kem_enc,
            ffi::PQCLEAN_SABER_CLEAN_crypto_kem_dec,
        );
    };
    (FIRESABER, $k:ident, $e:ident, $d:ident) => {
        let ($k, $e, $d) = (
            ffi::PQCLEAN_FIRESABER_CLEAN_crypto_kem_keypair,
            ffi::PQCLEAN_FIRESABER_CLEAN_crypto_kem_enc,
            ffi::PQCLEAN_FIRESABER_CLEAN_crypto_kem_dec,
        );
    };
}

/// Saber's sizes per variant: (L, mu, pk bytes, ct bytes).
const SIZES: [(usize, usize, usize, usize); 3] =
    [(2, 10, 672, 736), (3, 8, 992, 1088), (4, 6, 1312, 1472)];

/// The hash functions the floor is measured with: the `sha3` and `shake` crates (the floor
/// of anchors.md §5, the reference) or `saber_kem::hazmat` (this crate's Keccak, which on
/// AVX-512 CPUs runs one state of its four-way permutation).
struct Hashes {
    sha3_256: fn(&[&[u8]]) -> [u8; 32],
    sha3_512: fn(&[&[u8]]) -> [u8; 64],
    shake128: fn(&[u8], &mut [u8]),
}

const CRATE_HASHES: Hashes = Hashes {
    sha3_256: |parts| {
        let mut h = <sha3::Sha3_256 as sha3::Digest>::new();
        for p in parts {
            sha3::Digest::update(&mut h, p);
        }
        sha3::Digest::finalize(h).into()
    },
    sha3_512: |parts| {
        let mut h = <sha3::Sha3_512 as sha3::Digest>::new();
        for p in parts {
            sha3::Digest::update(&mut h, p);
        }
        sha3::Digest::finalize(h).into()
    },
    shake128: |input, out| {
        use shake::{ExtendableOutput, Update};
        let mut x = shake::Shake128::default();
        x.update(input);
        x.finalize_xof().read(out);
    },
};

const OUR_HASHES: Hashes = Hashes {
    sha3_256: saber_kem::hazmat::sha3_256,
    sha3_512: saber_kem::hazmat::sha3_512,
    shake128: |input, out| saber_kem::hazmat::shake128(&[input], out),
};

/// The hash work of one KEM operation alone (anchors.md §5): keygen = SHAKE128 of seed_A (one
/// permutation) + matrix + secret + H(pk); encaps = H(m) + H(pk) + G + matrix + secret + H(ct)
/// + H(K ‖ H(ct)); decaps = G + matrix + secret + H(ct) + final H. Round-3 layout.
fn keccak_floor(hashes: &Hashes, variant: usize, op: usize) {
    let (l, mu, pk_len, ct_len) = SIZES[variant];
    let seed = black_box([7u8; 32]);
    let mut matrix = [0u8; 4 * 4 * 416];
    let mut secret = [0u8; 4 * 10 * 32];
    let pk = black_box([1u8; 1312]);
    let ct = black_box([2u8; 1472]);
    let (sha3_256, sha3_512) = (hashes.sha3_256, hashes.sha3_512);
    let matrix_and_secret = |matrix: &mut [u8], secret: &mut [u8], seed: &[u8; 32]| {
        (hashes.shake128)(seed, &mut matrix[..l * l * 416]);
        (hashes.shake128)(seed, &mut secret[..l * mu * 32]);
    };
    match op {
        0 => {
            let mut seed_a = [0u8; 32];
            (hashes.shake128)(&seed, &mut seed_a);
            matrix_and_secret(&mut matrix, &mut secret, &seed_a);
            black_box(sha3_256(&[&pk[..pk_len]]));
        }
        1 => {
            let m = sha3_256(&[&seed]);
            let hpk = sha3_256(&[&pk[..pk_len]]);
            let kr = sha3_512(&[&m, &hpk]);
            matrix_and_secret(&mut matrix, &mut secret, &seed);
            let hct = sha3_256(&[&ct[..ct_len]]);
            black_box(sha3_256(&[&kr[..32], &hct]));
        }
        _ => {
            let kr = sha3_512(&[&seed, &seed]);
            matrix_and_secret(&mut matrix, &mut secret, &seed);
            let hct = sha3_256(&[&ct[..ct_len]]);
            black_box(sha3_256(&[&kr[..32], &hct]));
        }
    }
    black_box((&matrix, &secret));
}

/// `best[row][variant][op]`: one measurement of every cell, in ns.
type Best = Vec<[[f64; 3]; 3]>;

/// Every cell once: the minimum over `rounds` rounds of the per-round medians. Rounds run per
/// cell and interleave the rows, so that every implementation of one cell is measured at nearly
/// the same time (this machine class is shared: contention comes in bursts).
fn measure(rows: &mut [Row], rounds: usize, calls: usize, budget: Duration) -> Best {
    let mut best = vec![[[f64::MAX; 3]; 3]; rows.len()];
    // Indices, not iterators: the loops run cell by cell across all rows (see above).
    #[allow(clippy::needless_range_loop)]
    for v in 0..3 {
        for op in 0..3 {
            for _ in 0..rounds {
                for (r, row) in rows.iter_mut().enumerate() {
                    let t = (row.time)(v, op, calls, budget);
                    best[r][v][op] = best[r][v][op].min(t);
                }
            }
        }
    }
    best
}

/// One figure over the repetitions of the measurement.
struct Spread {
    median: f64,
    lowest: f64,
    highest: f64,
}

/// `figure` of each repetition: its median (of an even count, the mean of the middle two), lowest
/// and highest.
fn spread(runs: &[Best], figure: &dyn Fn(&Best) -> f64) -> Spread {
    let mut values: Vec<f64> = runs.iter().map(figure).collect();
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Spread {
        median: (values[(n - 1) / 2] + values[n / 2]) / 2.0,
        lowest: values[0],
        highest: values[n - 1],
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, calls, budget) = if quick {
        (3, 31, Duration::from_millis(5))
    } else {
        (9, 101, Duration::from_millis(15))
    };
    FASTEST.store(
        std::env::args().any(|a| a == "--fastest"),
        std::sync::atomic::Ordering::Relaxed,
    );
    // `--rounds N`: more rounds per cell, for a loaded machine (the minimum over more rounds).
    let rounds = std::env::args()
        .skip_while(|a| a != "--rounds")
        .nth(1)
        .map_or(rounds, |n| n.parse().expect("--rounds takes a number"));

    let mut rows: Vec<Row> = vec![
        default_row!("saber-kem default", LightSaber, Saber, FireSaber),
        default_row!(
            "saber-kem default avx2-only",
            Isa::Avx2,
            LightSaber,
            Saber,
            FireSaber
        ),
        portable_default_row(),
        default_row!(
            "saber-kem+ default",
            LightSaberPlus,
            SaberPlus,
            FireSaberPlus
        ),
    ];
    macro_rules! add_backend {
        ($id:ident, $name:expr, $ctor:expr) => {
            rows.push(saber_kem_row!(format!("saber-kem {}", $name), $ctor));
        };
    }
    // The backends this CPU runs; the skipped ones named on standard error.
    let here = backends::Backends::here();
    here.report();
    backends::for_each_backend!(add_backend, here);
    rows.push(plus_row!(
        "saber-kem+ toom-cook",
        saber_kem::polymul::ToomCook
    ));
    rows.push(expanded_row!(
        "saber-kem expanded ntt",
        saber_kem::polymul::Ntt::new()
    ));
    rows.push(expanded_row!(
        "saber-kem exp. default",
        saber_kem::DefaultPolyMul::default()
    ));
    rows.push(Row {
        name: format!("saber-kem batch{BATCH} default"),
        time: Box::new(|variant, op, calls, budget| match variant {
            0 => time_batch!(LightSaber, op, calls, budget),
            1 => time_batch!(Saber, op, calls, budget),
            _ => time_batch!(FireSaber, op, calls, budget),
        }),
    });
    rows.push(saber_kem_row!("saber-kem no-mul (bound)", NoMultiplication));
    rows.push(expanded_row!("saber-kem exp. no-mul", NoMultiplication));
    rows.push(Row {
        name: "Keccak, saber-kem".to_string(),
        time: Box::new(|variant, op, calls, budget| {
            median_ns(|| keccak_floor(&OUR_HASHES, variant, op), calls, budget)
        }),
    });
    rows.push(Row {
        name: "pqcrypto-saber 0.1.11".to_string(),
        time: Box::new(|variant, op, calls, budget| match variant {
            0 => time_pqcrypto!(lightsaber, op, calls, budget),
            1 => time_pqcrypto!(saber, op, calls, budget),
            _ => time_pqcrypto!(firesaber, op, calls, budget),
        }),
    });
    rows.push(Row {
        name: "pqcrypto-saber clean".to_string(),
        time: Box::new(|variant, op, calls, budget| match variant {
            0 => time_pqclean!(LIGHTSABER, SIZES[0], op, calls, budget),
            1 => time_pqclean!(SABER, SIZES[1], op, calls, budget),
            _ => time_pqclean!(FIRESABER, SIZES[2], op, calls, budget),
        }),
    });
    rows.push(Row {
        name: "Keccak floor".to_string(),
        time: Box::new(|variant, op, calls, budget| {
            median_ns(|| keccak_floor(&CRATE_HASHES, variant, op), calls, budget)
        }),
    });
    // `--only a,b`: keep the rows whose names contain one of the words, and the three
    // references.
    if let Some(only) = std::env::args().skip_while(|a| a != "--only").nth(1) {
        let references = rows.len() - 3;
        let mut index = 0;
        rows.retain(|row| {
            index += 1;
            index > references || only.split(',').any(|word| row.name.contains(word))
        });
    }
    let pq = rows.len() - 3;
    let clean = rows.len() - 2;
    let floor = rows.len() - 1;

    // `--repeat N`: the whole measurement N times; every figure printed is then the median over
    // the repetitions of that figure (a ratio is taken within each repetition, then the median).
    let repeat = std::env::args()
        .skip_while(|a| a != "--repeat")
        .nth(1)
        .map_or(1, |n| {
            n.parse::<usize>().expect("--repeat takes a number").max(1)
        });
    let runs: Vec<Best> = (0..repeat)
        .map(|_| measure(&mut rows, rounds, calls, budget))
        .collect();
    let median = |figure: &dyn Fn(&Best) -> f64| spread(&runs, figure).median;

    let variants = ["LightSaber", "Saber", "FireSaber"];
    println!(
        "{:<28} {:<11} {:<7} {:>10} {:>10} {:>11} {:>8}",
        "implementation", "variant", "op", "µs", "/pqcrypto", "/Keccak fl.", "/clean"
    );
    for (r, row) in rows.iter().enumerate() {
        for (v, variant) in variants.iter().enumerate() {
            for (op, op_name) in OPS.iter().enumerate() {
                println!(
                    "{:<28} {:<11} {:<7} {:>10.2} {:>10.2} {:>11.2} {:>8.2}",
                    row.name,
                    variant,
                    op_name,
                    median(&|b| b[r][v][op] / 1000.0),
                    median(&|b| b[r][v][op] / b[pq][v][op]),
                    median(&|b| b[r][v][op] / b[floor][v][op]),
                    median(&|b| b[r][v][op] / b[clean][v][op]),
                );
            }
        }
    }

    // Issue 18: the default backend per instruction-set level against its C counterpart (the
    // AVX2 code for the SIMD levels, the portable code for the portable one) and the floor.
    println!();
    println!(
        "{:<28} {:<11} {:<7} {:>10} {:>10} {:>8} {:>11}",
        "default by level", "variant", "op", "µs", "µs (C)", "/C", "/Keccak fl."
    );
    for (suffix, reference) in [("", pq), (" avx2-only", pq), (" portable", clean)] {
        let name = format!("saber-kem default{suffix}");
        let Some(r) = rows.iter().position(|row| row.name == name) else {
            continue;
        };
        for (v, variant) in variants.iter().enumerate() {
            for (op, op_name) in OPS.iter().enumerate() {
                println!(
                    "{:<28} {:<11} {:<7} {:>10.2} {:>10.2} {:>8.2} {:>11.2}",
                    name,
                    variant,
                    op_name,
                    median(&|b| b[r][v][op] / 1000.0),
                    median(&|b| b[reference][v][op] / 1000.0),
                    median(&|b| b[r][v][op] / b[reference][v][op]),
                    median(&|b| b[r][v][op] / b[floor][v][op]),
                );
            }
        }
    }

    // Issue 18's targets: each cell's ratio with its spread over the repetitions, met or not by
    // its median (every cell reported, as the issue asks).
    let targets = [
        (" avx2-only", "avx2-only / pqcrypto-saber", pq, 0.80),
        (" avx2-only", "avx2-only / Keccak floor", floor, 1.15),
        ("", "default (AVX-512) / pqcrypto-saber", pq, 0.75),
        (" portable", "portable / pqcrypto-saber clean", clean, 0.80),
    ];
    let mut heading = false;
    for (suffix, label, reference, limit) in targets {
        let name = format!("saber-kem default{suffix}");
        let Some(r) = rows.iter().position(|row| row.name == name) else {
            continue;
        };
        if !heading {
            heading = true;
            println!();
            println!(
                "issue 18 targets: ratio, median [lowest-highest] over {repeat} repetition(s); met by the median"
            );
            println!(
                "{:<42} {:<11} {:<23} {:<23} decaps",
                "target", "variant", "keygen", "encaps"
            );
        }
        let target = format!("{label} <= {limit:.2}");
        // `NttAvx512` exists exactly where the default runs its AVX-512 paths (within the cap).
        if suffix.is_empty() && saber_kem::polymul::ntt::NttAvx512::new().is_none() {
            // The AVX-512 target ("no cell slower than today's 0.60-0.75") needs AVX-512.
            println!("{target:<42} not applicable: the default runs no AVX-512 paths here");
            continue;
        }
        for (v, variant) in variants.iter().enumerate() {
            let cells: Vec<String> = (0..3)
                .map(|op| {
                    let ratio = spread(&runs, &|b| b[r][v][op] / b[reference][v][op]);
                    let verdict = if ratio.median <= limit { "met" } else { "NOT" };
                    format!(
                        "{verdict} {:.3} [{:.3}-{:.3}]",
                        ratio.median, ratio.lowest, ratio.highest
                    )
                })
                .collect();
            println!(
                "{target:<42} {variant:<11} {:<23} {:<23} {}",
                cells[0], cells[1], cells[2]
            );
        }
    }

    // Saber+ against round-3 Saber: each `saber-kem+ X` row divided by `saber-kem X`.
    println!();
    println!(
        "{:<24} {:<11} {:<7} {:>10} {:>10} {:>8}",
        "Saber+ / Saber", "variant", "op", "µs (+)", "µs", "ratio"
    );
    for (r, row) in rows.iter().enumerate() {
        let Some(backend) = row.name.strip_prefix("saber-kem+ ") else {
            continue;
        };
        let round3_name = format!("saber-kem {backend}");
        let Some(base) = rows.iter().position(|row| row.name == round3_name) else {
            continue;
        };
        for (v, variant) in variants.iter().enumerate() {
            for (op, op_name) in OPS.iter().enumerate() {
                println!(
                    "{:<24} {:<11} {:<7} {:>10.2} {:>10.2} {:>8.2}",
                    backend,
                    format!("{variant}+"),
                    op_name,
                    median(&|b| b[r][v][op] / 1000.0),
                    median(&|b| b[base][v][op] / 1000.0),
                    median(&|b| b[r][v][op] / b[base][v][op]),
                );
            }
        }
    }

    // Batch throughput against single operations, both with the default backend.
    let (Some(batch), Some(single)) = (
        rows.iter()
            .position(|row| row.name == format!("saber-kem batch{BATCH} default")),
        rows.iter().position(|row| row.name == "saber-kem default"),
    ) else {
        return;
    };
    println!();
    println!(
        "{:<24} {:<11} {:<7} {:>10} {:>10} {:>8}",
        "batch / single", "variant", "op", "µs/op", "µs", "speed-up"
    );
    for (v, variant) in variants.iter().enumerate() {
        for (op, op_name) in OPS.iter().enumerate() {
            println!(
                "{:<24} {:<11} {:<7} {:>10.2} {:>10.2} {:>8.2}",
                format!("batch of {BATCH}"),
                variant,
                op_name,
                median(&|b| b[batch][v][op] / 1000.0),
                median(&|b| b[single][v][op] / 1000.0),
                median(&|b| b[single][v][op] / b[batch][v][op]),
            );
        }
    }
}
