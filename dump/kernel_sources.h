// The generated source of fused regions, asked of the kernel cache that compiles them: the
// same spec, kernel name (hf_<spec hash>), target language and origin comment, so
// kernels/hf_<hash>.cpp (or .cu, on CUDA) in a dump is the code that ran.
#pragma once
#include <string>
#include <vector>

#include "fusion/detect.h"
#include "fusion/kernel_cache.h"

namespace hf::dump {

struct KernelSource {
  std::string kernel;  // hf_<spec hash>
  std::string file;    // kernels/<kernel><the target's extension>
  std::string source;
  std::vector<int> regions;  // detected regions with this kernel (equal specs share one)
};

// Regions whose kernel has no outputs (dead code) or cannot be generated are left out.
std::vector<KernelSource> kernel_sources(const Graph& g, const fusion::Detection& d,
                                         const std::vector<int>& regions,
                                         const fusion::KernelCache& cache);

}  // namespace hf::dump
