#!/usr/bin/env bash
# hotfuse-run --check, --atol/--rtol, --inputs and --save-outputs (docs/onnx.md), on copies
# of ONNX backend tests from libonnx-testdata: a passing and a failing data set with exit
# codes and the worst element, the tolerances' effect, missing and malformed files (exit 2
# naming the file), every --fusion mode, and a --inputs/--save-outputs round trip checked
# with --check. Usage: check_cli.sh HOTFUSE_RUN NODE_DIR (exit 77: no test data, skipped)
set -u
run=$1 node=$2
[ -d "$node/test_add" ] || { echo "no $node/test_add (libonnx-testdata): skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/expect_run.sh"  # check RC PATTERN args...; sets failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

cp -r "$node/test_add" "$tmp/pass"
# test_sub's output has test_add's shape and type, and other values: a failing data set.
cp -r "$node/test_add" "$tmp/fail"
cp "$node/test_sub/test_data_set_0/output_0.pb" "$tmp/fail/test_data_set_0/output_0.pb"

# 1. A passing directory under every --fusion mode; a failing one names the worst element.
for level in off static all adaptive; do
  check 0 "^test_data_set_0: PASS" --check "$tmp/pass" --fusion $level
  check 1 "^test_data_set_0: FAIL: output 'sum': [0-9]+ of 60 elements beyond tolerance; worst element [0-9]+ at \[[0-9]+,[0-9]+,[0-9]+\]: expected -?[0-9.e+-]+, actual -?[0-9.e+-]+, error [0-9.e+-]+ \(allowed" \
    --check "$tmp/fail" --fusion $level
done
check 1 "^0 of 1 data sets passed" --check "$tmp/fail" --fusion off

# 2. Tolerances: large ones accept the wrong outputs, zero ones reject softmax's rounding.
check 0 "PASS" --check "$tmp/fail" --fusion off --atol 1000
check 0 "PASS" --check "$tmp/fail" --fusion off --atol 0 --rtol 1e9
check 0 "PASS" --check "$node/test_softmax_axis_1" --fusion off
check 1 "FAIL: output" --check "$node/test_softmax_axis_1" --fusion off --atol 0 --rtol 0
check 2 "--atol: must be a number >= 0, got '-1'" --check "$tmp/pass" --atol -1

# 3. Bad input: exit 2 and a message naming the file.
cp -r "$tmp/pass" "$tmp/no_out" && rm "$tmp/no_out/test_data_set_0/output_0.pb"
check 2 "no_out/test_data_set_0/output_0.pb: missing \(the model has 1 output\)" --check "$tmp/no_out"
cp -r "$tmp/pass" "$tmp/no_in" && rm "$tmp/no_in/test_data_set_0/input_1.pb"
check 2 "no_in/test_data_set_0/input_1.pb: missing \(the model has 2 inputs\)" --check "$tmp/no_in"
cp -r "$tmp/pass" "$tmp/extra" && cp "$tmp/pass/test_data_set_0/input_0.pb" "$tmp/extra/test_data_set_0/input_2.pb"
check 2 "extra/test_data_set_0/input_2.pb: one file too many" --check "$tmp/extra"
cp -r "$tmp/pass" "$tmp/trunc" && head -c 20 "$tmp/pass/test_data_set_0/output_0.pb" >"$tmp/trunc/test_data_set_0/output_0.pb"
check 2 "trunc/test_data_set_0/output_0.pb: not a valid TensorProto file" --check "$tmp/trunc"
cp -r "$tmp/pass" "$tmp/shape" && cp "$node/test_add_bcast/test_data_set_0/input_1.pb" "$tmp/shape/test_data_set_0/input_1.pb"
check 2 "shape/test_data_set_0/input_1.pb: graph input 1 'y' has shape \[3,4,5\], the file holds \[5\]" --check "$tmp/shape"
mkdir "$tmp/no_model"
check 2 "no_model/model.onnx: no such file" --check "$tmp/no_model"
cp -r "$tmp/pass" "$tmp/no_sets" && rm -r "$tmp/no_sets/test_data_set_0"
check 2 "no_sets: no test_data_set_\* directory" --check "$tmp/no_sets"
check 2 "GRAPH and --check DIR exclude each other" "$tmp/pass/model.onnx" --check "$tmp/pass"
check 2 "GRAPH is required" --iters 1
check 2 "--check writes no --report or --dump" --check "$tmp/pass" --report "$tmp/r.json"
[ -e "$tmp/r.json" ] && fail "--check with --report wrote a report"

# 4. --inputs / --save-outputs: the saved outputs of the test's inputs pass its own check,
# and a fresh directory made of the model, its inputs and the saved outputs passes exactly.
mkdir -p "$tmp/rt/test_data_set_0"
cp "$tmp/pass/model.onnx" "$tmp/rt/"
cp "$tmp/pass/test_data_set_0/input_"*.pb "$tmp/rt/test_data_set_0/"
check 0 "outputs match unfused" "$tmp/pass/model.onnx" --fusion all --iters 1 --warmup 0 \
  --inputs "$tmp/pass/test_data_set_0" --save-outputs "$tmp/saved"
[ -s "$tmp/saved/output_0.pb" ] || fail "--save-outputs wrote no output_0.pb"
cp "$tmp/saved/output_0.pb" "$tmp/rt/test_data_set_0/"
check 0 "^test_data_set_0: PASS" --check "$tmp/rt" --fusion off --atol 0 --rtol 0
cp "$tmp/saved/output_0.pb" "$tmp/pass/test_data_set_0/output_0.pb"
check 0 "^test_data_set_0: PASS" --check "$tmp/pass" --fusion off --atol 0 --rtol 0
for level in off adaptive; do
  check 0 "" "$tmp/pass/model.onnx" --fusion $level --iters 1 --warmup 0 \
    --inputs "$tmp/pass/test_data_set_0" --save-outputs "$tmp/saved_$level"
  cmp -s "$tmp/saved/output_0.pb" "$tmp/saved_$level/output_0.pb" ||
    fail "--save-outputs under --fusion $level differs from --fusion all"
done
check 2 "input_1.pb: missing" "$tmp/pass/model.onnx" --iters 1 --inputs "$tmp/no_in/test_data_set_0"
check 2 "--inputs excludes --check|excludes" --check "$tmp/pass" --inputs "$tmp/pass/test_data_set_0"

# 5. A non-empty --save-outputs directory is refused, unchanged; --force replaces only
# the outputs.
mkdir "$tmp/user" && echo precious >"$tmp/user/mine.txt" && echo old >"$tmp/user/output_0.pb"
check 2 "--save-outputs .*user: directory is not empty" "$tmp/pass/model.onnx" --iters 1 --save-outputs "$tmp/user"
echo old >"$tmp/old"
cmp -s "$tmp/old" "$tmp/user/output_0.pb" || fail "a refused --save-outputs changed output_0.pb"
[ "$(ls "$tmp/user" | wc -l)" = 2 ] || fail "a refused --save-outputs added files"
check 0 "" "$tmp/pass/model.onnx" --iters 1 --warmup 0 --fusion off --save-outputs "$tmp/user" --force
[ "$(cat "$tmp/user/mine.txt")" = precious ] || fail "--force changed a file it does not write"
cmp -s "$tmp/old" "$tmp/user/output_0.pb" && fail "--force did not replace output_0.pb"
check 2 "--force needs --dump or --save-outputs" "$tmp/pass/model.onnx" --force

# 6. The sweep's summary (onnx_conformance.sh) counts a pass, a mismatch, bad input and an
# unsupported op as such, and fails when anything failed.
mkdir "$tmp/root" "$tmp/root/empty"
cp -r "$tmp/pass" "$tmp/root/pass" && cp -r "$tmp/fail" "$tmp/root/fail"
cp -r "$node/test_nonzero_example" "$tmp/root/nonzero" # a data-dependent shape: never supported
bash "$(dirname "$0")/onnx_conformance.sh" "$run" "$tmp/root" "$(dirname "$0")/onnx_conformance_known.txt" \
  --fusion off >"$tmp/sum" 2>&1
rc=$?
{ [ $rc = 1 ] && grep -q "^1 passed, 2 failed, 1 skipped$" "$tmp/sum" && grep -qE "^ +1 NonZero: unsupported op$" "$tmp/sum" &&
  grep -q "^  fail (exit 1): test_data_set_0: FAIL: output 'sum'" "$tmp/sum" &&
  grep -q "^  empty (exit 2): hotfuse-run: .*empty/model.onnx: no such file" "$tmp/sum"; } ||
  { fail "onnx_conformance.sh summary (exit $rc):"; sed 's/^/    /' "$tmp/sum" >&2; }

# 7. The tolerances the check line states: --atol/--rtol as given, else 1e-3, and 1e-2 where
# f32 MatMuls run on TF32 (CUDA at HOTFUSE_F32_PRECISION=high, docs/math.md).
cp -r "$node/test_matmul_2d" "$tmp/matmul"
check 0 "atol 0.001, rtol 0.001; " --check "$tmp/matmul" --fusion off --backend cpu
check 0 "atol 0.0002, rtol 0.001; " --check "$tmp/matmul" --fusion off --backend cpu --atol 2e-4
if "$run" "$tmp/matmul/model.onnx" --backend cuda --fusion off --iters 1 >/dev/null 2>&1; then
  check 0 "atol 0.01, rtol 0.01 \(TF32 on CUDA; HOTFUSE_F32_PRECISION=highest checks FP32 math\); " \
    --check "$tmp/matmul" --fusion off --backend cuda
  check 0 "atol 0.0002, rtol 0.01 \(TF32" --check "$tmp/matmul" --fusion off --backend cuda --atol 2e-4
  HOTFUSE_F32_PRECISION=highest check 0 "atol 0.001, rtol 0.001; " --check "$tmp/matmul" --fusion off --backend cuda
else
  echo "no usable CUDA device: the TF32 tolerances are not checked here"
fi

[ $failures = 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "all --check / --inputs / --save-outputs checks passed"
