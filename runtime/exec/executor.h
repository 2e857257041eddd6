// Runs a Plan: binds the caller's inputs, runs every step, optionally timing each one,
// and once the iteration has finished lets each kernel check what it found
// (Kernel::after_iteration).
//
// Untimed iterations after the first are recorded once where the backend records
// (Backend::record: CUDA graphs) and launched as one recording from then on. A recording
// holds the data pointers of its iteration: inputs at other addresses record it again, up
// to kMaxRecordings times; after that, or if recording fails, steps run one by one.
#pragma once
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/exec/plan.h"

namespace hf {

// Told the wall time of every step; the profiler implements it. Timing brackets the whole
// kernel: CPU kernels return only when all their threads are done, and the executor calls
// Backend::sync() before reading the clock on asynchronous backends.
class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void on_step(size_t step, double seconds) = 0;
};

class Executor {
 public:
  // Plans `g` for `backend`; throws hf::Error if the graph is invalid or a node unsupported.
  // `observe`: values readable after each run through plan().observed(); `lender`: a plan
  // whose scratch buffers this one shares, which never runs at the same time (see Plan).
  Executor(const Graph& g, Backend& backend, std::span<const ValueId> observe = {},
           const Plan* lender = nullptr);

  // Runs one iteration. `inputs` follow g.inputs() and must match their dtypes and shapes
  // (checked; hf::Error names the input). Returns the outputs' views, valid until the next
  // run. Allocates nothing.
  std::span<const TensorView> run(std::span<const TensorView> inputs,
                                  StepObserver* observer = nullptr);

  const Graph& graph() const { return graph_; }
  Plan& plan() { return plan_; }

  static constexpr int kMaxRecordings = 4;
  // Whether untimed iterations launch a recording now.
  bool replaying() const { return recording_ != nullptr; }
  // Why untimed iterations run step by step ("" while recording may still come or is in use).
  const std::string& step_by_step_reason() const { return step_by_step_; }

 private:
  void run_steps();
  bool launch_recording(std::span<const TensorView> inputs);

  const Graph& graph_;
  Backend& backend_;
  Plan plan_;
  std::vector<TensorView> outputs_;
  int runs_ = 0, recordings_ = 0;
  std::unique_ptr<Recording> recording_;
  std::vector<const void*> recorded_inputs_;
  std::string step_by_step_;
};

}  // namespace hf
