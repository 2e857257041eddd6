#!/usr/bin/env bash
# The README's second command: build everything, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
