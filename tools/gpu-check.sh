#!/usr/bin/env bash
# Checks hotfuse's CUDA path on a GPU machine from a pack made by tools/gpu-pack.sh, in one
# command (docs/cuda.md). Run from the unpacked pack: bash PACK/src/tools/gpu-check.sh [PART...]
# PARTs, in this order by default: env tests examples workloads models.
#   env        the device, the driver, which CUDA libraries the binaries resolve to
#   tests      each GPU test binary (test_cuda_*) and tests/cuda_cli.sh
#   examples   every example at --fusion off|all|adaptive, device times by CUPTI and by
#              CUDA events (HOTFUSE_CUPTI_LIB pointed nowhere)
#   workloads  the six elementwise workloads at 2^LOG2 floats (HF_GPU_LOG2, default 26):
#              hotfuse --fusion all against a device-to-device copy, torch eager and
#              torch.compile in the same run (bench/gpu_peers.py, the machine's PyTorch)
#   models     ResNet-18 and MobileNetV2 exported there at opset 17, hotfuse off (TF32 and
#              FP32 math, CUDA graphs on and off, Conv chains in NHWC and NCHW) and adaptive
#              against torch eager and torch.compile (bench/gpu_models.py), and --check
#              against PyTorch's FP32 outputs
# Results go to $OUT (else /tmp/hfgpu-out), at most 8 files: env.txt tests.log cli.log
# examples.log workloads.log models.log summary.txt. The last lines printed are the summary.
# Exit code: the number of failed steps.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
pack=$(dirname "$src")
bin=$pack/bin
OUT=${OUT:-/tmp/hfgpu-out}
work=$(mktemp -d /tmp/hfgpu.XXXXXX)
mkdir -p "$OUT" "$work/tmp" "$work/cache"
parts=${*:-env tests examples workloads models}
summary=$OUT/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

# CUDA's libraries from wherever this machine has them: PyTorch's nvidia wheels first (the
# versions the driver was paired with there), then the toolkit, then the driver's folder.
venv_nvidia=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__file__) if nvidia.__file__ else list(nvidia.__path__)[0])' 2>/dev/null)
cuda_dirs=$( { [ -n "$venv_nvidia" ] && find "$venv_nvidia" -name 'lib*.so*' -printf '%h\n';
  find /usr/local/cuda/lib64 /usr/local/cuda/extras/CUPTI/lib64 -maxdepth 1 -name 'lib*.so*' -printf '%h\n';
  } 2>/dev/null | awk '!seen[$0]++' | paste -sd:)
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do [ -d $d ] && cuda_dirs=$cuda_dirs:$d; done
export LD_LIBRARY_PATH=$pack/lib${cuda_dirs:+:$cuda_dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export HOTFUSE_SOURCE_DIR=$src TMPDIR=$work/tmp HOTFUSE_CACHE_DIR=$work/cache PYTHONUNBUFFERED=1
say "pack $(cat "$pack/COMMIT" 2>/dev/null); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

failed=0
# step SECONDS LOG NAME CMD...: runs CMD with a limit, appending to LOG, one summary line.
step() {
  local limit=$1 log=$OUT/$2 name=$3; shift 3
  local t0=$SECONDS
  echo "=== $name" >> "$log"
  timeout "$limit" "$@" >> "$log" 2>&1
  local rc=$?
  [ $rc = 0 ] || failed=$((failed + 1))
  say "$name: $([ $rc = 0 ] && echo ok || echo "FAILED rc=$rc") ($((SECONDS - t0)) s)"
  return $rc
}

for part in $parts; do case $part in
env)
  { nvidia-smi; echo "venv nvidia: ${venv_nvidia:-none}"; echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    for b in "$bin"/*; do echo "ldd $(basename "$b"):"; ldd "$b" | grep -E 'not found|cublas|cudnn|nvrtc|openblas|dnnl|protobuf'; done
    python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
    grep -m1 'model name' /proc/cpuinfo; nproc
  } > "$OUT/env.txt" 2>&1
  if grep -q '=> not found' "$OUT/env.txt"; then say "env: FAILED, a library is not found (env.txt)"; failed=$((failed + 1)); fi
  ;;
tests)
  for t in test_cuda_memory test_cuda_backend test_cuda_session test_cuda_nn_ops; do
    step 200 tests.log "$t" "$bin/$t"
  done
  grep -E '^\[  FAILED  \] [A-Za-z].*\(' "$OUT/tests.log" | sed 's/^/  /' | tee -a "$summary"
  grep -E 'CUPTI overhead' "$OUT/tests.log" | sed 's/^/  /' | tee -a "$summary"
  step 120 cli.log cuda_cli.sh bash "$src/tests/cuda_cli.sh" "$bin/hotfuse-run" "$src/traces/graphs/activation_chain.json"
  ;;
examples)
  for g in "$src"/traces/graphs/*.json; do
    n=$(basename "$g" .json)
    for mode in off all adaptive; do
      for timer in cupti events; do
        lib=; [ $timer = events ] && lib=/nonexistent/libcupti.so
        step 60 examples.log "$n $mode $timer" env HOTFUSE_CUPTI_LIB=$lib "$bin/hotfuse-run" "$g" \
          --backend cuda --fusion $mode --iters 20 --warmup 3 --sync-compile
        grep -A400 "^=== $n $mode $timer\$" "$OUT/examples.log" |
          grep -m4 -E '^kernels |^nothing fused|device time per op|^hotfuse-run:' | sed 's/^/    /' | tee -a "$summary"
      done
    done
  done
  ;;
workloads)
  log2=${HF_GPU_LOG2:-26}
  python3 "$src/tools/make_examples.py" "$work/w" --log2 "$log2" >/dev/null
  for n in abc ab_plus_c gelu_chain activation_chain adam layernorm; do
    step 90 workloads.log "$n 2^$log2 all" env HOTFUSE_CUPTI_LIB=/nonexistent/libcupti.so \
      "$bin/hotfuse-run" "$work/w/$n.json" --backend cuda --fusion all --iters 50 --warmup 10
    grep -A200 "^=== $n 2^$log2 all\$" "$OUT/workloads.log" | grep -m1 '^kernels ' | sed 's/^/    /' | tee -a "$summary"
  done
  step 300 workloads.log "peers 2^$log2" python3 "$src/bench/gpu_peers.py" "$log2"
  grep -A20 "^=== peers" "$OUT/workloads.log" | grep -E '^(copy|abc|ab_plus|gelu|activ|adam|layer)' | sed 's/^/    /' | tee -a "$summary"
  ;;
models)
  mkdir -p "$work/m"
  step 300 models.log "models: export, torch" python3 "$src/bench/gpu_models.py" "$work/m"
  grep -E '^(resnet18|mobilenet_v2)' "$OUT/models.log" | sed 's/^/    /' | tee -a "$summary"
  for d in "$work"/m/*/; do
    m=$d/model.onnx n=$(basename "$d")
    [ -f "$m" ] || continue
    # TF32 (HOTFUSE_F32_PRECISION=high, the default) and FP32 math (highest), unfused, then
    # adaptive at the defaults. CUDA graphs on (the default) and off: the launch overhead
    # per iteration. Conv chains in NHWC (the default) and NCHW: what the layout is worth.
    for run in "off high on nhwc" "off high off nhwc" "off high on nchw" "off highest on nhwc" \
      "adaptive high on nhwc"; do
      set -- $run
      step 120 models.log "$n $1 $2 graphs=$3 $4" env HOTFUSE_CUPTI_LIB=/nonexistent/libcupti.so \
        HOTFUSE_F32_PRECISION=$2 HOTFUSE_CUDA_GRAPHS=$3 HOTFUSE_CUDA_LAYOUT=$4 \
        "$bin/hotfuse-run" "$m" --backend cuda --fusion $1 --iters 30 --warmup 5 --sync-compile
      grep -A400 "^=== $n $1 $2 graphs=$3 $4\$" "$OUT/models.log" |
        grep -E '^kernels |^nothing fused|^hotfuse-run: [^C]|^iterations launched' | head -2 |
        sed "s/^/    $1 $2 graphs=$3 $4: /" | tee -a "$summary"
    done
    # Against PyTorch's FP32 CPU output: how much of --check's tolerance each math uses.
    [ -f "$d/test_data_set_0/output_0.pb" ] || continue
    for p in high highest; do
      step 120 models.log "$n check $p" env HOTFUSE_F32_PRECISION=$p "$bin/hotfuse-run" --check "$d" --backend cuda --fusion off
      grep -A40 "^=== $n check $p\$" "$OUT/models.log" | grep -m1 -E '^test_data_set_0: ' | sed "s/^/    $n $p: /" | tee -a "$summary"
    done
  done
  ;;
*) say "unknown part '$part' (env tests examples workloads models)"; failed=$((failed + 1)) ;;
esac; done
say "failed steps: $failed"
rm -rf "$work"
exit $failed
