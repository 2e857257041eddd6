#include "runtime/cuda/module_kernel.h"

#include <vector>

#include "runtime/cuda/cuda_check.h"

namespace hf::cuda {

ModuleKernel::ModuleKernel(const std::string& module, const std::string& name) : name_(name) {
  // The JIT's error log, so a PTX the driver rejects says why.
  std::vector<char> log(8192, '\0');
  cudaJitOption opts[] = {cudaJitErrorLogBuffer, cudaJitErrorLogBufferSizeBytes};
  void* vals[] = {log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(log.size()))};
  cudaLibrary_t lib = nullptr;
  cudaError_t e = cudaLibraryLoadData(&lib, module.c_str(), opts, vals, 2, nullptr, nullptr, 0);
  if (e != cudaSuccess) {
    std::string jit(log.data());
    cudaGetLastError();
    throw Error("CUDA: cudaLibraryLoadData (kernel " + name + "): " + cudaGetErrorName(e) + " (" +
                cudaGetErrorString(e) + ")" + (jit.empty() ? "" : "; JIT log: " + jit));
  }
  library_ = lib;
  cudaKernel_t k = nullptr;
  e = cudaLibraryGetKernel(&k, lib, name.c_str());
  if (e != cudaSuccess) {
    cudaLibraryUnload(lib);
    library_ = nullptr;
    cuda_check(e, "cudaLibraryGetKernel " + name);
  }
  kernel_ = k;
  // cudaKernel_t may be passed where the runtime takes a `const void* func` (CUDA 12+).
  int min_grid = 0, block = 0;
  cuda_check(
      cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, reinterpret_cast<const void*>(k)),
      "cudaOccupancyMaxPotentialBlockSize " + name);
  block_ = block >= 32 ? block / 32 * 32 : 32;
}

ModuleKernel::~ModuleKernel() {
  if (library_) cudaLibraryUnload(static_cast<cudaLibrary_t>(library_));
}

void ModuleKernel::launch(unsigned grid, unsigned block, void* params, void* stream) const {
  void* args[] = {params};
  cuda_check(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(grid), dim3(block), args,
                              0, static_cast<cudaStream_t>(stream)),
             "cudaLaunchKernel " + name_);
}

}  // namespace hf::cuda
