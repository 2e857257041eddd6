#include "dump/write_dump.h"

#include "dump/dot_graph.h"
#include "dump/dot_render.h"
#include "dump/fusion_dot.h"
#include "dump/kernel_sources.h"
#include "dump/session_dot.h"
#include "dump/text.h"
#include "dump/trace_json.h"

namespace hf::dump {

namespace {

using json = nlohmann::json;

// name.dot, and name.svg when dot can render it; a missing dot is said once.
void write_graph(DumpDir& dir, const std::string& name, const Drawing& d,
                 std::vector<std::string>& warnings, bool& dot_missing) {
  const std::string text = to_dot(d);
  dir.write(name + ".dot", text);
  if (dot_missing) return;
  DotOutput svg = run_dot(text, "svg");
  if (svg.ok) {
    dir.write(name + ".svg", svg.output);
  } else if (svg.missing) {
    dot_missing = true;
    warnings.push_back(
        "dot (Graphviz) is not on PATH: the dump has .dot files but no .svg; "
        "install graphviz to get them");
  } else {
    warnings.push_back(name + ".svg not written: " + svg.error);
  }
}

void write_kernels(DumpDir& dir, const Graph& g, const fusion::Detection& d,
                   const std::vector<int>& regions) {
  for (const KernelSource& k : kernel_sources(g, d, regions))
    dir.write("kernels/" + k.kernel + ".cpp", k.source);
}

}  // namespace

std::string json_text(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string trace_text(const json& trace) {
  std::string out = "{\"displayTimeUnit\": " + json_text(trace.at("displayTimeUnit"), -1);
  out.pop_back();
  if (trace.contains("otherData"))
    out += ",\n\"otherData\": " +
           trace.at("otherData").dump(-1, ' ', false, json::error_handler_t::replace);
  out += ",\n\"traceEvents\": [\n";
  const json& events = trace.at("traceEvents");
  for (size_t i = 0; i < events.size(); ++i) {
    out += events[i].dump(-1, ' ', false, json::error_handler_t::replace);
    out += i + 1 < events.size() ? ",\n" : "\n";
  }
  return out + "]}\n";
}

std::vector<std::string> write_session_dump(DumpDir& dir, const Session& s, const json& report) {
  std::vector<std::string> warnings;
  bool dot_missing = false;
  write_graph(dir, "before", session_before(s), warnings, dot_missing);
  write_graph(dir, "after", session_after(s), warnings, dot_missing);
  TraceOptions to;
  to.process_name = "hotfuse: " + s.graph().name + " (cpu, adaptive)";
  dir.write("trace.json", trace_text(trace_json(s, to)));
  dir.write("report.json", json_text(report));
  std::vector<int> attempted;
  for (const RegionRecord& r : s.regions())
    if (r.state != RegionState::Rejected) attempted.push_back(r.id);
  write_kernels(dir, s.graph(), s.detection(), attempted);
  return warnings;
}

std::vector<std::string> write_fusion_dump(DumpDir& dir, const FusionDump& d) {
  std::vector<std::string> warnings;
  bool dot_missing = false;
  const Graph& g = *d.graph;
  auto count = [](const Graph& graph) { return std::to_string(kernel_count(graph)); };
  std::string title = "'" + g.name + "' as imported: " + count(g) + " kernels, " +
                      human_time(d.before_ms * 1e-3) + " per iteration (--fusion " + d.mode + ")";
  write_graph(dir, "before", timed_drawing(g, *d.before_rows, title), warnings, dot_missing);
  if (d.fused && d.after_rows) {
    const Graph& f = d.fused->graph;
    title = "'" + g.name + "' as executed (--fusion " + d.mode + "): " + count(g) + " -> " +
            count(f) + " kernels, " + human_time(d.before_ms * 1e-3) + " -> " +
            human_time(d.after_ms * 1e-3) + " per iteration";
    if (d.after_ms > 0) title += " (" + printf_double("%.2fx", d.before_ms / d.after_ms) + ")";
    write_graph(dir, "after", fused_drawing(g, *d.fused, *d.before_rows, *d.after_rows, title),
                warnings, dot_missing);
  }
  dir.write("report.json", json_text(d.report));
  if (d.fused && !d.fused->detection.regions.empty()) {
    std::vector<int> all;
    for (size_t r = 0; r < d.fused->detection.regions.size(); ++r)
      all.push_back(static_cast<int>(r));
    write_kernels(dir, g, d.fused->detection, all);
  }
  return warnings;
}

}  // namespace hf::dump
