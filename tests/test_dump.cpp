// Dumps (docs/dumps.md): DOT escaping of names from the model, parsed back by Graphviz;
// before/after DOT of a real adaptive session (one cluster per kept region, distinct
// styling for reverted and rejected ones); trace.json against the Chrome Trace Event
// Format's rules; the dump directory never replacing a file it was not asked to write.
//
// The checks that parse DOT need Graphviz's `dot` and are skipped, saying so, without it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "dump/dot_escape.h"
#include "dump/dot_graph.h"
#include "dump/dot_render.h"
#include "dump/dump_dir.h"
#include "dump/kernel_sources.h"
#include "dump/session_dot.h"
#include "dump/trace_json.h"
#include "dump/trace_json_device.h"
#include "dump/write_dump.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "session/session.h"
#include "session/session_report.h"
#include "tests/support/jit_env.h"
#include "tests/support/temp_dir.h"

namespace hf {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// `dot -Tjson` of a DOT text; skips the test when `dot` is not on PATH.
#define PARSE_DOT_OR_SKIP(var, text)                                                   \
  json var;                                                                            \
  {                                                                                    \
    dump::DotOutput out_ = dump::run_dot(text, "json");                                \
    if (out_.missing) GTEST_SKIP() << "Graphviz `dot` is not on PATH: " << out_.error; \
    ASSERT_TRUE(out_.ok) << out_.error << "\n" << text;                                \
    var = json::parse(out_.output);                                                    \
  }

// The "objects" (clusters and nodes) of a -Tjson document; pointers stay valid with doc.
const json& objects(const json& doc) {
  static const json none = json::array();
  return doc.contains("objects") ? doc["objects"] : none;
}

const json* object_named(const json& doc, const std::string& name) {
  for (const json& o : objects(doc))
    if (o.value("name", "") == name) return &o;
  return nullptr;
}

// The lines Graphviz drew for an object's label (its xdot text operations).
std::vector<std::string> drawn_lines(const json& o) {
  std::vector<std::string> lines;
  for (const json& op : o.value("_ldraw_", json::array()))
    if (op.value("op", "") == "T") lines.push_back(op.value("text", ""));
  return lines;
}

std::vector<std::string> non_empty_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

const std::vector<std::string>& awkward_names() {
  static const std::vector<std::string> names = {
      "plain",
      "a \"quoted\" name",
      "back\\slash \\n \\N \\G \\\\ end\\",
      "two\nlines",
      "unicode: h\xC3\xA9llo \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x9A\x80",
      "entities &amp; &lt;b&gt; & <html> {record|field}",
      "all \"of\\\" it\"\n\\\n\xCE\xBB & done;",
  };
  return names;
}

// ---- escaping ------------------------------------------------------------------------

TEST(DumpDotEscape, QuotesBackslashesNewlinesAndEntities) {
  EXPECT_EQ(dump::dot_quote("plain"), "\"plain\"");
  EXPECT_EQ(dump::dot_quote("a\"b"), "\"a\\\"b\"");
  EXPECT_EQ(dump::dot_quote("a\\b"), "\"a\\\\b\"");
  EXPECT_EQ(dump::dot_quote("a\nb"), "\"a\\nb\"");
  EXPECT_EQ(dump::dot_quote("a\r\nb"), "\"a\\nb\"");
  EXPECT_EQ(dump::dot_quote("a&lt;"), "\"a&amp;lt;\"");
  EXPECT_EQ(dump::dot_quote("\xE4\xB8\xAD"), "\"\xE4\xB8\xAD\"");
  // Invalid UTF-8 and control characters become U+FFFD; the quoted string stays closed.
  EXPECT_EQ(dump::dot_quote("x\xFFy\x01z\tw"), "\"x\xEF\xBF\xBDy\xEF\xBF\xBDz w\"");
  EXPECT_EQ(dump::valid_utf8("ok\xC3"), "ok\xEF\xBF\xBD");
  EXPECT_EQ(dump::valid_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  for (const std::string& name : awkward_names()) {
    std::string q = dump::dot_quote(name);
    // What Graphviz's lexer leaves of it: the quotes removed, \" turned into ".
    std::string attr;
    for (size_t i = 1; i + 1 < q.size(); ++i) {
      if (q[i] == '\\' && q[i + 1] == '"') continue;
      attr += q[i];
    }
    EXPECT_EQ(dump::dot_unescape_label(attr), name) << q;
  }
  EXPECT_EQ(dump::ellipsize("\xE4\xB8\xAD\xE6\x96\x87xyz", 2), "\xE4\xB8\xAD\xE6\x96\x87...");
}

TEST(DumpDotEscape, NamesRoundTripThroughGraphviz) {
  std::string text = "digraph g {\n";
  for (size_t i = 0; i < awkward_names().size(); ++i)
    text += "  n" + std::to_string(i) + " [label=" + dump::dot_quote(awkward_names()[i]) +
            ", tooltip=" + dump::dot_quote(awkward_names()[i]) + "];\n";
  text += "}\n";
  PARSE_DOT_OR_SKIP(doc, text);
  for (size_t i = 0; i < awkward_names().size(); ++i) {
    const std::string& name = awkward_names()[i];
    const json* o = object_named(doc, "n" + std::to_string(i));
    ASSERT_NE(o, nullptr) << name;
    EXPECT_EQ(dump::dot_unescape_label(o->value("label", "")), name);
    EXPECT_EQ(drawn_lines(*o), non_empty_lines(name)) << "as drawn: " << name;
  }
}

TEST(DumpDotGraph, NodeAndValueNamesFromTheModelAreEscaped) {
  Graph g;
  g.name = "g \"1\"";
  std::vector<ValueId> in;
  for (size_t i = 0; i < 2; ++i)
    in.push_back(g.add_input(awkward_names()[i + 1], DType::F32, {1 << 20}));
  std::vector<NodeId> ids;
  ValueId v = in[0];
  for (size_t i = 0; i < awkward_names().size(); ++i) {
    Node n;
    n.name = awkward_names()[i];
    n.op = OpType::Elemwise;
    n.mode = i % 2 ? Mode::MUL : Mode::ADD;
    n.inputs = {v, in[1]};
    v = g.add_node(std::move(n), {"value " + awkward_names()[i]})[0];
    ids.push_back(static_cast<NodeId>(g.nodes().size() - 1));
  }
  g.mark_output(v);
  dump::Drawing d;
  d.graph = &g;
  d.title = g.name;
  for (NodeId id : ids) d.times[id] = {1e-3, 8e6, 1.0 / ids.size(), "memory-bound"};
  std::string text = dump::to_dot(d);
  EXPECT_NE(text.find("f32[1Mi]"), std::string::npos) << "edges carry dtype and shape";
  EXPECT_NE(text.find("legend"), std::string::npos);
  PARSE_DOT_OR_SKIP(doc, text);
  for (NodeId id : ids) {
    const json* o = object_named(doc, "n" + std::to_string(id));
    ASSERT_NE(o, nullptr);
    std::string label = dump::dot_unescape_label(o->value("label", ""));
    EXPECT_EQ(label.substr(0, g.node(id).name.size()), g.node(id).name);
    EXPECT_EQ(label.substr(g.node(id).name.size(), 10), "\nElemwise ");
  }
  EXPECT_EQ(dump::dot_unescape_label(doc.value("label", "")), g.name);
}

TEST(DumpDotGraph, ShortTypesAndHeatScale) {
  EXPECT_EQ(dump::short_count(1 << 20), "1Mi");
  EXPECT_EQ(dump::short_count(3072), "3Ki");
  EXPECT_EQ(dump::short_count(1000), "1000");
  EXPECT_EQ(dump::short_count(0), "0");
  EXPECT_EQ(dump::heat_step(0), 0);
  EXPECT_EQ(dump::heat_step(0.07), 3);
  EXPECT_EQ(dump::heat_step(1.0), 8);
}

// ---- a real session ------------------------------------------------------------------

// Two independent hot chains on 2^20 floats: two regions, two different kernels.
Graph two_chains() {
  std::string nodes;
  for (const char* c : {"a", "b"}) {
    std::string p(c);
    const std::string fourth = p == "a" ? "SUB" : "ADD";
    nodes += R"({"name": ")" + p + R"(_sq", "op": "Elemwise", "mode": "MUL", "inputs": [")" + p +
             R"(x", ")" + p + R"(x"], "outputs": [")" + p + R"(_sq"]},
      {"name": ")" +
             p + R"(_sum", "op": "Elemwise", "mode": "ADD", "inputs": [")" + p + R"(_sq", ")" + p +
             R"(y"], "outputs": [")" + p + R"(_sum"]},
      {"name": ")" +
             p + R"(_half", "op": "Elemwise", "mode": "MUL", "inputs": [")" + p + R"(_sum", ")" +
             p + R"(y"], "outputs": [")" + p + R"(_half"]},
      {"name": ")" +
             p + R"(_sub", "op": "Elemwise", "mode": ")" + fourth + R"(", "inputs": [")" + p +
             R"(_half", ")" + p + R"(x"], "outputs": [")" + p + R"(_sub"]},
      {"name": ")" +
             p + R"(_out", "op": "Elemwise", "mode": "MUL", "inputs": [")" + p + R"(_sub", ")" + p +
             R"(y"], "outputs": [")" + p + R"(_out"]})";
    if (p == "a") nodes += ",";
  }
  std::string inputs;
  for (const char* n : {"ax", "ay", "bx", "by"})
    inputs += std::string(inputs.empty() ? "" : ",") + R"({"name": ")" + n +
              R"(", "dtype": "f32", "shape": [1048576]})";
  return parse_graph_json(R"({"format": "hotfuse-graph", "version": 1, "name": "two \"chains\"",
    "inputs": [)" + inputs + R"(], "nodes": [)" +
                              nodes + R"(], "outputs": ["a_out", "b_out"]})",
                          "test");
}

MachinePeak fixed_machine() {
  MachinePeak m;
  m.bandwidth_gbps = 10;
  m.gflops = 100;
  m.launch_us = 5;
  m.threads = 2;
  return m;
}

int region_with(const Session& s, const std::string& node) {
  for (const RegionRecord& r : s.regions())
    for (NodeId n : r.nodes)
      if (s.graph().node(n).name == node) return r.id;
  return -1;
}

struct SessionRun {
  JitEnv env;
  Graph g = two_chains();
  cpu::CpuBackend backend;
  std::vector<HostTensor> inputs = random_inputs(g, 3);
  std::unique_ptr<Session> s;
  int wrong = -1;  // region whose kernel is made wrong (reverted by validation)

  // min_share 1: every region is rejected. Else a is kept and b reverted.
  explicit SessionRun(double min_share) {
    SessionOptions o;
    o.warmup_iters = 1;
    o.profile_iters = 3;
    o.reprofile_iters = 5;  // the first fused iteration touches fresh buffers
    o.sync_compile = true;
    o.trace = true;
    o.select.min_share = min_share;
    o.select.expected_iters = int64_t{1} << 40;
    o.after_fused_run = [this](int region, std::span<const TensorView> out) {
      if (region == wrong) static_cast<float*>(out[0].data)[7] += 1.0f;
    };
    s = std::make_unique<Session>(g, backend, *env.cache, fixed_machine(), o);
    wrong = region_with(*s, "b_out");
    auto t0 = std::chrono::steady_clock::now();
    while (!s->settled() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120))
      s->run(views(inputs));
    for (int i = 0; i < 3; ++i) s->run(views(inputs));
  }
};

// Cluster subgraphs of a -Tjson document by name, and the node objects inside each.
std::map<std::string, const json*> clusters(const json& doc) {
  std::map<std::string, const json*> out;
  for (const json& o : objects(doc))
    if (o.value("name", "").rfind("cluster_", 0) == 0) out[o["name"]] = &o;
  return out;
}

size_t count_prefix(const std::map<std::string, const json*>& m, const std::string& prefix) {
  size_t n = 0;
  for (const auto& [name, o] : m) n += name.rfind(prefix, 0) == 0;
  return n;
}

TEST(DumpSession, AfterGraphHasAClusterPerKeptRegionAndMarksTheReverted) {
  SessionRun run(0.0);
  const Session& s = *run.s;
  ASSERT_TRUE(s.settled()) << phase_name(s.phase());
  const int a = region_with(s, "a_out"), b = region_with(s, "b_out");
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  ASSERT_EQ(s.regions()[a].state, RegionState::Swapped) << s.regions()[a].reason;
  ASSERT_EQ(s.regions()[b].state, RegionState::Reverted) << s.regions()[b].reason;

  const std::string before = dump::to_dot(dump::session_before(s));
  const std::string after = dump::to_dot(dump::session_after(s));
  EXPECT_EQ(before.find("subgraph cluster_"), std::string::npos) << "before: as imported";
  EXPECT_NE(after.find("subgraph cluster_kept_" + std::to_string(a) + " "), std::string::npos);
  EXPECT_NE(after.find("subgraph cluster_reverted_" + std::to_string(b) + " "), std::string::npos);
  EXPECT_NE(after.find(s.regions()[a].kernel), std::string::npos);

  PARSE_DOT_OR_SKIP(before_doc, before);
  EXPECT_TRUE(clusters(before_doc).empty());
  for (const Node& n : s.graph().nodes())
    if (!n.dead && n.op != OpType::Constant) {
      bool found = false;
      for (const json& o : before_doc["objects"])
        found |= dump::dot_unescape_label(o.value("label", "")).rfind(n.name + "\n", 0) == 0;
      EXPECT_TRUE(found) << n.name;
    }

  PARSE_DOT_OR_SKIP(after_doc, after);
  auto cl = clusters(after_doc);
  int kept = 0;
  for (const RegionRecord& r : s.regions()) kept += r.state == RegionState::Swapped;
  EXPECT_EQ(count_prefix(cl, "cluster_kept_"), static_cast<size_t>(kept));
  EXPECT_EQ(count_prefix(cl, "cluster_reverted_"), 1u);
  const json& k = *cl.at("cluster_kept_" + std::to_string(a));
  const json& rv = *cl.at("cluster_reverted_" + std::to_string(b));
  EXPECT_NE(k.value("style", "").find("filled"), std::string::npos);
  EXPECT_NE(rv.value("style", "").find("dashed"), std::string::npos);
  EXPECT_NE(k.value("color", ""), rv.value("color", ""));
  // The kept cluster holds the one Fused node; its label has the speedup.
  ASSERT_EQ(k.value("nodes", json::array()).size(), 1u);
  const json& fused = after_doc["objects"][k["nodes"][0].get<size_t>()];
  EXPECT_NE(fused.value("label", "").find("Fused " + s.regions()[a].kernel), std::string::npos);
  EXPECT_NE(dump::dot_unescape_label(k.value("label", "")).find("x)"), std::string::npos)
      << k.value("label", "");
  // The reverted cluster holds the region's original ops, with the reason.
  EXPECT_EQ(rv.value("nodes", json::array()).size(), 5u);
  EXPECT_NE(rv.value("label", "").find("reverted"), std::string::npos);
  EXPECT_NE(rv.value("tooltip", "").find("differs from unfused"), std::string::npos);
}

TEST(DumpSession, RejectedRegionsAreDottedClustersInTheAfterGraph) {
  SessionRun run(1.0);  // no region saves 100% of an iteration
  const Session& s = *run.s;
  for (const RegionRecord& r : s.regions()) ASSERT_EQ(r.state, RegionState::Rejected) << r.reason;
  const std::string after = dump::to_dot(dump::session_after(s));
  size_t dotted = 0;
  for (size_t at = 0; (at = after.find("subgraph cluster_rejected_", at)) != std::string::npos;
       ++at)
    ++dotted;
  EXPECT_EQ(dotted, s.regions().size());
  PARSE_DOT_OR_SKIP(doc, after);
  auto cl = clusters(doc);
  EXPECT_EQ(count_prefix(cl, "cluster_kept_"), 0u);
  EXPECT_EQ(count_prefix(cl, "cluster_rejected_"), s.regions().size());
  for (const auto& [name, o] : cl) {
    EXPECT_NE(o->value("style", "").find("dotted"), std::string::npos) << name;
    EXPECT_NE(o->value("label", "").find("not fused"), std::string::npos) << name;
  }
}

// ---- trace.json ----------------------------------------------------------------------

bool is_num(const json& e, const char* k) {
  return e.contains(k) && e[k].is_number();
}
bool is_str(const json& e, const char* k) {
  return e.contains(k) && e[k].is_string();
}

// The Trace Event Format's rules for the phases the dump writes; returns the failures.
std::vector<std::string> check_trace(const json& t) {
  std::vector<std::string> bad;
  if (!t.is_object() || !t.contains("traceEvents") || !t["traceEvents"].is_array())
    return {"no traceEvents array"};
  if (!t.contains("displayTimeUnit") ||
      (t["displayTimeUnit"] != "ms" && t["displayTimeUnit"] != "ns"))
    bad.push_back("displayTimeUnit is not ms or ns");
  std::map<std::pair<int, int>, double> last_ts;
  size_t i = 0;
  for (const json& e : t["traceEvents"]) {
    const std::string at = "event " + std::to_string(i++) + " " + e.dump() + ": ";
    if (!is_str(e, "ph") || !is_str(e, "name")) {
      bad.push_back(at + "no name or ph");
      continue;
    }
    const std::string ph = e["ph"];
    if (ph == "X") {
      for (const char* k : {"ts", "dur", "pid", "tid"})
        if (!is_num(e, k)) bad.push_back(at + "X without " + k);
      if (!is_num(e, "ts") || !is_num(e, "dur") || !is_num(e, "pid") || !is_num(e, "tid")) continue;
      if (e["dur"].get<double>() < 0) bad.push_back(at + "negative dur");
      auto track = std::make_pair(e["pid"].get<int>(), e["tid"].get<int>());
      auto it = last_ts.find(track);
      if (it != last_ts.end() && e["ts"].get<double>() < it->second)
        bad.push_back(at + "ts goes back on its track");
      last_ts[track] = e["ts"].get<double>();
    } else if (ph == "i" || ph == "I") {
      if (!is_num(e, "ts")) bad.push_back(at + "instant without ts");
      if (!is_str(e, "s") || (e["s"] != "g" && e["s"] != "p" && e["s"] != "t"))
        bad.push_back(at + "instant without scope s");
    } else if (ph == "M") {
      if (!is_num(e, "pid")) bad.push_back(at + "M without pid");
      if (e.contains("tid") && !e["tid"].is_number()) bad.push_back(at + "M tid not a number");
      if (!e.contains("args") || !is_str(e["args"], "name"))
        bad.push_back(at + "M without args.name");
    } else if (ph == "s" || ph == "t" || ph == "f") {
      for (const char* k : {"ts", "pid", "tid"})
        if (!is_num(e, k)) bad.push_back(at + "flow without " + k);
      if (!e.contains("id") || !(e["id"].is_number() || e["id"].is_string()))
        bad.push_back(at + "flow without id");
      if (ph == "f" && e.value("bp", "") != "e") bad.push_back(at + "f without bp e");
    } else if (ph == "C") {
      if (!is_num(e, "ts") || !is_num(e, "pid")) bad.push_back(at + "C without ts or pid");
      if (!e.contains("args") || !e["args"].is_object() || e["args"].empty())
        bad.push_back(at + "C without args");
      else
        for (const auto& [k, v] : e["args"].items())
          if (!v.is_number()) bad.push_back(at + "C args." + k + " is not a number");
    } else {
      bad.push_back(at + "unexpected phase " + ph);
    }
  }
  return bad;
}

TEST(DumpTrace, FollowsTheEventFormatAndNestsStepsInIterations) {
  SessionRun run(0.0);
  const Session& s = *run.s;
  const json t = dump::trace_json(s);
  for (const std::string& b : check_trace(t)) ADD_FAILURE() << b;
  // The text written to trace.json is the same document.
  EXPECT_EQ(json::parse(dump::trace_text(t)), t);

  std::map<int, std::string> threads;
  std::map<int, std::pair<double, double>> iteration;  // index -> [ts, end]
  std::vector<const json*> steps, compiles;
  int instants = 0;
  for (const json& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") threads[e["tid"]] = e["args"]["name"];
    if (e["ph"] == "i") ++instants;
    if (e["ph"] != "X") continue;
    const std::string cat = e.value("cat", "");
    if (cat == "iteration") {
      iteration[e["args"]["index"]] = {e["ts"], e["ts"].get<double>() + e["dur"].get<double>()};
      // The plan's part of the iteration: within it, and something ran.
      EXPECT_GT(e["args"]["plan_ms"].get<double>(), 0) << e.dump();
      EXPECT_LE(e["args"]["plan_ms"].get<double>(), e["args"]["ms"].get<double>()) << e.dump();
    } else if (cat == "op" || cat == "fused")
      steps.push_back(&e);
    else if (cat == "compile")
      compiles.push_back(&e);
  }
  EXPECT_EQ(threads[1], "iterations");
  EXPECT_EQ(threads[2], "executor");
  EXPECT_EQ(threads[3], "compile worker");
  EXPECT_EQ(iteration.size(), s.iterations().size());
  EXPECT_EQ(steps.size(), s.traced_steps().size());
  EXPECT_EQ(compiles.size(), 2u) << "one per compiled region";
  EXPECT_GE(instants, 5) << "phase changes and the session's messages";
  bool fused = false;
  for (const json* e : steps) {
    const json& a = (*e)["args"];
    for (const char* k : {"iteration", "node", "op", "region", "bytes", "gbps", "phase"})
      EXPECT_TRUE(a.contains(k)) << k << " in " << e->dump();
    EXPECT_EQ((*e)["tid"], 2);
    auto it = iteration.find(a["iteration"]);
    ASSERT_NE(it, iteration.end()) << e->dump();
    const double ts = (*e)["ts"], end = ts + (*e)["dur"].get<double>();
    EXPECT_GE(ts, it->second.first - 1e-6) << e->dump();
    EXPECT_LE(end, it->second.second + 1e-6) << e->dump();
    fused |= a["fused"].get<bool>();
  }
  EXPECT_TRUE(fused) << "the kept kernel runs in the steady iterations";
  // Compiles happen within the session's lifetime, on the worker's track.
  const double last_end = iteration.rbegin()->second.second;
  for (const json* e : compiles) {
    EXPECT_EQ((*e)["tid"], 3);
    EXPECT_GE((*e)["ts"].get<double>(), 0);
    EXPECT_LE((*e)["ts"].get<double>() + (*e)["dur"].get<double>(), last_end) << e->dump();
  }
}

// Every flow step binds to a slice that encloses it on its thread (what Perfetto does with
// "bp":"e"); returns that slice's cat, or "" when none does.
std::string enclosing_cat(const json& t, const json& step) {
  std::string cat;
  double best = 1e300;
  for (const json& e : t["traceEvents"])
    if (e["ph"] == "X" && e["tid"] == step["tid"]) {
      const double ts = e["ts"], end = ts + e["dur"].get<double>(), at = step["ts"];
      if (ts <= at && at <= end && end - ts < best) best = end - ts, cat = e.value("cat", "");
    }
  return cat;
}

TEST(DumpTrace, FlowsComeInMatchingPairsAndCountersSampleMemoryAndBandwidth) {
  SessionRun run(0.0);
  const Session& s = *run.s;
  const int a = region_with(s, "a_out");
  ASSERT_GE(a, 0);
  ASSERT_EQ(s.regions()[a].state, RegionState::Swapped) << s.regions()[a].reason;
  const json t = dump::trace_json(s);
  for (const std::string& b : check_trace(t)) ADD_FAILURE() << b;
  // Written and read back: still one valid JSON document.
  const json back = json::parse(dump::trace_text(t));
  ASSERT_TRUE(back.contains("traceEvents"));

  std::map<int64_t, const json*> starts, finishes;
  std::map<std::string, std::vector<double>> counter_values;
  for (const json& e : back["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "s") {
      EXPECT_TRUE(starts.emplace(e["id"].get<int64_t>(), &e).second) << e.dump();
    } else if (ph == "f") {
      EXPECT_TRUE(finishes.emplace(e["id"].get<int64_t>(), &e).second) << e.dump();
    }
    if (ph == "C")
      for (const auto& [k, v] : e["args"].items())
        counter_values[e["name"].get<std::string>() + "." + k].push_back(v.get<double>());
  }
  ASSERT_FALSE(starts.empty());
  EXPECT_EQ(starts.size(), finishes.size());
  for (const auto& [id, st] : starts) {
    auto f = finishes.find(id);
    ASSERT_NE(f, finishes.end()) << "no f for " << st->dump();
    EXPECT_EQ((*st)["cat"], (*f->second)["cat"]);
    EXPECT_LE((*st)["ts"].get<double>(), (*f->second)["ts"].get<double>()) << st->dump();
    EXPECT_NE(enclosing_cat(back, *st), "") << "s binds to no slice: " << st->dump();
    EXPECT_NE(enclosing_cat(back, *f->second), "") << "f binds to no slice: " << f->second->dump();
  }
  // The kept region's chain: op -> compile -> swap iteration -> fused kernel.
  const int64_t id = 3 * a;
  ASSERT_TRUE(starts.count(id) && starts.count(id + 1) && starts.count(id + 2));
  EXPECT_EQ(enclosing_cat(back, *starts[id]), "op");
  EXPECT_EQ(enclosing_cat(back, *finishes[id]), "compile");
  EXPECT_EQ(enclosing_cat(back, *finishes[id + 1]), "iteration");
  EXPECT_EQ(enclosing_cat(back, *finishes[id + 2]), "fused");

  // Counters: the planned peak before (and after the swap), and one bandwidth sample per
  // traced iteration, all positive.
  ASSERT_EQ(counter_values["memory in use.bytes"].size(), 2u);
  EXPECT_EQ(counter_values["memory in use.bytes"][0], static_cast<double>(s.peak_bytes_before()));
  EXPECT_EQ(counter_values["memory in use.bytes"][1], static_cast<double>(s.peak_bytes_now()));
  std::set<int> traced;
  for (const StepRecord& st : s.traced_steps()) traced.insert(st.iteration);
  EXPECT_EQ(counter_values["achieved GB/s.gbps"].size(), traced.size());
  for (double v : counter_values["achieved GB/s.gbps"]) EXPECT_GT(v, 0);
}

// The slice enclosing a flow step on its thread (the narrowest), or null.
const json* enclosing_slice(const json& t, const json& step) {
  const json* best = nullptr;
  for (const json& e : t["traceEvents"])
    if (e["ph"] == "X" && e["tid"] == step["tid"]) {
      const double ts = e["ts"], end = ts + e["dur"].get<double>(), at = step["ts"];
      if (ts <= at && at <= end && (!best || e["dur"] < (*best)["dur"])) best = &e;
    }
  return best;
}

// CUDA launches as CUPTI's join gives them (synthetic: no GPU needed), appended to a real
// session's trace: a "cuda api" slice per launch, a kernel slice on its stream's track, and
// a flow from the one to the other, still valid Chrome-trace JSON after a round trip.
TEST(DumpTrace, DeviceLaunchesFlowFromTheLaunchCallToTheKernelOnItsStream) {
  SessionRun run(0.0);
  const Session& s = *run.s;
  json t = dump::trace_json(s);
  int64_t region_flow_max = -1;
  size_t region_flows = 0;
  for (const json& e : t["traceEvents"])
    if (e["ph"] == "s")
      region_flow_max = std::max(region_flow_max, e["id"].get<int64_t>()), ++region_flows;
  ASSERT_GT(region_flows, 0u);

  // CUPTI's clock: 5'000'000 ns is trace time 100 us. Launch calls take 4 us, kernels run
  // after them; two streams; one record with its times reversed is left out.
  const dump::DeviceClock clock{5'000'000, 100.0};
  std::vector<cuda::DeviceLaunch> launches;
  auto launch = [&](uint32_t corr, uint32_t node, uint32_t stream, uint64_t api0, uint64_t k0,
                    uint64_t kdur) {
    cuda::DeviceLaunch l;
    l.iteration = corr % 2;
    l.node = node;
    l.correlation = corr;
    l.kernel = "hf_kernel_" + std::to_string(corr);
    l.stream = stream;
    l.thread = 42;
    l.api_start_ns = api0;
    l.api_end_ns = api0 + 4000;
    l.start_ns = k0;
    l.end_ns = k0 + kdur;
    launches.push_back(l);
  };
  launch(11, 2, 7, 5'010'000, 5'020'000, 3'000);
  launch(12, 3, 7, 5'015'000, 5'023'500, 1'500);  // queued behind 11 on stream 7
  launch(13, 4, 0, 5'019'500, 5'020'500, 9'999);  // runs beside 11 on stream 0
  launch(14, 5, 7, 5'030'000, 5'040'000, 1);      // a one-nanosecond kernel
  launch(15, 6, 7, 5'050'000, 5'060'000, 10);
  std::swap(launches.back().start_ns, launches.back().end_ns);  // broken: left out
  dump::add_device_launches(t, launches, clock, "fused plan");

  for (const std::string& b : check_trace(t)) ADD_FAILURE() << b;
  const json back = json::parse(dump::trace_text(t));
  EXPECT_EQ(back, t);
  EXPECT_EQ(back["otherData"]["device_launches"], 4);
  EXPECT_EQ(back["otherData"]["device_launches_skipped"], 1);

  std::map<int, std::string> threads;
  std::map<int64_t, const json*> starts, finishes;
  size_t metadata_seen_after_events = 0;
  bool timed = false;
  for (const json& e : back["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M") {
      metadata_seen_after_events += timed;
      if (e["name"] == "thread_name") threads[e["tid"]] = e["args"]["name"];
      continue;
    }
    timed = true;
    if (ph == "s") {
      EXPECT_TRUE(starts.emplace(e["id"].get<int64_t>(), &e).second) << e.dump();
    }
    if (ph == "f") {
      EXPECT_TRUE(finishes.emplace(e["id"].get<int64_t>(), &e).second) << e.dump();
    }
  }
  EXPECT_EQ(metadata_seen_after_events, 0u) << "metadata first";
  EXPECT_EQ(threads[1], "iterations");
  EXPECT_EQ(threads[4], "cuda api");
  EXPECT_EQ(threads[107], "gpu stream 7");
  EXPECT_EQ(threads[100], "gpu stream 0");
  EXPECT_EQ(starts.size(), region_flows + 4);
  EXPECT_EQ(finishes.size(), starts.size());

  std::set<uint32_t> joined;
  for (const auto& [id, st] : starts) {
    if ((*st)["name"] != "launch") continue;
    EXPECT_GT(id, region_flow_max) << "launch flow ids come after the region flows'";
    ASSERT_TRUE(finishes.count(id)) << st->dump();
    const json& f = *finishes[id];
    EXPECT_EQ(f["name"], "launch");
    EXPECT_EQ(f["cat"], (*st)["cat"]);
    EXPECT_EQ(f["bp"], "e");
    const json* api = enclosing_slice(back, *st);
    const json* kernel = enclosing_slice(back, f);
    ASSERT_NE(api, nullptr) << "s binds to no launch slice: " << st->dump();
    ASSERT_NE(kernel, nullptr) << "f binds to no kernel slice: " << f.dump();
    EXPECT_EQ((*api)["cat"], "cuda_api");
    EXPECT_EQ((*api)["tid"], 4);
    EXPECT_EQ((*kernel)["cat"], "kernel");
    // The arrow joins the launch to its own kernel, not a neighbour on the track.
    const uint32_t corr = (*api)["args"]["correlation"];
    EXPECT_EQ((*kernel)["args"]["correlation"], corr);
    EXPECT_EQ((*api)["name"], "launch " + (*kernel)["name"].get<std::string>());
    EXPECT_EQ((*kernel)["args"]["node"], (*api)["args"]["node"]);
    EXPECT_EQ((*kernel)["args"]["window"], "fused plan");
    joined.insert(corr);
  }
  EXPECT_EQ(joined, (std::set<uint32_t>{11, 12, 13, 14}));
  // Times: CUPTI nanoseconds mapped onto the trace's microseconds, exactly.
  for (const json& e : back["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "kernel" && e["args"]["correlation"] == 12) {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 123.5);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 1.5);
      EXPECT_EQ(e["tid"], 107);
      EXPECT_EQ(e["args"]["node"], 3);
    }

  // No launches: nothing added, no tracks named.
  json plain = dump::trace_json(s);
  const size_t n = plain["traceEvents"].size();
  dump::add_device_launches(plain, {}, clock);
  EXPECT_EQ(plain["traceEvents"].size(), n);
  EXPECT_EQ(plain["otherData"]["device_launches"], 0);
}

TEST(DumpTrace, CheckerCatchesBrokenEvents) {
  json t = {{"displayTimeUnit", "ms"},
            {"traceEvents",
             {{{"name", "a"}, {"ph", "X"}, {"ts", 5}, {"dur", 1}, {"pid", 1}, {"tid", 1}},
              {{"name", "b"}, {"ph", "X"}, {"ts", 4}, {"dur", -1}, {"pid", 1}, {"tid", 1}},
              {{"name", "c"}, {"ph", "i"}, {"ts", 4}},
              {{"name", "d"}, {"ph", "M"}, {"pid", 1}, {"args", json::object()}},
              {{"name", "e"}, {"ph", "X"}, {"ts", 1}, {"pid", 1}, {"tid", 1}},
              {{"name", "f"}, {"ph", "f"}, {"id", 1}, {"ts", 1}, {"pid", 1}, {"tid", 1}},
              {{"name", "g"}, {"ph", "C"}, {"ts", 1}, {"pid", 1}, {"args", {{"v", "x"}}}}}}};
  // back in time, negative dur, no s, no name, no dur, f without bp, C with a string
  EXPECT_EQ(check_trace(t).size(), 7u);
}

// ---- kernels and the directory -------------------------------------------------------

TEST(DumpKernels, SourcesAreNamedByKernelAndSayWhereTheyCameFrom) {
  Graph g = two_chains();
  fusion::Detection d = fusion::detect_regions(g);
  ASSERT_EQ(d.regions.size(), 2u);
  JitEnv env;
  auto sources = dump::kernel_sources(g, d, {0, 1, 0}, *env.cache);
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources[0].regions, (std::vector<int>{0, 0}));
  for (const auto& k : sources) {
    EXPECT_EQ(k.kernel.rfind("hf_", 0), 0u);
    EXPECT_EQ(k.file, "kernels/" + k.kernel + ".cpp");  // the host toolchain's language
    // The very text the cache compiles for that origin: the dump shows the code that ran.
    fusion::RegionKernel rk = fusion::build_region_kernel(g, d.regions[k.regions[0]]);
    EXPECT_EQ(k.source, env.cache->source(rk.spec, kernel_origin(g, rk.nodes)));
    EXPECT_NE(k.source.find(k.kernel), std::string::npos);
    EXPECT_NE(k.source.find("graph 'two \"chains\"', nodes:"), std::string::npos) << k.source;
  }
  EXPECT_NE(sources[0].kernel, sources[1].kernel);
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(DumpDir, CreatesAMissingDirectoryAndRefusesANonEmptyOne) {
  TempDir t;
  {
    dump::DumpDir d(t.root / "new" / "dir", false);
    d.write("before.dot", "x");
    d.write("kernels/hf_1.cpp", "y");
    EXPECT_EQ(slurp(t.root / "new/dir/kernels/hf_1.cpp"), "y");
    EXPECT_THROW(d.write("before.dot", "again"), Error) << "never replaced without --force";
    EXPECT_EQ(slurp(t.root / "new/dir/before.dot"), "x");
  }
  std::ofstream(t.root / "mine.txt") << "user data";
  try {
    dump::DumpDir d(t.root, false);
    FAIL() << "a non-empty directory was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(t.root.string()), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
  }
  EXPECT_EQ(slurp(t.root / "mine.txt"), "user data");
  std::ofstream(t.root / "file") << "f";
  EXPECT_THROW(dump::DumpDir(t.root / "file", true), Error);
  EXPECT_THROW(dump::DumpDir(t.root, false).write("../escape", ""), Error);
}

TEST(DumpDir, ForceReplacesOnlyTheDumpsFilesAndNeverFollowsALink) {
  TempDir t;
  std::ofstream(t.root / "mine.txt") << "user data";
  std::ofstream(t.root / "elsewhere.txt") << "keep me";
  fs::create_symlink(t.root / "elsewhere.txt", t.root / "before.dot");
  std::ofstream(t.root / "report.json") << "old";
  dump::DumpDir d(t.root, true);
  d.write("before.dot", "new graph");
  d.write("report.json", "{}");
  EXPECT_EQ(slurp(t.root / "mine.txt"), "user data");
  EXPECT_EQ(slurp(t.root / "elsewhere.txt"), "keep me") << "the link was replaced, not followed";
  EXPECT_FALSE(fs::is_symlink(t.root / "before.dot"));
  EXPECT_EQ(slurp(t.root / "before.dot"), "new graph");
  EXPECT_EQ(slurp(t.root / "report.json"), "{}");
  size_t files = 0;
  for (auto it = fs::directory_iterator(t.root); it != fs::directory_iterator(); ++it) ++files;
  EXPECT_EQ(files, 4u) << "no temporary files left behind";
  EXPECT_EQ(d.written(), (std::vector<std::string>{"before.dot", "report.json"}));
}

// The directory is held open once checked (issue 23, item 4): a path swapped for a symlink
// afterwards does not redirect the dump's files.
TEST(DumpDir, WritesIntoTheDirectoryItCheckedNotAPathSwappedLater) {
  TempDir t;
  fs::create_directory(t.root / "elsewhere");
  dump::DumpDir d(t.root / "dump", false);
  fs::rename(t.root / "dump", t.root / "moved");
  fs::create_directory_symlink(t.root / "elsewhere", t.root / "dump");
  d.write("before.dot", "graph");
  d.write("kernels/hf_1.cpp", "src");
  EXPECT_EQ(slurp(t.root / "moved/before.dot"), "graph");
  EXPECT_EQ(slurp(t.root / "moved/kernels/hf_1.cpp"), "src");
  EXPECT_TRUE(fs::is_empty(t.root / "elsewhere")) << "written through the swapped path";
}

// A subdirectory planted as a symlink is never followed, with or without --force.
TEST(DumpDir, ASymlinkedSubdirectoryIsRefused) {
  for (bool force : {false, true}) {
    TempDir t;
    fs::create_directory(t.root / "elsewhere");
    dump::DumpDir d(t.root / "dump", force);
    fs::create_directory_symlink(t.root / "elsewhere", t.root / "dump/kernels");
    try {
      d.write("kernels/hf_1.cpp", "src");
      ADD_FAILURE() << "written through a symlinked subdirectory";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("a symlink or file is in the way"), std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(fs::is_empty(t.root / "elsewhere"));
  }
}

// DIR itself may be the user's symlink to a directory, but not another user's (planted in
// a shared directory such as /tmp, where the kernel's protected_symlinks may be off).
TEST(DumpDir, ASymlinkAnotherUserOwnsIsRefused) {
  TempDir t;
  fs::create_directory(t.root / "elsewhere");
  fs::create_directory_symlink(t.root / "elsewhere", t.root / "dump");
  EXPECT_NO_THROW(dump::DumpDir::check(t.root / "dump", false, "--dump")) << "our own link";
  if (::lchown((t.root / "dump").c_str(), 12345, 12345) != 0 || ::geteuid() == 12345)
    GTEST_SKIP() << "cannot give the link to another user (not root)";
  try {
    dump::DumpDir d(t.root / "dump", false);
    FAIL() << "another user's symlink was followed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic link owned by uid 12345"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_empty(t.root / "elsewhere"));
}

// DumpDir::check creates nothing (the launcher calls it before anything runs).
TEST(DumpDir, CheckCreatesNothing) {
  TempDir t;
  dump::DumpDir::check(t.root / "a" / "b", false, "--dump");
  EXPECT_FALSE(fs::exists(t.root / "a"));
  std::ofstream(t.root / "file") << "f";
  EXPECT_THROW(dump::DumpDir::check(t.root / "file" / "b", false, "--dump"), Error);
  EXPECT_THROW(dump::DumpDir::check(t.root / "file", true, "--dump"), Error);
  EXPECT_THROW(dump::DumpDir::check(t.root, false, "--save-outputs"), Error) << "not empty";
  EXPECT_NO_THROW(dump::DumpDir::check(t.root, true, "--save-outputs"));
}

TEST(DumpSession, WritesEveryFileOfAnAdaptiveDump) {
  SessionRun run(0.0);
  TempDir t;
  dump::DumpDir d(t.root / "dump", false);
  std::vector<std::string> warnings =
      dump::write_session_dump(d, *run.s, session_report(*run.s, {"two_chains", 3}));
  for (const char* f : {"before.dot", "after.dot", "trace.json", "report.json"})
    EXPECT_TRUE(fs::exists(t.root / "dump" / f)) << f;
  const RegionRecord& a = run.s->regions()[region_with(*run.s, "a_out")];
  EXPECT_TRUE(fs::exists(t.root / "dump/kernels" / (a.kernel + ".cpp")));
  json report = json::parse(slurp(t.root / "dump/report.json"));
  EXPECT_EQ(report["summary"]["graph"], "two \"chains\"");
  for (const std::string& b : check_trace(json::parse(slurp(t.root / "dump/trace.json"))))
    ADD_FAILURE() << b;
  if (dump::run_dot("digraph{}", "json").ok) {
    EXPECT_TRUE(warnings.empty()) << warnings.front();
    EXPECT_NE(slurp(t.root / "dump/after.svg").find("<svg"), std::string::npos);
  } else {
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("dot"), std::string::npos);
  }
}

}  // namespace
}  // namespace hf
