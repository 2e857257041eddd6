// Which detected regions are worth a kernel, from what profiling measured.
//
// A region's fused kernel is predicted to take max(its inputs' and outputs' bytes over
// the best bandwidth its own memory-bound ops achieved (at least the machine's peak), its
// flops over the machine's flop rate) plus one launch. The saving is the measured time of
// its ops minus that. A region is selected when the saving is at least `min_share` of the
// iteration and the compile cost (nothing for a cached kernel) is repaid within the
// expected run. Pure: the numbers in, the decision and its reason out.
#pragma once
#include <cstdint>
#include <string>

#include "profiler/machine_probe.h"

namespace hf {

struct SelectionOptions {
  double min_share = 0.01;         // of the iteration time, for the saving of one region
  int64_t expected_iters = 10000;  // iterations the compile cost must be repaid within
  double compile_ms = 500;         // estimated cost of one uncached compile (measured: 80-350 ms)
};

struct RegionCandidate {
  double unfused_s = 0;  // measured: the medians of its ops, summed
  double io_bytes = 0;   // the fused kernel's inputs and outputs, each moved once
  double flops = 0;
  double best_gbps = 0;  // the best bandwidth one of its memory-bound ops achieved (0: none)
  bool cached = false;   // a compiled kernel is in memory or on disk
};

struct Selection {
  bool selected = false;
  double predicted_s = 0;
  double saving_s = 0;       // per iteration
  double share = 0;          // saving / iteration time
  double compile_ms = 0;     // 0 when cached
  double payback_iters = 0;  // iterations until the compile is repaid
  std::string reason;
};

Selection select_region(const RegionCandidate& c, double iteration_s, const MachinePeak& m,
                        const SelectionOptions& o);

}  // namespace hf
