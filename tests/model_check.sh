#!/usr/bin/env bash
# One real model (models/export_models.py) under `hotfuse-run --check` at one --fusion
# level (against torch's outputs), then, fused, a plain run on the same inputs (whose
# end-to-end check compares the fused graph's outputs with the unfused graph's). Skips (exit 77, CTest's SKIP_RETURN_CODE here) with the reason when the models
# could not be generated because python3-torch, python3-torchvision or python3-onnx are
# missing; any other missing file is a failure.
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
"$run" --check "$models/$name" --fusion "$fusion" "$@" || exit
[ "$fusion" = off ] && exit 0
"$run" "$models/$name/model.onnx" --inputs "$models/$name/test_data_set_0" --fusion "$fusion" \
  --iters 2 "$@" >/dev/null
