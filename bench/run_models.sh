#!/usr/bin/env bash
# Per-model iteration times, kernel counts and planned memory for bench/RESULTS.md ("Real
# models"): each model of models/export_models.py under --fusion all and adaptive, REPS
# times, on its stored inputs (test_data_set_0, as onnxruntime gets them in
# bench/ort_models.py), with the medians of the per-run medians (report.json's
# summary.unfused_ms / fused_ms, kernels_before / kernels_after, peak_bytes_before /
# peak_bytes_after); "unfused" is the median over the unfused phases of all runs of the
# model. Adaptive runs that fuse nothing report their unfused time as the adaptive time.
# With $HF_MODELS_OUT set the reports are kept there, and an onnxruntime column is added
# when $HF_MODELS_OUT/ort.json (bench/ort_models.py) exists.
#
# $HF_MODELS (space-separated) picks models; default all five of models/export_models.py.
#
#   bench/run_models.sh HOTFUSE_RUN MODELS_DIR [REPS] [hotfuse-run options...]
set -euo pipefail
run=$1 models=$2 reps=${3:-3}
shift $(( $# >= 3 ? 3 : 2 ))
if [ -n "${HF_MODELS_OUT:-}" ]; then
  out=$HF_MODELS_OUT
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
for model in ${HF_MODELS:-resnet18 mobilenet_v2 gpt2_block resnet50 bert_layer}; do
  inputs=()
  [ -d "$models/$model/test_data_set_0" ] && inputs=(--inputs "$models/$model/test_data_set_0")
  for mode in all adaptive; do
    for ((r = 0; r < reps; ++r)); do
      "$run" "$models/$model/model.onnx" --fusion "$mode" --sync-compile "${inputs[@]}" \
        --report "$out/$model.$mode.$r.json" "$@" >/dev/null
    done
  done
done
/usr/bin/python3 - "$out" "$reps" ${HF_MODELS:-resnet18 mobilenet_v2 gpt2_block resnet50 bert_layer} <<'PY'
import json, os, statistics, sys
out, reps, models = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
ort = {}
if os.path.exists(f"{out}/ort.json"):
    for r in json.load(open(f"{out}/ort.json"))["records"]:
        ort[r["model"]] = (f"{r['median_ms']:.1f}" if r.get("median_ms") is not None
                           else f"n/a ({r.get('error', 'no time')})")
def runs(model, mode):
    return [json.load(open(f"{out}/{model}.{mode}.{r}.json"))["summary"] for r in range(reps)]
def fused(r):
    return r["fused_ms"] if r["fused_ms"] is not None else r["unfused_ms"]
mib = lambda b: f"{b / 2**20:.1f}" if b is not None else "-"
head = ("| model | kernels unfused -> all / adaptive | unfused ms | all ms | adaptive ms |"
        " planned MiB unfused -> all / adaptive |")
sep = "| --- | --- | --- | --- | --- | --- |"
if ort:
    head += " onnxruntime ms |"
    sep += " --- |"
print(head)
print(sep)
for model in models:
    a, d = runs(model, "all"), runs(model, "adaptive")
    unfused = statistics.median(r["unfused_ms"] for r in a + d)
    fa = statistics.median(fused(r) for r in a)
    fd = statistics.median(fused(r) for r in d)
    row = (f"| {model} | {a[0]['kernels_before']} -> {a[0]['kernels_after']} / "
           f"{d[0]['kernels_after']} | {unfused:.1f} | {fa:.1f} | {fd:.1f} | "
           f"{mib(a[0].get('peak_bytes_before'))} -> {mib(a[0].get('peak_bytes_after'))} / "
           f"{mib(d[0].get('peak_bytes_after'))} |")
    if ort:
        row += f" {ort.get(model, 'n/a (not run)')} |"
    print(row)
PY
