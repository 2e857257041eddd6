#!/usr/bin/env bash
# CTest fixture of tests/models.cmake: exports the real models into MODELS_DIR with
# Debian's python3 (models/export_models.py). When torch, torchvision or onnx cannot be
# imported it writes MODELS_DIR/SKIPPED with the reason, which the model tests report as
# their skip reason; any other failure of the export fails this test.
#
#   tests/models_export.sh PYTHON SCRIPT MODELS_DIR
set -uo pipefail
python=$1 script=$2 models=$3
mkdir -p "$models"
rm -f "$models/SKIPPED"
if ! "$python" -c 'import torch, torchvision, onnx' 2>"$models/import.log"; then
  echo "python3-torch, python3-torchvision or python3-onnx missing for $python: $(tail -n1 "$models/import.log")" >"$models/SKIPPED"
  cat "$models/SKIPPED"
  exit 0
fi
exec "$python" "$script" "$models"
