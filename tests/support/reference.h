// A deliberately naive interpreter: multi-index loops, one element at a time, no blocking,
// no threads, no buffer reuse. Tests compare the executor (and later the fused kernels)
// against it, so the scalar semantics are shared (ModeFn) but nothing else is.
#pragma once
#include <vector>

#include "runtime/exec/compare.h"
#include "runtime/ir/graph.h"
#include "runtime/ir/tensor.h"

namespace hf::test {

// Evaluates every graph output from `inputs` (in g.inputs() order).
std::vector<HostTensor> reference_run(const Graph& g, const std::vector<HostTensor>& inputs);

using ::hf::Mismatch;

inline double element(const TensorView& t, int64_t i) {
  return load_double(t, i);
}

// |a - e| <= atol + rtol * |e|, NaN matches NaN, infinities match in sign.
inline Mismatch compare(const TensorView& expected, const TensorView& actual, double rtol,
                        double atol) {
  return hf::compare(expected, actual, Tolerance{rtol, atol});
}

}  // namespace hf::test
