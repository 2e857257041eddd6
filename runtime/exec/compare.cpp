#include "runtime/exec/compare.h"

#include <cmath>

#include "runtime/ops/half.h"

namespace hf {

Tolerance fused_tolerance(DType t) {
  switch (t) {
    case DType::F32:
      return {1e-5, 1e-6};
    case DType::F16:
    case DType::BF16:
      return {1e-3, 1e-3};
    default:
      return {0, 0};
  }
}

Tolerance graph_output_tolerance(DType t) {
  switch (t) {
    case DType::F32:
      return {1e-4, 1e-4};
    case DType::F16:
    case DType::BF16:
      return {1e-2, 1e-3};
    default:
      return {0, 0};
  }
}

Mismatch compare(const TensorView& e, const TensorView& a, Tolerance tol) {
  Mismatch worst;
  double worst_excess = 0;
  for (int64_t i = 0; i < e.numel(); ++i) {
    double x = load_double(e, i), y = load_double(a, i);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (std::isinf(x) && x == y) continue;
    double diff = std::fabs(x - y);
    double allowed = tol.atol + tol.rtol * std::fabs(x);
    if (std::isfinite(diff))
      worst.worst_ratio = std::max(worst.worst_ratio, allowed > 0 ? diff / allowed
                                                      : diff > 0  ? INFINITY
                                                                  : 0);
    double excess = diff - allowed;
    if (!(excess <= 0)) ++worst.count;
    if (!(excess <= 0) && (worst.index < 0 || !(excess <= worst_excess))) {
      worst.index = i;
      worst.expected = x;
      worst.actual = y;
      worst_excess = excess;
    }
  }
  return worst;
}

}  // namespace hf
