// Device time per graph node from CUPTI's Activity API, with CUPTI loaded at run time.
//
// libcupti is dlopen'ed (never linked), so a machine without it, a CUPTI that refuses
// (no permission to profile, no device), or a version older than the headers only makes
// create() return null with the reason: callers fall back to synchronised step timing and
// say so once. Records: CONCURRENT_KERNEL and MEMCPY, tied to nodes by external
// correlation ids (CUSTOM0 = the node id, pushed around each step's launches by
// CorrelatedBackend). Buffers are flushed when the caller collects, at iteration
// boundaries. One tracer per process (CUPTI has one set of activity callbacks).
// Built into hf_profiler with the CUDA backend (it needs CUPTI's headers); docs/cuda.md.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

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

  void push(uint64_t node);  // around a node's launches
  void pop();
  // Flushes CUPTI's buffers and returns the device seconds of every node's kernels and
  // copies since the last call (records without an external id are counted in
  // `uncorrelated`). Call after the stream has been synchronised.
  std::unordered_map<uint64_t, double> collect();
  size_t records() const;       // kernel and memcpy records seen so far
  size_t uncorrelated() const;  // of those, records with no node
  size_t dropped() const;       // records CUPTI reported dropped (buffers full)

  struct Api;  // the dlopen'ed entry points

 private:
  explicit CuptiTracer(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
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

// Feeds `observer` one time per step of `plan` from a collect() result (0 for a step
// whose node left no record).
void feed_steps(const Plan& plan, const std::unordered_map<uint64_t, double>& node_seconds,
                StepObserver& observer);

}  // namespace hf::cuda
