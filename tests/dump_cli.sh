#!/usr/bin/env bash
# hotfuse-run --dump (docs/dumps.md): every file of an adaptive dump, what each --fusion
# level writes, the DOT files parse with Graphviz (skipped, saying so, without `dot`), a
# non-empty directory is refused with exit code 2 and left unchanged, --force works.
# Usage: dump_cli.sh HOTFUSE_RUN REPO_ROOT
set -euo pipefail
run=$1
root=$2
graph=$root/traces/graphs/adam.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# --backend cpu: the adaptive dump of the CPU session, on GPU machines too (auto would pick
# CUDA there now that the session runs on it).
small=(--iters 2 --warmup 1 --profile-iters 2 --reprofile-iters 2 --sync-compile
       --min-saving 0 --expected-iters 1000000000 --backend cpu)

have_dot=1
command -v dot >/dev/null || { have_dot=0; echo "dot (Graphviz) not on PATH: skipping the DOT parse and SVG checks"; }

check_dot() {  # FILE...: each parses with dot
  [ $have_dot = 1 ] || return 0
  for f in "$@"; do
    dot -Tjson "$f" >/dev/null 2>"$tmp/dot.err" || fail "$f does not parse: $(cat "$tmp/dot.err")"
  done
}

# 1. adaptive: every file, the DOT parses, the trace and report are JSON.
"$run" "$graph" "${small[@]}" --dump "$tmp/adaptive" >"$tmp/out.txt" 2>"$tmp/err.txt" ||
  fail "adaptive --dump exited $?: $(cat "$tmp/err.txt")"
for f in before.dot after.dot trace.json report.json; do
  [ -s "$tmp/adaptive/$f" ] || fail "adaptive: no $f"
done
ls "$tmp/adaptive/kernels/"hf_*.cpp >/dev/null 2>&1 || fail "adaptive: no kernels/hf_*.cpp"
if [ $have_dot = 1 ]; then
  for f in before.svg after.svg; do
    grep -q "<svg" "$tmp/adaptive/$f" || fail "adaptive: $f is not an SVG"
  done
fi
check_dot "$tmp/adaptive/before.dot" "$tmp/adaptive/after.dot"
python3 - "$tmp/adaptive" <<'PY'
import json, sys
d = sys.argv[1]
t = json.load(open(f"{d}/trace.json"))
assert t["displayTimeUnit"] in ("ms", "ns") and isinstance(t["traceEvents"], list), "trace shape"
phases = {e["ph"] for e in t["traceEvents"]}
assert {"X", "i", "M"} <= phases, phases
names = {e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M"}
assert {"executor", "compile worker", "iterations"} <= names, names
for e in t["traceEvents"]:
    if e["ph"] == "X":
        assert all(k in e for k in ("name", "ts", "dur", "pid", "tid")) and e["dur"] >= 0, e
r = json.load(open(f"{d}/report.json"))
assert r["summary"]["fusion"] == "adaptive" and r["regions"], r["summary"]
# One cluster per region: filled for a kept kernel, dashed/dotted for the others.
dot = open(f"{d}/after.dot").read()
for state, kind in (("swapped", "kept"), ("reverted", "reverted"), ("rejected", "rejected")):
    want = sum(x["state"] == state for x in r["regions"])
    got = dot.count(f"subgraph cluster_{kind}_")
    assert got == want, f"{got} cluster_{kind}_ subgraphs for {want} {state} regions"
PY

# 2. --fusion off | static | all: every mode is a policy of the one session and writes the
# same files; kernels/ only where regions were compiled.
for level in off static all; do
  "$run" "$graph" --iters 2 --warmup 1 --fusion $level --backend cpu --dump "$tmp/$level" >/dev/null 2>"$tmp/err.txt" ||
    fail "--fusion $level --dump exited $?: $(cat "$tmp/err.txt")"
  for f in before.dot after.dot trace.json report.json; do
    [ -s "$tmp/$level/$f" ] || fail "$level: no $f"
  done
  check_dot "$tmp/$level/before.dot" "$tmp/$level/after.dot"
  python3 - "$tmp/$level" "$level" <<'PY' || fail "$level: trace.json or report.json"
import json, sys
d, level = sys.argv[1], sys.argv[2]
t = json.load(open(f"{d}/trace.json"))
assert any(e["ph"] == "X" for e in t["traceEvents"]), "no complete events"
r = json.load(open(f"{d}/report.json"))
assert r["summary"]["fusion"] == level, r["summary"]
assert any(it["phase"] == "steady" for it in r["iterations"]), r["iterations"]
PY
done
ls "$tmp/all/kernels/"hf_*.cpp >/dev/null 2>&1 || fail "all: no kernels/hf_*.cpp"
for level in off static; do
  [ ! -e "$tmp/$level/kernels" ] || fail "$level: kernels/ written"
done
grep -q "cluster_kept_" "$tmp/all/after.dot" || fail "all: no kept cluster in after.dot"
grep -q "FUSE_" "$tmp/static/after.dot" || fail "static: no FUSE_ mode in after.dot"

# 3. A non-empty directory is refused: exit 2, one line naming it, nothing changed.
mkdir "$tmp/user"
echo "precious" >"$tmp/user/mine.txt"
echo "not a graph" >"$tmp/user/before.dot"
before=$(cd "$tmp/user" && find . -type f -exec sha256sum {} + | sort)
set +e
"$run" "$graph" "${small[@]}" --dump "$tmp/user" >/dev/null 2>"$tmp/err.txt"
rc=$?
set -e
[ $rc = 2 ] || fail "non-empty --dump DIR: exit code $rc, want 2"
[ "$(wc -l <"$tmp/err.txt")" = 1 ] || fail "want one line on stderr, got: $(cat "$tmp/err.txt")"
grep -qF "$tmp/user" "$tmp/err.txt" || fail "the message does not name the directory: $(cat "$tmp/err.txt")"
after=$(cd "$tmp/user" && find . -type f -exec sha256sum {} + | sort)
[ "$before" = "$after" ] || fail "the refused directory changed"

# 4. --force writes the dump there and leaves the user's other files alone.
"$run" "$graph" "${small[@]}" --dump "$tmp/user" --force >/dev/null 2>"$tmp/err.txt" ||
  fail "--force exited $?: $(cat "$tmp/err.txt")"
[ "$(cat "$tmp/user/mine.txt")" = "precious" ] || fail "--force changed a file the dump does not write"
grep -q "digraph" "$tmp/user/before.dot" || fail "--force did not replace before.dot"
[ -s "$tmp/user/trace.json" ] || fail "--force: no trace.json"
if ls -a "$tmp/user" | grep -q '\.tmp-'; then fail "temporary files left behind"; fi

# 5. --force needs --dump; a file as DIR is refused.
set +e
"$run" "$graph" --force >/dev/null 2>&1
rc1=$?
"$run" "$graph" "${small[@]}" --dump "$tmp/user/mine.txt" >/dev/null 2>&1
rc2=$?
set -e
[ $rc1 = 2 ] || fail "--force without --dump: exit code $rc1, want 2"
[ $rc2 = 2 ] || fail "--dump FILE: exit code $rc2, want 2"
echo "dump CLI: all checks passed"
