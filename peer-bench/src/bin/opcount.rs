//! Runs one KEM operation many times, for instruction counting under callgrind:
//!
//! ```sh
//! cargo build --release --manifest-path peer-bench/Cargo.toml --bin opcount
//! valgrind --tool=callgrind --toggle-collect='*measured*' \
//!     peer-bench/target/release/opcount saber decaps default 100
//! ```
//!
//! `SABER_ISA_CAP=avx2` (or `portable`) in the environment runs the level of peer-bench's
//! `default avx2-only` (`default portable`) rows on a CPU that has more.
//!
//! Only the calls inside `measured` are counted (key generation and encapsulation of the inputs
//! are not), so the callgrind total divided by the count is the cost of one operation.
//! Arguments: variant (`light`, `saber`, `fire`; the other sets as `saber-90s`, `usaber`,
//! `usaber-90s`, `saber+` and likewise for `light` and `fire`), operation (`keygen`, `encaps`, `decaps`),
//! backend (`default`, `nomul`, `toom`, `ntt-scalar`, `expanded-nomul`, `expanded-toom`,
//! `expanded-default`;
//! the `expanded-` ones encapsulate and decapsulate through expanded keys), count.

use std::convert::Infallible;
use std::hint::black_box;

use rand_core::{TryCryptoRng, TryRng};
use saber_kem::polymul::{NttScalar, ToomCook};
use saber_kem::{
    DefaultPolyMul, ExpandedDecapsulationKey, FireSaber, LightSaber, ParameterSet, PolyMul,
    PolyMulPublic, Saber, SaberKem, Variant,
};

#[path = "../no_multiplication.rs"]
mod no_multiplication;
use no_multiplication::NoMultiplication;

/// splitmix64, as in the table.
struct CountRng(u64);

impl TryRng for CountRng {
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

impl TryCryptoRng for CountRng {}

/// The counted region: `count` calls of `op`.
#[inline(never)]
fn measured(count: usize, mut op: impl FnMut()) {
    for _ in 0..count {
        op();
    }
}

fn run<V: Variant, B: PolyMul, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    op: &str,
    count: usize,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let mut rng = CountRng(1);
    let Ok((dk, ek)) = SaberKem::<V, L, MU, ET>::try_generate_with(backend, &mut rng);
    let Ok((ct, _)) = ek.try_encapsulate_with(backend, &mut rng);
    match op {
        "keygen" => measured(count, || {
            black_box(SaberKem::<V, L, MU, ET>::try_generate_with(backend, &mut rng).ok());
        }),
        "encaps" => measured(count, || {
            black_box(ek.try_encapsulate_with(backend, &mut rng).ok());
        }),
        "decaps" => measured(count, || {
            black_box(dk.decapsulate_with(backend, black_box(&ct)));
        }),
        _ => panic!("operation: keygen, encaps or decaps"),
    }
}

fn run_expanded<V: Variant, B: PolyMulPublic, const L: usize, const MU: usize, const ET: usize>(
    backend: &mut B,
    op: &str,
    count: usize,
) where
    SaberKem<V, L, MU, ET>: ParameterSet,
{
    let mut rng = CountRng(1);
    let Ok((dk, _)) = SaberKem::<V, L, MU, ET>::try_generate_with(backend, &mut rng);
    let expanded = ExpandedDecapsulationKey::new(backend, &dk);
    let ek = expanded.expanded_encapsulation_key();
    let Ok((ct, _)) = ek.try_encapsulate(backend, &mut rng);
    match op {
        "encaps" => measured(count, || {
            black_box(ek.try_encapsulate(backend, &mut rng).ok());
        }),
        "decaps" => measured(count, || {
            black_box(expanded.decapsulate(backend, black_box(&ct)));
        }),
        _ => panic!("expanded operation: encaps or decaps"),
    }
}

macro_rules! per_variant {
    ($run:ident, $variant:expr, $backend:expr, $op:expr, $count:expr) => {
        match $variant {
            "light" => $run::<saber_kem::Round3, _, 2, 10, 3>($backend, $op, $count),
            "saber" => $run::<saber_kem::Round3, _, 3, 8, 4>($backend, $op, $count),
            "fire" => $run::<saber_kem::Round3, _, 4, 6, 6>($backend, $op, $count),
            "light-90s" => $run::<saber_kem::Nineties, _, 2, 10, 3>($backend, $op, $count),
            "saber-90s" => $run::<saber_kem::Nineties, _, 3, 8, 4>($backend, $op, $count),
            "fire-90s" => $run::<saber_kem::Nineties, _, 4, 6, 6>($backend, $op, $count),
            "ulight" => $run::<saber_kem::Uniform, _, 2, 10, 3>($backend, $op, $count),
            "usaber" => $run::<saber_kem::Uniform, _, 3, 8, 4>($backend, $op, $count),
            "ufire" => $run::<saber_kem::Uniform, _, 4, 6, 6>($backend, $op, $count),
            "ulight-90s" => $run::<saber_kem::UniformNineties, _, 2, 10, 3>($backend, $op, $count),
            "usaber-90s" => $run::<saber_kem::UniformNineties, _, 3, 8, 4>($backend, $op, $count),
            "ufire-90s" => $run::<saber_kem::UniformNineties, _, 4, 6, 6>($backend, $op, $count),
            "light+" => $run::<saber_kem::Plus, _, 2, 10, 3>($backend, $op, $count),
            "saber+" => $run::<saber_kem::Plus, _, 3, 8, 4>($backend, $op, $count),
            "fire+" => $run::<saber_kem::Plus, _, 4, 6, 6>($backend, $op, $count),
            _ => panic!("variant: light, saber, fire, each with -90s, u…, u…-90s or +"),
        }
    };
}

fn main() {
    // The aliases must stay the instances run above.
    let _: [SaberKem<saber_kem::Round3, 2, 10, 3>; 0] = [] as [LightSaber; 0];
    let _: [SaberKem<saber_kem::Round3, 3, 8, 4>; 0] = [] as [Saber; 0];
    let _: [SaberKem<saber_kem::Round3, 4, 6, 6>; 0] = [] as [FireSaber; 0];
    let args: Vec<String> = std::env::args().collect();
    let [_, variant, op, backend, count] = &args[..] else {
        panic!(
            "usage: opcount <light|saber|fire[-90s]|u…|…+> <keygen|encaps|decaps> <backend> <count>"
        );
    };
    let count: usize = count.parse().expect("count");
    let (variant, op) = (variant.as_str(), op.as_str());
    match backend.as_str() {
        "default" => per_variant!(run, variant, &mut DefaultPolyMul::default(), op, count),
        "nomul" => per_variant!(run, variant, &mut NoMultiplication, op, count),
        "toom" => per_variant!(run, variant, &mut ToomCook, op, count),
        "ntt-scalar" => per_variant!(run, variant, &mut NttScalar, op, count),
        "expanded-nomul" => per_variant!(run_expanded, variant, &mut NoMultiplication, op, count),
        "expanded-toom" => per_variant!(run_expanded, variant, &mut ToomCook, op, count),
        "expanded-default" => per_variant!(
            run_expanded,
            variant,
            &mut DefaultPolyMul::default(),
            op,
            count
        ),
        other => panic!("unknown backend {other}"),
    }
}
