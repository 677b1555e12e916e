#!/usr/bin/env bash
# Constant-time checks (issues 7 and 17), release profile (the code users run):
# 1. tests/ct_valgrind.rs under Valgrind memcheck ("ctgrind"), with its negative controls:
#    - native level: every case (every backend of the run-time list that Valgrind runs, plain,
#      low-memory and expanded, every parameter set; the batch lanes; the Keccak paths);
#    - SABER_ISA_CAP=portable (on CPUs with AVX2; the same build): the portable packing,
#      unpacking, binomial sampling and Keccak, which the AVX2 code replaces at the native level:
#      every set on the `ntt` backend (the scalar NTT under the cap; plain, low-memory,
#      expanded), the batch lanes, the Keccak paths and the negative controls;
#    - the AVX2 level is not run: Valgrind reports no AVX-512, so the native run under Valgrind
#      is already the AVX2 level (noted as SKIPPED).
# 2. tests/dudect.rs (statistical, for AVX-512 paths that Valgrind cannot run, and the AVX2 and
#    portable ones; negative controls), native level only: it picks every path explicitly.
#    `cargo test --release` runs it too, so `.ci/run` does not run it here.
# `.ci/ct.sh [native|portable|dudect|all]` (default all). Installs valgrind if missing.
# Typical time on 2 cores after the build: native ~40 s, portable ~20 s, dudect ~5 s.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/levels.sh

what="${1:-all}"
if ! command -v valgrind >/dev/null 2>&1; then
    echo "ct.sh: installing valgrind"
    apt-get update -qq && apt-get install -y -qq valgrind >/dev/null
fi
valgrind --version

run_ctgrind() {
    local level="$1"
    shift
    echo "ct.sh: ct_valgrind at level $level"
    summarised "ct_valgrind ($level)" at_level "$level" env SABER_CT_REQUIRE_VALGRIND=1 "$@" \
        cargo test --release --test ct_valgrind
}

if [[ "$what" == all || "$what" == native ]]; then
    run_ctgrind native SABER_CT_FULL=1
fi
if [[ "$what" == all || "$what" == portable ]]; then
    ci_note "SKIPPED: ct_valgrind at saber_isa=avx2 (Valgrind reports no AVX-512: the native run is the AVX2 level)"
    if cpu_flag avx2; then
        run_ctgrind portable SABER_CT_FULL=1 SABER_CT_FILTER="ntt/,batch lanes-,keccak-,negative/"
    else
        ci_note "SKIPPED: ct_valgrind at saber_isa=portable (no AVX2 on this CPU: the native run is the portable level)"
    fi
fi
if [[ "$what" == all || "$what" == dudect ]]; then
    echo "ct.sh: dudect (statistical)"
    summarised "dudect" cargo test --release --test dudect
fi
