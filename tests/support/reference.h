// A deliberately naive interpreter: multi-index loops, one element at a time, no blocking,
// no threads, no buffer reuse. Tests compare the executor (and later the fused kernels)
// against it, so the scalar semantics are shared (ModeFn) but nothing else is.
#pragma once
#include <vector>

#include "runtime/ir/graph.h"
#include "runtime/ir/tensor.h"

namespace hf::test {

// Evaluates every graph output from `inputs` (in g.inputs() order).
std::vector<HostTensor> reference_run(const Graph& g, const std::vector<HostTensor>& inputs);

// Element i of a contiguous tensor as double (f16/bf16 widened, bool 0/1).
double element(const TensorView& t, int64_t i);

struct Mismatch {
  int64_t index = -1;  // -1: all match
  double expected = 0, actual = 0;
};
// |a - e| <= atol + rtol * |e|, NaN matches NaN, infinities match in sign.
Mismatch compare(const TensorView& expected, const TensorView& actual, double rtol, double atol);

}  // namespace hf::test
