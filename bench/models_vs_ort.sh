#!/usr/bin/env bash
# Real models, hotfuse against onnxruntime, interleaved (the machines are shared and noisy):
# per round and model, each given hotfuse-run binary (--fusion off: the heavy ops, layouts and
# unfused kernels, no compile in the way) and then onnxruntime (bench/ort_models.py), one
# line each with the median ms. Give two binaries (before, after) to compare a change.
#
#   bench/models_vs_ort.sh MODELS_DIR ROUNDS THREADS VENV_PYTHON HOTFUSE_RUN...
set -euo pipefail
models=$1 rounds=$2 threads=$3 py=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((r = 0; r < rounds; ++r)); do
  for m in resnet18 mobilenet_v2 gpt2_block; do
    for bin in "$@"; do
      "$bin" "$models/$m/model.onnx" --fusion off --inputs "$models/$m/test_data_set_0" \
        --iters 40 --threads "$threads" --report "$tmp/r.json" >/dev/null
      /usr/bin/python3 -c "import json,sys; print(sys.argv[1], sys.argv[2], 'T' + sys.argv[3], \
        round(json.load(open(sys.argv[4]))['summary']['unfused_ms'], 3))" "$bin" "$m" "$threads" "$tmp/r.json"
    done
    "$py" "$here/ort_models.py" "$models" "$tmp/ort.json" --threads "$threads" --iters 40 --names "$m" 2>/dev/null
    /usr/bin/python3 -c "import json,sys; r = json.load(open(sys.argv[1]))['records'][0]; \
      print('onnxruntime', r['model'], 'T' + sys.argv[2], round(r['median_ms'], 3) if 'median_ms' in r else r['error'])" \
      "$tmp/ort.json" "$threads"
  done
done
