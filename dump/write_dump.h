// Everything `hotfuse-run GRAPH --dump DIR` writes (docs/dumps.md), in every --fusion mode
// (each is a policy of the one Session):
//
//   before.dot    the graph as imported, heat-coloured by the unfused profile
//   before.svg    when `dot` is on PATH
//   after.dot     the graph as executed, regions as clusters
//   after.svg     when `dot` is on PATH
//   trace.json    Chrome Trace Event Format (dump/trace_json.h)
//   report.json   as --report writes it (docs/report.md)
//   kernels/      hf_<hash>.cpp (.cu on CUDA) of every attempted region, as the kernel
//                 cache generates it (none with off and static: no region is attempted)
//
// Names from the model are escaped for DOT (dump/dot_escape.h); JSON is written with
// invalid UTF-8 replaced by U+FFFD. Returns warnings (one line each, e.g. `dot` missing)
// for the caller to print; throws hf::Error when a file cannot be written.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dump/dump_dir.h"
#include "profiler/device_launch.h"
#include "session/session.h"

namespace hf::dump {

// `device`: CUDA kernel launches CUPTI recorded after the session (RunTarget::
// device_launches), added to trace.json as its device tracks (dump/trace_json_device.h).
std::vector<std::string> write_session_dump(
    DumpDir& dir, const Session& s, const nlohmann::json& report,
    const std::vector<cuda::DeviceLaunchWindow>& device = {});

// JSON text as the dump writes it: invalid UTF-8 replaced, not fatal.
std::string json_text(const nlohmann::json& j, int indent = 2);
// trace.json text: one event per line (small and diffable).
std::string trace_text(const nlohmann::json& trace);

}  // namespace hf::dump
