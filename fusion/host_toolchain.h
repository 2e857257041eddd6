// The KernelToolchain of CPU kernels: generated C++ (codegen_cpp), compiled by the host
// compiler into a shared object (the artifact), dlopen'ed from the work directory.
#pragma once
#include <memory>

#include "fusion/host_compiler.h"
#include "fusion/kernel_abi.h"
#include "fusion/kernel_cache.h"

namespace hf::fusion {

// What KernelCache::find() holds for a host-compiled kernel: its function and the library
// that must stay loaded while the function can be called.
struct HostKernel final : LoadedKernel {
  explicit HostKernel(HostLibrary lib, HostKernelFn f) : library(std::move(lib)), fn(f) {}
  HostLibrary library;
  HostKernelFn fn = nullptr;
};

// target "cpu", extension ".cpp"; the disk key's parts: "cpu", host_cache_identity().
std::unique_ptr<KernelToolchain> host_toolchain();

}  // namespace hf::fusion
