// Which detected regions are worth a kernel, from what profiling measured.
//
// A region's fused kernel is predicted to take max(its inputs' and outputs' bytes over
// the best bandwidth its own memory-bound ops achieved (at least the machine's peak), its
// flops over the machine's flop rate) plus one launch. The saving is the measured time of
// its ops minus that. A region is selected when the saving is at least `min_share` of the
// iteration (the session passes the larger of the iteration's median and its ops' medians
// summed, so no share exceeds the whole) and the compile cost (nothing for a cached kernel) is
// repaid within the expected run. Pure: the numbers in, the decision and its reason out.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

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
  // Runs interpreted until a compile pays (Session, SessionOptions::interpret_first): like
  // a cached kernel, there is no compile to repay before it saves anything.
  bool interpreted = false;
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

// Regions that run one kernel (the same spec: GPT-2's two LayerNorms) cost one compile, so
// the kernel is judged by what they save together: where their savings sum to `min_share`
// of the iteration and repay the compile within the expected run, each of them that saves
// anything is selected, though alone it would be cold or not repaid. Otherwise, and for a
// single region, `selections` (select_region's) stay as they are; either way a region alone
// would never be a reason to drop another. `cached`: the kernel is (RegionCandidate::cached);
// `interpreted`: it runs interpreted first (RegionCandidate::interpreted).
void select_kernel_group(std::vector<Selection>& selections, bool cached, double iteration_s,
                         const SelectionOptions& o, bool interpreted = false);

// An epilogue region (detect.h's Region::heavy): its heavy op runs anyway, and its
// elementwise steps run on blocks still in cache, so the prediction is the heavy op's time
// and the saving what its elementwise ops took. Nothing is compiled, so there is no cost to
// repay and no threshold: it is selected whenever it is predicted to save time (adaptive
// keeps it only if it measures faster).
Selection select_epilogue(const RegionCandidate& c, double iteration_s);

// Adaptive re-profiling times a swapped region's kernel (`fused`) and the ops it replaced
// (`unfused`) in alternating iterations: element k of each, a region's time in one
// iteration, was taken next to the other's. The fastest of each side alone flips on a shared
// machine when the two differ by less than its noise (a fused MatMul+GELU epilogue, 0.4 ms
// faster by prediction, was reverted for 4.71 against 4.68 ms). So the kernel counts as
// slower when its fastest iteration is not faster and it was the slower of the pair in at
// least three quarters of the pairs, or when even its fastest iteration took as long as the
// ops' median one (clearly slower, whatever a few disturbed pairs say); a kernel as fast as
// its ops within the noise stays, as selected.
struct InTurnVerdict {
  double fastest_fused_s = -1, fastest_unfused_s = -1;  // -1: no pair
  double median_unfused_s = -1;
  int pairs = 0;
  int fused_slower = 0;  // pairs in which the kernel took longer
  bool slower = false;
};
InTurnVerdict judge_in_turn(const std::vector<double>& fused, const std::vector<double>& unfused);

}  // namespace hf
