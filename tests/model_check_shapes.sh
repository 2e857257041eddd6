#!/usr/bin/env bash
# One model of models/export_models.py --current (a symbolic batch dimension, data sets at
# batch 1, 4 and 16) under `hotfuse-run --check` at one --fusion level: every data set must
# pass against torch's outputs, and each input shape after the first must compile no kernel
# (the kernel cache is keyed by rank and broadcast pattern, not sizes). Skips (exit 77) with
# the reason when the models could not be exported.
#
#   tests/model_check_shapes.sh HOTFUSE_RUN MODELS_DIR NAME FUSION [hotfuse-run options...]
set -uo pipefail
run=$1 models=$2 name=$3 fusion=$4
shift 4
if [ -f "$models/SKIPPED" ]; then
  echo "skipped: $(cat "$models/SKIPPED")"
  exit 77
fi
[ -f "$models/$name/model.onnx" ] || { echo "model_check_shapes: $models/$name/model.onnx is missing" >&2; exit 1; }
out=$("$run" --check "$models/$name" --fusion "$fusion" "$@")
rc=$?
echo "$out"
[ $rc = 0 ] || exit $rc
grep -q "^input shapes 3 of 3 " <<<"$out" || { echo "model_check_shapes: expected 3 input shapes" >&2; exit 1; }
if grep -E "^input shapes [23] of 3 " <<<"$out" | grep -qv "kernels compiled 0,"; then
  echo "model_check_shapes: a batch size after the first compiled kernels" >&2
  exit 1
fi
