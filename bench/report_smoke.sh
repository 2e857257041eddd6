#!/usr/bin/env bash
# CTest smoke test of bench/report_all.py (the tables of bench/run_all.sh): a tiny run laid
# out as run_all.sh lays it out -- hotfuse-run on two examples at 2^15, 1 and 2 threads,
# off/static/all/adaptive reports, a fake machine.txt, no peers, no jit_bench, no models --
# must give all four parts, the hotfuse cells filled and every missing peer "n/a".
# No network, a few seconds.   bench/report_smoke.sh HOTFUSE_RUN WORKDIR
set -euo pipefail
run=$1 dir=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$dir" && mkdir -p "$dir/examples"
export HOTFUSE_CACHE_DIR=$dir/kernel-cache
python3 "$here/../tools/make_examples.py" "$dir/examples/graphs15" --log2 15 >/dev/null
printf 'date: 2026-01-01T00:00:00Z\nmodel: test\ncpus: 2\nuptime_start: x\nquick: 1\n' >"$dir/machine.txt"
for name in abc layernorm; do
  for t in 1 2; do
    for level in static all adaptive; do
      extra=()
      [ $level = adaptive ] && extra=(--sync-compile)
      "$run" "$dir/examples/graphs15/$name.json" --threads $t --iters 2 --warmup 0 \
        --fusion $level "${extra[@]}" --report "$dir/examples/hf_${name}_15_T${t}_$level.json" >/dev/null
    done
  done
done
python3 "$here/report_all.py" "$dir" >"$dir/tables.md"
fail=0
for want in '### 1. ' '### 2. ' '### 3. ' '### 4. ' '| a\*b\*c | 2^15 | 1 | [0-9.]* | 100% |' \
    '| LayerNorm rows of 1024 | 2^15 | 2 | [0-9.]* | [0-9.]* | n/a ' '| layernorm | 2^15 | 9 -> 1 / '; do
  grep -q -- "$want" "$dir/tables.md" || { echo "report_smoke: no line matching '$want'" >&2; fail=1; }
done
[ $fail = 0 ] || { cat "$dir/tables.md" >&2; exit 1; }
echo "report_smoke: 4 tables, $(grep -c '^|' "$dir/tables.md") table lines"
