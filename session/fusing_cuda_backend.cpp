#include "session/fusing_cuda_backend.h"
#if HF_HAVE_CUDA_BACKEND
#include <algorithm>
#include <cstring>

#include "fusion/codegen_cuda.h"
#include "fusion/embedded_headers.h"
#include "fusion/nvrtc_compiler.h"
#include "fusion/region_spec.h"
#include "runtime/cuda/conv_fusion.h"
#include "runtime/cuda/module_kernel.h"
#include "runtime/cuda/nn_ops.h"
#include "runtime/ir/error.h"
#include "runtime/ir/nhwc_layout.h"
#include "session/fused_binding.h"

namespace hf {

namespace {

// What KernelCache::find() holds for a CUDA kernel.
struct CudaKernel final : fusion::LoadedKernel {
  CudaKernel(const std::string& module, const std::string& name) : module(module, name) {}
  cuda::ModuleKernel module;
};

class CudaToolchain final : public fusion::KernelToolchain {
 public:
  explicit CudaToolchain(int arch)
      : arch_(arch), code_arch_(fusion::clamp_arch(arch)), cubin_(code_arch_ == arch) {}
  std::string target() const override { return "cuda sm_" + std::to_string(arch_); }
  std::string extension() const override { return ".cu"; }
  std::string generate(const fusion::KernelSpec& spec, const std::string& name,
                       const std::string& origin) const override {
    return fusion::generate_cuda(spec, name, origin);
  }
  std::vector<std::string> key_parts() const override {
    std::string options;
    for (const std::string& o : fusion::nvrtc_options()) options += o + " ";
    if (cubin_)
      return {"cubin", "sm_" + std::to_string(code_arch_), fusion::nvrtc_identity(), options,
              fusion::embedded_headers_digest()};
    return {"ptx", "compute_" + std::to_string(code_arch_), fusion::nvrtc_identity(), options,
            fusion::embedded_headers_digest()};
  }
  Built compile(const std::string& source, const std::string& name, const std::string& origin,
                fusion::Workdir&) const override {
    bool ok = false;
    std::string code, log;
    if (cubin_) {
      fusion::CubinResult r = fusion::compile_cubin(source, name, code_arch_);
      ok = r.ok, code = std::move(r.cubin), log = std::move(r.log);
    } else {
      fusion::PtxResult r = fusion::compile_ptx(source, name, code_arch_);
      ok = r.ok, code = std::move(r.ptx), log = std::move(r.log);
    }
    if (!ok)
      return {false, "",
              "kernel " + name + " (" + origin + ") failed to compile with NVRTC: " + log +
                  "; its region runs unfused"};
    return {true, std::move(code), ""};
  }
  // The worker thread loads modules (cudaLibraryLoadData) while the session's thread launches:
  // both on device 0, the only one the backend uses, so no cudaSetDevice is needed here.
  std::unique_ptr<fusion::LoadedKernel> load(const std::string& artifact, const std::string& name,
                                             fusion::Workdir&) const override {
    return std::make_unique<CudaKernel>(artifact, name);
  }

 private:
  int arch_, code_arch_;
  bool cubin_;  // NVRTC knows the device's arch: machine code, no JIT at load
};

class FusedCudaKernel final : public Kernel {
 public:
  FusedCudaKernel(const Node& n, const fusion::RegionKernel& rk, const cuda::ModuleKernel& k,
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
  const cuda::ModuleKernel& kernel_;
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

std::string cuda_kernel_format(int arch) {
  const int code = fusion::clamp_arch(arch);
  if (code == arch) return "CUBIN sm_" + std::to_string(code) + " from NVRTC";
  return "PTX compute_" + std::to_string(code) + " from NVRTC, compiled for sm_" +
         std::to_string(arch) + " by the driver at load";
}

std::unique_ptr<fusion::KernelToolchain> cuda_toolchain(int arch) {
  return std::make_unique<CudaToolchain>(arch);
}

std::unique_ptr<fusion::KernelCache> cuda_kernel_cache(int arch) {
  return std::make_unique<fusion::KernelCache>(cuda_toolchain(arch),
                                               fusion::KernelCache::host().shared_workdir(),
                                               fusion::KernelCache::default_disk());
}

std::unique_ptr<Kernel> FusingCudaBackend::make_kernel(const Graph& g, const Node& n) {
  if (n.op != OpType::Fused) return base_.make_kernel(g, n);
  auto* f = dynamic_cast<const fusion::FusedRegion*>(n.payload.get());
  if (!f) return cuda::make_epilogue_kernel(base_, g, n);  // or an error naming the node
  if (f->tier != fusion::KernelTier::Compiled)
    throw Error(describe(n) + ": interpreted kernels run on the CPU only");
  auto* k = dynamic_cast<const CudaKernel*>(kernels_.find(f->kernel.spec));
  if (!k)
    throw Error(describe(n) + ": CUDA kernel " + f->kernel.spec.hash_hex() + " is not loaded");
  return std::make_unique<FusedCudaKernel>(n, f->kernel, k->module, base_);
}

bool cuda_runs_epilogue(const Graph& g, const fusion::Region& r) {
  const fusion::RegionKernel k = fusion::build_region_kernel(g, r);
  if (!k.epilogue) return false;
  std::vector<Shape> inputs;
  for (const ValueType& t : k.live_in_types) inputs.push_back(t.shape);
  return cuda::cudnn_conv_fusion(*k.epilogue, inputs, k.output_types.at(0).shape).has_value();
}

SessionTarget cuda_session_target(cuda::CudaBackend& gpu, fusion::KernelCache& kernels) {
  SessionTarget t;
  t.backend = &gpu;
  t.kernels = &kernels;
  t.make_fusing = [&gpu, &kernels](FusedRunHook hook) -> std::unique_ptr<Backend> {
    if (hook)
      throw Error(
          "SessionOptions::after_fused_run is a CPU-only test hook: fused CUDA kernels' outputs "
          "are device memory");
    return std::make_unique<FusingCudaBackend>(gpu, kernels);
  };
  if (gpu.nhwc_conv_chains()) t.lower = nhwc_conv_chains;
  t.host_memory = false;
  t.epilogues = true;  // the Conv epilogues cuDNN's fused convolution computes
  t.epilogue_runs = cuda_runs_epilogue;
  return t;
}

}  // namespace hf
#endif
