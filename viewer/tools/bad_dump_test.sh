#!/bin/sh
# CTest viewer_bad_dump (tests/viewer.cmake): a missing path, an empty folder and a malformed
# dump each give a clear message on stderr and exit code 2 from `hotfuse-view --screenshot`
# (which still writes the PNG showing the message when it can open a window), never a crash.
#
#   bad_dump_test.sh HOTFUSE_VIEW DATA_DIR OUT_DIR     (DATA_DIR: tests/data/viewer)
#
# Exit 77 (CTest's SKIP_RETURN_CODE) when xvfb-run is missing, saying so.
set -u
view=$1
data=$2
out=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/xvfb_wrap.sh"
mkdir -p "$out/empty"

status=0
expect() {  # expect NAME PATH TEXT...: exit code 2 and every TEXT on stderr
  name=$1 path=$2
  shift 2
  "$view" "$path" --screenshot "$out/$name.png" --size 800x500 >"$out/$name.out" 2>"$out/$name.err"
  rc=$?
  if [ $rc -ne 2 ]; then
    echo "FAIL: $name: exit code $rc, expected 2"; cat "$out/$name.err"; status=1
  fi
  for text in "$@"; do
    if ! grep -qF -- "$text" "$out/$name.err"; then
      echo "FAIL: $name: stderr does not say '$text':"; cat "$out/$name.err"; status=1
    fi
  done
  if [ ! -s "$out/$name.png" ]; then
    echo "FAIL: $name: no PNG showing the message"; status=1
  fi
  [ $status -eq 0 ] && echo "ok: $name: $(head -n 1 "$out/$name.err")"
  return 0
}

expect missing "$out/no-such-dump" "no-such-dump: no such file or directory"
expect empty "$out/empty" "not a dump folder"
expect malformed "$data/malformed" "report.json: not valid JSON (line 4" \
  "trace.json: traceEvents: expected an array, got an object" "before.dot: not a valid DOT graph"
# F5 reloads, and what is wrong is printed on stderr again, as on launch.
"$view" "$data/malformed" --screenshot "$out/reload.png" --size 800x500 --key F5 --frames 4 \
  >"$out/reload.out" 2>"$out/reload.err"
n=$(grep -cF "report.json: not valid JSON (line 4" "$out/reload.err")
if [ "$n" -ne 2 ]; then
  echo "FAIL: reload: F5 did not print the error again ($n times on stderr):"; cat "$out/reload.err"; status=1
else
  echo "ok: reload: the error printed at launch and after F5"
fi
echo $status >"$out/status"
exit $status
