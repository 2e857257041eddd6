#!/usr/bin/env bash
# report.json's public fields (docs/report.md) for --fusion all, static, off and adaptive.
# Usage: cli_report.sh HOTFUSE_RUN REPO_ROOT
set -euo pipefail
run=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for level in all static off; do
  "$run" "$root/traces/graphs/adam.json" --iters 3 --warmup 1 --fusion $level \
    --report "$tmp/$level.json" >/dev/null
done
HOTFUSE_F32_PRECISION=highest "$run" "$root/traces/graphs/adam.json" --iters 3 --warmup 1 \
  --fusion off --report "$tmp/highest.json" >/dev/null
# --backend cpu: the CPU session's report, on GPU machines too (auto would pick CUDA there).
"$run" "$root/traces/graphs/adam.json" --iters 3 --warmup 1 --fusion adaptive --sync-compile \
  --min-saving 0 --expected-iters 1000000000 --backend cpu --report "$tmp/adaptive.json" >/dev/null
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
fields = ["unfused_ms", "fused_ms", "speedup", "kernels_before", "kernels_after",
          "compile_ms_total", "cache_hits"]
for level in ("all", "static", "off"):
    s = json.load(open(f"{d}/{level}.json"))["summary"]
    missing = [f for f in fields if f not in s]
    assert not missing, f"{level}: missing {missing}"
    assert s["unfused_ms"] > 0 and s["kernels_before"] == 14, (level, s)
r = json.load(open(f"{d}/all.json"))
s = r["summary"]
assert s["kernels_after"] == 1 and s["fused_ms"] > 0 and s["speedup"] > 0, s
assert any(x["fused"] for x in r["decisions"]), r["decisions"]
assert r["failures"] == [], r["failures"]
s = json.load(open(f"{d}/static.json"))["summary"]
assert s["kernels_after"] == 10 and s["compile_ms_total"] == 0, s
s = json.load(open(f"{d}/off.json"))["summary"]
assert s["f32_precision"] == "high", s
assert json.load(open(f"{d}/highest.json"))["summary"]["f32_precision"] == "highest"
# The CPU launches kernel by kernel and says why (CUDA records its iterations as graphs).
assert s["launch"] == "step by step", s
assert s["launch_reason"] == "cpu runs kernels as they are called", s
assert s["fused_ms"] is None and s["speedup"] is None and s["kernels_after"] == 14, s
# adaptive: the session's report (docs/report.md). --min-saving 0 and a long expected run
# make the selection independent of this machine's timings.
r = json.load(open(f"{d}/adaptive.json"))
s = r["summary"]
for f in fields + ["peak_bytes_before", "peak_bytes_after", "regions_detected",
                   "regions_kept", "iterations_total", "phase"]:
    assert f in s, f"adaptive: missing {f}"
assert s["fusion"] == "adaptive" and s["phase"] == "steady", s
assert s["peak_rss_bytes"] > 1 << 20, s  # the process's own footprint, from getrusage
assert s["kernels_before"] == 14 and s["kernels_after"] in (1, 14), s
phases = [it["phase"] for it in r["iterations"]]
assert phases[0] == "warmup" and "profiling" in phases and phases[-1] == "steady", phases
for op in r["ops"]:
    for f in ("node", "op", "time_ms", "bytes", "gbps", "peak_share", "gflops", "flop_peak_share", "class", "region"):
        assert f in op, (f, op)
    assert op["class"] in ("memory-bound", "compute-bound", "launch-bound"), op
assert len(r["regions"]) == 1, r["regions"]
reg = r["regions"][0]
for f in ("id", "kernel", "nodes", "state", "reason", "predicted_ms", "unfused_ms", "fused_ms",
          "compile_ms", "cache_hit", "validation", "selected", "tier", "tier_reason",
          "interpreted_ms"):
    assert f in reg, (f, reg)
assert reg["selected"] and reg["state"] in ("swapped", "reverted"), reg
# adaptive swaps an f32 region in interpreted first (docs/adaptive.md, "Interpreted first")
assert reg["tier"] in ("interpreted", "compiled") and reg["tier_reason"], reg
if reg["state"] == "swapped" and reg["tier"] == "interpreted":
    assert reg["interpreted_ms"] > 0, reg
if reg["state"] == "swapped":
    assert s["kernels_after"] == 1 and s["fused_ms"] > 0 and reg["fused_ms"] > 0, (s, reg)
    assert reg["validation"].startswith("passed"), reg
    assert s["peak_bytes_after"] < s["peak_bytes_before"], s
for k in ("bandwidth_gbps", "gflops", "launch_us"):
    assert r["machine"][k] > 0, r["machine"]
assert any("profiled" in e["text"] for e in r["events"]), r["events"]
print("report fields ok")
PY
