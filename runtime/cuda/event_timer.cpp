#include "runtime/cuda/event_timer.h"

#include "runtime/cuda/cuda_check.h"

namespace hf::cuda {

namespace {

class EventKernel final : public Kernel {
 public:
  EventKernel(std::unique_ptr<Kernel> inner, cudaEvent_t start, cudaEvent_t stop, cudaStream_t s)
      : inner_(std::move(inner)), start_(start), stop_(stop), stream_(s) {}
  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    cuda_check(cudaEventRecord(start_, stream_), "cudaEventRecord");
    inner_->run(in, out);
    cuda_check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
  }
  void after_iteration() override { inner_->after_iteration(); }

 private:
  std::unique_ptr<Kernel> inner_;
  cudaEvent_t start_, stop_;
  cudaStream_t stream_;
};

}  // namespace

EventTimedBackend::~EventTimedBackend() {
  for (auto& [node, ev] : events_) {
    cudaEventDestroy(static_cast<cudaEvent_t>(ev.first));
    cudaEventDestroy(static_cast<cudaEvent_t>(ev.second));
  }
}

std::unique_ptr<Kernel> EventTimedBackend::make_kernel(const Graph& g, const Node& n) {
  std::unique_ptr<Kernel> timed = inner().make_kernel(g, n);
  NodeId id = static_cast<NodeId>(&n - g.nodes().data());
  cudaEvent_t start = nullptr, stop = nullptr;
  cuda_check(cudaEventCreate(&start), "cudaEventCreate");
  if (cudaError_t e = cudaEventCreate(&stop); e != cudaSuccess) {
    cudaEventDestroy(start);
    cuda_check(e, "cudaEventCreate");
  }
  auto [it, fresh] = events_.emplace(id, std::make_pair(start, stop));
  if (!fresh) {  // a node planned twice: the newer kernel's events count
    cudaEventDestroy(static_cast<cudaEvent_t>(it->second.first));
    cudaEventDestroy(static_cast<cudaEvent_t>(it->second.second));
    it->second = {start, stop};
  }
  return std::make_unique<EventKernel>(std::move(timed), start, stop,
                                       static_cast<cudaStream_t>(cuda_.stream()));
}

void EventTimedBackend::feed_steps(const Plan& plan, StepObserver& observer) const {
  const auto& steps = plan.steps();
  for (size_t s = 0; s < steps.size(); ++s) {
    auto it = events_.find(steps[s].node);
    float ms = 0;
    if (it != events_.end())
      cuda_check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(it->second.first),
                                      static_cast<cudaEvent_t>(it->second.second)),
                 "cudaEventElapsedTime");
    observer.on_step(s, ms * 1e-3);
  }
}

}  // namespace hf::cuda
