#!/usr/bin/env bash
# Fuzz smoke test (issue 7), under 3 minutes on an idle 2-core machine:
# - with a nightly toolchain and cargo-fuzz already installed: builds the cargo-fuzz targets
#   (libFuzzer + AddressSanitizer) and runs each for FUZZ_SECONDS (default 20) after replaying
#   fuzz/regressions/<target>;
# - otherwise: the libFuzzer-free driver on stable (fuzz/src/bin/drive.rs), same inputs. (CI does
#   not install cargo-fuzz: building it and the sanitized crate took longer than the run.)
# Fails on any crash. See fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-20}"
targets=(decapsulate decode polymul_differential)
declare -A max_len=([decapsulate]=5000 [decode]=3100 [polymul_differential]=3100)

if cargo +nightly --version >/dev/null 2>&1 && cargo fuzz --version >/dev/null 2>&1; then
    cargo +nightly fuzz build
    for t in "${targets[@]}"; do
        corpus="fuzz/corpus/$t"
        mkdir -p "$corpus"
        echo "fuzz-smoke: cargo fuzz run $t (${seconds}s)"
        # libFuzzer reads extra input directories after the corpus: the regressions are replayed.
        inputs=("$corpus")
        [[ -d "fuzz/regressions/$t" ]] && inputs+=("fuzz/regressions/$t")
        log=$(mktemp)
        if ! cargo +nightly fuzz run "$t" "${inputs[@]}" -- \
            -max_total_time="$seconds" -max_len="${max_len[$t]}" -rss_limit_mb=4096 \
            -print_final_stats=1 >"$log" 2>&1; then
            tail -80 "$log"
            echo "fuzz-smoke: $t FAILED" >&2
            exit 1
        fi
        grep -E "stat::number_of_executed_units" "$log"
        rm -f "$log"
    done
else
    echo "fuzz-smoke: no nightly toolchain with cargo-fuzz; using the libFuzzer-free driver on stable"
    cargo build --release --manifest-path fuzz/Cargo.toml --no-default-features --bin drive
    for t in "${targets[@]}"; do
        fuzz/target/release/drive "$t" --seconds "$seconds" "fuzz/regressions/$t"
    done
fi
echo "fuzz-smoke: no crash"
