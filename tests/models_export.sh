#!/usr/bin/env bash
# CTest fixture of tests/models.cmake: exports the real models into MODELS_DIR with
# Debian's python3 (models/export_models.py). When torch, torchvision or onnx cannot be
# imported it writes MODELS_DIR/SKIPPED with the reason, which the model tests report as
# their skip reason; any other failure of the export fails this test.
#
# With --current (the export of a current PyTorch, PyPI torch in a venv: HF_TORCH_PYTHON)
# it also needs onnxscript, and an empty PYTHON is a skip saying how to configure one.
#
#   tests/models_export.sh PYTHON SCRIPT MODELS_DIR [--current]
set -uo pipefail
python=$1 script=$2 models=$3
shift 3
mkdir -p "$models"
rm -f "$models/SKIPPED"
modules="torch, torchvision, onnx"
[ "${1:-}" = --current ] && modules="$modules, onnxscript"
if [ -z "$python" ]; then
  echo "no Python with a current PyPI torch is configured (cmake -DHF_TORCH_PYTHON=VENV/bin/python, a venv with torch torchvision onnxscript from PyPI)" >"$models/SKIPPED"
  cat "$models/SKIPPED"
  exit 0
fi
if ! "$python" -c "import $modules" 2>"$models/import.log"; then
  echo "$modules: not all importable by $python: $(tail -n1 "$models/import.log")" >"$models/SKIPPED"
  cat "$models/SKIPPED"
  exit 0
fi
exec "$python" "$script" "$models" "$@"
