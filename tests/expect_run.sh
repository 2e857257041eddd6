# Sourced by the hotfuse-run CLI test scripts: `check RC PATTERN args...` runs "$run" args,
# and counts a failure (in $failures, printing the output) unless it exits RC and prints a
# line matching the extended regex PATTERN. Needs $run and $tmp set.
failures=0
check() {
  local rc=$1 pattern=$2
  shift 2
  "$run" "$@" >"$tmp/out" 2>&1
  local got=$?
  if [ $got != "$rc" ] || ! grep -qE -- "$pattern" "$tmp/out"; then
    echo "FAIL: hotfuse-run $* -> exit $got, wanted $rc and /$pattern/:" >&2
    sed 's/^/    /' "$tmp/out" >&2
    failures=$((failures + 1))
  else
    echo "ok: $* -> $(grep -m1 -E -- "$pattern" "$tmp/out")"
  fi
}
