#include "session/fusing_cuda_backend.h"
#if HF_HAVE_CUDA_BACKEND
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "fusion/codegen_cuda.h"
#include "fusion/embedded_headers.h"
#include "fusion/nvrtc_compiler.h"
#include "fusion/region_spec.h"
#include "runtime/ir/error.h"
#include "session/fused_binding.h"

namespace hf {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

class FusedCudaKernel final : public Kernel {
 public:
  FusedCudaKernel(const Node& n, const fusion::RegionKernel& rk, const cuda::PtxKernel& k,
                  const cuda::CudaBackend& b)
      : spec_(rk.spec), kernel_(k), stream_(b.stream()), sms_(b.device().sm_count) {
    FusedBinding binding = bind_fused(n, rk);
    in_slot_ = std::move(binding.in_slot);
    out_slot_ = std::move(binding.out_slot);
    args_ = std::move(binding.args);
    layout_ = fusion::cuda_param_layout(spec_);
    params_ = fusion::pack_cuda_params(spec_, *args_);  // pointers filled in by run()
    // The generator's launch assumes kCudaBlock threads; the loops are grid-strided, so
    // the occupancy-derived block only rescales the grid to the same number of threads.
    fusion::CudaLaunch l = fusion::cuda_launch_config(spec_, *args_, sms_);
    block_ = std::min(1024, kernel_.occupancy_block());
    grid_ = l.grid == 0 ? 0
                        : static_cast<unsigned>(std::max<long long>(
                              1, (static_cast<long long>(l.grid) * l.block + block_ - 1) / block_));
  }

  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    if (grid_ == 0) return;
    // Only the pointers change between runs: patch them into the packed Params.
    for (const fusion::CudaParam& f : layout_.fields) {
      const void* p = nullptr;
      if (f.kind == fusion::CudaParam::Kind::Input)
        p = in[in_slot_[f.index]].data;
      else if (f.kind == fusion::CudaParam::Kind::Output)
        p = out[out_slot_[f.index]].data;
      else
        continue;
      std::memcpy(params_.data() + f.offset, &p, sizeof p);
    }
    kernel_.launch(grid_, static_cast<unsigned>(block_), params_.data(), stream_);
  }

 private:
  fusion::KernelSpec spec_;
  const cuda::PtxKernel& kernel_;
  void* stream_;
  int sms_;
  std::unique_ptr<fusion::KernelArgs> args_;
  fusion::CudaParamLayout layout_;
  std::vector<unsigned char> params_;  // the kernel's Params (cudaLaunchKernel copies them)
  std::vector<size_t> in_slot_, out_slot_;
  unsigned grid_ = 0;
  int block_ = fusion::kCudaBlock;
};

}  // namespace

CudaKernelCache::CudaKernelCache(int device, int arch, std::shared_ptr<fusion::DiskCache> disk)
    : device_(device), ptx_arch_(fusion::clamp_arch(arch)), disk_(std::move(disk)) {}

std::shared_ptr<fusion::DiskCache> CudaKernelCache::default_disk() {
  auto dir = fusion::DiskCache::default_dir();
  if (!dir) return nullptr;
  try {
    return std::make_shared<fusion::DiskCache>(*dir);
  } catch (const Error& e) {
    std::cerr << "hotfuse: disk kernel cache disabled: " << e.what() << "\n";
    return nullptr;
  }
}

std::string CudaKernelCache::disk_key(const fusion::KernelSpec& spec) const {
  std::string options;
  for (const std::string& o : fusion::nvrtc_options()) options += o + " ";
  return fusion::DiskCache::make_key(
      {fusion::generate_cuda(spec, fusion::CpuKernelCache::kernel_name(spec), ""), "ptx",
       "compute_" + std::to_string(ptx_arch_), fusion::nvrtc_identity(), options,
       fusion::embedded_headers_digest()});
}

const cuda::PtxKernel* CudaKernelCache::find(uint64_t spec_hash) const {
  std::lock_guard lock(mu_);
  auto it = loaded_.find(spec_hash);
  return it == loaded_.end() ? nullptr : it->second.get();
}

fusion::CompileOutcome CudaKernelCache::ensure(const fusion::KernelSpec& spec,
                                               const std::string& origin) {
  auto t0 = std::chrono::steady_clock::now();
  const uint64_t hash = spec.hash();
  const std::string name = fusion::CpuKernelCache::kernel_name(spec);
  {
    std::lock_guard lock(mu_);
    if (loaded_.count(hash)) {
      ++memory_hits_;
      return {true, fusion::CompileOutcome::Memory, ms_since(t0), ""};
    }
  }
  auto load = [&](const std::string& ptx) {
    auto k = std::make_unique<cuda::PtxKernel>(ptx, name);
    std::lock_guard lock(mu_);
    loaded_.emplace(hash, std::move(k));
  };
  std::string key;
  if (disk_) {
    key = disk_key(spec);
    if (auto ptx = disk_->get(key)) {
      try {
        load(*ptx);
        ++disk_hits_;
        return {true, fusion::CompileOutcome::Disk, ms_since(t0), ""};
      } catch (const Error& e) {
        std::cerr << "hotfuse: cached PTX of " << name << " did not load (" << e.what()
                  << "); compiling it again\n";
      }
    }
  }
  fusion::PtxResult r =
      fusion::compile_ptx(fusion::generate_cuda(spec, name, origin), name, ptx_arch_);
  if (!r.ok)
    return {false, fusion::CompileOutcome::Failed, ms_since(t0),
            "kernel " + name + " (" + origin + ") failed to compile with NVRTC: " + r.log +
                "; its region runs unfused"};
  ++compiles_;
  if (disk_) disk_->put(key, r.ptx);
  try {
    load(r.ptx);
  } catch (const Error& e) {
    return {false, fusion::CompileOutcome::Failed, ms_since(t0),
            "kernel " + name + " (" + origin + ") did not load: " + e.what() +
                "; its region runs unfused"};
  }
  return {true, fusion::CompileOutcome::Compiled, ms_since(t0), ""};
}

bool CudaKernelCache::cached(const fusion::KernelSpec& spec) const {
  {
    std::lock_guard lock(mu_);
    if (loaded_.count(spec.hash())) return true;
  }
  if (!disk_) return false;
  std::error_code ec;
  return std::filesystem::is_regular_file(disk_->entry_path(disk_key(spec)), ec);
}

std::unique_ptr<Kernel> FusingCudaBackend::make_kernel(const Graph& g, const Node& n) {
  if (n.op != OpType::Fused) return base_.make_kernel(g, n);
  auto* f = dynamic_cast<const fusion::FusedRegion*>(n.payload.get());
  if (!f) throw Error(describe(n) + ": fused node without a region kernel");
  const cuda::PtxKernel* k = kernels_.find(f->kernel.spec.hash());
  if (!k)
    throw Error(describe(n) + ": CUDA kernel " + f->kernel.spec.hash_hex() + " is not loaded");
  return std::make_unique<FusedCudaKernel>(n, f->kernel, *k, base_);
}

SessionTarget cuda_session_target(cuda::CudaBackend& gpu, CudaKernelCache& kernels,
                                  fusion::Workdir& sources) {
  SessionTarget t;
  t.backend = &gpu;
  // The worker thread loads PTX (cudaLibraryLoadData) while the session's thread launches:
  // both on device 0, the only one the backend uses, so no cudaSetDevice is needed there.
  t.kernels.ensure = [&kernels](const fusion::KernelSpec& spec, const std::string& origin) {
    return kernels.ensure(spec, origin);
  };
  t.kernels.cached = [&kernels](const fusion::KernelSpec& spec) { return kernels.cached(spec); };
  t.kernels.keep_source = [&sources](const fusion::KernelSpec& spec, const std::string& origin) {
    const std::string name = fusion::CpuKernelCache::kernel_name(spec);
    const std::string file = name + ".cu";
    auto path = sources.write_file(file, fusion::generate_cuda(spec, name, origin));
    sources.retain(file);
    return path;
  };
  t.make_fusing = [&gpu, &kernels](FusedRunHook hook) -> std::unique_ptr<Backend> {
    if (hook)
      throw Error(
          "SessionOptions::after_fused_run is a CPU-only test hook: fused CUDA kernels' outputs "
          "are device memory");
    return std::make_unique<FusingCudaBackend>(gpu, kernels);
  };
  t.host_memory = false;
  return t;
}

}  // namespace hf
#endif
