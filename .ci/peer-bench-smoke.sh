#!/usr/bin/env bash
# peer-bench (issue 18's rows and its targets table; its own workspace) still builds, lints clean
# and runs: a quick run of the default rows, twice, checked for every row of the targets table.
# Its figures are not printed: a `--quick` run's ratios are off by up to 20 % even on a quiet
# machine (BENCHMARKS.md, "Issue 18's targets in one command"), whose figures come from the
# commands it gives. Needs a C compiler for pqcrypto-saber's build script (installed if missing).
set -euo pipefail
"$(dirname "$0")"/need-cc.sh
cd "$(dirname "$0")/../peer-bench"

cargo clippy --all-targets -- -D warnings
out=$(cargo run --release --quiet -- --quick --only "saber-kem default" --repeat 2 2>/dev/null)
fail() {
    printf '%s\n' "$out"
    echo "peer-bench-smoke.sh: $1" >&2
    exit 1
}
rows() { grep -c "^$1 <=" <<<"$out" || true; }
for target in "avx2-only / pqcrypto-saber" "avx2-only / Keccak floor" \
    "portable / pqcrypto-saber clean"; do
    [[ "$(rows "$target")" == 3 ]] || fail "$(rows "$target") rows of \"$target\", 3 expected"
done
# The AVX-512 target: a row per set, or one line saying it does not apply on this CPU.
avx512="default (AVX-512) / pqcrypto-saber"
if [[ "$(rows "$avx512")" != 3 ]] && ! grep -q "^$avx512 <= .* not applicable" <<<"$out"; then
    fail "no verdict for \"$avx512\""
fi
echo "peer-bench-smoke.sh: every row of issue 18's targets table printed (figures not kept)"
