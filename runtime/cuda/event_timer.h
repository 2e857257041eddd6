// Per-step device time from CUDA events, the fallback when CUPTI cannot be used: every
// kernel of the wrapped backend records an event before and after its launches on the
// backend's stream, and after a synchronised iteration each step's elapsed time is read.
// Coarser than CUPTI (events bracket launches, so a step's time includes gaps between its
// kernels), but device time, not host time.
#pragma once
#include <map>
#include <utility>

#include "runtime/cuda/cuda_backend.h"
#include "runtime/exec/executor.h"

namespace hf::cuda {

class EventTimedBackend final : public WrappingBackend {
 public:
  // `inner` runs on `stream`'s stream (the CUDA backend or a FusingCudaBackend over it).
  EventTimedBackend(Backend& inner, const CudaBackend& stream)
      : WrappingBackend(inner), cuda_(stream) {}
  ~EventTimedBackend() override;
  std::unique_ptr<Kernel> make_kernel(const Graph& g, const Node& n) override;

  // After the iteration has been synchronised: each step's seconds to `observer`.
  void feed_steps(const Plan& plan, StepObserver& observer) const;

 private:
  const CudaBackend& cuda_;
  std::map<NodeId, std::pair<void*, void*>> events_;  // cudaEvent_t start, stop per node
};

}  // namespace hf::cuda
