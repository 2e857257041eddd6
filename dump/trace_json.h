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
