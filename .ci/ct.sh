#!/usr/bin/env bash
# Constant-time check (issue 7): tests/ct_valgrind.rs under Valgrind memcheck, every backend and
# parameter set, plus its negative controls, in the release profile (the code users run).
# Installs valgrind if missing. Typical time: ~1 min of Valgrind per backend, after the build.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null 2>&1; then
    echo "ct.sh: installing valgrind"
    apt-get update -qq && apt-get install -y -qq valgrind >/dev/null
fi
valgrind --version

SABER_CT_REQUIRE_VALGRIND=1 SABER_CT_FULL=1 cargo test --release --test ct_valgrind
