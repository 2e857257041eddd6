#!/usr/bin/env bash
# One real model (models/export_models.py) under `hotfuse-run --check` at one --fusion
# level (against torch's outputs, at every input shape its data sets give), then, fused, a
# plain run on the same inputs (whose end-to-end check compares the fused graph's outputs
# with the unfused graph's). Skips (exit 77, CTest's SKIP_RETURN_CODE here) with the reason
# when the models could not be exported (tests/models_export.sh writes it to SKIPPED); any
# other missing file is a failure.
#
#   tests/model_check.sh HOTFUSE_RUN MODELS_DIR NAME FUSION [hotfuse-run options...]
set -uo pipefail
run=$1 models=$2 name=$3 fusion=$4
shift 4
if [ -f "$models/SKIPPED" ]; then
  echo "skipped: $(cat "$models/SKIPPED")"
  exit 77
fi
[ -f "$models/$name/model.onnx" ] || { echo "model_check: $models/$name/model.onnx is missing" >&2; exit 1; }
out=$("$run" --check "$models/$name" --fusion "$fusion" "$@")
rc=$?
echo "$out"
[ $rc = 0 ] || exit $rc
# Data sets of several input shapes (models/export_models.py --current: batch 1, 4, 16) are
# planned in one process; each shape after the first must compile no kernel (the kernel
# cache is keyed by rank and broadcast pattern, not sizes).
if grep -E "^input shapes [2-9][0-9]* of " <<<"$out" | grep -qv "kernels compiled 0,"; then
  echo "model_check: an input shape after the first compiled kernels" >&2
  exit 1
fi
[ "$fusion" = off ] && exit 0
"$run" "$models/$name/model.onnx" --inputs "$models/$name/test_data_set_0" --fusion "$fusion" \
  --iters 2 "$@" >/dev/null
