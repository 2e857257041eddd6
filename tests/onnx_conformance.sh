#!/usr/bin/env bash
# The ONNX conformance summary: `hotfuse-run --check` on every test directory under ROOT
# (Debian's libonnx-testdata, e.g. .../data/node), then one line
#   N passed, M failed, K skipped
# followed by the skip reasons (counted) and the failing tests. A test is skipped when the
# importer refuses the model as unsupported (exit code 2 and a message saying "unsupported"
# or "not supported": an op, a type, an attribute value hotfuse does not implement);
# anything else that does not pass is a failure. A test listed in KNOWN (lines
# "name: reason", tests/onnx_conformance_known.txt) must fail its check (exit code 1): it is
# counted as skipped with its reason, and as a failure if it passes or cannot run.
# Exits 1 when any test failed.
#
#   tests/onnx_conformance.sh HOTFUSE_RUN ROOT KNOWN [hotfuse-run options...]
set -uo pipefail
run=$1 root=$2 known=$3
shift 3
[ -d "$root" ] || { echo "onnx_conformance: $root: no such directory" >&2; exit 2; }
declare -A known_reason
while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  known_reason[${line%%:*}]="test data disagrees: ${line#*: }"
done <"$known"

pass=0 fail=0 skip=0
failed=() reasons=()
errf=$(mktemp)
trap 'rm -f "$errf"' EXIT
for dir in "$root"/*/; do
  dir=${dir%/}
  name=$(basename "$dir")
  out=$("$run" --check "$dir" "$@" 2>"$errf")
  rc=$?
  err=$(cat "$errf")
  if [ -n "${known_reason[$name]:-}" ]; then
    if [ $rc = 1 ]; then
      skip=$((skip + 1))
      reasons+=("${known_reason[$name]}")
    else
      fail=$((fail + 1))
      failed+=("$name (exit $rc): listed in $(basename "$known") but its check did not fail")
    fi
  elif [ $rc = 0 ]; then
    pass=$((pass + 1))
  elif [ $rc = 2 ] && grep -qE "unsupported|not supported" <<<"$err"; then
    skip=$((skip + 1))
    # "DIR/model.onnx: node 0 'n' (Conv): unsupported op" -> "Conv: unsupported op"
    reason=$(head -n1 <<<"$err" | sed -E -e 's/^hotfuse-run: //' -e 's/^[^ ]*model\.onnx: //' \
      -e "s/^[^ ]*\.pb: //" -e "s/^node [0-9]+ ('[^']*' )?\(([^)]*)\): /\2: /" -e "s/^(input|output|initializer) '[^']*': //" \
      -e 's/ \(hotfuse computes in .*\)$//')
    reasons+=("$reason")
  else
    fail=$((fail + 1))
    failed+=("$name (exit $rc): $( (grep -m1 FAIL <<<"$out"; head -n1 <<<"$err") | head -n1)")
  fi
done
echo "$pass passed, $fail failed, $skip skipped"
if [ $skip -gt 0 ]; then
  echo "skip reasons:"
  printf '%s\n' "${reasons[@]}" | sort | uniq -c | sort -rn
fi
if [ $fail -gt 0 ]; then
  echo "failed:"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
