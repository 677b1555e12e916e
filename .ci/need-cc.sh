#!/usr/bin/env bash
# A C compiler for pqcrypto-saber's build script (interop/, peer-bench/), installed if missing.
set -euo pipefail
if ! command -v cc >/dev/null 2>&1; then
    echo "need-cc.sh: installing a C compiler"
    apt-get update -qq && apt-get install -y -qq gcc libc6-dev >/dev/null
fi
