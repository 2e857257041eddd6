#!/usr/bin/env bash
# Real models, hotfuse against onnxruntime, interleaved (the machines are shared and noisy):
# per round and model, each given hotfuse-run binary and then onnxruntime (bench/ort_models.py),
# one line each with the median ms, the peak resident MiB and the tenth-percentile ms (p10: a
# shared host's speed can change by a third for seconds at a time, and a median mixes its fast
# and slow stretches; bench/models_table.py makes the table of both). A binary may name its
# --fusion mode as BINARY:MODE (default off: the heavy ops, layouts and unfused kernels); other
# modes run with
# --sync-compile and report the steady median (summary.fused_ms), or the unfused one when
# nothing was fused. Give several (before/after, off/adaptive) to compare in the same run.
# $HF_MODELS (space-separated) picks models; default all five of models/export_models.py.
#
#   bench/models_vs_ort.sh MODELS_DIR ROUNDS THREADS VENV_PYTHON HOTFUSE_RUN[:MODE]...
set -euo pipefail
models=$1 rounds=$2 threads=$3 py=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
# Each run decides its regions for itself: rounds stay independent, and a binary under
# comparison does not take another's verdicts from the shared kernel cache.
export HOTFUSE_VERDICTS=off
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((r = 0; r < rounds; ++r)); do
  for m in ${HF_MODELS:-resnet18 mobilenet_v2 gpt2_block resnet50 bert_layer}; do
    for spec in "$@"; do
      bin=${spec%%:*} mode=off
      [ "$spec" != "$bin" ] && mode=${spec#*:}
      extra=()
      [ "$mode" != off ] && extra=(--sync-compile)
      "$bin" "$models/$m/model.onnx" --fusion "$mode" "${extra[@]}" \
        --inputs "$models/$m/test_data_set_0" --iters 40 --threads "$threads" \
        --report "$tmp/r.json" >/dev/null
      /usr/bin/python3 -c "import json,sys; r = json.load(open(sys.argv[4])); s = r['summary']; \
        t = sorted(i['ms'] for i in r['iterations'] if i['phase'] == 'steady'); \
        print(sys.argv[1], sys.argv[2], 'T' + sys.argv[3], round(s['fused_ms'] or s['unfused_ms'], 3), \
              'ms', round(s['peak_rss_bytes'] / 2**20), 'MiB p10', round(t[len(t) // 10], 3), 'ms')" \
        "$spec" "$m" "$threads" "$tmp/r.json"
    done
    "$py" "$here/ort_models.py" "$models" "$tmp/ort.json" --threads "$threads" --iters 40 --names "$m" 2>/dev/null
    /usr/bin/python3 -c "import json,sys; r = json.load(open(sys.argv[1]))['records'][0]; \
      print('onnxruntime', r['model'], 'T' + sys.argv[2], \
            f\"{r['median_ms']:.3f} ms {r['peak_rss_bytes'] / 2**20:.0f} MiB p10 {r['p10_ms']:.3f} ms\" \
            if 'median_ms' in r else r['error'])" \
      "$tmp/ort.json" "$threads"
  done
done
