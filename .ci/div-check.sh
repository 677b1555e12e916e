#!/usr/bin/env bash
# No integer division on secret paths where clippy's integer_division_remainder_used cannot
# reach (dependencies, code the compiler generates): disassembles the release build of the
# constant-time test binary, which instantiates every backend and parameter set, and fails on any
# div/idiv in functions of saber_kem, its symmetric primitives (sha3, shake, keccak), subtle, or
# the test's own drivers (which inline library code).
#
#   .ci/div-check.sh              self-test, then check
#   .ci/div-check.sh --self-test  only prove that the scan finds a division in a function compiled
#                                 to have one
set -euo pipefail
cd "$(dirname "$0")/.."

command -v objdump >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq binutils >/dev/null; }

PATTERN='saber_kem|sha3::|shake::|keccak::|subtle::|ct_valgrind::'

# scan BINARY: prints "function<TAB>instruction" for every integer division in a matching
# function, and "#checked N" with the number of matching functions.
scan() {
    objdump -d --no-show-raw-insn -C "$1" | awk -v pat="$PATTERN" '
        /^[0-9a-f]+ <.*>:$/ { fn = $0; sub(/^[0-9a-f]+ /, "", fn); hot = (fn ~ pat); checked += hot; next }
        hot && /:\t(i?div[bwlq]?)[ \t]/ { sub(/^[ \t]+/, ""); print fn "\t" $0 }
        END { print "#checked " checked + 0 }'
}

if [[ "${1:-}" == "--self-test" ]]; then
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    printf '#[inline(never)]\npub fn saber_kem_divides(x: u64, y: u64) -> u64 { x / y }\n' >"$dir/lib.rs"
    rustc -O --edition 2021 --crate-type=lib --emit=obj --crate-name saber_kem_selftest \
        -o "$dir/selftest.o" "$dir/lib.rs"
    found=$(scan "$dir/selftest.o")
    if grep -q $'\tdiv' <<<"$found"; then
        echo "div-check self-test: the division is found:"
        grep -v '^#checked' <<<"$found"
        exit 0
    fi
    echo "div-check self-test FAILED: the scan missed a division" >&2
    exit 1
fi

"$0" --self-test

bin=$(cargo test --release --test ct_valgrind --no-run --message-format=json 2>/dev/null |
    grep -o '"executable":"[^"]*ct_valgrind[^"]*"' | tail -1 | cut -d'"' -f4)
[[ -x "$bin" ]] || { echo "div-check: test binary not built" >&2; exit 1; }

report=$(scan "$bin")
checked=$(grep '^#checked' <<<"$report" | cut -d' ' -f2)
found=$(grep -v '^#checked' <<<"$report" || true)
echo "div-check: $checked functions scanned in $(basename "$bin")"
# Guard against a scan that silently matches nothing (renamed symbols, stripped binary).
symbols=$(objdump -t -C "$bin")
for must in decapsulate keccak; do
    grep -q "$must" <<<"$symbols" || { echo "div-check: no '$must' symbol found" >&2; exit 1; }
done
if (( checked < 50 )); then
    echo "div-check: only $checked functions matched; the scan is broken" >&2
    exit 1
fi
if [[ -n "$found" ]]; then
    echo "div-check: integer division in secret-path code:" >&2
    echo "$found" >&2
    exit 1
fi
echo "div-check: no integer division"
