// The naive reference of Conv, MaxPool, AveragePool, Concat, Slice and Gather: the ONNX
// definitions as loops over output elements, reading the node's attributes directly (only
// the output shape comes from the op table). Used by reference_run.
#pragma once
#include <vector>

#include "runtime/ir/graph.h"
#include "runtime/ir/tensor.h"

namespace hf::test {

// Inputs and `out` are contiguous.
void reference_nn(const Node& n, const std::vector<TensorView>& in, const TensorView& out);

}  // namespace hf::test
