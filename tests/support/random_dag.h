// Random element-wise DAGs with random broadcasts, for the fused == unfused property tests
// (CPU: test_fusion_e2e, CUDA: test_cuda_backend). The graphs mix unary and binary modes
// whose domains are safe on [-1, 1) inputs, values reused by several consumers
// (multi-output regions) and inputs of lower rank.
#pragma once
#include <random>

#include "runtime/ir/graph.h"

namespace hf {

Graph random_dag(std::mt19937& rng, DType dtype);

}  // namespace hf
