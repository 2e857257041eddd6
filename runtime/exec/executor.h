// Runs a Plan: binds the caller's inputs, runs every step, optionally timing each one.
#pragma once
#include <chrono>
#include <span>

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
  // `observe`: values readable after each run through plan().observed() (see Plan).
  Executor(const Graph& g, Backend& backend, std::span<const ValueId> observe = {});

  // Runs one iteration. `inputs` follow g.inputs() and must match their dtypes and shapes
  // (checked; hf::Error names the input). Returns the outputs' views, valid until the next
  // run. Allocates nothing.
  std::span<const TensorView> run(std::span<const TensorView> inputs,
                                  StepObserver* observer = nullptr);

  const Graph& graph() const { return graph_; }
  Plan& plan() { return plan_; }

 private:
  const Graph& graph_;
  Backend& backend_;
  Plan plan_;
  std::vector<TensorView> outputs_;
};

}  // namespace hf
