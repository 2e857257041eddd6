#!/usr/bin/env bash
# Regenerates the committed dumps in traces/<example>/ (docs/dumps.md): one small adaptive
# run per example graph in traces/graphs/*.json, with few iterations and --sync-compile so
# the dumps stay small and the session's path is the same on every machine (the times are
# this machine's). Needs a built hotfuse-run (tools/build.sh) and Graphviz's `dot` for the
# SVGs. Usage: tools/make_traces.sh [BUILD_DIR [GRAPH...]]   (default: build, every example)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
graphs=("$@")
[ ${#graphs[@]} -gt 0 ] || graphs=(traces/graphs/*.json)
run=$build/hotfuse-run
[ -x "$run" ] || { echo "make_traces: $run not found; run tools/build.sh first" >&2; exit 2; }
command -v dot >/dev/null || echo "make_traces: dot (Graphviz) is not on PATH: no SVGs" >&2

for graph in "${graphs[@]}"; do
  name=$(basename "$graph" .json)
  out=traces/$name
  # Only the files a dump writes are replaced; stale kernels of an older run are removed.
  rm -f "$out"/{before,after}.{dot,svg} "$out"/trace.json "$out"/report.json "$out"/kernels/hf_*.cpp
  [ -d "$out/kernels" ] && rmdir --ignore-fail-on-non-empty "$out/kernels"
  "$run" "$graph" --iters 3 --warmup 1 --profile-iters 3 --reprofile-iters 3 --sync-compile \
    --dump "$out" --force >/dev/null
  echo "$out: $(du -sk "$out" | cut -f1) kB"
done
du -sh traces
