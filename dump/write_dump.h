// Everything `hotfuse-run GRAPH --dump DIR` writes (docs/dumps.md):
//
//   file          adaptive  all  static  off
//   before.dot    yes       yes  yes     yes   the graph as imported, heat-coloured
//   before.svg    yes       yes  yes     yes   when `dot` is on PATH
//   after.dot     yes       yes  yes     -     the graph as executed, regions as clusters
//   after.svg     yes       yes  yes     -     when `dot` is on PATH
//   trace.json    yes       -    -       -     Chrome Trace Event Format (dump/trace_json.h)
//   report.json   yes       yes  yes     yes   as --report writes it (docs/report.md)
//   kernels/      yes       yes  -       -     hf_<hash>.cpp of every attempted region
//
// Names from the model are escaped for DOT (dump/dot_escape.h); JSON is written with
// invalid UTF-8 replaced by U+FFFD. Returns warnings (one line each, e.g. `dot` missing)
// for the caller to print; throws hf::Error when a file cannot be written.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dump/dump_dir.h"
#include "profiler/step_times.h"
#include "session/fuse_graph.h"
#include "session/session.h"

namespace hf::dump {

std::vector<std::string> write_session_dump(DumpDir& dir, const Session& s,
                                            const nlohmann::json& report);

// --fusion off|static|all: `fused` and `after_*` are null/empty with off.
struct FusionDump {
  const Graph* graph = nullptr;
  std::string mode;  // "off", "static", "all"
  const std::vector<OpRow>* before_rows = nullptr;
  double before_ms = 0;
  const FusionResult* fused = nullptr;
  const std::vector<OpRow>* after_rows = nullptr;
  double after_ms = 0;
  nlohmann::json report;
};
std::vector<std::string> write_fusion_dump(DumpDir& dir, const FusionDump& d);

// JSON text as the dump writes it: invalid UTF-8 replaced, not fatal.
std::string json_text(const nlohmann::json& j, int indent = 2);
// trace.json text: one event per line (small and diffable).
std::string trace_text(const nlohmann::json& trace);

}  // namespace hf::dump
