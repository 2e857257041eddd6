// The generated C++ of fused regions, as the kernel cache compiles it: the same spec,
// kernel name (hf_<spec hash>) and origin comment, so kernels/hf_<hash>.cpp in a dump is
// the code that ran (fusion/codegen_cpp.h; code generation is a pure function).
#pragma once
#include <string>
#include <vector>

#include "fusion/detect.h"

namespace hf::dump {

struct KernelSource {
  std::string kernel;  // hf_<spec hash>; the file is kernels/<kernel>.cpp
  std::string source;
  std::vector<int> regions;  // detected regions with this kernel (equal specs share one)
};

// Regions whose kernel has no outputs (dead code) or cannot be generated are left out.
std::vector<KernelSource> kernel_sources(const Graph& g, const fusion::Detection& d,
                                         const std::vector<int>& regions);

// The origin comment the session and fuse_graph pass to the cache for a region's kernel.
std::string kernel_origin(const Graph& g, const std::vector<NodeId>& kernel_nodes);

}  // namespace hf::dump
