#include "dump/write_dump.h"

#include <chrono>

#include "dump/dot_graph.h"
#include "dump/dot_render.h"
#include "dump/kernel_sources.h"
#include "dump/session_dot.h"
#include "dump/trace_json.h"
#include "dump/trace_json_device.h"

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

std::vector<std::string> write_session_dump(DumpDir& dir, const Session& s, const json& report,
                                            const std::vector<cuda::DeviceLaunchWindow>& device) {
  std::vector<std::string> warnings;
  bool dot_missing = false;
  write_graph(dir, "before", session_before(s), warnings, dot_missing);
  write_graph(dir, "after", session_after(s), warnings, dot_missing);
  TraceOptions to;
  to.process_name = "hotfuse: " + s.graph().name + " (" +
                    (s.target().host_memory ? "cpu" : "cuda") + ", " +
                    std::string(policy_name(s.options().policy)) + ")";
  json trace = trace_json(s, to);
  for (const cuda::DeviceLaunchWindow& w : device) {
    const double at_us = std::chrono::duration<double, std::micro>(w.at - s.start_time()).count();
    add_device_launches(trace, w.launches, {w.cupti_ns, at_us}, w.what);
  }
  dir.write("trace.json", trace_text(trace));
  dir.write("report.json", json_text(report));
  std::vector<int> attempted;
  for (const RegionRecord& r : s.regions())
    if (r.state != RegionState::Rejected) attempted.push_back(r.id);
  for (const KernelSource& k :
       kernel_sources(s.graph(), s.detection(), attempted, *s.target().kernels))
    dir.write(k.file, k.source);
  return warnings;
}

}  // namespace hf::dump
