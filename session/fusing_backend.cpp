#include "session/fusing_backend.h"

#include <algorithm>

#include "fusion/host_toolchain.h"
#include "fusion/kernel_blocks.h"
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
  // `fn`: the compiled kernel; null: the spec interpreted. `blocks`: FusedRegion's.
  FusedCpuKernel(const Node& n, const fusion::RegionKernel& rk, fusion::HostKernelFn fn, int blocks,
                 double bytes, double flops, cpu::ThreadPool& pool, const FusedRunHook& hook)
      : fn_(fn),
        pool_(pool),
        hook_(hook),
        spec_(rk.spec),
        iteration_(rk.iteration_shape),
        blocks_(blocks) {
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
    if (blocks_ > 1 && fusion::kernel_rows(spec, rk.iteration_shape) < blocks_)
      throw Error(describe(n) + ": " + std::to_string(blocks_) + " blocks of fewer rows");
  }

  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    for (size_t k = 0; k < in_slot_.size(); ++k) args_->in[k] = in[in_slot_[k]].data;
    for (size_t j = 0; j < out_slot_.size(); ++j) args_->out[j] = out[out_slot_[j]].data;
    const fusion::KernelArgs* a = args_.get();
    int64_t from = 0, to = range_;
    if (blocks_ > 1) {
      const fusion::KernelBlock block =
          fusion::kernel_block(spec_, iteration_, static_cast<int>(runs_++ % blocks_), blocks_);
      from = block.launch_begin;
      to = block.launch_end;
    }
    if (fusion::HostKernelFn fn = fn_) {
      pool_.parallel_for(to - from, grain_,
                         [a, fn, from](int64_t b, int64_t e) { fn(a, from + b, from + e); });
    } else {
      const fusion::SpecInterpreter* interp = interpreter_.get();
      pool_.parallel_for(to - from, grain_, [a, interp, from](int64_t b, int64_t e) {
        interp->run(*a, from + b, from + e);
      });
    }
    if (hook_) hook_(spec_, out);
  }

 private:
  fusion::HostKernelFn fn_;
  std::unique_ptr<fusion::SpecInterpreter> interpreter_;
  cpu::ThreadPool& pool_;
  const FusedRunHook& hook_;
  fusion::KernelSpec spec_;  // what the hook is told
  Shape iteration_;
  std::unique_ptr<fusion::KernelArgs> args_;  // ~4.7 KiB: strides for 64 inputs
  std::vector<size_t> in_slot_, out_slot_;
  int64_t range_ = 0, grain_ = 1;
  int blocks_ = 1;
  int64_t runs_ = 0;  // with blocks: which block the next run computes
};

}  // namespace

std::unique_ptr<Kernel> FusingCpuBackend::make_kernel(const Graph& g, const Node& n) {
  if (n.op != OpType::Fused) return base_.make_kernel(g, n);
  auto* f = dynamic_cast<const fusion::FusedRegion*>(n.payload.get());
  if (!f) return base_.make_kernel(g, n);  // a HeavyEpilogue, or an error naming the node
  if (f->tier == fusion::KernelTier::Interpreted)
    return std::make_unique<FusedCpuKernel>(n, f->kernel, nullptr, f->blocks, node_bytes(g, n),
                                            node_flops(g, n), base_.pool(), hook_);
  auto* k = dynamic_cast<const fusion::HostKernel*>(kernels_.find(f->kernel.spec));
  if (!k) throw Error(describe(n) + ": kernel " + f->kernel.spec.hash_hex() + " is not loaded");
  return std::make_unique<FusedCpuKernel>(n, f->kernel, k->fn, f->blocks, node_bytes(g, n),
                                          node_flops(g, n), base_.pool(), hook_);
}

}  // namespace hf
