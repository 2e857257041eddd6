// Constant folding: a Constant node's value, evaluated on the host. The plan folds every
// Constant this way and uploads it through Backend::upload, so constants mean the same on
// every backend and no backend needs a kernel for them.
#pragma once
#include "runtime/ir/graph.h"
#include "runtime/ir/tensor.h"

namespace hf {

// The dtype and shape of the node's output, filled from its `value` attribute (one value:
// a splat).
HostTensor constant_value(const Graph& g, const Node& n);

}  // namespace hf
