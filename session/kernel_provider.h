// What the adaptive session needs from a kernel cache, whichever backend its kernels are
// for: the CPU's CpuKernelCache (generated C++, dlopen'ed) or the CUDA backend's
// CudaKernelCache (NVRTC PTX). `ensure` is the same callback fuse_graph takes; the other
// two are what selection and validation ask of the cache.
#pragma once
#include <filesystem>
#include <functional>
#include <string>

#include "fusion/cpu_kernel_cache.h"

namespace hf {

// Generates, compiles or loads the kernel of a spec and says how it went. The session calls
// it on its compile worker's thread while iterations run: it must be thread-safe.
using EnsureKernel = std::function<fusion::CompileOutcome(const fusion::KernelSpec& spec,
                                                          const std::string& origin)>;

struct KernelProvider {
  EnsureKernel ensure;
  // Whether ensure() would find the kernel in memory or on disk: selection charges no
  // compile time then.
  std::function<bool(const fusion::KernelSpec& spec)> cached;
  // Writes the kernel's generated source where it outlives the process and returns its
  // path (hf::Error when it cannot): a kernel that validation caught computing wrong
  // results is kept for the bug report.
  std::function<std::filesystem::path(const fusion::KernelSpec& spec, const std::string& origin)>
      keep_source;
};

// The CPU kernel cache as a KernelProvider; `cache` must outlive what is returned.
KernelProvider cpu_kernel_provider(fusion::CpuKernelCache& cache);

}  // namespace hf
