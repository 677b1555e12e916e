//! Times the kernels of the KEM operations, interleaved in rounds (minimum over rounds of the
//! median per round), in ns: one Keccak-f\[1600\] permutation of every single-state
//! implementation and of every multi-way one this CPU runs, one SHAKE128 stream of Saber's matrix
//! (3744 bytes) per single-state implementation, one Saber decapsulation's and one key
//! generation's lane jobs on each multi-way permutation (all on the lanes, and as the operations
//! run them: `run_or_one_at_a_time`, the last job left on the fastest single state) and one after
//! the other, the three NTT steps (`prepare`, `mul_acc`, `finish`) of each NTT path this CPU
//! runs, and what those jobs cost beyond their permutations (as run on the operations' four-way
//! permutation, and one after the other on the fastest single state: "rest" lines):
//!
//! ```sh
//! cargo run --release --manifest-path peer-bench/Cargo.toml --bin kernels
//! ```

use std::hint::black_box;
use std::time::Instant;

use saber_kem::PolyMul;
use saber_kem::hazmat::keccak::{Job, Multi, Single};
use saber_kem::polymul::ntt::NttAvx512;
use saber_kem::polymul::{NttAvx2, NttScalar, Poly, SecretPoly};

/// Median ns per call of `f(times)`, which runs `times` operations.
fn per_call(mut f: impl FnMut(usize), times: usize) -> f64 {
    let mut samples: Vec<f64> = (0..31)
        .map(|_| {
            let t = Instant::now();
            f(times);
            t.elapsed().as_nanos() as f64 / times as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() >> 1]
}

/// ns of `prepare`, `mul_acc` and `finish` of `backend` (`times` calls each); `finish` is
/// `finish_into`, as the KEM calls it (the accumulator wiped after it).
fn ntt_steps<B: PolyMul>(mut backend: B, times: usize) -> [f64; 3] {
    let mut a = Poly::ZERO;
    let mut s = SecretPoly::ZERO;
    for (i, (a, s)) in a.coeffs.iter_mut().zip(s.coeffs.iter_mut()).enumerate() {
        *a = (i as u16).wrapping_mul(0x9E37) & 0x1FFF;
        *s = (i as i8 % 11) - 5;
    }
    let prepared = backend.prepare(&s);
    let mut acc = backend.accumulator();
    [
        per_call(
            |n| {
                for _ in 0..n {
                    black_box(backend.prepare(black_box(&s)));
                }
            },
            times,
        ),
        per_call(
            |n| {
                for _ in 0..n {
                    backend.mul_acc(&mut acc, black_box(&a), &prepared);
                }
            },
            times,
        ),
        per_call(
            |n| {
                let mut out = Poly::ZERO;
                for _ in 0..n {
                    backend.finish_into(black_box(&mut acc), &mut out);
                    black_box(&mut out);
                }
            },
            times,
        ),
    ]
}

/// How [`saber_jobs`] runs its jobs.
#[derive(Clone, Copy)]
enum Schedule {
    /// All on the lanes of a multi-way permutation.
    Lanes(Multi),
    /// As the KEM operations run them (`run_or_one_at_a_time`).
    Operation(Multi),
    /// One after the other on one state.
    OneAfterTheOther,
}

/// The lane jobs (`keccak::lanes`) of one Saber decapsulation (SHAKE128 of the matrix, 3744
/// bytes, and of the secret, 768 bytes; SHA3-256 of a ciphertext, 1088 bytes) or, without
/// `ct_hash`, of one key generation (the two streams), run by `schedule` (`single`: the
/// single-state permutation).
fn saber_jobs(ct_hash: bool, schedule: Schedule, single: Single) {
    let (seed, ct) = (black_box([3u8; 32]), black_box([5u8; 1088]));
    let (mut matrix, mut secret, mut digest) = ([0u8; 3744], [0u8; 768], [0u8; 32]);
    let jobs = [
        Some(Job::shake128(&seed, &mut matrix)),
        Some(Job::shake128(&seed, &mut secret)),
        ct_hash.then(|| Job::sha3_256(&ct, &mut digest)),
    ]
    .into_iter()
    .flatten();
    match schedule {
        Schedule::Lanes(multi) => multi.run(jobs),
        Schedule::Operation(multi) => multi.run_or_one_at_a_time(single, jobs),
        Schedule::OneAfterTheOther => jobs.for_each(|job| single.run(job)),
    }
    black_box((&matrix, &secret, &digest));
}

/// The operations whose jobs [`saber_jobs`] runs.
const JOB_SETS: [(&str, bool); 2] = [("decapsulation", true), ("key generation", false)];

/// The permutations of [`JOB_SETS`]' jobs (decapsulation: matrix 23, secret 5, H(ct) 9; key
/// generation: matrix 23, secret 5): (four-way steps, single ones) as `run_or_one_at_a_time`
/// schedules them where lanes cost more than one single permutation (AVX2: all lanes until one
/// job is left, which finishes on the single state; `keccak::lanes` tests the schedule), and
/// their sum one after the other. Where lanes cost one (AVX-512), all run on the lanes: as many
/// steps as the longest job, the matrix (the four-way steps and single ones above together).
const JOB_PERMUTATIONS: [((usize, usize), usize); 2] = [((9, 14), 37), ((5, 18), 28)];

/// What running [`JOB_SETS`]' jobs costs beyond their permutations (the sponge's byte handling,
/// and for the lanes the runner's own work): each operation's jobs as run on `multi` and one after
/// the other on `single`, each beside the same permutations alone (as `Multi::permute` and
/// `Single::permute` run them, which convert the states into and out of their layouts once per
/// call: that cost is printed too), interleaved in rounds (the fastest of 300 batches of ten
/// calls), in ns.
fn jobs_beside_permutations(multi: Multi, single: Single) {
    /// The fastest of many short batches: a difference of two times needs each near its floor,
    /// which a busy machine's medians are not.
    fn fastest(best: &mut f64, mut f: impl FnMut()) {
        let t = Instant::now();
        (0..10).for_each(|_| f());
        *best = best.min(t.elapsed().as_nanos() as f64 / 10.0);
    }
    let all_on_lanes = Multi::x4_at_single_cost().is_some();
    let schedule = JOB_PERMUTATIONS.map(|((steps, tail), all)| {
        if all_on_lanes {
            ((steps + tail, 0), all)
        } else {
            ((steps, tail), all)
        }
    });
    let (mut states, mut state) = ([[7u64; 25]; 8], [7u64; 25]);
    let (mut best, mut converting) = ([[f64::MAX; 4]; 2], f64::MAX);
    for _ in 0..300 {
        // What `permute` adds to the permutations: the states into and out of the lanes' layout
        // (and the single state's), with no permutation.
        fastest(&mut converting, || {
            multi.permute(black_box(&mut states), 0);
            single.permute(black_box(&mut state), 0);
        });
        for ((best, (_, ct_hash)), ((steps, tail), all)) in
            best.iter_mut().zip(JOB_SETS).zip(schedule)
        {
            fastest(&mut best[0], || {
                saber_jobs(ct_hash, Schedule::Operation(multi), single)
            });
            fastest(&mut best[1], || {
                multi.permute(black_box(&mut states), steps);
                single.permute(black_box(&mut state), tail);
            });
            fastest(&mut best[2], || {
                saber_jobs(ct_hash, Schedule::OneAfterTheOther, single)
            });
            fastest(&mut best[3], || single.permute(black_box(&mut state), all));
        }
    }
    for ((t, (operation, _)), ((steps, tail), all)) in best.iter().zip(JOB_SETS).zip(schedule) {
        println!(
            "rest   {:<12} Saber {operation}'s jobs as run {:>8.1} ns, their {steps} four-way and {tail} single permutations alone {:>8.1} ns (of which {:.1} ns converting the states): {:>6.1} ns more",
            multi.name(),
            t[0],
            t[1],
            converting,
            t[0] - t[1]
        );
        println!(
            "rest   {:<12} Saber {operation}'s jobs one after the other {:>8.1} ns, their {all} permutations alone {:>8.1} ns: {:>6.1} ns more",
            single.name(),
            t[2],
            t[3],
            t[2] - t[3]
        );
    }
}

fn main() {
    let singles: Vec<Single> = Single::all().collect();
    let multis: Vec<Multi> = Multi::all().collect();
    let avx2 = NttAvx2::new();
    let avx512 = NttAvx512::new();
    let mut ntt = [[f64::MAX; 3]; 3];
    let mut best = vec![f64::MAX; 2 * singles.len() + 5 * multis.len() + 2];
    for _ in 0..15 {
        for (path, steps) in ntt.iter_mut().enumerate() {
            let t = match path {
                0 => ntt_steps(NttScalar, 20),
                1 => match avx2 {
                    Some(backend) => ntt_steps(backend, 100),
                    None => continue,
                },
                _ => match avx512 {
                    Some(backend) => ntt_steps(backend, 100),
                    None => continue,
                },
            };
            for (best, t) in steps.iter_mut().zip(t) {
                *best = best.min(t);
            }
        }
        let mut k = 0;
        for &single in &singles {
            let mut state = [7u64; 25];
            let t = per_call(|n| single.permute(black_box(&mut state), n), 200);
            best[k] = best[k].min(t);
            k += 1;
            let mut out = [0u8; 3744];
            let t = per_call(
                |n| {
                    for _ in 0..n {
                        single.shake128(&[black_box(&[1u8; 32])]).read(&mut out);
                        black_box(&out);
                    }
                },
                10,
            );
            best[k] = best[k].min(t);
            k += 1;
        }
        for &multi in &multis {
            let mut states = [[7u64; 25]; 8];
            let t = per_call(|n| multi.permute(black_box(&mut states), n), 100);
            best[k] = best[k].min(t);
            k += 1;
            for (_, ct_hash) in JOB_SETS {
                for schedule in [Schedule::Lanes(multi), Schedule::Operation(multi)] {
                    let t = per_call(
                        |n| (0..n).for_each(|_| saber_jobs(ct_hash, schedule, Single::fastest())),
                        10,
                    );
                    best[k] = best[k].min(t);
                    k += 1;
                }
            }
        }
        for (_, ct_hash) in JOB_SETS {
            let t = per_call(
                |n| {
                    (0..n).for_each(|_| {
                        saber_jobs(ct_hash, Schedule::OneAfterTheOther, Single::fastest())
                    })
                },
                10,
            );
            best[k] = best[k].min(t);
            k += 1;
        }
    }
    let mut k = 0;
    for single in &singles {
        println!(
            "single {:<12} permutation {:>8.1} ns",
            single.name(),
            best[k]
        );
        println!(
            "single {:<12} SHAKE128 A  {:>8.1} ns",
            single.name(),
            best[k + 1]
        );
        k += 2;
    }
    for multi in &multis {
        println!(
            "multi  {:<12} permutation {:>8.1} ns ({} states)",
            multi.name(),
            best[k],
            multi.ways()
        );
        k += 1;
        for (operation, _) in JOB_SETS {
            println!(
                "multi  {:<12} Saber {operation}'s jobs {:>8.1} ns all on lanes, {:>8.1} ns as run",
                multi.name(),
                best[k],
                best[k + 1]
            );
            k += 2;
        }
    }
    for (operation, _) in JOB_SETS {
        println!(
            "single {:<12} Saber {operation}'s jobs {:>8.1} ns (one after the other)",
            Single::fastest().name(),
            best[k]
        );
        k += 1;
    }
    for (name, steps) in ["ntt-scalar", "ntt-avx2", "ntt-avx512"].iter().zip(ntt) {
        if steps[0] < f64::MAX {
            println!(
                "{name:<19} prepare {:>7.1} ns  mul_acc {:>7.1} ns  finish {:>7.1} ns",
                steps[0], steps[1], steps[2]
            );
        }
    }
    if let Some(multi) = Multi::x4_for_operation() {
        jobs_beside_permutations(multi, Single::fastest());
    }
}
