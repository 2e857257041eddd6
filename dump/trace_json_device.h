// trace.json's device tracks: CUDA kernel launches as CUPTI recorded them
// (profiler/device_launch.h), appended to a trace written by trace_json().
//
// Per launch, a complete event on the "cuda api" track (the host-side launch call, named
// "launch <kernel>") and one on the "gpu stream N" track of its stream (the kernel as it
// ran on the device, named by the kernel), both with args.node (so the viewer links them to
// the graph node, and through it to its region), args.iteration, args.correlation; and a
// flow ("ph":"s" on the launch's middle, "ph":"f" with "bp":"e" on the kernel's middle,
// cat "flow", name "launch", one id per launch, above every id the trace already uses),
// Perfetto's and chrome://tracing's arrow from a launch to the kernel it started.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "profiler/device_launch.h"

namespace hf::dump {

// Where CUPTI's clock falls on the trace's: CUPTI time `cupti_ns` is trace time `trace_us`
// (microseconds since the session started), sampled together.
struct DeviceClock {
  uint64_t cupti_ns = 0;
  double trace_us = 0;
};

// Appends the launches' tracks, slices and flows to `trace` (trace_json()'s object), keeps
// its events sorted by time (metadata first) and counts them in otherData.device_launches.
// Launches whose times go backwards (end before start) are left out and counted in
// otherData.device_launches_skipped.
void add_device_launches(nlohmann::json& trace, const std::vector<cuda::DeviceLaunch>& launches,
                         const DeviceClock& clock, const std::string& what = "");

}  // namespace hf::dump
