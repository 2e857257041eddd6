#include "session/fusing_backend.h"

#include <algorithm>

#include "fusion/host_toolchain.h"
#include "fusion/region_spec.h"
#include "fusion/spec_interpreter.h"
#include "runtime/cpu/stream_store.h"
#include "runtime/ir/error.h"
#include "runtime/ir/op_table.h"
#include "session/fused_binding.h"

namespace hf {

namespace {

class FusedCpuKernel final : public Kernel {
 public:
  // `fn`: the compiled kernel; null: the spec interpreted.
  FusedCpuKernel(const Node& n, const fusion::RegionKernel& rk, fusion::HostKernelFn fn,
                 double bytes, double flops, cpu::ThreadPool& pool, const FusedRunHook& hook)
      : fn_(fn), pool_(pool), hook_(hook), spec_(rk.spec) {
    if (!fn_) interpreter_ = std::make_unique<fusion::SpecInterpreter>(rk.spec);
    const fusion::KernelSpec& spec = rk.spec;
    FusedBinding binding = bind_fused(n, rk);
    in_slot_ = std::move(binding.in_slot);
    out_slot_ = std::move(binding.out_slot);
    args_ = std::move(binding.args);
    // Like the unfused kernels: stream outputs that would only evict what the next op needs.
    args_->stream_out = !spec.reduce && cpu::should_stream(static_cast<size_t>(bytes), flops);
    if (spec.reduce) {
      range_ = args_->rows;
      grain_ = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, args_->row_len));
    } else {
      range_ = args_->numel;
      grain_ = 16384;
    }
  }

  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    for (size_t k = 0; k < in_slot_.size(); ++k) args_->in[k] = in[in_slot_[k]].data;
    for (size_t j = 0; j < out_slot_.size(); ++j) args_->out[j] = out[out_slot_[j]].data;
    const fusion::KernelArgs* a = args_.get();
    if (fusion::HostKernelFn fn = fn_) {
      pool_.parallel_for(range_, grain_, [a, fn](int64_t b, int64_t e) { fn(a, b, e); });
    } else {
      const fusion::SpecInterpreter* interp = interpreter_.get();
      pool_.parallel_for(range_, grain_,
                         [a, interp](int64_t b, int64_t e) { interp->run(*a, b, e); });
    }
    if (hook_) hook_(spec_, out);
  }

 private:
  fusion::HostKernelFn fn_;
  std::unique_ptr<fusion::SpecInterpreter> interpreter_;
  cpu::ThreadPool& pool_;
  const FusedRunHook& hook_;
  fusion::KernelSpec spec_;                   // what the hook is told
  std::unique_ptr<fusion::KernelArgs> args_;  // ~4.7 KiB: strides for 64 inputs
  std::vector<size_t> in_slot_, out_slot_;
  int64_t range_ = 0, grain_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> FusingCpuBackend::make_kernel(const Graph& g, const Node& n) {
  if (n.op != OpType::Fused) return base_.make_kernel(g, n);
  auto* f = dynamic_cast<const fusion::FusedRegion*>(n.payload.get());
  if (!f) return base_.make_kernel(g, n);  // a HeavyEpilogue, or an error naming the node
  if (f->tier == fusion::KernelTier::Interpreted)
    return std::make_unique<FusedCpuKernel>(n, f->kernel, nullptr, node_bytes(g, n),
                                            node_flops(g, n), base_.pool(), hook_);
  auto* k = dynamic_cast<const fusion::HostKernel*>(kernels_.find(f->kernel.spec));
  if (!k) throw Error(describe(n) + ": kernel " + f->kernel.spec.hash_hex() + " is not loaded");
  return std::make_unique<FusedCpuKernel>(n, f->kernel, k->fn, node_bytes(g, n), node_flops(g, n),
                                          base_.pool(), hook_);
}

}  // namespace hf
