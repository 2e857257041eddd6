#!/usr/bin/env bash
# Region verdicts outlive the process (session/verdict_store.h): a second run of the same
# graph on the same machine takes what the first decided, in the kernel cache's directory;
# HOTFUSE_VERDICTS=off decides again, and other selection options are another context.
# Deterministic: every region is "not worth it" whatever this machine's timings. The graph is
# the activation chain on 64 elements, whose ops take microseconds, and --expected-iters 1 asks
# an uncached compile (estimated at 500 ms, docs/adaptive.md) to pay for itself in one
# iteration. (--min-saving 100 alone was not enough: a region's saving is a sum of per-op
# medians, which under a sanitizer on a loaded machine exceeded the iteration's median.)
# Usage: cli_verdicts.sh HOTFUSE_RUN REPO_ROOT
set -u
run=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
ex="$tmp/activation_chain_64.json"
sed 's/"shape": \[1048576\]/"shape": [64]/' "$root/traces/graphs/activation_chain.json" >"$ex"
grep -q '"shape": \[64\]' "$ex" || { echo "FAIL: could not shrink the activation chain's input"; exit 1; }
fail() {
  echo "FAIL: $*" >&2
  cat "$tmp/out" "$tmp/err" >&2
  failures=$((failures + 1))
}
go() {  # go REPORT MIN_SAVING [ENV...]: one adaptive run into $tmp/out, exit code checked
  local report=$1 saving=$2
  shift 2
  env HOTFUSE_CACHE_DIR="$tmp/cache" "$@" timeout 120 "$run" "$ex" --fusion adaptive \
    --min-saving "$saving" --expected-iters 1 --iters 1 --warmup 0 --backend cpu --report "$tmp/$report" \
    >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq 0 ] || fail "hotfuse-run exited $rc ($report)"
}
carried() {  # carried REPORT: "carried regions/regions", and every carried reason checked
  python3 - "$tmp/$1" <<'PY'
import json, sys
regions = json.load(open(sys.argv[1]))["regions"]
carried = [r for r in regions if r["carried_over"]]
for r in carried:
    assert r["reason"].startswith("carried over: "), r["reason"]
    assert r["state"] == "rejected", r
print(f"{len(carried)}/{len(regions)}")
PY
}

go first.json 100
[ "$(carried first.json)" = "0/1" ] || fail "the first run carried verdicts: $(carried first.json)"
go second.json 100
[ "$(carried second.json)" = "1/1" ] || fail "the second run did not take the first's verdict: $(carried second.json)"
grep -q "decided at x \[" "$tmp/second.json" || fail "the carried reason does not name the signature it was decided at"
go off.json 100 HOTFUSE_VERDICTS=off
[ "$(carried off.json)" = "0/1" ] || fail "HOTFUSE_VERDICTS=off still carried: $(carried off.json)"
go other.json 99
[ "$(carried other.json)" = "0/1" ] || fail "another --min-saving took the verdict: $(carried other.json)"

env HOTFUSE_CACHE_DIR="$tmp/cache" HOTFUSE_VERDICTS=maybe "$run" "$ex" --iters 1 --backend cpu \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] || fail "HOTFUSE_VERDICTS=maybe exited $rc, not 2"
grep -q "HOTFUSE_VERDICTS='maybe'" "$tmp/err" || fail "the error does not name HOTFUSE_VERDICTS"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "verdicts carried across processes"
