#!/usr/bin/env bash
# End-to-end benchmark of the example workloads, hotfuse and its peers in ONE run:
#   hotfuse-run --fusion off / static / all / adaptive   (median iteration times, --report)
#   the peers' hand-fused C++ loops (strict and -ffast-math) and STREAM (../shared/bench/peers)
# at 2^20 and 2^24 float32 elements, 1 and 2 threads. Prints a markdown table (the source of
# bench/RESULTS.md). Usage: bench/run_examples.sh [OUTDIR]   (default build/bench)
# Environment: HF_BENCH_SIZES (log2 sizes, default "20 24"), HF_BENCH_ITERS (timed
# iterations per hotfuse-run, default 15) -- bench/run_all.sh's quick mode lowers them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/bench}
peers=$root/../shared/bench/peers
sizes=${HF_BENCH_SIZES:-20 24}
iters=${HF_BENCH_ITERS:-15}
mkdir -p "$out"
"$root/tools/build.sh" --target hotfuse-run >/dev/null
export HOTFUSE_CACHE_DIR="$out/kernel-cache"

# Peers, built exactly as their run.sh does.
if [ -d "$peers" ]; then
  rm -rf "$out/peers" && cp -r "$peers" "$out/peers" && mkdir -p "$out/peers/build"
  (cd "$out/peers" &&
    g++ -O3 -march=native -fopenmp stream.cpp -o build/stream &&
    g++ -O3 -march=native -fopenmp -fPIC -shared fused.cpp -o build/fused_strict.so &&
    g++ -O3 -march=native -fopenmp -ffast-math -fPIC -shared fused.cpp -o build/fused_fast.so)
  "$out/peers/build/stream" 1 2 >"$out/stream.txt" 2>/dev/null
  /usr/bin/python3 "$out/peers/peers.py" --group cpp --sizes "${sizes// /,}" --out "$out/cpp.json" \
    2>"$out/cpp.log"
else
  echo "run_examples: $peers not found; peers are left out" >&2
fi

for log2 in $sizes; do
  python3 "$root/tools/make_examples.py" "$out/graphs$log2" --log2 $log2 >/dev/null
  for t in 1 2; do
    for g in "$out/graphs$log2"/*.json; do
      name=$(basename "$g" .json)
      for level in static all; do
        "$root/build/hotfuse-run" "$g" --threads $t --iters $iters --warmup 2 --fusion $level \
          --report "$out/hf_${name}_${log2}_T${t}_${level}.json" >/dev/null
      done
      # Adaptive with its defaults, except compiles are waited for (kernels are cached by
      # the `all` run above anyway), so the steady state is what gets timed.
      "$root/build/hotfuse-run" "$g" --threads $t --iters $iters --warmup 2 --fusion adaptive \
        --sync-compile --report "$out/hf_${name}_${log2}_T${t}_adaptive.json" >/dev/null
    done
  done
done
python3 "$root/bench/report_examples.py" "$out"
