#!/usr/bin/env bash
# hotfuse-run's backend selection on this machine (tests/cuda.cmake): usage: cuda_cli.sh HOTFUSE_RUN GRAPH
set -u
run=$1 graph=$2
fail() { echo "FAIL: $*"; exit 1; }
out=$("$run" "$graph" --backend cuda --fusion off --iters 2 --warmup 1 2>&1); rc=$?
if [ $rc = 0 ]; then
  echo "$out" | grep -q '^backend cuda: using cuda (' || fail "cuda ran without saying so: $out"
  out=$("$run" "$graph" --backend auto --fusion all --iters 2 --warmup 1 2>&1) || fail "auto on a GPU: $out"
  echo "$out" | grep -q '^backend auto: using cuda (' || fail "auto did not pick cuda: $out"
  echo "$out" | grep -q 'outputs match unfused' || fail "fused on cuda not checked: $out"
  # Adaptive fusion (the default) runs on the device too, with cuda or auto.
  out=$("$run" "$graph" --backend cuda --sync-compile --iters 2 --warmup 1 2>&1) ||
    fail "--backend cuda --fusion adaptive: $out"
  echo "$out" | grep -q '^backend cuda: using cuda (' || fail "adaptive on cuda: $out"
  echo "$out" | grep -q '; cuda .*; --fusion adaptive$' || fail "adaptive did not run on cuda: $out"
  echo "$out" | grep -Eq 'outputs match unfused|^nothing fused' || fail "adaptive on cuda: $out"
  out=$("$run" "$graph" --backend auto --sync-compile --iters 2 --warmup 1 2>&1) ||
    fail "auto adaptive on a GPU: $out"
  echo "$out" | grep -q '^backend auto: using cuda (' || fail "auto adaptive did not pick cuda: $out"
  out=$("$run" --check /nonexistent --backend cuda --fusion off 2>&1); rc=$?
  [ $rc = 2 ] && echo "$out" | grep -q 'nonexistent/model.onnx: no such file' ||
    fail "--check on cuda did not get to reading DIR: $out"
  # Device memory over HOTFUSE_CUDA_MAX_BYTES: one line, exit code 2 (docs/reliability.md).
  out=$(HOTFUSE_CUDA_MAX_BYTES=1K "$run" "$graph" --backend cuda --fusion off --iters 2 2>&1); rc=$?
  [ $rc = 2 ] || fail "HOTFUSE_CUDA_MAX_BYTES=1K: exit $rc, expected 2: $out"
  echo "$out" | grep -q '^hotfuse-run: CUDA: out of device memory: .*HOTFUSE_CUDA_MAX_BYTES=1024 allows no more' ||
    fail "HOTFUSE_CUDA_MAX_BYTES=1K: unclear message: $out"
  out=$(HOTFUSE_CUDA_MAX_BYTES=lots "$run" "$graph" --backend cuda --fusion off 2>&1); rc=$?
  [ $rc = 2 ] && echo "$out" | grep -q "HOTFUSE_CUDA_MAX_BYTES='lots'" ||
    fail "HOTFUSE_CUDA_MAX_BYTES=lots: exit $rc: $out"
  # Iterations as CUDA graphs (HOTFUSE_CUDA_GRAPHS, docs/cuda.md), said in the summary.
  out=$("$run" "$graph" --backend cuda --fusion all --iters 3 --warmup 1 2>&1) || fail "graphs: $out"
  echo "$out" | grep -q '^iterations launched as one CUDA graph each' || fail "not recorded: $out"
  out=$(HOTFUSE_CUDA_GRAPHS=off "$run" "$graph" --backend cuda --fusion all --iters 3 --warmup 1 2>&1) ||
    fail "HOTFUSE_CUDA_GRAPHS=off: $out"
  echo "$out" | grep -q '^iterations launched kernel by kernel: HOTFUSE_CUDA_GRAPHS=off' ||
    fail "HOTFUSE_CUDA_GRAPHS=off not said: $out"
  out=$(HOTFUSE_CUDA_GRAPHS=maybe "$run" "$graph" --backend cuda --fusion off 2>&1); rc=$?
  [ $rc = 2 ] && echo "$out" | grep -q "HOTFUSE_CUDA_GRAPHS='maybe': expected on or off" ||
    fail "HOTFUSE_CUDA_GRAPHS=maybe: exit $rc: $out"
  echo "ok (GPU machine)"
  exit 0
fi
[ $rc = 2 ] || fail "--backend cuda without a usable device: exit $rc, expected 2: $out"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "expected one line: $out"
echo "$out" | grep -q '^hotfuse-run: --backend cuda: ' || fail "unclear message: $out"
reason=${out#hotfuse-run: --backend cuda: }
out=$("$run" "$graph" --backend auto --fusion off --iters 2 --warmup 1 2>&1) || fail "auto: $out"
[ "$(echo "$out" | grep -c '^backend auto: ')" = 1 ] || fail "auto must say once which backend: $out"
echo "$out" | grep -qF "backend auto: using cpu ($reason)" || fail "auto's reason differs: $out"
echo "$out" | grep -q '; cpu, ' || fail "auto did not run on the cpu: $out"
# --check on cuda: the backend is chosen before DIR is read, so the refusal is the same line.
out=$("$run" --check /nonexistent --backend cuda --fusion off 2>&1); rc=$?
[ $rc = 2 ] || fail "--check --backend cuda without a usable device: exit $rc, expected 2: $out"
[ "$out" = "hotfuse-run: --backend cuda: $reason" ] || fail "--check on cuda: unexpected: $out"
# Adaptive fusion (the default): the same refusal on cuda, and auto's one line on the CPU.
out=$("$run" "$graph" --backend cuda --iters 2 --warmup 1 2>&1); rc=$?
[ $rc = 2 ] || fail "--backend cuda --fusion adaptive without a device: exit $rc, expected 2: $out"
[ "$out" = "hotfuse-run: --backend cuda: $reason" ] || fail "adaptive on cuda: unexpected: $out"
out=$("$run" "$graph" --backend auto --iters 2 --warmup 1 --sync-compile 2>&1) || fail "auto adaptive: $out"
[ "$(echo "$out" | grep -c '^backend auto: ')" = 1 ] || fail "auto adaptive must say once: $out"
echo "$out" | grep -qF "backend auto: using cpu ($reason)" || fail "auto adaptive's reason: $out"
echo "$out" | grep -q '; cpu, .*; --fusion adaptive$' || fail "auto adaptive not on the cpu: $out"
echo "ok (no usable CUDA device: $reason)"
