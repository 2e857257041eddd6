// trace.json: an adaptive Session as Chrome Trace Event Format (the JSON object form), for
// Perfetto (ui.perfetto.dev) and chrome://tracing.
//
// One process, three tracks (threads):
//   tid 1 "iterations"      one complete event ("ph":"X") per iteration, named with its
//                           index and phase; phase changes and the session's messages as
//                           instant events ("ph":"i", "s":"g").
//   tid 2 "executor"        one complete event per step (op or fused kernel) of every traced
//                           iteration, inside its iteration's event. CPU ops run on the
//                           thread pool but are timed as a whole, so they share this track.
//   tid 3 "compile worker"  one complete event per kernel compile (or cache load).
// Flow events ("ph":"s" then "ph":"f" with the same cat "flow" and id, the "f" with
// "bp":"e"), per compiled region: its last traced op before the compile -> the compile job
// ("region N: compile"), the compile -> the iteration it was swapped in at ("region N:
// swap"), that iteration -> the first run of its fused kernel ("region N: fused kernel").
// Counter events ("ph":"C"): "memory in use" (args.bytes: the executor plan's planned peak,
// the unfused plan's until the first swap that stayed, then the plan running at the end) and
// "achieved GB/s" (args.gbps: per traced iteration, the bytes its steps moved over its wall
// time). CUDA launches and their kernels (CUPTI, recorded after the session) are added by
// dump/trace_json_device.h, with launch -> kernel flows.
// ts and dur are microseconds since the session started, to the nanosecond; args carry the
// node id, op, region, bytes, GB/s, iteration and phase. Metadata events ("ph":"M") name
// the process and the tracks. The validating iteration runs two graphs and is not traced
// step by step (SessionOptions::trace).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "session/session.h"

namespace hf::dump {

struct TraceOptions {
  std::string process_name = "hotfuse";
  size_t max_iterations = 20000;  // iterations (and their steps) beyond are left out
};

// Events sorted by timestamp; per track the complete events never go back in time.
nlohmann::json trace_json(const Session& s, const TraceOptions& o = {});

}  // namespace hf::dump
