#!/usr/bin/env bash
# Each bad invocation must exit with code 2 and print exactly one line, on stderr, that
# contains the expected text. Usage: cli_errors.sh HOTFUSE_RUN REPO_ROOT
set -u
run=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# Environment set on a call (VAR=x expect ...) applies to the hotfuse-run it starts.
expect() {  # expect "substring" args...
  local want=$1
  shift
  "$run" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$want" "$tmp/err"; then
    echo "FAIL: hotfuse-run $* -> rc=$rc, stderr ($lines lines):" >&2
    cat "$tmp/err" >&2
    echo "  wanted rc=2 and one line containing: $want" >&2
    failures=$((failures + 1))
  else
    echo "ok: $* -> $(cat "$tmp/err")"
  fi
}

# Configuration errors (issue 23, item 8) are refused before anything runs: nothing on
# stdout (no backend line, no profile), and neither --dump's nor --save-outputs' directory
# is created.
expect_early() {  # expect_early "substring" args...
  local want=$1
  shift
  rm -rf "$tmp/early-dump" "$tmp/early-out"
  expect "$want" "$@" --dump "$tmp/early-dump" --save-outputs "$tmp/early-out"
  if [ -s "$tmp/out" ] || [ -e "$tmp/early-dump" ] || [ -e "$tmp/early-out" ]; then
    echo "FAIL: hotfuse-run $* ran before refusing its configuration; stdout:" >&2
    cat "$tmp/out" >&2
    ls "$tmp" >&2
    failures=$((failures + 1))
  fi
}

printf '{"nodes": [' >"$tmp/truncated.json"
printf '{"inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
 "nodes": [{"name": "bad", "op": "Elemwise", "mode": "FROB", "inputs": ["x"]}], "outputs": ["x"]}' >"$tmp/unknown_mode.json"
printf '{"inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
 "nodes": [{"name": "spin", "op": "Warp", "inputs": ["x"]}], "outputs": ["x"]}' >"$tmp/unknown_op.json"
printf '{"inputs": [{"name": "x", "dtype": "f32", "shape": [4]}, {"name": "y", "dtype": "f32", "shape": [3]}],
 "nodes": [{"name": "sum", "op": "Elemwise", "mode": "ADD", "inputs": ["x", "y"]}], "outputs": ["sum:0"]}' >"$tmp/mismatch.json"
printf '\x00\xff\xfe garbage' >"$tmp/binary.json"
printf '\x08\x07\x12\xff\xff garbage' >"$tmp/model.onnx"
: >"$tmp/empty.json"

ex="$root/traces/graphs/abc.json"
expect "/no/such/graph.json: cannot open file" /no/such/graph.json
expect "truncated.json: malformed JSON" "$tmp/truncated.json"
expect "empty.json: malformed JSON" "$tmp/empty.json"
expect "binary.json: malformed JSON" "$tmp/binary.json"
expect "model.onnx" "$tmp/model.onnx"
expect "node 'bad': unknown Elemwise mode 'FROB'" "$tmp/unknown_mode.json"
expect "node 'spin': unknown op 'Warp'" "$tmp/unknown_op.json"
expect "node 'sum' (Elemwise ADD): input shapes [4] and [3] do not broadcast" "$tmp/mismatch.json"
expect "is a directory" "$root/traces"
expect "unknown option --frobnicate" "$ex" --frobnicate
# Wording (issue 23, item 12): a misspelled option is named, with the closest one, and
# the graph is not; a value that is not a number says so.
expect "unknown option --fusoin (did you mean --fusion?)" "$ex" --fusoin all
expect "unknown option --fusoin (did you mean --fusion?)" --fusoin all "$ex"
expect "unknown option --iter (did you mean --iters?)" "$ex" --iter=3
expect "--iters: must be an integer from 1 to 1000000000, got '0'" "$ex" --iters 0
expect "--iters: must be an integer from 1 to 1000000000, got 'abc'" "$ex" --iters abc
expect "--min-saving: must be a number from 0 to 100, got 'lots'" "$ex" --min-saving lots
expect "--atol and --rtol are tolerances of --check DIR" "$ex" --atol 0.1
expect "--atol and --rtol are tolerances of --check DIR" "$ex" --rtol 0
# A file named neither *.onnx nor *.json: its content chooses, and an error says how.
cp "$root/tests/data/hostile/conv-output-wraps.onnx" "$tmp/conv-model.bin"
expect "(Conv): output 0 would be [1,1,4294836226,4295098370], more than 2^40 elements (read as ONNX: it is not named *.json and does not start with '{')" \
  "$tmp/conv-model.bin" --fusion off
printf 'garbage' >"$tmp/garbage.model"
expect "garbage.model: not a valid ONNX model (malformed or truncated protobuf) (read as ONNX" \
  "$tmp/garbage.model"
expect_ok() {  # expect_ok "stdout substring" args...: exit 0 and the line on stdout
  local want=$1
  shift
  "$run" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -ne 0 ] || ! grep -qF -- "$want" "$tmp/out"; then
    echo "FAIL: hotfuse-run $* -> rc=$rc, wanted stdout to contain: $want" >&2
    cat "$tmp/out" "$tmp/err" >&2
    failures=$((failures + 1))
  else
    echo "ok: $* -> $(grep -F -- "$want" "$tmp/out")"
  fi
}
cp "$ex" "$tmp/abc-graph"
expect_ok "graph 'abc' ($tmp/abc-graph): 2 nodes" "$tmp/abc-graph" --fusion off --iters 1 --warmup 0
# --save-outputs says what it wrote.
expect_ok "outputs: 1 file in $tmp/saved (output_0.pb 'y')" "$ex" --fusion off --iters 1 --warmup 0 \
  --save-outputs "$tmp/saved"
expect "--min-saving" "$ex" --min-saving 150
expect "--profile-iters" "$ex" --profile-iters 0
expect "--expected-iters" "$ex" --expected-iters -5
expect "--fusion" "$ex" --fusion sometimes
expect "--backend" "$ex" --backend tpu
# Refused only without a usable device; on a GPU machine it runs (tests/cuda_cli.sh).
if "$run" --check /nonexistent --backend cuda --fusion off 2>&1 | grep -q -- '--backend cuda: '; then
  expect "--backend cuda" "$ex" --backend cuda
fi
expect "GRAPH is required" --iters 3
expect "--fusion" "$ex" --fusion sometimes
MGB_JIT_BACKEND=PTX expect_early "MGB_JIT_BACKEND=PTX: expected NVRTC or CPU" "$ex" --iters 1 --warmup 0
# Checked in every mode, not only where a kernel is generated (--fusion off ignored it).
MGB_JIT_BACKEND=PTX expect_early "MGB_JIT_BACKEND=PTX" "$ex" --iters 1 --warmup 0 --fusion off
MGB_JIT_KEEP_INTERM=2 expect_early "MGB_JIT_KEEP_INTERM=2: expected 1 (keep) or 0" "$ex" \
  --iters 1 --warmup 0 --fusion off
mkdir -m 0777 "$tmp/open"
MGB_JIT_WORKDIR="$tmp/open" expect_early "MGB_JIT_WORKDIR: JIT work directory $tmp/open: writable by group or others" \
  "$ex" --iters 1 --warmup 0
: >"$tmp/plain-file"
MGB_JIT_WORKDIR="$tmp/plain-file" expect_early "MGB_JIT_WORKDIR: JIT work directory $tmp/plain-file: not a directory" \
  "$ex" --iters 1 --warmup 0 --fusion off
MGB_JIT_WORKDIR="$tmp/plain-file/sub" expect_early "MGB_JIT_WORKDIR: JIT work directory $tmp/plain-file/sub" \
  "$ex" --iters 1 --warmup 0 --fusion off
HOTFUSE_MAX_BYTES=lots expect_early "HOTFUSE_MAX_BYTES" "$ex" --iters 1 --warmup 0 --fusion off
HOTFUSE_NUM_THREADS=abc expect_early "HOTFUSE_NUM_THREADS=abc" "$ex" --iters 1 --warmup 0 \
  --fusion off --backend cpu
expect_early "--report /no/such/dir/r.json: directory /no/such/dir: No such file or directory" \
  "$ex" --iters 1 --warmup 0 --fusion off --report /no/such/dir/r.json
expect_early "--report $tmp: is a directory" "$ex" --iters 1 --warmup 0 --fusion off --report "$tmp"
: >"$tmp/dump-is-a-file"
rm -rf "$tmp/early-out"
expect "--dump $tmp/dump-is-a-file/sub: cannot create the directory: $tmp/dump-is-a-file is not a directory" \
  "$ex" --iters 1 --warmup 0 --fusion off --save-outputs "$tmp/early-out" --dump "$tmp/dump-is-a-file/sub"
if [ -s "$tmp/out" ] || [ -e "$tmp/early-out" ]; then
  echo "FAIL: a --dump that cannot be created was refused after --save-outputs made its directory" >&2
  failures=$((failures + 1))
fi
# Shapes whose element counts wrapped (issue 23): a Conv's 16-byte output written 2^64
# elements far, a Slice reading past a wrapped Broadcast. The IR counts every value.
hostile="$root/tests/data/hostile"
expect "node 'conv' (Conv): output 0 would be [1,1,4294836226,4295098370], more than 2^40 elements" \
  "$hostile/conv-output-wraps.json" --fusion off --iters 1 --warmup 0
expect "(Conv): output 0 would be [1,1,4294836226,4295098370], more than 2^40 elements" \
  "$hostile/conv-output-wraps.onnx" --fusion off --iters 1 --warmup 0
expect "node 'pool' (MaxPool): pads entries must be >= 0 and <= 2^40" \
  "$hostile/pool-pads-2e62.json" --fusion off --iters 1 --warmup 0
expect "node 'grow' (Broadcast): output 0 would be [4294967296,4294967296]" \
  "$hostile/broadcast-count-wraps.json" --fusion off --iters 1 --warmup 0
expect "node 'flat' (Reshape): shape [0,2305843009213693952] has more than 2^40 elements" \
  "$hostile/reshape-zero-times-huge.json" --fusion off --iters 1 --warmup 0
expect "node 'c' (Constant): shape [4294967296,4294967296] has more than 2^40 elements" \
  "$hostile/constant-count-wraps.json" --fusion off --iters 1 --warmup 0
expect "node 'grow' (Broadcast): output 0 would be [8,2305843009213693952]" \
  "$hostile/slice-past-wrapped-broadcast.json" --fusion off --iters 1 --warmup 0 \
  --save-outputs "$tmp/slice-out"
# Names reach the terminal escaped (issue 23, item 6): a node name with ESC sequences
# rewrote the terminal title and cleared the screen, a newline split the one-line error.
expect "node 'evil\\x1b[2J\\nsecond line' (Elemwise ADD): input shapes [4] and [3] do not broadcast" \
  "$hostile/escape-in-names-mismatch.json" --fusion off --iters 1 --warmup 0
"$run" "$hostile/escape-in-names.json" --fusion all --iters 2 --warmup 0 --backend cpu >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ] || LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]\\|\xc2[\x80-\x9f]\\|\xe2\x80\xae' "$tmp/out" "$tmp/err" ||
  ! grep -qF "evil\\x1b[2J\\nline\\u009b" "$tmp/out" || ! grep -qF "graph 'g\\x1b]0;pwned\\x07'" "$tmp/out"; then
  echo "FAIL: control characters from names reached the terminal (rc=$rc):" >&2
  cat -v "$tmp/out" "$tmp/err" >&2
  failures=$((failures + 1))
else
  echo "ok: names with ESC, newline, C1 and bidi characters printed escaped"
fi
# Silent wrong values (issue 23): each is an error naming the input, option or variable.
expect "value 'ids': init [0, 1e+30] must be [lo, hi] with lo < hi, within [-2147483648, 2147483648] for i32" \
  "$hostile/init-too-large-for-i32.json" --fusion off --iters 1 --warmup 0
expect "value 'x': init [-1e+308, 1e+308]" "$hostile/init-overflows-f32.json" --fusion off --iters 1 --warmup 0
expect "--seed: must be an integer from 0 to 18446744073709551615, got -1" "$ex" --seed -1
HOTFUSE_NUM_THREADS=abc expect "HOTFUSE_NUM_THREADS=abc: must be a thread count from 1 to 1024" \
  "$ex" --fusion off --iters 1 --warmup 0
HOTFUSE_NUM_THREADS=-1 expect "HOTFUSE_NUM_THREADS=-1: must be a thread count" "$ex" --fusion off --iters 1 --warmup 0
HOTFUSE_F32_PRECISION=medium expect "HOTFUSE_F32_PRECISION='medium': expected high or highest" \
  "$ex" --fusion off --iters 1 --warmup 0
# Checked first on every backend (the CUDA backend builds no CPU pool): before the device.
HOTFUSE_NUM_THREADS=abc expect "HOTFUSE_NUM_THREADS=abc: must be a thread count" "$ex" --backend cuda --iters 1

# --report (issue 23, item 7): never written through a symlink, even our own (in a sticky
# directory it may be another user's), and written atomically.
printf 'precious' >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/report-link.json"
expect_early "--report $tmp/report-link.json: is a symbolic link" "$ex" --iters 1 --warmup 0 \
  --fusion off --report "$tmp/report-link.json"
if [ "$(cat "$tmp/victim")" != precious ] || [ ! -L "$tmp/report-link.json" ]; then
  echo "FAIL: --report wrote through a symlink" >&2
  failures=$((failures + 1))
fi
# A full disk (a file size limit: EFBIG where ENOSPC would be) leaves the old report whole
# and no temp file, instead of a truncated one.
mkdir "$tmp/full"
printf 'old report' >"$tmp/full/r.json"
prlimit --fsize=4096 "$run" "$ex" --iters 1 --warmup 0 --fusion off --report "$tmp/full/r.json" \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] ||
  ! grep -qF -- "--report $tmp/full/r.json: write failed: File too large" "$tmp/err" ||
  [ "$(cat "$tmp/full/r.json")" != "old report" ] || [ "$(ls -A "$tmp/full")" != r.json ]; then
  echo "FAIL: --report under a full disk: rc=$rc, stderr:" >&2
  cat "$tmp/err" >&2
  ls -la "$tmp/full" >&2
  failures=$((failures + 1))
else
  echo "ok: --report on a full disk -> $(cat "$tmp/err"); the old report kept"
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all bad inputs rejected cleanly"
