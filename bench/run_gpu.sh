#!/usr/bin/env bash
# The GPU verification of issue 4, for a machine with an NVIDIA GPU (docs/cuda.md):
#   1. builds (Release, CUDA backend; fails if CMake did not build hf_cuda),
#   2. runs the whole test suite (the test_cuda_* GPU tests run instead of skipping),
#   3. for every example graph: hotfuse-run --backend cuda --fusion off and all, printing
#      unfused vs fused median ms and the fused kernels' achieved bandwidth (CUPTI device
#      time when CUPTI works, else the synchronised per-step wall time) as a fraction of
#      the device-to-device copy bandwidth hotfuse-run measures in the same run.
# Usage: bash bench/run_gpu.sh [ITERS]     (outputs under build/gpu-bench/)
# Never run yet: written without a GPU. Every step prints what it runs; a failing build
# stops the script, failing tests or examples are reported (exit code 1 at the end), their
# output kept in build/gpu-bench/.
# Needs the build dependencies installed (tools/install-deps.sh) and the CUDA toolkit.
set -euo pipefail
cd "$(dirname "$0")/.."
iters=${1:-50}
out=build/gpu-bench
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
cuda=()
[ -x /usr/local/cuda/bin/nvcc ] && cuda=(-DCUDAToolkit_ROOT=/usr/local/cuda)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${cuda[@]}" >/dev/null
t0=$(date +%s)
cmake --build build -j "$(nproc)"
echo "build: $(( $(date +%s) - t0 )) s"
[ -f build/libhf_cuda.a ] || { echo "run_gpu.sh: this build has no CUDA backend (toolkit not found?)"; exit 2; }
mkdir -p "$out"
echo "== test suite"
# A failing test is reported, and the benchmarks still run.
ctest --test-dir build -j "$(nproc)" --output-on-failure > "$out/ctest.log" 2>&1 ||
  echo "ctest: some tests FAILED (full log: $out/ctest.log)"
tail -25 "$out/ctest.log"
echo "== CUDA tests in detail"
build/tests/test_cuda_backend > "$out/test_cuda_backend.log" 2>&1 ||
  echo "test_cuda_backend: FAILED (full log: $out/test_cuda_backend.log)"
grep -E '^\[ *(OK|FAILED|SKIPPED) |CUPTI overhead' "$out/test_cuda_backend.log" || true

echo "== examples (iters $iters)"
failed=0
for g in traces/graphs/*.json; do
  name=$(basename "$g" .json)
  for level in off all; do
    echo "+ hotfuse-run $g --backend cuda --fusion $level --iters $iters --warmup 10"
    rm -f "$out/$name.$level.json"
    build/hotfuse-run "$g" --backend cuda --fusion "$level" --iters "$iters" --warmup 10 \
      --report "$out/$name.$level.json" > "$out/$name.$level.txt" 2>&1 ||
      { echo "FAILED: see $out/$name.$level.txt"; tail -5 "$out/$name.$level.txt"; failed=1; }
  done
done
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 > "$out/device.txt" || true
python3 - "$out" <<'PY'
import json, re, sys, glob, os
out = sys.argv[1]
device = open(os.path.join(out, "device.txt")).read().strip() or "unknown GPU"
print(f"\ndevice: {device}")
print("| example | unfused ms | fused ms | speedup | kernels | D2D copy GB/s | fused kernel GB/s (timing) | fraction of copy |")
print("|---|---|---|---|---|---|---|---|")
for path in sorted(glob.glob(os.path.join(out, "*.all.txt"))):
    name = os.path.basename(path)[:-len(".all.txt")]
    text = open(path).read()
    if not os.path.exists(os.path.join(out, name + ".all.json")):
        print(f"| {name} | FAILED: see {path} |||||||")
        continue
    rep = json.load(open(os.path.join(out, name + ".all.json")))
    s = rep["summary"]
    m = re.search(r"device-to-device copy: ([0-9.e+]+) GB/s", text)
    copy = float(m.group(1)) if m else float("nan")
    # Fused rows of the device-time table (CUPTI or CUDA events), else of report.json's
    # ops (synchronised wall time per step).
    gbps, source = [], ""
    section = text.split("fused, device time per op (")
    if len(section) > 1:
        source = "CUPTI" if section[1].startswith("CUPTI") else "CUDA events"
        for line in section[1].split("sum of ops")[0].splitlines()[2:]:
            f = line.split()
            if len(f) > 3 and f[2] == "Fused":
                gbps.append(float(f[-2]))
    if not gbps:
        source = "wall"
        gbps = [op["gbps"] for op in rep.get("ops", []) if op.get("op") == "Fused"]
    kern = f'{s["kernels_before"]} -> {s["kernels_after"]}'
    fused = s["fused_ms"]
    speed = s["speedup"]
    g = ", ".join(f"{x:.0f}" for x in gbps) or "-"
    frac = ", ".join(f"{x / copy:.0%}" for x in gbps) if gbps and copy == copy else "-"
    print(f"| {name} | {s['unfused_ms']:.4f} | {fused if fused is None else f'{fused:.4f}'} | "
          f"{speed if speed is None else f'{speed:.2f}x'} | {kern} | {copy:.0f} | {g} ({source}) | {frac} |")
PY
exit $failed
