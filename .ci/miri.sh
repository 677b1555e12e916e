#!/usr/bin/env bash
# Miri (issue 7): the library's light unit tests and tests/ct_secrets.rs (the test that uses `unsafe`,
# reading the memory of dropped secrets) under Miri's undefined-behaviour checks. Outside the
# x86 SIMD modules and the MMIO wrapper (`src/hw/volatile.rs`) the library has no `unsafe`
# (`unsafe_code` is denied); Miri runs without AVX2/AVX-512, so their runtime detection picks the
# portable code, and the SIMD paths are checked against it by the ordinary unit tests instead.
#
# Needs the nightly toolchain with the `miri` and `rust-src` components. This script does not
# download toolchain components (only package registries are reachable from CI machines by
# design). Where they are missing it prints a framed line starting with "SKIPPED: miri" (also
# added to the summary .ci/run prints at its end, and to $GITHUB_STEP_SUMMARY when that is set)
# and exits 0, or fails with MIRI_REQUIRED=1 ("FAILED: miri …").
# On a machine with them: ~1 min for the Miri sysroot, then a few minutes of tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/levels.sh # ci_note: the line also goes to the CI summary

if ! cargo +nightly miri --version >/dev/null 2>&1 ||
    ! rustup +nightly component list --installed 2>/dev/null | grep -q '^rust-src'; then
    reason="nightly with the miri and rust-src components is not installed"
    hint="rustup component add miri rust-src --toolchain nightly"
    if [[ "${MIRI_REQUIRED:-0}" == 1 ]]; then
        ci_note "FAILED: miri ($reason; MIRI_REQUIRED=1; $hint)" >&2
        exit 1
    fi
    # Framed so that it stands out in a CI log (and in the summary); nothing was checked.
    ci_note "SKIPPED: miri ($reason; $hint)"
    exit 0
fi
cargo +nightly miri --version
cargo +nightly miri setup
# Unit tests of the modules without heavy arithmetic (a multiplication backend's tests run
# hundreds of 256-coefficient products: hours under Miri). A module that gains `unsafe` code
# (other than SIMD) must be added to this list.
cargo +nightly miri test --lib -- ct:: encoding:: pke:: sampling::
cargo +nightly miri test --test ct_secrets
