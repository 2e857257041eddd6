// Device time per graph node from CUPTI's Activity API, with CUPTI loaded at run time.
//
// libcupti is dlopen'ed (never linked), so a machine without it, a CUPTI that refuses
// (no permission to profile, no device), or a version older than the headers only makes
// create() return null with the reason: callers fall back to synchronised step timing and
// say so once. Kernels, copies and memsets are tied to the node and iteration that
// launched them by external correlation ids (cupti_records.h), pushed around each step's
// launches by CorrelatedBackend. Buffers are flushed only when the caller collects, once
// per profiling window, so tracing costs an iteration only what CUPTI's recording costs.
// One tracer per process (CUPTI has one set of activity callbacks).
// Built into hf_profiler with the CUDA backend (it needs CUPTI's headers); docs/cuda.md.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "profiler/cupti_records.h"

#include "runtime/exec/backend.h"
#include "runtime/exec/executor.h"

namespace hf::cuda {

class CuptiTracer {
 public:
  // The library: $HOTFUSE_CUPTI_LIB when set, else libcupti.so.13 / libcupti.so from the
  // loader's path and the toolkit's lib64. nullptr and `why` when CUPTI cannot be used.
  static std::unique_ptr<CuptiTracer> create(std::string* why);
  ~CuptiTracer();  // disables the activities, flushes, unloads nothing (CUPTI stays resident)
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;

  void push(uint64_t node);  // around a node's launches, tagged with the current iteration
  void pop();
  void end_iteration() { ++iteration_; }  // later launches belong to the next iteration
  // Flushes CUPTI's buffers and returns, for each iteration ended since the last call, the
  // device seconds of every node's kernels, copies and memsets (records with no node, or
  // of an iteration not yet ended, are counted in `uncorrelated`). Call after the stream
  // has been synchronised.
  // With `launches`, also appends each kernel of those iterations joined to its launch
  // call (cupti_records.h), on CUPTI's clock.
  IterationNodeSeconds collect(std::vector<DeviceLaunch>* launches = nullptr);
  // CUPTI's clock now (the clock of its records' timestamps); false when it cannot say.
  bool now(uint64_t* ns) const;
  size_t records() const;       // kernel, copy and memset records seen so far
  size_t uncorrelated() const;  // of those, records with no node
  size_t dropped() const;       // records CUPTI reported dropped (buffers full)

  struct Api;  // the dlopen'ed entry points

 private:
  explicit CuptiTracer(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
  uint32_t iteration_ = 0;  // within the window collect() ends
};

// A backend whose kernels push their node id as CUPTI's external correlation id around
// every run, so each record names the node that launched it.
class CorrelatedBackend final : public WrappingBackend {
 public:
  CorrelatedBackend(Backend& inner, CuptiTracer& tracer)
      : WrappingBackend(inner), tracer_(tracer) {}
  std::unique_ptr<Kernel> make_kernel(const Graph& g, const Node& n) override;

 private:
  CuptiTracer& tracer_;
};

// Feeds `observer` one time per step of `plan` for each iteration of a collect() result
// (0 for a step whose node left no record).
void feed_steps(const Plan& plan, const IterationNodeSeconds& iterations, StepObserver& observer);

}  // namespace hf::cuda
