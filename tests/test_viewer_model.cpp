// hotfuse-view's data model (viewer/model/, docs/viewer.md): loading a dump folder (or one
// file of it), report.json and trace.json parsing with errors that name the field, the links
// between trace events, report rows and graph nodes, hotspot sorting, the session's phases
// and swap moment, the zoom maths, and (when Graphviz's libgvc is built in) the in-process
// DOT layout.
//
// The example dump is tests/data/viewer/adam/: `hotfuse-run traces/graphs/adam.json --dump`
// with a short session (one region, swapped in at iteration 7, kept).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "tests/support/temp_dir.h"
#include "viewer/model/color.h"
#include "viewer/model/dump.h"
#include "viewer/model/format.h"
#include "viewer/model/graph_layout.h"
#include "viewer/model/hotspots.h"
#include "viewer/model/json_fields.h"
#include "viewer/model/report.h"
#include "viewer/model/selection.h"
#include "viewer/model/session_timeline.h"
#include "viewer/model/trace.h"
#include "viewer/model/view_transform.h"
#ifdef HF_VIEWER_HAVE_LAYOUT
#include "viewer/layout/dot_layout.h"
#endif

namespace hf::viewer {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kDump = fs::path(HF_SOURCE_DIR) / "tests/data/viewer/adam";

// A fresh empty directory under the build tree, removed at the end of the test.
std::string contents(const fs::path& p) {
  std::string err;
  auto s = read_text_file(p, &err);
  EXPECT_TRUE(s) << p << ": " << err;
  return s.value_or("");
}

template <class F>
std::string format_error_of(F&& f) {
  try {
    f();
  } catch (const FormatError& e) {
    return e.what();
  }
  return "(no error)";
}

// ---- JSON fields ---------------------------------------------------------------------------

TEST(ViewerModelJson, WrongTypeNamesTheField) {
  json j = {{"summary", {{"graph", "g"}}}, {"regions", {{{"id", 0}, {"fused_ms", "fast"}}}}};
  EXPECT_EQ(format_error_of([&] { parse_report(j); }),
            "regions[0].fused_ms: expected a number, got a string");
  j = {{"summary", {{"kernels_before", 1.5}}}};
  EXPECT_NE(format_error_of([&] { parse_report(j); }).find("summary.kernels_before"),
            std::string::npos);
}

TEST(ViewerModelJson, SyntaxErrorHasLineAndColumn) {
  const std::string msg = format_error_of([] { parse_json_text("{\n  \"a\": 1,\n  oops\n}"); });
  EXPECT_NE(msg.find("line 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not valid JSON"), std::string::npos) << msg;
  EXPECT_EQ(format_error_of([] { parse_json_text("  \n"); }), "the file is empty");
}

TEST(ViewerModelJson, MissingAndNullFieldsAreDefaults) {
  json j = {{"summary", {{"fused_ms", nullptr}, {"speedup", nullptr}}}, {"ops", json::array()}};
  Report r = parse_report(j);
  EXPECT_FALSE(r.summary.fused_ms);
  EXPECT_FALSE(r.summary.speedup);
  EXPECT_FALSE(r.machine.present);
  EXPECT_TRUE(r.regions.empty());
  EXPECT_FALSE(r.adaptive());
}

// ---- report.json ---------------------------------------------------------------------------

TEST(ViewerModelReport, ParsesTheExampleDump) {
  Report r = parse_report_text(contents(kDump / "report.json"));
  EXPECT_EQ(r.summary.graph, "adam");
  EXPECT_TRUE(r.adaptive());
  EXPECT_EQ(r.summary.kernels_before, 14);
  EXPECT_EQ(r.summary.kernels_after, 1);
  ASSERT_TRUE(r.summary.speedup);
  EXPECT_NEAR(*r.summary.speedup, *r.summary.unfused_ms / *r.summary.fused_ms, 1e-6);
  EXPECT_TRUE(r.machine.present);
  EXPECT_GT(r.machine.bandwidth_gbps, 0);
  EXPECT_EQ(r.ops.size(), 14u);
  ASSERT_EQ(r.ops_after.size(), 1u);
  EXPECT_TRUE(r.ops_after[0].fused);
  EXPECT_EQ(r.ops_after[0].region, 0);
  ASSERT_EQ(r.regions.size(), 1u);
  const Region& reg = r.regions[0];
  EXPECT_EQ(reg.state, "swapped");
  EXPECT_EQ(reg.swapped_at, 7);
  EXPECT_FALSE(reg.reverted_at);
  EXPECT_EQ(reg.node_ids.size(), 22u);
  EXPECT_EQ(reg.kernel.rfind("hf_", 0), 0u);
  EXPECT_EQ(r.region_of_node(1), &reg);
  EXPECT_EQ(r.region_of_node(999), nullptr);
  ASSERT_NE(r.op_before(1), nullptr);
  EXPECT_EQ(r.op_before(1)->node, "m_decay");
  EXPECT_EQ(r.fused_row(0), &r.ops_after[0]);
  EXPECT_EQ(r.iterations.size(), 17u);
  EXPECT_EQ(r.iterations[7].phase, "validating");
}

TEST(ViewerModelReport, NonAdaptiveReport) {
  // --fusion all: no machine, no regions, ops without node ids.
  json j = {
      {"summary", {{"graph", "g"}, {"fusion", "all"}, {"unfused_ms", 8.0}, {"fused_ms", 1.0}}},
      {"decisions", {{{"nodes", {"a", "b"}}, {"fused", true}, {"reason", "fused 2"}}}},
      {"ops", {{{"node", "f"}, {"op", "Fused"}, {"time_ms", 1.0}, {"bytes", 8}, {"gbps", 1}}}},
      {"failures", json::array()}};
  Report r = parse_report(j);
  ASSERT_EQ(r.ops.size(), 1u);
  EXPECT_EQ(r.ops[0].node_id, -1);
  EXPECT_TRUE(r.ops[0].fused);
  ASSERT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(r.decisions[0].nodes.size(), 2u);
}

TEST(ViewerModelReport, RejectsWhatIsNotAReport) {
  EXPECT_NE(format_error_of([] { parse_report(json::array()); }).find("expected a JSON object"),
            std::string::npos);
  EXPECT_NE(format_error_of([] {
              parse_report(json{{"traceEvents", json::array()}});
            }).find("no \"summary\""),
            std::string::npos);
}

// ---- trace.json ----------------------------------------------------------------------------

TEST(ViewerModelTrace, ParsesTheExampleDump) {
  Trace t = parse_trace_text(contents(kDump / "trace.json"));
  ASSERT_EQ(t.tracks.size(), 3u);
  EXPECT_EQ(t.tracks[0].name, "iterations");
  EXPECT_EQ(t.tracks[1].name, "executor");
  EXPECT_EQ(t.tracks[2].name, "compile worker");
  EXPECT_NE(t.process_name.find("adam"), std::string::npos);
  EXPECT_EQ(t.ignored, 0u);
  EXPECT_EQ(t.unmatched, 0u);
  // One iteration event per iteration, on track 0, none nested.
  EXPECT_EQ(t.by_iteration.size(), 17u);
  EXPECT_EQ(t.tracks[0].events.size(), 17u);
  EXPECT_EQ(t.tracks[0].depths, 1);
  // Steps: the unfused node 1 runs in every traced unfused iteration (not the validating one).
  const auto& m_decay = t.events_of_node(1);
  EXPECT_GE(m_decay.size(), 5u);
  for (int e : m_decay) {
    EXPECT_EQ(t.events[e].name, "m_decay");
    EXPECT_EQ(t.events[e].region, 0);
    EXPECT_NE(t.events[e].phase, "steady");
  }
  // The fused kernel (node 22) runs after the swap only.
  const auto& fused = t.events_of_node(22);
  ASSERT_FALSE(fused.empty());
  for (int e : fused) EXPECT_GE(t.events[e].iteration, 7);
  // The compile event is on the worker's track and belongs to region 0.
  ASSERT_EQ(t.tracks[2].events.size(), 1u);
  EXPECT_EQ(t.events[t.tracks[2].events[0]].region, 0);
  // Phase changes and messages are global instants, in time order.
  EXPECT_GE(t.global_instants.size(), 5u);
  for (size_t i = 1; i < t.global_instants.size(); ++i)
    EXPECT_LE(t.events[t.global_instants[i - 1]].ts, t.events[t.global_instants[i]].ts);
  EXPECT_LE(t.start, t.events[t.tracks[0].events[0]].ts);
}

TEST(ViewerModelTrace, VisibleRangeMatchesBruteForce) {
  Trace t = parse_trace_text(contents(kDump / "trace.json"));
  const Track& tr = t.tracks[1];
  const double span = t.end - t.start;
  for (double f0 : {0.0, 0.1, 0.5, 0.93}) {
    const double a = t.start + f0 * span, b = a + span * 0.05;
    auto [lo, hi] = t.visible(tr, a, b);
    std::set<int> got(tr.events.begin() + lo, tr.events.begin() + hi);
    for (int idx : tr.events) {
      const TraceEvent& e = t.events[idx];
      if (e.end() >= a && e.ts <= b) {
        EXPECT_TRUE(got.count(idx)) << "missing event " << idx;
      }
    }
  }
  // event_at finds the event under a time, on its row.
  const int some = tr.events[tr.events.size() / 2];
  const TraceEvent& e = t.events[some];
  EXPECT_EQ(t.event_at(1, e.depth, e.ts + e.dur / 2, 0), some);
  EXPECT_EQ(t.event_at(1, e.depth + 5, e.ts + e.dur / 2, 0), -1);
}

TEST(ViewerModelTrace, BeginEndPairsArraysAndStrangeIds) {
  json j = json::array({
      {{"ph", "M"},
       {"name", "thread_name"},
       {"pid", "p"},
       {"tid", "main"},
       {"args", {{"name", "Main"}}}},
      {{"ph", "B"},
       {"name", "outer"},
       {"pid", "p"},
       {"tid", "main"},
       {"ts", 10},
       {"args", {{"a", 1}}}},
      {{"ph", "X"},
       {"name", "inner"},
       {"pid", "p"},
       {"tid", "main"},
       {"ts", 12},
       {"dur", 3},
       {"args", {{"node", 4}}}},
      {{"ph", "E"}, {"pid", "p"}, {"tid", "main"}, {"ts", 20}, {"args", {{"b", "two"}}}},
      {{"ph", "E"}, {"pid", "p"}, {"tid", "main"}, {"ts", 30}},  // unmatched
      {{"ph", "C"}, {"name", "counter"}, {"pid", "p"}, {"tid", "main"}, {"ts", 5}},
      {{"ph", "i"}, {"name", "mark"}, {"pid", "p"}, {"tid", "main"}, {"ts", 11}},
  });
  Trace t = parse_trace(j);
  ASSERT_EQ(t.tracks.size(), 1u);
  EXPECT_EQ(t.tracks[0].name, "Main");
  EXPECT_EQ(t.tracks[0].depths, 2);
  EXPECT_EQ(t.unmatched, 1u);
  EXPECT_EQ(t.ignored, 1u);
  ASSERT_EQ(t.tracks[0].events.size(), 2u);
  const TraceEvent& outer = t.events[t.tracks[0].events[0]];
  EXPECT_EQ(outer.name, "outer");
  EXPECT_DOUBLE_EQ(outer.dur, 10);
  EXPECT_EQ(outer.args_json(), (json{{"a", 1}, {"b", "two"}}));  // B's and E's args merged
  EXPECT_EQ(outer.depth, 0);
  EXPECT_EQ(t.events[t.tracks[0].events[1]].depth, 1);
  EXPECT_EQ(t.events_of_node(4).size(), 1u);
  EXPECT_EQ(t.tracks[0].instants.size(), 1u);
  EXPECT_TRUE(t.global_instants.empty());
}

TEST(ViewerModelTrace, RejectsWhatIsNotATrace) {
  EXPECT_NE(format_error_of([] {
              parse_trace(json{{"summary", 1}});
            }).find("traceEvents"),
            std::string::npos);
  EXPECT_EQ(format_error_of([] {
              parse_trace(json{{"traceEvents", {1}}});
            }),
            "traceEvents[0]: expected an object, got a number");
  EXPECT_EQ(format_error_of([] {
              parse_trace(json{{"traceEvents", {{{"ph", "X"}, {"ts", "soon"}}}}});
            }),
            "traceEvents[0].ts: expected a number, got a string");
}

// ---- loading a dump ------------------------------------------------------------------------

TEST(ViewerModelDump, LoadsTheExampleDump) {
  Dump d = load_dump(kDump);
  EXPECT_TRUE(d.ok()) << (d.errors.empty() ? "" : d.errors[0]);
  EXPECT_TRUE(d.report);
  EXPECT_TRUE(d.trace);
  EXPECT_NE(d.before_dot.find("digraph"), std::string::npos);
  EXPECT_NE(d.after_dot.find("cluster_kept_0"), std::string::npos);
  ASSERT_EQ(d.kernels.size(), 1u);
  const std::string kernel = d.report->regions[0].kernel;
  std::string err;
  auto src = kernel_source(d, kernel, &err);
  ASSERT_TRUE(src) << err;
  EXPECT_NE(src->find(kernel), std::string::npos);
  EXPECT_FALSE(kernel_source(d, "hf_nope", &err));
  EXPECT_NE(err.find("hf_nope"), std::string::npos);
  EXPECT_NE(d.title().find("adam (adaptive)"), std::string::npos);
}

TEST(ViewerModelDump, MissingPathIsAnError) {
  Dump d = load_dump("/nonexistent/hotfuse/dump");
  ASSERT_EQ(d.errors.size(), 1u);
  EXPECT_NE(d.errors[0].find("no such file or directory"), std::string::npos);
  EXPECT_TRUE(d.nothing_loaded());
}

TEST(ViewerModelDump, EmptyFolderIsAnError) {
  TempDir dir;
  Dump d = load_dump(dir.root);
  ASSERT_EQ(d.errors.size(), 1u);
  EXPECT_NE(d.errors[0].find("not a dump folder"), std::string::npos);
  EXPECT_TRUE(d.nothing_loaded());
}

TEST(ViewerModelDump, MalformedFilesAreNamedAndTheRestLoads) {
  TempDir dir;
  dir.write("report.json", "{\"summary\": {\"graph\": \"x\",}");
  dir.write("trace.json", "");
  dir.write("before.dot", contents(kDump / "before.dot"));
  Dump d = load_dump(dir.root);
  ASSERT_EQ(d.errors.size(), 2u);
  EXPECT_EQ(d.errors[0].rfind("report.json: not valid JSON (line 1", 0), 0u) << d.errors[0];
  EXPECT_EQ(d.errors[1], "trace.json: the file is empty");
  EXPECT_FALSE(d.report);
  EXPECT_FALSE(d.nothing_loaded());
  EXPECT_FALSE(d.before_dot.empty());
  // after.dot missing is a note, not an error.
  EXPECT_TRUE(std::any_of(d.notes.begin(), d.notes.end(),
                          [](const std::string& n) { return n.find("after.dot") == 0; }));
}

TEST(ViewerModelDump, OpensOneFileDirectly) {
  Dump r = load_dump(kDump / "report.json");
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.report);
  EXPECT_FALSE(r.trace);
  Dump t = load_dump(kDump / "trace.json");
  EXPECT_TRUE(t.ok());
  EXPECT_TRUE(t.trace);
  EXPECT_FALSE(t.report);
  Dump g = load_dump(kDump / "after.dot");
  EXPECT_FALSE(g.after_dot.empty());
  TempDir dir;
  dir.write("notes.txt", "hello");
  Dump x = load_dump(dir.root / "notes.txt");
  ASSERT_EQ(x.errors.size(), 1u);
  EXPECT_NE(x.errors[0].find("not a dump folder"), std::string::npos);
}

// ---- hotspots ------------------------------------------------------------------------------

TEST(ViewerModelHotspots, SortsByAnyColumnMissingLast) {
  Report r = parse_report_text(contents(kDump / "report.json"));
  auto rows = hotspot_rows(r, HotspotTable::OpsBefore);
  ASSERT_EQ(rows.size(), 14u);
  double share = 0;
  for (const HotspotRow& row : rows) share += row.share;
  EXPECT_NEAR(share, 1.0, 1e-9);
  EXPECT_EQ(rows[0].state, "swapped");
  sort_hotspots(rows, HotspotColumn::Time, false);
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_GE(rows[i - 1].time_ms, rows[i].time_ms);
  sort_hotspots(rows, HotspotColumn::Name, true);
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_LE(rows[i - 1].name, rows[i].name);

  std::vector<HotspotRow> v(3);
  v[0].name = "a";
  v[1].name = "b";
  v[1].time_ms = 2;
  v[2].name = "c";
  v[2].time_ms = 1;
  for (bool asc : {true, false}) {
    sort_hotspots(v, HotspotColumn::Time, asc);
    EXPECT_EQ(v[2].name, "a") << "missing value not last, ascending=" << asc;
    EXPECT_EQ(v[0].name, asc ? "c" : "b");
  }
}

TEST(ViewerModelHotspots, RegionRows) {
  Report r = parse_report_text(contents(kDump / "report.json"));
  auto rows = hotspot_rows(r, HotspotTable::Regions);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].op, "region 0: 14 ops");
  EXPECT_EQ(rows[0].state, "swapped");
  EXPECT_EQ(rows[0].node_id, r.ops_after[0].node_id);
  EXPECT_GT(rows[0].gbps, 0);
  auto after = hotspot_rows(r, HotspotTable::OpsAfter);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_TRUE(after[0].fused);
  EXPECT_DOUBLE_EQ(after[0].share, 1.0);
}

// ---- the session over time -----------------------------------------------------------------

TEST(ViewerModelSession, PhasesAndTheSwap) {
  Report r = parse_report_text(contents(kDump / "report.json"));
  Trace t = parse_trace_text(contents(kDump / "trace.json"));
  SessionTimeline s = session_timeline(&r, &t);
  std::vector<std::string> phases;
  for (const PhaseSpan& p : s.phases) phases.push_back(p.phase);
  EXPECT_EQ(phases, (std::vector<std::string>{"warmup", "profiling", "validating", "reprofiling",
                                              "steady"}));
  EXPECT_EQ(s.first_swap, 7);
  auto swap = std::find_if(s.markers.begin(), s.markers.end(),
                           [](const SessionMarker& m) { return m.kind == MarkerKind::Swap; });
  ASSERT_NE(swap, s.markers.end());
  EXPECT_NEAR(swap->ts_us, r.iterations[7].start_ms * 1e3, 1e-6);
  // The trace's iteration event starts at the same moment (one clock).
  EXPECT_NEAR(t.events[t.iteration_event(7)].ts, swap->ts_us, 1.0);
  EXPECT_LT(s.median_ms("steady"), s.median_ms("profiling"));
  EXPECT_TRUE(std::isnan(s.median_ms("compiling")));
  for (size_t i = 1; i < s.markers.size(); ++i)
    EXPECT_LE(s.markers[i - 1].ts_us, s.markers[i].ts_us);

  // Without the report, the trace alone gives the same phases and the swap.
  SessionTimeline from_trace = session_timeline(nullptr, &t);
  EXPECT_EQ(from_trace.phases.size(), s.phases.size());
  EXPECT_EQ(from_trace.first_swap, 7);
}

// ---- links between panels ------------------------------------------------------------------

// The example's graphs, drawn by hand (no Graphviz needed): before has n1 (in region 0) and
// n5; after has the fused n22 in cluster_kept_0 and n5.
GraphLayout hand_layout(bool after) {
  GraphLayout g;
  auto node = [&](const std::string& name, float x) {
    LayoutNode n;
    n.name = name;
    n.center = {x, 20};
    n.size = {40, 20};
    g.nodes.push_back(n);
  };
  if (after) {
    node("n22", 50);
    node("n5", 150);
    LayoutCluster c;
    c.name = "cluster_kept_0";
    c.min = {20, 0};
    c.max = {80, 40};
    c.nodes = {0};
    g.clusters.push_back(c);
    g.nodes[0].cluster = 0;
  } else {
    node("n1", 50);
    node("n3", 100);
    node("in0", 150);
  }
  g.size = {200, 40};
  index_layout(g);
  return g;
}

TEST(ViewerModelSelection, EventsNodesAndRegionsLink) {
  Report r = parse_report_text(contents(kDump / "report.json"));
  Trace t = parse_trace_text(contents(kDump / "trace.json"));
  const GraphLayout before = hand_layout(false), after = hand_layout(true);
  EXPECT_EQ(before.nodes[2].kind, NodeKind::Input);
  EXPECT_EQ(after.clusters[0].kind, "kept");
  EXPECT_EQ(after.clusters[0].region, 0);

  // A step of the fused kernel selects node 22 and region 0.
  const int fused_event = t.events_of_node(22).front();
  Selection s = select_event(t, fused_event);
  EXPECT_EQ(s.node, 22);
  EXPECT_EQ(s.region, 0);
  // In the after graph: the node itself; in the before graph: every node of the region.
  EXPECT_EQ(highlighted_nodes(after, &r, s), std::vector<int>{0});
  EXPECT_EQ(highlighted_nodes(before, &r, s), (std::vector<int>{0, 1}));

  // An op that was fused away: itself before, its fused kernel after.
  Selection m = select_node(1, &r);
  EXPECT_EQ(m.region, 0);
  EXPECT_EQ(highlighted_nodes(before, &r, m), std::vector<int>{0});
  EXPECT_EQ(highlighted_nodes(after, &r, m), std::vector<int>{0});
  EXPECT_EQ(region_of(22, &r), 0);
  EXPECT_EQ(region_of(22, nullptr, &after), 0);  // without a report: the cluster says

  // Which trace events belong to the selection.
  const TraceEvent& step = t.events[t.events_of_node(1).front()];
  EXPECT_EQ(event_match(step, -1, m), EventMatch::Exact);
  EXPECT_EQ(event_match(t.events[fused_event], fused_event, m), EventMatch::Region);
  const int compile = t.tracks[2].events[0];
  EXPECT_EQ(event_match(t.events[compile], compile, select_region(0)), EventMatch::Exact);
  Selection c = select_event(t, compile);
  EXPECT_EQ(c.node, -1);
  EXPECT_EQ(c.region, 0);
  EXPECT_EQ(highlighted_nodes(after, &r, c), std::vector<int>{0});
  // An iteration selects no node.
  Selection it = select_event(t, t.iteration_event(3));
  EXPECT_EQ(it.node, -1);
  EXPECT_TRUE(highlighted_nodes(before, &r, it).empty());
}

// ---- labels, colours, formats, view maths --------------------------------------------------

TEST(ViewerModelLabels, DotEscapesAndNodeNames) {
  auto lines = split_label("a\\nb\\lc\\\\d\\N", "node", "g");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].text, "a");
  EXPECT_EQ(lines[1].text, "b");
  EXPECT_EQ(lines[1].just, 'l');
  EXPECT_EQ(lines[2].text, "c\\dnode");
  int64_t id = 0;
  EXPECT_EQ(node_kind_of("n17", &id), NodeKind::Op);
  EXPECT_EQ(id, 17);
  EXPECT_EQ(node_kind_of("in3", &id), NodeKind::Input);
  EXPECT_EQ(id, -1);
  EXPECT_EQ(node_kind_of("out0", &id), NodeKind::Output);
  EXPECT_EQ(node_kind_of("legend", &id), NodeKind::Other);
  EXPECT_EQ(node_kind_of("nx", &id), NodeKind::Other);
}

TEST(ViewerModelColor, ParsesGraphvizColours) {
  EXPECT_EQ(parse_color("#ff0080"), rgba(255, 0, 128));
  EXPECT_EQ(parse_color("#FF008040"), rgba(255, 0, 128, 64));
  EXPECT_EQ(parse_color("#f08"), rgba(255, 0, 136));
  EXPECT_EQ(parse_color("white"), rgba(255, 255, 255));
  EXPECT_EQ(parse_color("LightGrey"), rgba(211, 211, 211));
  EXPECT_EQ(alpha(*parse_color("none")), 0u);
  EXPECT_EQ(parse_color("red:blue"), rgba(255, 0, 0));
  EXPECT_FALSE(parse_color("#12"));
  EXPECT_FALSE(parse_color("nocolour"));
  // The dump's heat scale: <1% is step 0, 50-75% step 7, >=75% step 8.
  EXPECT_EQ(heat_step(0.005), 0);
  EXPECT_EQ(heat_step(0.5), 7);
  EXPECT_EQ(heat_step(0.9), 8);
  EXPECT_EQ(heat_color(8), *parse_color("#800026"));
  EXPECT_EQ(text_on(heat_color(8)), rgba(255, 255, 255));
  EXPECT_NE(text_on(heat_color(0)), rgba(255, 255, 255));
  EXPECT_EQ(color_for_name("m_decay"), color_for_name("m_decay"));
}

TEST(ViewerModelFormat, HumanNumbers) {
  EXPECT_EQ(format_ms(9.418), "9.42 ms");
  EXPECT_EQ(format_ms(0.846), "846 us");
  EXPECT_EQ(format_ms(2562.3), "2.56 s");
  EXPECT_EQ(format_ms(0.0005), "500 ns");
  EXPECT_EQ(format_bytes(29360128), "29.4 MB");
  EXPECT_EQ(format_mib(20971552), "20.0 MiB");
  EXPECT_EQ(format_share(0.433), "43.3%");
  EXPECT_EQ(format_gbps(41.94), "41.9 GB/s");
}

TEST(ViewerModelView, ZoomKeepsThePointUnderTheCursor) {
  View2D v;
  v.zoom = 0.5f;
  v.pan = {100, 50};
  const Vec2 origin{10, 20}, cursor{300, 200};
  const Vec2 before = v.to_world(cursor, origin);
  v.zoom_at(cursor, origin, 1.7f);
  const Vec2 after = v.to_world(cursor, origin);
  EXPECT_NEAR(before.x, after.x, 1e-3);
  EXPECT_NEAR(before.y, after.y, 1e-3);
  EXPECT_FLOAT_EQ(v.zoom, 0.85f);
  v.zoom_at(cursor, origin, 1000.f, 0.01f, 4.f);
  EXPECT_FLOAT_EQ(v.zoom, 4.f);

  // Fit: the content is centred and fits with the margin.
  v.fit({400, 1000}, {800, 600}, 10);
  const Vec2 tl = v.to_screen({0, 0}, {0, 0}), br = v.to_screen({400, 1000}, {0, 0});
  EXPECT_NEAR(tl.y, 10, 1e-3);
  EXPECT_NEAR(br.y, 590, 1e-3);
  EXPECT_NEAR((tl.x + br.x) / 2, 400, 1e-3);
  EXPECT_TRUE(v.visible({0, 0}, {10, 10}, {800, 600}));
  EXPECT_FALSE(v.visible({-1000, 0}, {-600, 10}, {800, 600}));

  TimeView t;
  t.fit(1000, 2000, 0);
  const double at = t.to_t(250, 1000);
  t.zoom_at(at, 0.25);
  EXPECT_NEAR(t.to_x(at, 1000), 250, 1e-9);
  EXPECT_NEAR(t.span(), 250, 1e-9);
  t.pan_px(100, 1000);
  EXPECT_NEAR(t.to_x(at, 1000), 350, 1e-9);
  EXPECT_DOUBLE_EQ(nice_step(1000, 10), 100);
  EXPECT_DOUBLE_EQ(nice_step(1300, 10), 200);
  EXPECT_DOUBLE_EQ(nice_step(0.03, 5), 0.01);
}

// ---- Graphviz layout -----------------------------------------------------------------------

#ifdef HF_VIEWER_HAVE_LAYOUT
TEST(ViewerLayout, LaysOutTheExampleDump) {
  GraphLayout before = layout_dot(contents(kDump / "before.dot"));
  GraphLayout after = layout_dot(contents(kDump / "after.dot"));
  // before: 22 nodes (8 constants), 4 inputs, 3 outputs, the legend.
  int ops = 0, inputs = 0, outputs = 0;
  for (const LayoutNode& n : before.nodes) {
    ops += n.kind == NodeKind::Op;
    inputs += n.kind == NodeKind::Input;
    outputs += n.kind == NodeKind::Output;
    EXPECT_GE(n.center.x, 0);
    EXPECT_GE(n.center.y, 0);
    EXPECT_LE(n.center.x, before.size.x);
    EXPECT_LE(n.center.y, before.size.y);
    EXPECT_GT(n.size.x, 0);
  }
  EXPECT_EQ(ops, 22);
  EXPECT_EQ(inputs, 4);
  EXPECT_EQ(outputs, 3);
  const int legend = before.find_name("legend");
  ASSERT_GE(legend, 0);
  EXPECT_TRUE(before.nodes[legend].html);
  const LayoutNode& m_decay = before.nodes[before.find_node_id(1)];
  ASSERT_GE(m_decay.lines.size(), 3u);
  EXPECT_EQ(m_decay.lines[0].text, "m_decay");
  EXPECT_EQ(m_decay.lines[1].text, "Elemwise MUL");
  EXPECT_TRUE(m_decay.explicit_fill);
  EXPECT_TRUE(m_decay.rounded);
  EXPECT_NE(m_decay.tooltip.find("GB/s"), std::string::npos);
  EXPECT_FALSE(before.edges.empty());
  for (const LayoutEdge& e : before.edges) {
    ASSERT_GE(e.points.size(), 4u);
    EXPECT_EQ((e.points.size() - 1) % 3, 0u);
  }
  // Inputs sit above the nodes that read them (rankdir=TB, y down).
  const LayoutNode& in0 = before.nodes[before.find_name("in0")];
  EXPECT_LT(in0.center.y, before.nodes[before.find_node_id(21)].center.y);
  EXPECT_FALSE(before.title.empty());

  ASSERT_EQ(after.clusters.size(), 1u);
  const LayoutCluster& c = after.clusters[0];
  EXPECT_EQ(c.kind, "kept");
  EXPECT_EQ(c.region, 0);
  EXPECT_TRUE(c.filled);
  ASSERT_EQ(c.nodes.size(), 1u);
  const LayoutNode& fused = after.nodes[c.nodes[0]];
  EXPECT_EQ(fused.node_id, 22);
  EXPECT_EQ(fused.cluster, 0);
  EXPECT_GE(fused.center.x, c.min.x);
  EXPECT_LE(fused.center.x, c.max.x);
  EXPECT_EQ(after.node_at(fused.center), c.nodes[0]);
  EXPECT_EQ(after.cluster_at(fused.center), 0);
  EXPECT_FALSE(c.label.empty());
  EXPECT_FALSE(after.search("FUSED_p").empty());
}

TEST(ViewerLayout, BadDotIsAnErrorNotACrash) {
  try {
    layout_dot("digraph { a -> ");
    FAIL() << "no error";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("not a valid DOT graph"), std::string::npos) << e.what();
  }
  EXPECT_THROW(layout_dot(""), LayoutError);
  // Still usable afterwards.
  GraphLayout g = layout_dot("digraph { a -> b; b -> c; a -> c }");
  EXPECT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.edges.size(), 3u);
}

// Graphviz 2.42's gvFreeLayout double-frees edge-label nodes in clustered graphs (after.dot
// has both): with it, this 600-node graph aborted the process. layout_dot must survive it,
// twice in a row.
TEST(ViewerLayout, ClustersWithEdgeLabelsDoNotCrash) {
  std::string dot = "digraph g {\n  node [shape=box];\n";
  const int n = 600;
  for (int c = 0; c < n / 30; ++c) {
    dot +=
        "  subgraph cluster_kept_" + std::to_string(c) + " { label=\"r" + std::to_string(c) + "\";";
    for (int i = c * 30; i < c * 30 + 8; ++i) dot += " n" + std::to_string(i) + ";";
    dot += " }\n";
  }
  unsigned x = 12345;
  for (int i = 1; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    const int from = std::max(0, i - 1 - static_cast<int>((x >> 16) % 40));
    dot += "  n" + std::to_string(from) + " -> n" + std::to_string(i) + " [label=\"f32[1Mi]\"];\n";
  }
  dot += "}\n";
  for (int round = 0; round < 2; ++round) {
    GraphLayout g = layout_dot(dot);
    EXPECT_EQ(g.nodes.size(), static_cast<size_t>(n));
    EXPECT_EQ(g.clusters.size(), static_cast<size_t>(n / 30));
    const int c3 = g.cluster_of_region(3);
    ASSERT_GE(c3, 0);
    EXPECT_EQ(g.clusters[c3].kind, "kept");
    EXPECT_EQ(g.clusters[c3].nodes.size(), 8u);
    int labelled = 0;
    for (const LayoutEdge& e : g.edges) labelled += e.has_label;
    EXPECT_EQ(labelled, n - 1);
  }
}

TEST(ViewerLayout, ThousandNodes) {
  // A layered graph of 1000 nodes lays out once, in well under a minute; hit tests work on it.
  std::string dot = "digraph { node [shape=box];\n";
  for (int i = 0; i < 1000; ++i) {
    dot += "n" + std::to_string(i) + " [label=\"op" + std::to_string(i) + "\"];\n";
    if (i >= 10) dot += "n" + std::to_string(i - 10) + " -> n" + std::to_string(i) + ";\n";
    if (i >= 11 && i % 3 == 0)
      dot += "n" + std::to_string(i - 11) + " -> n" + std::to_string(i) + ";\n";
  }
  dot += "}\n";
  GraphLayout g = layout_dot(dot);
  ASSERT_EQ(g.nodes.size(), 1000u);
  EXPECT_LT(g.layout_seconds, 60);
  const LayoutNode& n = g.nodes[g.find_node_id(500)];
  EXPECT_EQ(g.node_at(n.center), g.find_node_id(500));
}
#endif

}  // namespace
}  // namespace hf::viewer
