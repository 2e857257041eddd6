#!/bin/sh
# CTest viewer_screenshot (tests/viewer.cmake): renders a dump headless under xvfb-run with
# Mesa's software OpenGL and checks the PNGs (tools: check_png.py): the requested size, and
# many distinct colours where the graph is drawn (not blank).
#
#   screenshot_test.sh HOTFUSE_VIEW DUMP_DIR OUT_DIR
#
# Exit 77 (CTest's SKIP_RETURN_CODE) when xvfb-run or python3 is missing, saying so.
set -u
view=$1
dump=$2
out=$3
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP: python3 is not installed: cannot check the PNG"
  exit 77
fi
. "$here/xvfb_wrap.sh"

status=0
shot() {  # shot NAME SIZE REGION MIN_COLOURS -- hotfuse-view options...
  name=$1 size=$2 region=$3 colours=$4
  shift 4
  if ! "$view" "$dump" --screenshot "$out/$name.png" --size "$size" "$@"; then
    echo "FAIL: hotfuse-view $dump --screenshot $out/$name.png --size $size $* exited non-zero"
    status=1
    return
  fi
  if ! python3 "$here/check_png.py" "$out/$name.png" --size "$size" --region "$region" \
      --min-colors "$colours"; then
    status=1
  fi
}

# The whole window: the graph area is the top-left tile.
shot all 1280x800 0.01,0.08,0.74,0.45 16 --frames 4
# The graph panel alone, a node selected (the region highlighted in both graphs).
shot graph 960x640 0.02,0.12,0.98,0.95 16 --panel graph --select m_hat
# The timeline alone, and the summary alone (the iteration plot).
shot timeline 960x400 0.12,0.2,0.98,0.9 8 --panel timeline
shot summary 640x480 0.02,0.4,0.98,0.95 6 --panel summary
[ $status -eq 0 ] && echo "viewer_screenshot: all screenshots OK in $out"
echo $status >"$out/status"
exit $status
