// What a Fused node's kernel needs from its node and region on any device: where each spec
// input and output sits among the node's live-ins and live-outs, and the kernel arguments
// that stay the same every iteration (iteration shape, input strides, a trailing reduce's
// rows). The CPU and CUDA fused kernels both start from it.
#pragma once
#include <memory>
#include <vector>

#include "fusion/kernel_abi.h"
#include "fusion/region_spec.h"
#include "runtime/ir/graph.h"

namespace hf {

struct FusedBinding {
  std::vector<size_t> in_slot, out_slot;
  std::unique_ptr<fusion::KernelArgs> args;  // ~4.7 KiB; data pointers are set per run
};

// Throws hf::Error naming the node when a spec input or output is not one of its values.
FusedBinding bind_fused(const Node& n, const fusion::RegionKernel& rk);

}  // namespace hf
