#!/usr/bin/env bash
# Sourced by .ci/run and .ci/ct.sh: the x86 instruction-set levels this machine runs (issue 17)
# and the environment of each, and the CI summary file.
#
# Levels: `native` (no cap: AVX-512 where the CPU has it), `avx2` and `portable`. A level is run
# only where it differs from the one above it: `avx2` needs a CPU with AVX-512 F and BW (elsewhere
# it is the native level), `portable` a CPU with AVX2. A level that is not run is noted as SKIPPED
# in the output and in the summary. A capped level runs the native build with
# `SABER_ISA_CAP=<level>` in the environment (the library's run-time bound, `src/cpu.rs`): a
# build per level (`--cfg saber_isa`) doubled the time of CI; `.ci/run` type-checks those builds.

# The summary of the whole CI run: one line per skip, failure or backend-list line.
CI_SUMMARY="${CI_SUMMARY:-$(mktemp)}"
export CI_SUMMARY

# Appends a line to the summary and prints it, framed when it reports a skip.
ci_note() {
    echo "$*" >>"$CI_SUMMARY"
    [[ -n "${GITHUB_STEP_SUMMARY:-}" ]] && echo "$*" >>"$GITHUB_STEP_SUMMARY"
    case "$*" in
        SKIPPED*) printf '########## %s ##########\n' "$*" ;;
        *) echo "$*" ;;
    esac
}

cpu_flag() { grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | grep -qw "$1"; }

# The levels to run, in order; notes the skipped ones.
isa_levels() {
    local levels=(native)
    if cpu_flag avx512f && cpu_flag avx512bw; then
        levels+=(avx2)
    else
        ci_note "SKIPPED: $1 at saber_isa=avx2 (no AVX-512 on this CPU: the native level is the AVX2 level)" >&2
    fi
    if cpu_flag avx2; then
        levels+=(portable)
    else
        ci_note "SKIPPED: $1 at saber_isa=portable (no AVX2 on this CPU: the native level is the portable level)" >&2
    fi
    echo "${levels[@]}"
}

# Runs "$@" at level $1 (the instruction-set cap in the environment).
at_level() {
    local level="$1"
    shift
    if [[ "$level" == native ]]; then
        "$@"
    else
        SABER_ISA_CAP="$level" "$@"
    fi
}

# Runs "$@" with its output (stdout and stderr) also kept, then adds its summary lines
# (`backends run: …`, `dudect run: …`, `ct_valgrind: … passed`) to the CI summary, labelled $1.
summarised() {
    local label="$1" log status
    shift
    log=$(mktemp)
    set +e
    "$@" 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    set -e
    # (`|| true`: a suite may print none of these lines, and grep's status would end the run.)
    { grep -E '^(backends run:|dudect run:|ct_valgrind: [0-9]+ passed|ct_valgrind: instruction-set cap|dudect: [0-9]+ failed)' "$log" || true; } |
        sort | uniq -c | sed -E "s/^ *([0-9]+) (.*)/$label: \2 (x\1)/" >>"$CI_SUMMARY"
    # cargo test's result lines, added up.
    { grep -E '^test result:' "$log" || true; } | awk -v label="$label" '
        { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1); if ($(i) ~ /^ignored;?$/) g += $(i-1) } n++ }
        END { if (n) printf "%s: %d test binaries: %d passed, %d failed, %d ignored\n", label, n, p, f, g }' >>"$CI_SUMMARY"
    rm -f "$log"
    if [[ $status -ne 0 ]]; then
        echo "FAILED: $label (exit $status)" >>"$CI_SUMMARY"
    fi
    return "$status"
}

# Prints the summary (at the end of .ci/run), closing with the tests' totals; $1: exit status.
ci_summary() {
    local status="$1"
    printf '\n=== summary ===\n'
    cat "$CI_SUMMARY"
    [[ "$status" -eq 0 ]] || echo "FAILED: CI (exit $status)"
    awk '/test binaries: [0-9]+ passed, [0-9]+ failed/ {
            for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed,$/) p += $(i-1); if ($(i) ~ /^failed,$/) f += $(i-1) } }
        END { printf "tests: %d passed, %d failed\n", p, f }' "$CI_SUMMARY"
}
