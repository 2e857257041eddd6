// The join of CUPTI activity records to the graph nodes and iterations that caused them,
// apart from CUPTI itself so that it can be tested on records built in memory.
//
// A kernel, copy or memset record carries the correlation id of the API call that launched
// it; an EXTERNAL_CORRELATION record pairs that id with the id pushed around the call
// (CUSTOM0: iteration and node, external_id()). CUPTI writes external-correlation records
// only for calls it records, so the tracer enables RUNTIME and DRIVER activity too (cuBLAS,
// cuDNN and NVRTC kernels launch through the driver API); their records are counted, not
// kept for the launch join only. Records may arrive in any order and in different buffers:
// the join runs once all buffers of a window have been flushed.
//
// Kernels are also joined to the API call that launched them (same correlation id) into
// DeviceLaunch records, the host and device sides of each launch, for trace.json's flows.
#pragma once
#include <cupti_activity.h>

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "profiler/device_launch.h"

namespace hf::cuda {

// CUSTOM0 ids: the iteration within a profiling window in the high 32 bits, the node in
// the low 32, so that one flush at the end of a window attributes every iteration.
constexpr uint64_t external_id(uint32_t iteration, uint32_t node) {
  return (static_cast<uint64_t>(iteration) << 32) | node;
}

// Device seconds per node, one map per iteration of the window.
using IterationNodeSeconds = std::vector<std::unordered_map<uint64_t, double>>;

class ActivityJoin {
 public:
  // Takes one record; kinds other than kernels, copies, memsets and CUSTOM0 external
  // correlations are counted in `other` and dropped.
  void add(const CUpti_Activity& record);
  // Joins what was added since the last take: `iterations` maps (an id naming a later
  // iteration is counted as uncorrelated), and forgets the window's records. With
  // `launches`, also appends every kernel of the window that has both its node and its API
  // call, in the order the kernels were added.
  IterationNodeSeconds take(size_t iterations, std::vector<DeviceLaunch>* launches = nullptr);

  size_t device_records = 0;  // kernels, copies and memsets seen, over every window
  size_t uncorrelated = 0;    // of those, records with no node (or an out-of-window one)
  size_t other = 0;           // API and other records

  struct Span {
    uint32_t correlation;
    uint64_t ns;
  };
  struct Interval {  // a kernel on the device or an API call on the host
    uint64_t start = 0, end = 0;
    uint32_t id = 0;  // a kernel's stream, an API call's thread
    const char* name = nullptr;  // a kernel's; CUPTI keeps it for the process's life
  };

 private:
  void add_span(Span s);
  std::vector<Span> spans_;
  std::vector<std::pair<uint32_t, Interval>> kernels_;  // by correlation id, as added
  std::unordered_map<uint32_t, Interval> api_;         // correlation id -> the API call
  std::unordered_map<uint32_t, uint64_t> external_;  // correlation id -> external_id()
};

}  // namespace hf::cuda
