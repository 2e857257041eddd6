// Deterministic random inputs for a graph, so runs are reproducible from a seed.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/ir/graph.h"
#include "runtime/ir/tensor.h"

namespace hf {

// One tensor per graph input, uniform in the input's init range (default: [-1, 1) for
// floats, [0, 10) for integers, 0/1 for bool). The same seed gives the same bits.
std::vector<HostTensor> random_inputs(const Graph& g, uint64_t seed);

}  // namespace hf
