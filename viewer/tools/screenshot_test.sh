#!/bin/sh
# CTest viewer_screenshot (tests/viewer.cmake): renders a dump headless under xvfb-run with
# Mesa's software OpenGL and checks the PNGs (tools: check_png.py): the requested size, and
# many distinct colours where the graph is drawn (not blank). With a model-size dump
# (SCOPED_DUMP: tests/data/viewer/scoped300, ~300 nodes with ONNX scoped names) it also
# checks what the Graph panel says it drew (--screenshot-facts, tools: check_facts.py):
# collapsed scope boxes at fit, labels at a readable size, the graph clipped below its
# title, and that a click on a box expands it.
#
#   screenshot_test.sh HOTFUSE_VIEW DUMP_DIR OUT_DIR [SCOPED_DUMP]
#
# Exit 77 (CTest's SKIP_RETURN_CODE) when xvfb-run or python3 is missing, saying so.
set -u
view=$1
dump=$2
out=$3
scoped=${4:-}
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

# A model-size graph: grouped, readable, clickable.
facts() {  # facts NAME SIZE CONDITIONS -- hotfuse-view options...
  name=$1 size=$2 conds=$3
  shift 3
  [ "${1:-}" = "--" ] && shift
  if ! "$view" "$scoped" --screenshot "$out/$name.png" --size "$size" \
      --screenshot-facts "$out/$name.json" "$@"; then
    echo "FAIL: hotfuse-view $scoped --screenshot $out/$name.png $* exited non-zero"
    status=1
    return 1
  fi
  python3 "$here/check_png.py" "$out/$name.png" --size "$size" --region 0.02,0.15,0.98,0.95 \
    --min-colors 8 || status=1
  # shellcheck disable=SC2086  # the conditions are words
  python3 "$here/check_facts.py" "$out/$name.json" $conds || status=1
}
if [ -n "$scoped" ]; then
  readable="graph.before.min_label_px>=7 graph.before.clip_top>=graph.before.title_bottom"
  # The whole window: the graph panel is small; the ~300 nodes are a few boxes, named.
  facts scoped_all 1280x800 "graph.before.graph_nodes>=280 graph.before.boxes_drawn>=1 graph.before.shown_nodes<=40 \
    graph.before.labels>=5 $readable graph.after.boxes_drawn>=1 graph.after.labels>=5 graph.after.min_label_px>=7"
  # The graph panel alone, side by side: the blocks are boxes, in both graphs.
  # Far out, a node or box shows its name only (no op, shape, time lines); no minimap while
  # the whole graph is in view.
  facts scoped_graph 1600x1000 "graph.before.boxes_drawn>=10 graph.before.labels>=15 graph.before.zoom>=0.39 \
    graph.before.shown_nodes<=80 $readable graph.after.boxes_drawn>=10 graph.after.labels>=15 \
    graph.after.min_label_px>=7 graph.before.max_label_lines<=2 graph.before.minimap==0 \
    graph.before.outlines_drawn>=1" -- --panel graph
  # F (the mouse over the panel) zooms both graphs to the selected node, which is drawn;
  # close in, labels show more lines (op, shape, time), and the minimap shows where it is.
  facts scoped_zoom 1600x1000 "graph.before.zooms_to_selection==1 graph.after.zooms_to_selection==1 \
    graph.before.zoom>=1 graph.after.zoom>=1 graph.before.selection_drawn>=1 \
    graph.after.selection_drawn>=1 graph.before.max_label_lines>=3 graph.before.minimap==1 \
    graph.after.minimap==1" -- --panel graph --hover 400,600 --key F --frames 6 \
    --select /features/features.0/features.0.0/Conv/conv
  # A click on a box expands it: more nodes shown, still readable.
  if facts scoped_small 900x600 "graph.before.boxes_drawn>=1 graph.before.labels>=5 $readable" \
      -- --panel graph --graph before &&
     at=$(python3 "$here/check_facts.py" "$out/scoped_small.json" --print-box-center graph.before /features) &&
     shown=$(python3 "$here/check_facts.py" "$out/scoped_small.json" --print graph.before.shown_nodes); then
    # Expanded, /features is outlined around its blocks.
    facts scoped_click 900x600 "graph.before.shown_nodes>$shown graph.before.boxes_drawn>=5 \
      graph.before.labels>=5 graph.before.outlines_drawn>=1 $readable" \
      -- --panel graph --graph before --click "$at" || true
  else
    echo "FAIL: no /features box to click in $out/scoped_small.png"
    status=1
  fi
fi

[ $status -eq 0 ] && echo "viewer_screenshot: all screenshots OK in $out"
echo $status >"$out/status"
exit $status
