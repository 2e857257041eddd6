#include "profiler/op_class.h"

#include <algorithm>

namespace hf {

std::string_view op_class_name(OpClass c) {
  switch (c) {
    case OpClass::MemoryBound:
      return "memory-bound";
    case OpClass::ComputeBound:
      return "compute-bound";
    case OpClass::LaunchBound:
      return "launch-bound";
  }
  return "?";
}

OpClass classify(const OpCost& op, const MachinePeak& m) {
  double ideal = std::max(m.bandwidth_gbps > 0 ? op.bytes / (m.bandwidth_gbps * 1e9) : 0,
                          m.gflops > 0 ? op.flops / (m.gflops * 1e9) : 0);
  if (ideal < m.launch_us * 1e-6) return OpClass::LaunchBound;
  double intensity = op.bytes > 0 ? op.flops / op.bytes : 1e30;
  return intensity < m.balance() ? OpClass::MemoryBound : OpClass::ComputeBound;
}

double peak_share(const OpCost& op, const MachinePeak& m) {
  if (op.seconds <= 0 || m.bandwidth_gbps <= 0) return 0;
  return op.bytes / op.seconds * 1e-9 / m.bandwidth_gbps;
}

}  // namespace hf
