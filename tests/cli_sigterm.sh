#!/usr/bin/env bash
# SIGTERM while the host compiler runs (issue 23): hotfuse-run kills the compiler's process
# group (its own, which the signal does not reach) and ends; the next run removes the work
# directory the killed one left. The compiler is a stand-in (HOTFUSE_CXX) that records its
# process group and hangs with a child, as a stuck cc1plus would.
# Usage: cli_sigterm.sh HOTFUSE_RUN REPO_ROOT
set -u
run=$1 root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/cxx" <<'SH'
#!/bin/sh
if [ "$1" = --version ]; then echo "stand-in 1.0"; exit 0; fi
cut -d" " -f5 /proc/$$/stat >"$HF_TEST_PGID.tmp" && mv "$HF_TEST_PGID.tmp" "$HF_TEST_PGID"
sleep 600 &
sleep 600
SH
chmod +x "$tmp/cxx"
mkdir "$tmp/t"
export HOTFUSE_CXX="$tmp/cxx" HF_TEST_PGID="$tmp/pgid" TMPDIR="$tmp/t" HOTFUSE_CACHE_DIR=off
"$run" "$root/traces/graphs/abc.json" --fusion all --backend cpu --iters 1 >"$tmp/out" 2>&1 &
pid=$!
for _ in $(seq 600); do [ -s "$tmp/pgid" ] && break; sleep 0.1; done
[ -s "$tmp/pgid" ] || { echo "FAIL: the stand-in compiler never started"; cat "$tmp/out"; exit 1; }
pgid=$(cat "$tmp/pgid")
kill -TERM $pid
wait $pid
rc=$?
[ $rc = 143 ] || { echo "FAIL: hotfuse-run ended with $rc, expected 143 (SIGTERM)"; cat "$tmp/out"; exit 1; }
for _ in $(seq 100); do kill -0 -- "-$pgid" 2>/dev/null || break; sleep 0.1; done
if kill -0 -- "-$pgid" 2>/dev/null; then
  echo "FAIL: the compiler's process group $pgid outlived hotfuse-run"
  kill -KILL -- "-$pgid"
  exit 1
fi
echo "ok: SIGTERM ended hotfuse-run (143) and the compiler's group $pgid"
left=$(ls "$tmp/t")
[ -n "$left" ] || { echo "FAIL: the killed run left no work directory to clean (test setup)"; exit 1; }
HOTFUSE_CXX= "$run" "$root/traces/graphs/abc.json" --fusion off --iters 1 >/dev/null 2>&1
HOTFUSE_CXX= "$run" "$root/traces/graphs/abc.json" --fusion all --backend cpu --iters 1 >"$tmp/out" 2>&1
if [ -n "$(ls "$tmp/t")" ]; then
  echo "FAIL: the next run left the killed run's work directory: $(ls "$tmp/t")"
  exit 1
fi
echo "ok: the next run removed $left"
