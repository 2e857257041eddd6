#!/usr/bin/env bash
# Issue 9's benchmarks, CPU parts, in ONE command:
#
#   bench/run_all.sh [OUTDIR]            (default build/bench-all; 7.5 min on 2 cores at
#                                         load 3-4, 11 at load 6; +1 min for a new venv)
#   BENCH_QUICK=1 bench/run_all.sh DIR   (smoke run: 2^20 only, 3 repetitions; 2-3 min)
#
# 1. MegEngine's table: a*b*c and a*b+c, --fusion off / static / all / adaptive.
# 2. The six elementwise workloads vs the peers, same run, same inputs: hotfuse (all,
#    adaptive), the hand-fused C++ loops and STREAM (bench/run_examples.sh), numpy,
#    numexpr, torch 1.13 eager and the torch.jit legacy fuser (Debian, via
#    ../shared/bench/peers/peers.py), torch 2.x torch.compile and jax.jit (PyPI, in a venv:
#    bench/peers_venv.py). 2^20 and 2^24 elements, 1 and 2 threads.
# 3. JIT cost: bench/jit_bench (Google Benchmark: cold host C++ and NVRTC compiles, disk
#    cache loads, host overhead per iteration) and, per example graph, the compile time and
#    first-iteration / first-fused-iteration latency with an empty vs a warm kernel cache.
# 4. The ONNX models (models/export_models.py) and the examples: unfused vs all vs
#    adaptive, kernels and planned memory before/after, and onnxruntime (PyPI, CPU, all
#    graph optimisations, same threads, same inputs: bench/ort_models.py).
#
# Prints one markdown table per part (bench/report_all.py) and keeps them in
# OUTDIR/tables.md; the raw JSON, logs and machine description stay in OUTDIR.
# The PyPI peers live in a venv, $BENCH_VENV (default build/bench-venv), created and
# filled on the first run (torch 2.5.1 from PyPI comes with its nvidia-* CUDA wheels,
# ~6 GB: PyPI has no CPU-only torch for x86-64 and the CUDA wheel without them does not
# import). A peer that cannot be installed or run shows up as "n/a (reason)"; only a
# failing hotfuse build stops the run.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/build/bench-all}" && cd "${1:-$root/build/bench-all}" && pwd)
venv=${BENCH_VENV:-$root/build/bench-venv}
quick=${BENCH_QUICK:-0}
T0=$(date +%s)
mkdir -p "$out"
# Results of an earlier run in the same folder must not leak into this one's tables.
rm -rf "$out/peers" "$out/jit" "$out/models" "$out/examples"/hf_*.json "$out/examples"/cpp.json \
  "$out/examples"/stream.txt "$out/tables.md"
exec > >(tee "$out/run_all.log") 2>&1
say() { echo "== [$(( $(date +%s) - T0 ))s] $* (load $(cut -d' ' -f1 /proc/loadavg))"; }

if [ "$quick" = 1 ]; then
  sizes="20" sizes_c="20" iters=5 reps=3 model_reps=1 jit_filter='abc|layernorm|adam'
else
  sizes="20 24" sizes_c="20,24" iters=15 reps=15 model_reps=3 jit_filter='.'
fi

say "machine"
{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD || echo '+dirty')"
  echo "model: $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
  echo "cpus: $(nproc)"
  echo "uptime_start: $(uptime)"
  echo "quick: $quick"
  echo "flags: $(grep -m1 -o -w -E 'avx512f|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "g++: $(g++ --version | head -1)"
} >"$out/machine.txt"
cat "$out/machine.txt"

say "build"
export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-$(command -v ccache || true)}
"$root/tools/build.sh" >"$out/build.log" 2>&1 || { echo "run_all: build failed, see $out/build.log" >&2; exit 1; }

# ---- the PyPI peers' venv ---------------------------------------------------------------
say "venv $venv"
: >"$out/venv.txt"
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv" >>"$out/venv.txt" 2>&1 ||
    echo "venv: python3 -m venv $venv failed (python3-venv missing, or the path is not writable)" >>"$out/venv.txt"
fi
pip_ok() { "$venv/bin/python" -c "$1" >/dev/null 2>&1; }
if [ -x "$venv/bin/python" ]; then
  pip_ok "import numpy" || "$venv/bin/pip" install -q numpy >>"$out/venv.txt" 2>&1
  pip_ok "import torch, torch._inductor" ||
    "$venv/bin/pip" install -q "torch==2.5.1" >>"$out/venv.txt" 2>&1
  pip_ok "import jax" || "$venv/bin/pip" install -q jax >>"$out/venv.txt" 2>&1
  pip_ok "import onnxruntime, onnx" || "$venv/bin/pip" install -q onnxruntime onnx >>"$out/venv.txt" 2>&1
  "$venv/bin/python" -c "import torch, jax, onnxruntime; print('torch', torch.__version__, 'jax', jax.__version__, 'onnxruntime', onnxruntime.__version__)" \
    >>"$out/venv.txt" 2>&1
fi
tail -1 "$out/venv.txt"

# ---- parts 1, 2 (hotfuse, hand-fused C++, STREAM) and the examples of part 4 ------------
say "examples: hotfuse off/static/all/adaptive + C++ peers + STREAM"
HF_BENCH_SIZES="$sizes" HF_BENCH_ITERS=$iters bash "$root/bench/run_examples.sh" "$out/examples" \
  >"$out/examples_table.md" 2>"$out/examples.log" || echo "run_examples.sh failed: see $out/examples.log"
peers=$out/examples/peers   # run_examples.sh's copy of ../shared/bench/peers

# peers.py with this run's repetitions (its own default is 15).
peers_py() {
  local py=$1 group=$2
  shift 2
  "$py" - "$peers" "$reps" "$group" "$@" <<'PY'
import sys
d, reps, group = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, d)
import peers
peers.reps_for = lambda n, r=reps: (r, 1) if n >= (1 << 24) else (r, 3)
sys.argv = ["peers.py", "--group", group] + sys.argv[4:]
peers.main()
PY
}

# ---- part 2: the Python peers -------------------------------------------------------------
mkdir -p "$out/peers"
if [ -f "$peers/peers.py" ]; then
  for g in numpy numexpr torch_eager jit_legacy; do
    say "peer $g"
    py=/usr/bin/python3
    # Debian's python3-numexpr is what ../shared/bench/peers uses; without it, PyPI's numexpr
    # in the venv (its version is in the JSON).
    if [ $g = numexpr ] && ! $py -c "import numexpr" 2>/dev/null && [ -x "$venv/bin/python" ]; then
      "$venv/bin/python" -c "import numexpr" 2>/dev/null ||
        "$venv/bin/pip" install -q numexpr >>"$out/venv.txt" 2>&1
      py=$venv/bin/python
    fi
    peers_py $py $g --sizes "$sizes_c" --out "$out/peers/$g.json" \
      2>"$out/peers/$g.log" || echo "$g: failed, see $out/peers/$g.log" | tee "$out/peers/$g.err"
  done
  if [ -x "$venv/bin/python" ]; then
    say "peer torch.compile"
    export TORCHINDUCTOR_CACHE_DIR=$out/peers/inductor-cache
    rm -rf "$TORCHINDUCTOR_CACHE_DIR"
    "$venv/bin/python" "$root/bench/peers_venv.py" --peers "$peers" --group torch_compile \
      --sizes "$sizes_c" --reps $reps --out "$out/peers/torch_compile.json" \
      2>"$out/peers/torch_compile.log" ||
      echo "torch.compile: $(tail -1 "$out/peers/torch_compile.log")" | tee "$out/peers/torch_compile.err"
    # XLA:CPU sizes its thread pools from the CPUs the process may use: 1 thread = pinned
    # to one core (taskset), 2 threads = both cores.
    say "peer jax.jit"
    taskset -c 0 "$venv/bin/python" "$root/bench/peers_venv.py" --peers "$peers" --group jax \
      --threads 1 --sizes "$sizes_c" --reps $reps --out "$out/peers/jax_T1.json" \
      2>"$out/peers/jax_T1.log" ||
      echo "jax.jit: $(tail -1 "$out/peers/jax_T1.log")" | tee "$out/peers/jax.err"
    "$venv/bin/python" "$root/bench/peers_venv.py" --peers "$peers" --group jax \
      --threads 2 --sizes "$sizes_c" --reps $reps --out "$out/peers/jax_T2.json" \
      2>"$out/peers/jax_T2.log" ||
      echo "jax.jit: $(tail -1 "$out/peers/jax_T2.log")" | tee "$out/peers/jax.err"
  else
    echo "no venv at $venv: $(tail -1 "$out/venv.txt")" | tee "$out/peers/torch_compile.err" "$out/peers/jax.err"
  fi
else
  echo "../shared/bench/peers not found" >"$out/peers/missing"
fi

# ---- part 3: JIT cost ---------------------------------------------------------------------
say "jit_bench"
mkdir -p "$out/jit"
HF_JIT_BENCH_GRAPHS=$out/examples/graphs20 "$root/build/bench/jit_bench" \
  --benchmark_filter="$jit_filter" --benchmark_out="$out/jit/jit_bench.json" \
  --benchmark_out_format=json >"$out/jit/jit_bench.txt" 2>&1 ||
  echo "jit_bench failed: $(tail -1 "$out/jit/jit_bench.txt")" | tee "$out/jit/jit_bench.err"
say "first-iteration latency, empty vs warm kernel cache"
: >"$out/jit/wall_ms.txt"
for g in "$out/examples/graphs20"/*.json; do
  name=$(basename "$g" .json)
  for c in adaptive all; do
    cache="$out/jit/cache_${name}_$c"
    rm -rf "$cache"
    for state in empty warm; do
      extra=()
      [ $c = adaptive ] && extra=(--sync-compile)
      t=$(date +%s%N)
      HOTFUSE_CACHE_DIR=$cache "$root/build/hotfuse-run" "$g" --fusion $c --threads 2 \
        --iters 5 --warmup 0 "${extra[@]}" --report "$out/jit/${name}_${c}_$state.json" \
        >/dev/null 2>>"$out/jit/latency.log" || echo "$name $c $state failed" >>"$out/jit/latency.log"
      echo "$name $c $state $(( ($(date +%s%N) - t) / 1000000 ))" >>"$out/jit/wall_ms.txt"
    done
  done
done

# ---- part 4: the models -------------------------------------------------------------------
say "models"
models=$root/build/models
mkdir -p "$out/models"
/usr/bin/python3 "$root/models/export_models.py" "$models" >"$out/models/export.log" 2>&1
if [ -f "$models/resnet18/model.onnx" ]; then
  if [ -x "$venv/bin/python" ]; then
    "$venv/bin/python" "$root/bench/ort_models.py" "$models" "$out/models/ort.json" --threads 2 \
      --iters $(( quick == 1 ? 10 : 30 )) 2>"$out/models/ort.log" ||
      echo "onnxruntime: $(tail -1 "$out/models/ort.log")" >"$out/models/ort.err"
  else
    echo "no venv at $venv: $(tail -1 "$out/venv.txt")" >"$out/models/ort.err"
  fi
  HF_MODELS_OUT=$out/models bash "$root/bench/run_models.sh" "$root/build/hotfuse-run" "$models" \
    $model_reps --threads 2 --backend cpu >"$out/models/table.md" 2>"$out/models/run.log" ||
    echo "n/a (run_models.sh failed: $(tail -1 "$out/models/run.log"))" >"$out/models/table.md"
else
  echo "n/a (models/export_models.py: $(tail -1 "$out/models/export.log"))" >"$out/models/table.md"
fi

echo "uptime_end: $(uptime)" >>"$out/machine.txt"
echo "duration_s: $(( $(date +%s) - T0 ))" >>"$out/machine.txt"
say "tables"
/usr/bin/python3 "$root/bench/report_all.py" "$out" | tee "$out/tables.md"
say "done: $out/tables.md"
