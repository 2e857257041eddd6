#!/usr/bin/env bash
# The README's first command: build, then profile the 10-op activation chain example.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh --target hotfuse-run
./build/hotfuse-run traces/graphs/activation_chain.json "$@"
