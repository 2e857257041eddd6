// A CPU backend that also runs Fused nodes: their generated kernels are split over the
// same thread pool as the unfused ones, so fused and unfused timings compare like for like.
#pragma once
#include <functional>

#include "fusion/cpu_kernel_cache.h"
#include "runtime/cpu/cpu_backend.h"

namespace hf {

// A test hook run after every fused kernel, told its spec hash and outputs: tests use it
// to make a kernel wrong or slow and check that the session notices.
using FusedRunHook = std::function<void(uint64_t spec_hash, std::span<const TensorView> outputs)>;

class FusingCpuBackend final : public Backend {
 public:
  FusingCpuBackend(cpu::CpuBackend& base, const fusion::CpuKernelCache& kernels,
                   FusedRunHook hook = {})
      : base_(base), kernels_(kernels), hook_(std::move(hook)) {}
  std::string_view name() const override { return "cpu"; }
  std::unique_ptr<Kernel> make_kernel(const Graph& g, const Node& n) override;
  void* alloc(size_t bytes) override { return base_.alloc(bytes); }
  void free(void* p) override { base_.free(p); }

 private:
  cpu::CpuBackend& base_;
  const fusion::CpuKernelCache& kernels_;
  FusedRunHook hook_;
};

}  // namespace hf
