// hotfuse-view's Timeline model (docs/viewer.md, Timeline): range statistics over a selected
// time span, search with next / previous, labels that never overlap (elided or stacked),
// flow arrows and counter tracks read from trace.json, the per-file errors a panel shows,
// value formatting with units, the recent-dumps list and the dump folder watch.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "dump/trace_json_device.h"
#include "tests/support/temp_dir.h"
#include "viewer/model/color.h"
#include "viewer/model/dir_listing.h"
#include "viewer/model/dump.h"
#include "viewer/model/dump_watch.h"
#include "viewer/model/format.h"
#include "viewer/model/label_layout.h"
#include "viewer/model/marker_labels.h"
#include "viewer/model/recent_dumps.h"
#include "viewer/model/timeline_query.h"
#include "viewer/model/trace.h"
#include "viewer/model/view_transform.h"

namespace hf::viewer {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json x_event(const std::string& name, double ts, double dur, int tid = 1) {
  return {{"name", name}, {"ph", "X"}, {"ts", ts}, {"dur", dur}, {"pid", 1}, {"tid", tid}};
}

// Two tracks: "a" at 0, 10, 20, ... (5 us each) on tid 1, "bb" at 3, 13, ... (2 us) on tid 2.
Trace two_track_trace(int n) {
  json events = json::array();
  for (int i = 0; i < n; ++i) {
    events.push_back(x_event("a", 10.0 * i, 5, 1));
    events.push_back(x_event("bb", 10.0 * i + 3, 2, 2));
  }
  return parse_trace(json{{"traceEvents", events}});
}

// ---- range statistics ----------------------------------------------------------------------

TEST(ViewerTimelineRange, CountTotalAndMeanPerNameMatchBruteForce) {
  Trace t = two_track_trace(50);
  for (auto [t0, t1] :
       {std::pair{0.0, 500.0}, {12.0, 47.0}, {4.5, 4.6}, {47.0, 12.0}, {600.0, 700.0}}) {
    std::map<std::string, std::pair<int, double>> expect;
    const double lo = std::min(t0, t1), hi = std::max(t0, t1);
    for (const TraceEvent& e : t.events)
      if (e.end() >= lo && e.ts <= hi) {
        ++expect[e.name].first;
        expect[e.name].second += e.dur;
      }
    std::vector<NameStats> got = range_stats(t, t0, t1);
    ASSERT_EQ(got.size(), expect.size()) << t0 << ".." << t1;
    for (const NameStats& s : got) {
      EXPECT_EQ(s.count, expect[s.name].first) << s.name << " in " << t0 << ".." << t1;
      EXPECT_DOUBLE_EQ(s.total_us, expect[s.name].second);
      EXPECT_DOUBLE_EQ(s.mean_us(), expect[s.name].second / expect[s.name].first);
    }
    for (size_t i = 1; i < got.size(); ++i) EXPECT_GE(got[i - 1].total_us, got[i].total_us);
  }
  // 12..47: a at 10 (overlapping, until 15), 20, 30, 40 (4 x 5 us) and bb at 13, 23, 33, 43
  // (4 x 2 us): a first.
  std::vector<NameStats> s = range_stats(t, 12, 47);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name, "a");
  EXPECT_EQ(s[0].count, 4);
  EXPECT_DOUBLE_EQ(s[0].total_us, 20.0);
  EXPECT_EQ(s[1].count, 4);
  EXPECT_DOUBLE_EQ(s[1].mean_us(), 2.0);
}

// ---- keys ----------------------------------------------------------------------------------

// W / S (Up / Down) zoom around the time under the cursor, A / D (Left / Right) pan, as the
// Timeline applies them every frame while a key is held (TimelineView::keys).
TEST(ViewerTimelineKeys, WasdZoomAroundTheCursorAndPanBySpans) {
  TimeView v;
  v.fit(0, 1000, 0);
  const double at = 250;  // a quarter in: it stays where it is on screen
  TimeKeys w;
  w.zoom_in = true;
  apply_time_keys(v, w, at, 1.0);  // one second held: x0.15
  EXPECT_NEAR(v.span(), 150, 1e-9);
  EXPECT_NEAR(v.to_x(at, 1000), 250, 1e-9);
  // Held over frames, the same second zooms the same: 60 frames of 1/60 s.
  TimeView frames;
  frames.fit(0, 1000, 0);
  for (int i = 0; i < 60; ++i) apply_time_keys(frames, w, at, 1.0 / 60);
  EXPECT_NEAR(frames.span(), 150, 1e-6);
  EXPECT_NEAR(frames.start, v.start, 1e-6);
  // S undoes W.
  TimeKeys s;
  s.zoom_out = true;
  apply_time_keys(v, s, at, 1.0);
  EXPECT_NEAR(v.start, 0, 1e-9);
  EXPECT_NEAR(v.end, 1000, 1e-9);
  // Both zoom keys at once: no change; never narrower than min_span.
  TimeKeys both = w;
  both.zoom_out = true;
  apply_time_keys(v, both, at, 0.5);
  EXPECT_NEAR(v.span(), 1000, 1e-9);
  for (int i = 0; i < 100; ++i) apply_time_keys(v, w, at, 1.0, 0.05);
  EXPECT_NEAR(v.span(), 0.05, 1e-12);
  // A / D: 1.2 spans per second, the span kept.
  v.fit(0, 1000, 0);
  TimeKeys d;
  d.right = true;
  apply_time_keys(v, d, at, 0.5);
  EXPECT_NEAR(v.start, 600, 1e-9);
  EXPECT_NEAR(v.span(), 1000, 1e-9);
  TimeKeys a;
  a.left = true;
  apply_time_keys(v, a, at, 0.25);
  EXPECT_NEAR(v.start, 300, 1e-9);
  // Nothing held: nothing moves.
  apply_time_keys(v, TimeKeys{}, at, 1.0);
  EXPECT_NEAR(v.start, 300, 1e-9);
  EXPECT_NEAR(v.end, 1300, 1e-9);
}

// ---- search --------------------------------------------------------------------------------

TEST(ViewerTimelineSearch, MatchesByNameAndWalksBothWaysWrapping) {
  json events = {x_event("Compile hf_1", 30, 1), x_event("mul", 10, 1),
                 x_event("compile hf_2", 20, 1), x_event("add", 40, 1),
                 x_event("COMPILE hf_3", 50, 1)};
  Trace t = parse_trace(json{{"traceEvents", events}});
  std::vector<int> m = search_events(t, "compile");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(t.events[m[0]].ts, 20);
  EXPECT_EQ(t.events[m[1]].ts, 30);
  EXPECT_EQ(t.events[m[2]].ts, 50);
  EXPECT_TRUE(search_events(t, "").empty());
  EXPECT_TRUE(search_events(t, "nothing").empty());
  // From no current match: the first at or after the time going forward, the last before
  // it going back.
  EXPECT_EQ(step_match(t, m, -1, true, 25), 1);
  EXPECT_EQ(step_match(t, m, -1, false, 25), 0);
  EXPECT_EQ(step_match(t, m, -1, true, 99), 0);  // none after: wraps to the first
  EXPECT_EQ(step_match(t, m, -1, false, 0), 2);  // none before: wraps to the last
  // Next and previous, wrapping.
  EXPECT_EQ(step_match(t, m, 0, true, 0), 1);
  EXPECT_EQ(step_match(t, m, 2, true, 0), 0);
  EXPECT_EQ(step_match(t, m, 0, false, 0), 2);
  int at = -1;
  for (int i = 0; i < 3; ++i) at = step_match(t, m, at, true, 0);
  EXPECT_EQ(at, 2);
  EXPECT_EQ(step_match(t, {}, -1, true, 0), -1);
}

// ---- labels --------------------------------------------------------------------------------

const MeasureText kSevenPx = [](std::string_view s) { return 7.0f * static_cast<float>(s.size()); };

TEST(ViewerTimelineLabels, ElidedToTheWidthOrDropped) {
  EXPECT_EQ(elide_to_width("validating", 70, kSevenPx), "validating");
  EXPECT_EQ(elide_to_width("validating", 69, kSevenPx), "valida...");  // 6 + 3 chars
  EXPECT_EQ(elide_to_width("validating", 28, kSevenPx), "v...");
  EXPECT_EQ(elide_to_width("validating", 27, kSevenPx), "");
  for (float w = 0; w < 90; w += 1)
    EXPECT_LE(kSevenPx(elide_to_width("compile worker", w, kSevenPx)), w);
}

// Drawn labels in one row never overlap and keep `gap` apart; none passes `right`.
void expect_no_overlap(const std::vector<LabelWant>& wants, const std::vector<LabelSlot>& slots,
                       float gap, float right) {
  ASSERT_EQ(wants.size(), slots.size());
  for (size_t i = 0; i < wants.size(); ++i) {
    if (slots[i].row < 0) continue;
    EXPECT_LE(wants[i].x + slots[i].width, right + 1e-3f);
    EXPECT_LE(slots[i].width, wants[i].width);
    for (size_t j = 0; j < wants.size(); ++j) {
      if (j == i || slots[j].row != slots[i].row) continue;
      const bool apart = wants[i].x + slots[i].width + gap <= wants[j].x + 1e-3f ||
                         wants[j].x + slots[j].width + gap <= wants[i].x + 1e-3f;
      EXPECT_TRUE(apart) << i << " and " << j << " overlap in row " << slots[i].row;
    }
  }
}

TEST(ViewerTimelineLabels, StackedThenElidedNeverOverlapping) {
  // "warmup" at 0 and "profiling" right after it: the second goes to a second row.
  std::vector<LabelWant> w = {{0, 42}, {20, 63}};
  auto s = place_labels(w, 2, 4, 14, 1000);
  EXPECT_EQ(s[0].row, 0);
  EXPECT_EQ(s[1].row, 1);
  EXPECT_EQ(s[0].width, 42);
  expect_no_overlap(w, s, 4, 1000);
  // One row only: the first is cut to end before the second.
  s = place_labels(w, 1, 4, 14, 1000);
  EXPECT_EQ(s[0].row, 0);
  EXPECT_FLOAT_EQ(s[0].width, 16);
  EXPECT_EQ(s[1].row, 0);
  expect_no_overlap(w, s, 4, 1000);
  // Cut below the minimum: dropped.
  w = {{0, 42}, {10, 63}};
  s = place_labels(w, 1, 4, 14, 1000);
  EXPECT_EQ(s[0].row, -1);
  EXPECT_EQ(s[1].row, 0);
  // The right edge.
  s = place_labels({{990, 42}}, 1, 4, 5, 1000);
  EXPECT_FLOAT_EQ(s[0].width, 10);
  // Priority: the swap label is placed first and never cut for a phase name; the phase that
  // starts inside it is elided to end before it (here: dropped, too short), the one after
  // it fits.
  w = {{100, 60, 0}, {110, 120, 1}, {240, 50, 0}};
  s = place_labels(w, 1, 4, 14, 1000);
  EXPECT_EQ(s[1].row, 0);
  EXPECT_FLOAT_EQ(s[1].width, 120);
  EXPECT_EQ(s[0].row, -1);
  EXPECT_EQ(s[2].row, 0);
  w = {{80, 60, 0}, {110, 120, 1}};
  s = place_labels(w, 1, 4, 14, 1000);
  EXPECT_FLOAT_EQ(s[0].width, 26);  // 80 + 26 + 4 = 110
  EXPECT_FLOAT_EQ(s[1].width, 120);
  // Many crowded labels, any rows and priorities: never an overlap.
  for (int rows = 1; rows <= 3; ++rows) {
    std::vector<LabelWant> many;
    for (int i = 0; i < 200; ++i)
      many.push_back(
          {static_cast<float>((i * 37) % 900), 20.0f + (i * 13) % 70, i % 7 == 0 ? 1 : 0});
    expect_no_overlap(many, place_labels(many, rows, 4, 12, 950), 4, 950);
  }
}

// The Summary plot's swap / revert labels (marker_labels.h): drawn labels keep `gap` apart
// in their row, stay inside [left, right], and show their text or an elided prefix of it.
void expect_markers_apart(const std::vector<MarkerLabelWant>& wants,
                          const std::vector<MarkerLabelPlace>& placed, float left, float right,
                          float gap) {
  ASSERT_EQ(wants.size(), placed.size());
  for (size_t i = 0; i < placed.size(); ++i) {
    const MarkerLabelPlace& p = placed[i];
    if (p.row < 0) {
      EXPECT_TRUE(p.text.empty());
      continue;
    }
    EXPECT_GE(p.x, left - 1e-3f);
    EXPECT_LE(p.x + p.width, right + 1e-3f) << p.text;
    EXPECT_FLOAT_EQ(p.width, kSevenPx(p.text));
    const bool whole = p.text == wants[i].text;
    const bool elided = p.text.size() > 3 && p.text.ends_with("...") &&
                        wants[i].text.starts_with(p.text.substr(0, p.text.size() - 3));
    EXPECT_TRUE(whole || elided) << p.text << " for " << wants[i].text;
    for (size_t j = 0; j < placed.size(); ++j) {
      if (j == i || placed[j].row != p.row) continue;
      const bool apart = p.x + p.width + gap <= placed[j].x + 1e-3f ||
                         placed[j].x + placed[j].width + gap <= p.x + 1e-3f;
      EXPECT_TRUE(apart) << "'" << p.text << "' and '" << placed[j].text << "' overlap in row "
                         << p.row;
    }
  }
}

TEST(ViewerSummaryLabels, SwapAndRevertLabelsAreStackedElidedOrDroppedNeverOverlapping) {
  // Room for both: right of their lines, in the first row.
  std::vector<MarkerLabelWant> w = {{100, "swap 12"}, {300, "revert 40"}};
  auto p = place_marker_labels(w, 0, 1000, 2, kSevenPx);
  EXPECT_EQ(p[0].row, 0);
  EXPECT_FLOAT_EQ(p[0].x, 104);
  EXPECT_EQ(p[0].text, "swap 12");
  EXPECT_EQ(p[1].row, 0);
  EXPECT_FLOAT_EQ(p[1].x, 304);
  expect_markers_apart(w, p, 0, 1000, 6);
  // A swap and a revert two iterations later (a few pixels apart): what overlapped before
  // is stacked into two rows.
  w = {{100, "swap 12"}, {104, "revert 14"}};
  p = place_marker_labels(w, 0, 1000, 2, kSevenPx);
  EXPECT_NE(p[0].row, p[1].row);
  EXPECT_EQ(p[0].text, "swap 12");
  EXPECT_EQ(p[1].text, "revert 14");
  expect_markers_apart(w, p, 0, 1000, 6);
  // One row: the first is elided to end before the second, or dropped.
  p = place_marker_labels({{100, "swap 12 (3 regions)"}, {190, "revert 14"}}, 0, 1000, 1,
                          kSevenPx);
  EXPECT_EQ(p[0].row, 0);
  EXPECT_TRUE(p[0].text.ends_with("...")) << p[0].text;
  EXPECT_LE(p[0].x + p[0].width + 6, p[1].x);
  EXPECT_EQ(p[1].text, "revert 14");
  // The swap first: a revert right after it is cut, never the swap.
  p = place_marker_labels({{100, "swap 12 (3 regions)", 1}, {104, "revert 14"}}, 0, 1000, 1,
                          kSevenPx);
  EXPECT_EQ(p[0].text, "swap 12 (3 regions)");
  EXPECT_EQ(p[1].row, -1);
  // At the right edge: left of its line rather than cut off.
  p = place_marker_labels({{995, "revert 99"}}, 0, 1000, 1, kSevenPx);
  EXPECT_EQ(p[0].text, "revert 99");
  EXPECT_FLOAT_EQ(p[0].x, 995 - 4 - 63);
  // Wider than the plot: elided to it.
  p = place_marker_labels({{10, std::string(40, 'r')}}, 0, 100, 1, kSevenPx);
  EXPECT_EQ(p[0].row, 0);
  EXPECT_LE(p[0].x + p[0].width, 100);
  // Many swaps and reverts crowded on a narrow plot, 1-3 rows: never an overlap.
  for (int rows = 1; rows <= 3; ++rows)
    for (float width : {120.0f, 400.0f, 1500.0f}) {
      std::vector<MarkerLabelWant> many;
      for (int i = 0; i < 60; ++i)
        many.push_back({static_cast<float>((i * 53) % static_cast<int>(width)),
                        (i % 3 ? "revert " : "swap ") + std::to_string(i * 7)});
      expect_markers_apart(many, place_marker_labels(many, 0, width, rows, kSevenPx), 0, width, 6);
    }
}

// ---- flows and counters --------------------------------------------------------------------

TEST(ViewerTimelineFlows, BoundToTheEnclosingEvents) {
  json events = {
      x_event("op", 0, 10, 2),
      x_event("compile", 20, 30, 3),
      x_event("iteration 7", 60, 40, 1),
      x_event("fused", 70, 5, 2),
      {{"name", "r0"}, {"cat", "flow"}, {"ph", "s"}, {"id", 0}, {"ts", 5}, {"pid", 1}, {"tid", 2}},
      {{"name", "r0"},
       {"cat", "flow"},
       {"ph", "f"},
       {"bp", "e"},
       {"id", 0},
       {"ts", 35},
       {"pid", 1},
       {"tid", 3}},
      // s / t / f: two arrows.
      {{"name", "r1"}, {"cat", "flow"}, {"ph", "s"}, {"id", 1}, {"ts", 35}, {"pid", 1}, {"tid", 3}},
      {{"name", "r1"}, {"cat", "flow"}, {"ph", "t"}, {"id", 1}, {"ts", 80}, {"pid", 1}, {"tid", 1}},
      {{"name", "r1"},
       {"cat", "flow"},
       {"ph", "f"},
       {"bp", "e"},
       {"id", 1},
       {"ts", 72},
       {"pid", 1},
       {"tid", 2}},
      // Old-style "f" (no bp): the next slice that starts on its thread.
      {{"name", "r2"},
       {"cat", "flow"},
       {"ph", "s"},
       {"id", "x"},
       {"ts", 5},
       {"pid", 1},
       {"tid", 2}},
      {{"name", "r2"},
       {"cat", "flow"},
       {"ph", "f"},
       {"id", "x"},
       {"ts", 65},
       {"pid", 1},
       {"tid", 2}},
      // Same id and cat, another name: another flow (never finished).
      {{"name", "other"},
       {"cat", "flow"},
       {"ph", "s"},
       {"id", 0},
       {"ts", 72},
       {"pid", 1},
       {"tid", 2}},
      // Nothing to bind to / no finish.
      {{"name", "lost"},
       {"cat", "flow"},
       {"ph", "s"},
       {"id", 9},
       {"ts", 500},
       {"pid", 1},
       {"tid", 2}},
      {{"name", "open"},
       {"cat", "flow"},
       {"ph", "s"},
       {"id", 8},
       {"ts", 1},
       {"pid", 1},
       {"tid", 2}}};
  Trace t = parse_trace(json{{"traceEvents", events}});
  auto index_of = [&](const std::string& name) {
    for (size_t i = 0; i < t.events.size(); ++i)
      if (t.events[i].name == name) return static_cast<int>(i);
    return -1;
  };
  ASSERT_EQ(t.flows.size(), 4u);
  EXPECT_EQ(t.flows[0].from, index_of("op"));
  EXPECT_EQ(t.flows[0].to, index_of("compile"));
  EXPECT_EQ(t.flows[1].from, index_of("compile"));
  EXPECT_EQ(t.flows[1].to, index_of("iteration 7"));
  EXPECT_EQ(t.flows[2].from, index_of("iteration 7"));
  EXPECT_EQ(t.flows[2].to, index_of("fused"));
  EXPECT_EQ(t.flows[3].name, "r2");
  EXPECT_EQ(t.flows[3].to, index_of("fused"));
  EXPECT_EQ(t.unbound_flows, 3u);  // "lost", "open" and "other"
  EXPECT_EQ(t.flows_of(index_of("compile")), (std::vector<int>{0, 1}));
  EXPECT_EQ(t.ignored, 0u);
}

// trace.json's device tracks as hotfuse-run writes them on CUDA (dump/trace_json_device.h,
// synthetic launches): the Timeline reads a "cuda api" and a "gpu stream N" track and an
// arrow from each launch call to its own kernel, both linked to the launching node.
TEST(ViewerTimelineFlows, CudaLaunchFlowsGoFromTheLaunchCallToItsKernel) {
  json trace = {{"traceEvents",
                 {{{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 2},
                   {"args", {{"name", "executor"}}}},
                  x_event("Add", 0, 50, 2)}}};
  std::vector<cuda::DeviceLaunch> launches;
  for (uint32_t i = 0; i < 3; ++i) {
    cuda::DeviceLaunch l;
    l.node = 10 + i;
    l.correlation = 100 + i;
    l.kernel = "k" + std::to_string(i);
    l.stream = i == 2 ? 3 : 7;
    l.api_start_ns = 1000 + 10000 * i;
    l.api_end_ns = l.api_start_ns + 3000;
    l.start_ns = l.api_end_ns + 2000;  // after its launch, while the next call is made
    l.end_ns = l.start_ns + 9000;
    launches.push_back(l);
  }
  dump::add_device_launches(trace, launches, {0, 0.0}, "fused");
  const Trace t = parse_trace(trace);
  std::map<std::string, int> track;
  for (size_t i = 0; i < t.tracks.size(); ++i) track[t.tracks[i].name] = static_cast<int>(i);
  ASSERT_TRUE(track.count("cuda api") && track.count("gpu stream 7") && track.count("gpu stream 3"));
  int launch_flows = 0;
  for (const Flow& f : t.flows) {
    if (f.name != "launch") continue;
    ++launch_flows;
    ASSERT_GE(f.from, 0);
    ASSERT_GE(f.to, 0);
    const TraceEvent& from = t.events[f.from];
    const TraceEvent& to = t.events[f.to];
    EXPECT_EQ(from.track, track["cuda api"]);
    EXPECT_EQ(from.name, "launch " + to.name);
    EXPECT_EQ(from.node, to.node);
    EXPECT_EQ(from.args_json()["correlation"], to.args_json()["correlation"]);
    EXPECT_EQ(t.tracks[to.track].name, to.name == "k2" ? "gpu stream 3" : "gpu stream 7");
  }
  EXPECT_EQ(launch_flows, 3);
}

TEST(ViewerTimelineCounters, OneSeriesPerNameAndKey) {
  json events = {
      x_event("a", 0, 10),
      {{"name", "memory in use"}, {"ph", "C"}, {"ts", 20}, {"pid", 1}, {"args", {{"bytes", 300}}}},
      {{"name", "memory in use"}, {"ph", "C"}, {"ts", 5}, {"pid", 1}, {"args", {{"bytes", 100}}}},
      {{"name", "ctr"},
       {"ph", "C"},
       {"ts", 1},
       {"pid", 1},
       {"args", {{"x", 1}, {"y", 2}, {"s", "no"}}}}};
  Trace t = parse_trace(json{{"traceEvents", events}});
  ASSERT_EQ(t.counters.size(), 3u);
  const CounterSeries& m = t.counters[2];
  EXPECT_EQ(m.name, "memory in use");
  EXPECT_EQ(m.key, "bytes");
  ASSERT_EQ(m.points.size(), 2u);
  EXPECT_EQ(m.points[0].first, 5);
  EXPECT_EQ(m.min, 100);
  EXPECT_EQ(m.max, 300);
  EXPECT_EQ(t.counters[0].name, "ctr x");
  EXPECT_EQ(t.end, 20);  // counters widen the trace's span
}

TEST(ViewerTimelineFlows, TheExampleDumpsTraceParsesWithItsFlows) {
  const fs::path trace = fs::path(HF_SOURCE_DIR) / "tests/data/viewer/adam/trace.json";
  std::string err;
  auto text = read_text_file(trace, &err);
  ASSERT_TRUE(text) << err;
  Trace t = parse_trace_text(*text);
  // Whatever the fixture holds, every flow links two real events.
  for (const Flow& f : t.flows) {
    ASSERT_GE(f.from, 0);
    ASSERT_GE(f.to, 0);
    EXPECT_LT(static_cast<size_t>(std::max(f.from, f.to)), t.events.size());
  }
}

// ---- what panels say -----------------------------------------------------------------------

TEST(ViewerTimelineErrors, AGarbageTraceKeepsItsParseErrorForThePanel) {
  TempDir dir;
  dir.write("report.json", "{\"summary\": {\"graph\": \"x\"}}");
  dir.write("trace.json", "garbage{");
  Dump d = load_dump(dir.root);
  EXPECT_FALSE(d.trace);
  const std::string e = d.error_of("trace.json");
  EXPECT_NE(e.find("line 1"), std::string::npos) << e;
  EXPECT_TRUE(d.error_of("report.json").empty());
  EXPECT_EQ(d.errors.size(), 1u);
  EXPECT_EQ(d.errors[0], "trace.json: " + e);
  // A trace opened alone under another name: the error is still the trace's.
  dir.write("run7.trace.json", "{\"traceEvents\": 3}");
  Dump one = load_dump(dir.root / "run7.trace.json");
  EXPECT_NE(one.error_of("trace.json").find("traceEvents"), std::string::npos);
  EXPECT_EQ(one.errors.at(0).rfind("run7.trace.json: ", 0), 0u) << one.errors[0];
}

TEST(ViewerTimelineFormat, ValuesCarryUnitsAndNullIsNeverRaw) {
  EXPECT_EQ(format_arg("bytes", json(4014080.0)), "4.01 MB");
  EXPECT_EQ(format_arg("gbps", json(0.0319921)), "0.032 GB/s");
  EXPECT_EQ(format_arg("gbps", json(41.94)), "41.9 GB/s");
  EXPECT_EQ(format_arg("compile_ms", json(9.42)), "9.42 ms");
  EXPECT_EQ(format_arg("ms", json(0.845)), "845 us");
  EXPECT_EQ(format_arg("region", json(nullptr)), "none");
  EXPECT_EQ(format_arg("fused", json(true)), "yes");
  EXPECT_EQ(format_arg("node", json(12)), "12");
  EXPECT_EQ(format_arg("speedup", json(0.684)), "0.68x");
  EXPECT_EQ(format_arg("text", json(std::string(400, 'x')), 10), std::string(10, 'x') + "...");
  EXPECT_EQ(format_speedup(0.684), "0.68x");
  EXPECT_EQ(format_ms(2.5e300), "2.5e+297 s");  // hostile input: no 300-digit numbers
  EXPECT_EQ(format_bytes(4e20), "4e+11 GB");
  EXPECT_TRUE(is_slowdown(0.68));
  EXPECT_FALSE(is_slowdown(1.0));
  EXPECT_EQ(speedup_color(0.68), kSlowdownRed);
  EXPECT_EQ(speedup_color(1.7), kSpeedupGreen);
}

// ---- files ---------------------------------------------------------------------------------

TEST(ViewerTimelineRecent, NewestFirstNoDuplicatesAndUnwritableIsHarmless) {
  TempDir dir;
  const fs::path file = dir.root / "state" / "hotfuse" / "recent";
  std::vector<std::string> l;
  l = add_recent_dump(l, (dir.root / "a").string());
  l = add_recent_dump(l, (dir.root / "b").string());
  l = add_recent_dump(l, (dir.root / "a").string());
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0], (dir.root / "a").string());
  ASSERT_TRUE(save_recent_dumps(file, l));
  EXPECT_EQ(load_recent_dumps(file), l);
  for (int i = 0; i < 30; ++i) l = add_recent_dump(l, (dir.root / std::to_string(i)).string(), 5);
  EXPECT_EQ(l.size(), 5u);
  // A relative path is remembered absolute.
  EXPECT_TRUE(fs::path(add_recent_dump({}, "rel/dump")[0]).is_absolute());
  // Where nothing can be written: false, no throw; a missing file is an empty list.
  dir.write("plainfile", "x");
  EXPECT_FALSE(save_recent_dumps(dir.root / "plainfile" / "sub" / "recent", l));
  EXPECT_TRUE(load_recent_dumps(dir.root / "nothing-here").empty());
  EXPECT_FALSE(save_recent_dumps({}, l));
}

// File > Open's listing (dir_listing.h): folders first, dump folders marked, only the files
// a dump is made of, hidden entries left out, an absolute path, and an unreadable folder's
// error instead of a throw.
TEST(ViewerFileDialog, ListsFoldersFirstMarksDumpsAndKeepsDumpFiles) {
  TempDir dir;
  dir.write("zdump/report.json", "{}");
  dir.write("adump/after.dot", "digraph {}");
  dir.write("plain/notes.txt", "x");
  dir.write(".hidden/report.json", "{}");
  dir.write("trace.json", "{}");
  dir.write("before.dot", "digraph {}");
  dir.write("g.gv", "digraph {}");
  dir.write("notes.txt", "x");
  dir.write(".secret.json", "{}");
  const DirListing l = list_dir(dir.root / "plain" / "..");
  EXPECT_TRUE(l.error.empty()) << l.error;
  EXPECT_TRUE(l.dir.is_absolute());
  EXPECT_EQ(l.dir, fs::path(dir.root).lexically_normal());
  std::vector<std::string> names;
  for (const DirEntry& e : l.entries) names.push_back(e.name + (e.is_dir ? "/" : "") + (e.is_dump ? "*" : ""));
  EXPECT_EQ(names, (std::vector<std::string>{"adump/*", "plain/", "zdump/*", "before.dot", "g.gv",
                                             "trace.json"}));
  EXPECT_TRUE(is_dump_dir(dir.root / "zdump"));
  EXPECT_FALSE(is_dump_dir(dir.root / "plain"));
  const DirListing missing = list_dir(dir.root / "not-there");
  EXPECT_FALSE(missing.error.empty());
  EXPECT_TRUE(missing.entries.empty());
}

TEST(ViewerTimelineWatch, NoticesAFileWrittenInTheDumpFolder) {
  TempDir dir;
  dir.write("report.json", "{}");
  DumpWatch w;
  ASSERT_TRUE(w.watch(dir.root));
  EXPECT_FALSE(w.changed());
  dir.write("trace.json", "{}");  // closed when written: the event is queued by then
  EXPECT_TRUE(w.changed());
  EXPECT_FALSE(w.changed()) << "drained";
  EXPECT_FALSE(w.watch(dir.root / "missing"));
  EXPECT_FALSE(w.changed());
}

}  // namespace
}  // namespace hf::viewer
