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
  double heavy_s = 0;    // an epilogue region: its heavy op's measured time
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

// An epilogue region (detect.h's Region::heavy): its heavy op runs anyway, and its
// elementwise steps run on blocks still in cache, so the prediction is the heavy op's time
// and the saving what its elementwise ops took. Nothing is compiled, so there is no cost to
// repay and no threshold: it is selected whenever it is predicted to save time (adaptive
// keeps it only if it measures faster).
Selection select_epilogue(const RegionCandidate& c, double iteration_s);

}  // namespace hf
