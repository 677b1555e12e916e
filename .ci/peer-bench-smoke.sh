#!/usr/bin/env bash
# peer-bench (issue 18's rows and its targets table; its own workspace) still builds, lints clean
# and runs: a quick run of the default rows, twice, checked for every row of the targets table.
# A CI machine's figures are not kept: BENCHMARKS.md's come from the commands it gives. Needs a C
# compiler for pqcrypto-saber's build script (installed if missing).
set -euo pipefail
cd "$(dirname "$0")/../peer-bench"

if ! command -v cc >/dev/null 2>&1; then
    echo "peer-bench-smoke.sh: installing a C compiler"
    apt-get update -qq && apt-get install -y -qq gcc libc6-dev >/dev/null
fi

cargo clippy --all-targets -- -D warnings
out=$(cargo run --release --quiet -- --quick --only "saber-kem default" --repeat 2 2>/dev/null)
printf '%s\n' "$out" | sed -n '/^issue 18 targets/,/^$/p'
rows() { grep -c "^$1 <=" <<<"$out" || true; }
for target in "avx2-only / pqcrypto-saber" "avx2-only / Keccak floor" \
    "portable / pqcrypto-saber clean"; do
    if [[ "$(rows "$target")" != 3 ]]; then
        echo "peer-bench-smoke.sh: $(rows "$target") rows of \"$target\", 3 expected" >&2
        exit 1
    fi
done
# The AVX-512 target: a row per set, or one line saying it does not apply on this CPU.
avx512="default (AVX-512) / pqcrypto-saber"
if [[ "$(rows "$avx512")" != 3 ]] && ! grep -q "^$avx512 <= .* not applicable" <<<"$out"; then
    echo "peer-bench-smoke.sh: no verdict for \"$avx512\"" >&2
    exit 1
fi
