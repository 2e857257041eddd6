#!/usr/bin/env bash
# The README's first command: build, then run the adaptive launcher on the 10-op activation
# chain example and dump what it did into build/demo/ (before/after DOT and SVG, trace.json
# for Perfetto, report.json, kernels/). build/demo/ is the demo's own folder: each run
# replaces the dump's files there (--force).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh --target hotfuse-run
./build/hotfuse-run traces/graphs/activation_chain.json --dump build/demo --force "$@"
echo "demo: dump in build/demo/ (open build/demo/after.svg, load build/demo/trace.json in ui.perfetto.dev, or view it with build/hotfuse-view build/demo after tools/build.sh)"
