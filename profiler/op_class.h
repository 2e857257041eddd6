// Where an op's time goes: moving bytes, computing, or the fixed cost of a launch.
//
// The roofline, with the launch cost as a floor: an op whose ideal time at the machine's
// peaks (max of bytes / bandwidth and flops / flop rate) is below one launch is
// launch-bound, whatever its intensity; otherwise it is memory-bound when its arithmetic
// intensity (flops per byte) is below the machine balance, compute-bound above.
#pragma once
#include <string_view>

#include "profiler/machine_probe.h"

namespace hf {

enum class OpClass { MemoryBound, ComputeBound, LaunchBound };
std::string_view op_class_name(OpClass c);  // "memory-bound", ...

struct OpCost {
  double seconds = 0;  // measured (median)
  double bytes = 0;    // ideal bytes moved
  double flops = 0;
};

OpClass classify(const OpCost& op, const MachinePeak& m);

// Achieved bandwidth as a share of the machine's measured peak (may exceed 1 when the
// working set sits in cache).
double peak_share(const OpCost& op, const MachinePeak& m);

}  // namespace hf
