#include "runtime/session/fusing_backend.h"

#include <algorithm>

#include "fusion/region_spec.h"
#include "runtime/cpu/stream_store.h"
#include "runtime/ir/error.h"
#include "runtime/ops/op_table.h"

namespace hf {

namespace {

class FusedCpuKernel final : public Kernel {
 public:
  FusedCpuKernel(const Node& n, const fusion::RegionKernel& rk, fusion::HostKernelFn fn,
                 double bytes, cpu::ThreadPool& pool, const FusedRunHook& hook)
      : fn_(fn), pool_(pool), hook_(hook), hash_(rk.spec.hash()) {
    const fusion::KernelSpec& spec = rk.spec;
    // Where each spec input and output sits among the node's live-ins and live-outs.
    for (ValueId v : rk.inputs)
      in_slot_.push_back(std::find(n.inputs.begin(), n.inputs.end(), v) - n.inputs.begin());
    for (ValueId v : rk.outputs)
      out_slot_.push_back(std::find(n.outputs.begin(), n.outputs.end(), v) - n.outputs.begin());
    for (size_t s : in_slot_)
      if (s >= n.inputs.size()) throw Error(describe(n) + ": spec input is not a live-in");
    for (size_t s : out_slot_)
      if (s >= n.outputs.size()) throw Error(describe(n) + ": spec output is not a live-out");

    args_ = std::make_unique<fusion::KernelArgs>();
    Shape shape = rk.iteration_shape;
    for (size_t d = 0; d < shape.size(); ++d) args_->shape[d] = shape[d];
    args_->numel = numel(shape);
    for (size_t k = 0; k < rk.inputs.size(); ++k)
      fusion::fill_input_strides(rk, k, shape, args_->in_strides[k]);
    // Like the unfused kernels: stream outputs that would only evict what the next op needs.
    args_->stream_out = !spec.reduce && cpu::should_stream(static_cast<size_t>(bytes));
    if (spec.reduce) {
      int64_t row = 1;
      for (size_t d = spec.reduce->first_axis; d < shape.size(); ++d) row *= shape[d];
      args_->row_len = row;
      args_->rows = row ? args_->numel / row : 0;
      range_ = args_->rows;
      grain_ = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, row));
    } else {
      range_ = args_->numel;
      grain_ = 16384;
    }
  }

  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    for (size_t k = 0; k < in_slot_.size(); ++k) args_->in[k] = in[in_slot_[k]].data;
    for (size_t j = 0; j < out_slot_.size(); ++j) args_->out[j] = out[out_slot_[j]].data;
    const fusion::KernelArgs* a = args_.get();
    fusion::HostKernelFn fn = fn_;
    pool_.parallel_for(range_, grain_, [a, fn](int64_t b, int64_t e) { fn(a, b, e); });
    if (hook_) hook_(hash_, out);
  }

 private:
  fusion::HostKernelFn fn_;
  cpu::ThreadPool& pool_;
  const FusedRunHook& hook_;
  uint64_t hash_;
  std::unique_ptr<fusion::KernelArgs> args_;  // ~4.7 KiB: strides for 64 inputs
  std::vector<size_t> in_slot_, out_slot_;
  int64_t range_ = 0, grain_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> FusingCpuBackend::make_kernel(const Graph& g, const Node& n) {
  if (n.op != OpType::Fused) return base_.make_kernel(g, n);
  auto* f = dynamic_cast<const fusion::FusedRegion*>(n.payload.get());
  if (!f) throw Error(describe(n) + ": fused node without a region kernel");
  fusion::HostKernelFn fn = kernels_.find(f->kernel.spec.hash());
  if (!fn) throw Error(describe(n) + ": kernel " + f->kernel.spec.hash_hex() + " is not loaded");
  return std::make_unique<FusedCpuKernel>(n, f->kernel, fn, node_bytes(g, n), base_.pool(), hook_);
}

}  // namespace hf
