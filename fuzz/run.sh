#!/usr/bin/env bash
# Builds the fuzz targets (fuzz/build.sh) and fuzzes each for SECONDS (default 60) from its
# committed seeds in fuzz/corpus/<target>. New inputs go to build-fuzz/corpus/<target> (the
# committed seeds are never written); a crash, sanitizer report, leak, timeout (> 10 s per
# input) or an input needing more than 2 GiB stops the run, leaves the input in
# build-fuzz/artifacts/ and fails this script. Usage: fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(onnx graph_json tensor_proto)
fuzz/build.sh >/dev/null
mkdir -p build-fuzz/artifacts
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  log="build-fuzz/fuzz_$t.log"
  echo "fuzz_$t: ${seconds}s (log: $log)"
  rc=0
  build-fuzz/fuzz/fuzz_$t "build-fuzz/corpus/$t" "fuzz/corpus/$t" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="build-fuzz/artifacts/$t-" -print_final_stats=1 >"$log" 2>&1 || rc=$?
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|SUMMARY)|ERROR|Test unit written" "$log" || true
  [ "$rc" -eq 0 ] || { echo "fuzz_$t FAILED (exit $rc): see $log and build-fuzz/artifacts/"; exit 1; }
done
