#!/bin/sh
# CTest viewer_timeline_screenshot (tests/viewer.cmake): the Timeline's and the Summary's
# honest messages and colours, rendered headless under xvfb-run and checked twice: in the
# frame's facts (hotfuse-view --screenshot-facts, viewer/ui/frame_facts.h) and in the pixels.
#
#   timeline_screenshot_test.sh HOTFUSE_VIEW DATA_DIR OUT_DIR     (DATA_DIR: tests/data/viewer)
#
#   slowdown        a report whose speedup is 0.68x: the Summary draws it red (#c62828), and
#                   red pixels are there; so do the Hotspots' Regions table for its region and
#                   the after graph's headline (and none of them for adam's 7x).
#   garbage_trace   a trace.json that is not JSON: the Timeline says it could not be read and
#                   gives the parse error (line, column), not "no trace.json".
#   adam at 1024x640  the whole window: no Timeline track cut off, ruler labels that do not
#                   overlap, the legend drawn (in the toolbar when the panel is too short);
#                   the Timeline alone at 1024x400: the legend line drawn under the tracks.
#   keys            W held over the Timeline zooms in around the cursor, D pans right (the
#                   view in the facts against the plain shot's).
#   markers         the Summary plot's swap / revert labels do not overlap, the swap's drawn;
#                   crowded_markers (4 swaps, 2 reverts a few pixels apart) stacks them,
#                   the first swap and a revert among those drawn.
#   help            ? opens the shortcuts overlay.
#
# Exit 77 (CTest's SKIP_RETURN_CODE) when xvfb-run or python3 is missing, saying so.
set -u
view=$1
data=$2
out=$3
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP: python3 is not installed: cannot check the facts and the PNG"
  exit 77
fi
. "$here/xvfb_wrap.sh"

status=0
# shot NAME DUMP EXPECTED_RC -- options: writes NAME.png and NAME.json
shot() {
  name=$1 dump=$2 want=$3
  shift 3
  "$view" "$dump" --screenshot "$out/$name.png" --screenshot-facts "$out/$name.json" "$@" \
    >"$out/$name.out" 2>"$out/$name.err"
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL: $name: hotfuse-view exited $rc, expected $want"; cat "$out/$name.err"; status=1
  fi
}
# check NAME PYTHON: runs the assertions with `facts` (the JSON) and `px` (the PNG's pixels).
check() {
  name=$1
  if python3 - "$here" "$out/$name.png" "$out/$name.json" "$2" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from check_png import read_png
w, h, bpp, rows = read_png(sys.argv[2])
facts = json.load(open(sys.argv[3]))
def count(rgb, region=(0, 0, 1, 1), tol=12):
    x0, y0, x1, y1 = int(region[0] * w), int(region[1] * h), int(region[2] * w), int(region[3] * h)
    n = 0
    for y in range(y0, y1):
        r = rows[y]
        for x in range(x0, x1):
            p = r[x * bpp:x * bpp + 3]
            n += all(abs(p[i] - rgb[i]) <= tol for i in range(3))
    return n
ok = True
def expect(cond, what):
    global ok
    if not cond:
        print("FAIL: " + what); ok = False
exec(sys.argv[4])
sys.exit(0 if ok else 1)
PY
  then echo "ok: $name"; else echo "FAIL: $name (facts: $out/$name.json)"; status=1; fi
}

shot slowdown "$data/slowdown" 0 --size 640x480 --panel summary
check slowdown '
expect(facts.get("summary.speedup") == "0.68x", "speedup shown: %r" % facts.get("summary.speedup"))
expect(facts.get("summary.speedup_color") == "#c62828", "speedup colour: %r" % facts.get("summary.speedup_color"))
red = count((0xc6, 0x28, 0x28), (0, 0, 1, 0.2))
expect(red >= 20, "only %d red pixels in the headline" % red)
'
# The same check fails for a speedup: the colour is not always red.
shot speedup "$data/adam" 0 --size 640x480 --panel summary
check speedup '
expect(facts.get("summary.speedup_color") == "#008a3e", "speedup colour: %r" % facts.get("summary.speedup_color"))
expect(count((0xc6, 0x28, 0x28), (0, 0, 1, 0.2)) == 0, "red in a speedup headline")
'
# The Regions table (a click on its tab): the slowdown's fused time red, the speedup's not.
shot regions_slow "$data/slowdown" 0 --size 900x300 --panel hotspots --click 300,58 --frames 6
check regions_slow '
red = count((0xc6, 0x28, 0x28), (0.42, 0.28, 0.66, 0.4))
expect(red >= 10, "only %d red pixels in the fused (speedup) cell" % red)
'
shot regions_fast "$data/adam" 0 --size 900x300 --panel hotspots --click 300,58 --frames 6
check regions_fast '
expect(count((0xc6, 0x28, 0x28), (0.42, 0.28, 0.66, 0.4)) == 0, "red in a faster region")
'
# The after graph's headline says the Summary's speedup, red below 1x (its DOT title says 7x).
shot graph_slow "$data/slowdown" 0 --size 900x400 --panel graph --graph after
check graph_slow '
expect(facts.get("graph.after_badge") == "0.68x", "after badge: %r" % facts.get("graph.after_badge"))
expect(facts.get("graph.after_badge_color") == "#c62828", "after badge colour: %r" % facts.get("graph.after_badge_color"))
'
shot graph_fast "$data/adam" 0 --size 900x400 --panel graph --graph after
check graph_fast '
expect(facts.get("graph.after_badge_color") == "#008a3e", "after badge colour: %r" % facts.get("graph.after_badge_color"))
'
shot garbage_trace "$data/garbage_trace" 2 --size 800x300 --panel timeline
check garbage_trace '
m = facts.get("timeline.message", "")
expect(m.startswith("trace.json could not be read: "), "timeline message: %r" % m)
expect("line 1" in m and "column" in m, "no parse position in: %r" % m)
expect("no trace.json" not in m, "says no trace.json: %r" % m)
expect(count((0xc7, 0x29, 0x29), (0, 0, 1, 0.3), tol=20) >= 20, "the message is not drawn red")
'
if ! grep -qF "trace.json: not valid JSON" "$out/garbage_trace.err"; then
  echo "FAIL: garbage_trace: stderr does not give the parse error:"; cat "$out/garbage_trace.err"; status=1
fi
shot small "$data/adam" 0 --size 1024x640
check small '
expect(facts.get("timeline.message") == "", "timeline message: %r" % facts.get("timeline.message"))
expect(facts.get("timeline.tracks_cut_off") == [], "tracks cut off: %r" % facts.get("timeline.tracks_cut_off"))
labels = facts.get("timeline.ruler_labels", [])
expect(len(labels) >= 2, "ruler labels: %r" % labels)
for a in labels:
    for b in labels:
        if a is not b and a["row"] == b["row"]:
            expect(a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"], "labels overlap: %r %r" % (a, b))
expect(facts.get("timeline.legend") in ("line", "toolbar"), "legend: %r" % facts.get("timeline.legend"))
'
# The Timeline alone: room for the legend line.
shot timeline "$data/adam" 0 --size 1024x400 --panel timeline
check timeline '
expect(facts.get("timeline.tracks_cut_off") == [], "tracks cut off: %r" % facts.get("timeline.tracks_cut_off"))
expect(facts.get("timeline.legend") == "line", "legend: %r" % facts.get("timeline.legend"))
expect(facts.get("timeline.legend_items", 0) >= 6, "legend items: %r" % facts.get("timeline.legend_items"))
'
# Keys held over the Timeline (the mouse resting on it), against the plain shot above:
# W zooms in around the cursor, D pans right by most of a span, the span kept.
shot keys_w "$data/adam" 0 --size 1024x400 --panel timeline --hover 600,200 --key W --frames 30
check keys_w '
import os
base = json.load(open(os.path.join(os.path.dirname(sys.argv[3]), "timeline.json")))["timeline.view_us"]
v = facts.get("timeline.view_us")
span0, span = base[1] - base[0], v[1] - v[0]
expect(span < 0.6 * span0, "W did not zoom in: %r -> %r" % (base, v))
expect(v[0] >= base[0] and v[1] <= base[1], "W zoomed out of the view: %r -> %r" % (base, v))
'
shot keys_d "$data/adam" 0 --size 1024x400 --panel timeline --hover 600,200 --key D --frames 30
check keys_d '
import os
base = json.load(open(os.path.join(os.path.dirname(sys.argv[3]), "timeline.json")))["timeline.view_us"]
v = facts.get("timeline.view_us")
span0, span = base[1] - base[0], v[1] - v[0]
expect(abs(span - span0) <= 0.01 * span0, "D changed the span: %r -> %r" % (base, v))
expect(v[0] - base[0] >= 0.4 * span0, "D did not pan right: %r -> %r" % (base, v))
'
# ? shows the list of shortcuts.
shot help "$data/adam" 0 --size 1024x640 --key "?"
check help '
expect(facts.get("help.shortcuts", 0) >= 20, "no shortcuts overlay: %r" % facts.get("help.shortcuts"))
'
# The Summary plot's swap and revert labels: stacked or elided, never overlapping, inside
# the plot.
for d in slowdown crowded_markers; do
  shot "markers_$d" "$data/$d" 0 --size 480x360 --panel summary
  check "markers_$d" '
labels = facts.get("summary.marker_labels", [])
expect(len(labels) >= 1 or facts.get("summary.markers", 0) == 0, "no marker label drawn: %r" % labels)
expect(any(l["text"] == "swap" for l in labels), "the swap is not labelled: %r" % labels)
if sys.argv[3].endswith("crowded_markers.json"):
    expect(facts.get("summary.markers") == 6, "markers: %r" % facts.get("summary.markers"))
    expect(any(l["text"].startswith("rev") for l in labels), "no revert labelled: %r" % labels)
    expect(len(set(l["row"] for l in labels)) >= 2, "crowded labels not stacked: %r" % labels)
for a in labels:
    for b in labels:
        if a is not b and a["row"] == b["row"]:
            expect(a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"], "labels overlap: %r %r" % (a, b))
'
done

[ $status -eq 0 ] && echo "viewer_timeline_screenshot: all checks passed in $out"
echo $status >"$out/status"
exit $status
