#!/usr/bin/env bash
# report.json's public fields (docs/report.md) for --fusion all, static and off.
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
assert s["fused_ms"] is None and s["speedup"] is None and s["kernels_after"] == 14, s
print("report fields ok")
PY
