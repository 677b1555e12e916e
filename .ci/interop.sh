#!/usr/bin/env bash
# Interoperability with the C implementation in pqcrypto-saber 0.1.11 (issue 7): interop/, its own
# workspace. Needs a C compiler for pqcrypto-saber's build script (installed if missing).
# SABER_INTEROP_ROUNDS (default here 200) sets the rounds per parameter set, direction and backend.
set -euo pipefail
"$(dirname "$0")"/need-cc.sh
cd "$(dirname "$0")/../interop"

SABER_INTEROP_ROUNDS="${SABER_INTEROP_ROUNDS:-200}" cargo test
