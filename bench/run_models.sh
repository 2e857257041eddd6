#!/usr/bin/env bash
# Per-model iteration times and kernel counts for bench/RESULTS.md ("Real models"): each
# model of models/export_models.py under --fusion all and adaptive, REPS times, with the
# medians of the per-run medians (report.json's summary.unfused_ms / fused_ms,
# kernels_before / kernels_after); "unfused" is the median over the unfused phases of all
# runs of the model. Adaptive runs that fuse nothing report their unfused time as the
# adaptive time.
#
#   bench/run_models.sh HOTFUSE_RUN MODELS_DIR [REPS] [hotfuse-run options...]
set -euo pipefail
run=$1 models=$2 reps=${3:-3}
shift $(( $# >= 3 ? 3 : 2 ))
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for model in resnet18 mobilenet_v2 gpt2_block; do
  for mode in all adaptive; do
    for ((r = 0; r < reps; ++r)); do
      "$run" "$models/$model/model.onnx" --fusion "$mode" --sync-compile \
        --report "$out/$model.$mode.$r.json" "$@" >/dev/null
    done
  done
done
/usr/bin/python3 - "$out" "$reps" <<'PY'
import json, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
def runs(model, mode):
    return [json.load(open(f"{out}/{model}.{mode}.{r}.json"))["summary"] for r in range(reps)]
def fused(r):
    return r["fused_ms"] if r["fused_ms"] is not None else r["unfused_ms"]
print("| model | kernels unfused -> all / adaptive | unfused ms | all ms | adaptive ms |")
print("| --- | --- | --- | --- | --- |")
for model in ["resnet18", "mobilenet_v2", "gpt2_block"]:
    a, d = runs(model, "all"), runs(model, "adaptive")
    unfused = statistics.median(r["unfused_ms"] for r in a + d)
    fa = statistics.median(fused(r) for r in a)
    fd = statistics.median(fused(r) for r in d)
    print(f"| {model} | {a[0]['kernels_before']} -> {a[0]['kernels_after']} / "
          f"{d[0]['kernels_after']} | {unfused:.1f} | {fa:.1f} | {fd:.1f} |")
PY
