// Constant folding: the plan evaluates every Constant node here, once, and uploads it
// through Backend::upload, so no backend needs a kernel for constants.
#pragma once
#include "runtime/ir/graph.h"
#include "runtime/ir/tensor.h"

namespace hf {

// The node's output (dtype and shape) filled from its `value` attribute (one value: a splat).
HostTensor constant_value(const Graph& g, const Node& n);

}  // namespace hf
