#!/usr/bin/env bash
# Symbolic input dimensions (docs/onnx.md, "Input shapes"), on a model whose batch is
# symbolic (tests/make_batch_model.py): --check with data sets at batch 1, 4 and 16 plans
# each batch size and compiles nothing after the first; --shape and --inputs size the
# batch of a plain run; a misspelt, wrongly ranked or conflicting --shape, a missing size
# and --shape on a JSON graph are exit code 2 with one line saying which.
# Usage: cli_shapes.sh HOTFUSE_RUN REPO_ROOT (exit 77: no python3-onnx, skipped)
set -u
run=$1 root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 "$root/tests/make_batch_model.py" "$tmp/m" || exit $?
export HOTFUSE_CACHE_DIR="$tmp/cache"  # empty: the first batch size compiles
source "$(dirname "$0")/expect_run.sh"
m="$tmp/m/model.onnx"
check 0 "^input shapes 1 of 3 \(x \[1,64\]\): kernels compiled [1-9]" --check "$tmp/m" --fusion all --threads 1 --backend cpu
for k in 2 3; do
  check 0 "^input shapes $k of 3 \(x \[[0-9]+,64\]\): kernels compiled 0, from the cache [1-9]" \
    --check "$tmp/m" --fusion all --threads 1 --backend cpu
done
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
check 2 "--shape 'x=4x64': input 'x' is given twice" "$m" --shape x=4x64 --shape x=4x64 --fusion off
check 2 "input_0.pb: graph input 0 'x' has shape \[2,64\], the file holds \[16,64\]" "$m" --inputs "$tmp/m/test_data_set_2" --shape x=2x64 --fusion off
echo '{"inputs": []}' >"$tmp/g.json"
check 2 "--shape applies to ONNX models" "$tmp/g.json" --shape x=4x64
[ $failures = 0 ]
