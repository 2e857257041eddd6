// Fused kernels on CUDA: the NVRTC toolchain of the kernel cache and a backend that runs
// Fused nodes on the CUDA backend's stream. Empty without the CUDA backend
// (HF_HAVE_CUDA_BACKEND).
//
// cuda_session_target: the adaptive Session on the CUDA backend (session_target.h).
#pragma once
#if HF_HAVE_CUDA_BACKEND
#include <memory>

#include "fusion/kernel_cache.h"
#include "runtime/cuda/cuda_backend.h"
#include "session/session_target.h"

namespace hf {

// Generated CUDA (codegen_cuda), compiled by NVRTC to a CUBIN for the device's arch (90 for
// sm_90) when NVRTC knows it, else to PTX for clamp_arch(arch), which the driver compiles
// at load: machine code needs no driver as new as NVRTC, PTX does. Loaded with
// cudaLibraryLoadData (runtime/cuda/module_kernel.h). The disk key covers the generated
// source, the format and arch, NVRTC's identity and options and the embedded headers' digest.
std::unique_ptr<fusion::KernelToolchain> cuda_toolchain(int arch);
// Which of the two cuda_toolchain(arch) makes, for the one line hotfuse-run prints.
std::string cuda_kernel_format(int arch);

// The kernel cache of a device of `arch`: the host cache's work directory (kept sources
// go where the CPU kernels' go) and KernelCache::default_disk().
std::unique_ptr<fusion::KernelCache> cuda_kernel_cache(int arch);

class FusingCudaBackend final : public WrappingBackend {
 public:
  FusingCudaBackend(cuda::CudaBackend& base, const fusion::KernelCache& kernels)
      : WrappingBackend(base), base_(base), kernels_(kernels) {}
  std::unique_ptr<Kernel> make_kernel(const Graph& g, const Node& n) override;
  // Fused kernels are plain launches on the base's stream: recorded with the rest.
  std::unique_ptr<Recording> record(const std::function<void()>& enqueue,
                                    std::string& why) override {
    return base_.record(enqueue, why);
  }

 private:
  cuda::CudaBackend& base_;
  const fusion::KernelCache& kernels_;
};

// The adaptive Session on `gpu` with `kernels`' NVRTC kernels (a cache over
// cuda_toolchain): validation downloads the live-outs it compares. Both must outlive the
// session. SessionOptions::after_fused_run is not supported (hf::Error).
SessionTarget cuda_session_target(cuda::CudaBackend& gpu, fusion::KernelCache& kernels);

// Whether the CUDA backend runs epilogue region `r`: a Conv whose epilogue cuDNN's fused
// convolution computes (runtime/cuda/conv_fusion.h). The target's epilogue_runs.
bool cuda_runs_epilogue(const Graph& g, const fusion::Region& r);

}  // namespace hf
#endif
