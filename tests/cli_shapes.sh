#!/usr/bin/env bash
# Symbolic input dimensions (docs/onnx.md, "Input shapes"), on a model whose batch is
# symbolic (tests/make_batch_model.py): --check with data sets at batch 1, 4 and 16 plans
# each batch size and compiles nothing after the first (each run with an empty kernel
# cache: nothing comes from an earlier process); --shape and --inputs size the batch of a
# plain run; --shape naming the input again runs batch 1, 4 and 16 in one process through
# one ShapeSessions, compiling nothing after the first, and report.json's `shapes` says
# so; a misspelt, wrongly ranked, conflicting or repeated --shape, a missing size, several
# shapes with --inputs and --shape on a JSON graph are exit code 2 with one line saying which.
# Usage: cli_shapes.sh HOTFUSE_RUN REPO_ROOT (exit 77: no python3-onnx, skipped)
set -u
run=$1 root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 "$root/tests/make_batch_model.py" "$tmp/m" || exit $?
export HOTFUSE_CACHE_DIR="$tmp/cache"  # empty: the first batch size compiles
source "$(dirname "$0")/expect_run.sh"
m="$tmp/m/model.onnx"
for k in 1 2 3; do
  compiled='0, from the cache [1-9]'
  [ $k = 1 ] && compiled='[1-9]'
  HOTFUSE_CACHE_DIR="$tmp/cache-check-$k" check 0 \
    "^input shapes $k of 3 \(x \[[0-9]+,64\]\): kernels compiled $compiled" \
    --check "$tmp/m" --fusion all --threads 1 --backend cpu
done
# Batch 1, 4 and 16 in one plain run, then batch 1 again on its kept plan.
export HOTFUSE_CACHE_DIR="$tmp/cache-run"
sizes=(--shape x=1x64 --shape x=4x64 --shape x=16x64)
check 0 "^  x \[4,64\]: [0-9]+ iterations, kernels compiled 0, from the cache 1," \
  "$m" "${sizes[@]}" --fusion all --iters 3 --threads 1 --report "$tmp/shapes.json"
/usr/bin/python3 - "$tmp/shapes.json" <<'PY' || failures=$((failures + 1))
import json, sys
s = json.load(open(sys.argv[1]))["shapes"]["signatures"]
got = [(x["inputs"]["x"][0], x["kernels_compiled"], x["cache_hits"], x["sessions"], x["plan_kept"])
       for x in s]
want = [(1, 1, 0, 1, True), (4, 0, 1, 1, True), (16, 0, 1, 1, True)]
print("report shapes:", got)
sys.exit(0 if got == want and s[0]["iterations"] > s[1]["iterations"] else 1)
PY
check 0 "^nothing fused: kernels 5 -> 5" "$m" "${sizes[@]}" --fusion off --iters 2 --threads 1
check 2 "--inputs gives one set of inputs; with 2 sets of --shape the inputs are random" \
  "$m" --shape x=1x64 --shape x=4x64 --inputs "$tmp/m/test_data_set_2" --fusion off
check 0 "^3 of 3 data sets passed" --check "$tmp/m" --fusion all --threads 1
check 0 "^3 of 3 data sets passed" --check "$tmp/m" --fusion off
check 0 "ms per iteration" "$m" --shape x=4x64 --fusion all --iters 2 --threads 1
check 0 "ms per iteration" "$m" --inputs "$tmp/m/test_data_set_2" --fusion all --iters 2 --threads 1
check 2 "input 'x': dimension 0 is symbolic \('batch'\) and no size is given" "$m" --fusion off
check 2 "a shape is given for 'z', which is not an input of the model \(its inputs: 'x'\)" \
  "$m" --shape z=4x64 --fusion off
check 2 "input 'x' has rank 2; the shape given for it, \[4\], has rank 1" "$m" --shape x=4 --fusion off
check 2 "--shape x=...: input 'x' is \[4,64\] with that shape, not \[4,32\]" "$m" --shape x=4x32 --fusion off
check 2 "--shape 'x=4xx64': dimension '' is not a number" "$m" --shape x=4xx64 --fusion off
check 2 "--shape: input shapes 2 \(x=\[4,64\]\) repeat input shapes 1" "$m" --shape x=4x64 --shape x=4x64 --fusion off
check 2 "input_0.pb: graph input 0 'x' has shape \[2,64\], the file holds \[16,64\]" "$m" --inputs "$tmp/m/test_data_set_2" --shape x=2x64 --fusion off
echo '{"inputs": []}' >"$tmp/g.json"
check 2 "--shape applies to ONNX models" "$tmp/g.json" --shape x=4x64
[ $failures = 0 ]
