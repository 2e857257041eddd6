// Fused kernels on CUDA: the NVRTC side of the kernel caches and a backend that runs Fused
// nodes on the CUDA backend's stream. Empty without the CUDA backend (HF_HAVE_CUDA_BACKEND).
//
// CudaKernelCache::ensure: memory (per device, by spec hash) -> disk (PTX per arch; the key
// covers the generated source, the arch, NVRTC's identity and options and the embedded
// headers' digest) -> generate_cuda + compile_ptx, stored on disk. The PTX is loaded with
// cudaLibraryLoadData (runtime/cuda/ptx_kernel.h). Thread-safe: the adaptive session calls
// ensure() on its compile worker while iterations look kernels up with find().
//
// cuda_session_target: the adaptive Session on the CUDA backend (session_target.h).
#pragma once
#if HF_HAVE_CUDA_BACKEND
#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "fusion/cpu_kernel_cache.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/ptx_kernel.h"
#include "session/session_target.h"

namespace hf {

class CudaKernelCache {
 public:
  // arch: the device's (90 for sm_90); PTX is compiled for clamp_arch(arch).
  // disk: nullptr disables the disk cache.
  CudaKernelCache(int device, int arch, std::shared_ptr<fusion::DiskCache> disk);
  // DiskCache::default_dir() like the CPU kernels (a refused directory: a warning, no cache).
  static std::shared_ptr<fusion::DiskCache> default_disk();

  fusion::CompileOutcome ensure(const fusion::KernelSpec& spec, const std::string& origin);
  const cuda::PtxKernel* find(uint64_t spec_hash) const;
  // Whether ensure() would find the kernel loaded or its PTX on disk (no NVRTC compile).
  // A cheap look, as CpuKernelCache::cached: a corrupt entry found later is rebuilt.
  bool cached(const fusion::KernelSpec& spec) const;

  std::string disk_key(const fusion::KernelSpec& spec) const;
  int ptx_arch() const { return ptx_arch_; }
  int compiles() const { return compiles_; }
  int disk_hits() const { return disk_hits_; }
  int memory_hits() const { return memory_hits_; }

 private:
  int device_, ptx_arch_;
  std::shared_ptr<fusion::DiskCache> disk_;
  mutable std::mutex mu_;
  std::map<uint64_t, std::unique_ptr<cuda::PtxKernel>> loaded_;
  std::atomic<int> compiles_ = 0, disk_hits_ = 0, memory_hits_ = 0;
};

class FusingCudaBackend final : public WrappingBackend {
 public:
  FusingCudaBackend(cuda::CudaBackend& base, const CudaKernelCache& kernels)
      : WrappingBackend(base), base_(base), kernels_(kernels) {}
  std::unique_ptr<Kernel> make_kernel(const Graph& g, const Node& n) override;

 private:
  cuda::CudaBackend& base_;
  const CudaKernelCache& kernels_;
};

// The adaptive Session on `gpu` with `kernels`' NVRTC kernels: validation downloads the
// live-outs it compares; the CUDA source of a kernel that computed wrong results is kept in
// `sources` (the JIT work directory). All three must outlive the session.
// SessionOptions::after_fused_run is not supported (hf::Error).
SessionTarget cuda_session_target(cuda::CudaBackend& gpu, CudaKernelCache& kernels,
                                  fusion::Workdir& sources);

}  // namespace hf
#endif
