// One kernel launch seen from both sides: the host API call that launched it and the kernel
// as it ran on the device, with the node and iteration that launched it. CUPTI's records
// joined by cupti_records.h (ActivityJoin::take); written to trace.json as a "cuda api"
// slice, a "gpu stream N" slice and a flow between them (dump/trace_json_device.h).
// Plain data with no CUPTI types, so that the trace writer builds and is tested without
// the CUDA toolkit.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hf::cuda {

struct DeviceLaunch {
  uint32_t iteration = 0;     // within the profiling window
  uint32_t node = 0;          // the graph node whose kernel launched it
  uint32_t correlation = 0;   // CUPTI's correlation id (API call <-> kernel)
  std::string kernel;         // the kernel's (mangled) name
  uint32_t stream = 0;        // CUDA stream id
  uint32_t thread = 0;        // host thread id of the API call
  uint64_t api_start_ns = 0;  // the launch call on the host, CUPTI's clock
  uint64_t api_end_ns = 0;
  uint64_t start_ns = 0;  // the kernel on the device, CUPTI's clock
  uint64_t end_ns = 0;
};

// The launches of one profiling window and how to place them on the session's clock:
// CUPTI's clock read `cupti_ns` at steady_clock time `at`.
struct DeviceLaunchWindow {
  static constexpr size_t kMaxLaunches = 100000;  // beyond: left out of trace.json
  std::string what;                               // "unfused", "fused"
  std::vector<DeviceLaunch> launches;
  uint64_t cupti_ns = 0;
  std::chrono::steady_clock::time_point at;
};

}  // namespace hf::cuda
