// A CPU backend that also runs Fused nodes: their generated kernels are split over the
// same thread pool as the unfused ones, so fused and unfused timings compare like for like.
#pragma once
#include <functional>

#include "fusion/kernel_cache.h"
#include "runtime/cpu/cpu_backend.h"

namespace hf {

// A test hook run after every fused kernel, told its spec and outputs: tests use it to
// make a kernel wrong or slow and check that the session notices. The spec, not its hash:
// two specs can share a hash.
using FusedRunHook =
    std::function<void(const fusion::KernelSpec& spec, std::span<const TensorView> outputs)>;

class FusingCpuBackend final : public WrappingBackend {
 public:
  FusingCpuBackend(cpu::CpuBackend& base, const fusion::KernelCache& kernels,
                   FusedRunHook hook = {})
      : WrappingBackend(base), base_(base), kernels_(kernels), hook_(std::move(hook)) {}
  std::unique_ptr<Kernel> make_kernel(const Graph& g, const Node& n) override;
  // Fused kernels launch like the base's own: whatever the base does (the CPU: nothing).
  std::unique_ptr<Recording> record(const std::function<void()>& enqueue,
                                    std::string& why) override {
    return base_.record(enqueue, why);
  }

 private:
  cpu::CpuBackend& base_;
  const fusion::KernelCache& kernels_;
  FusedRunHook hook_;
};

}  // namespace hf
