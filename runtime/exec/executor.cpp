#include "runtime/exec/executor.h"

#include "runtime/ir/error.h"

namespace hf {

namespace {
const Graph& verified(const Graph& g) {
  verify(g);
  return g;
}
}  // namespace

Executor::Executor(const Graph& g, Backend& backend, std::span<const ValueId> observe,
                   const Plan* lender)
    : graph_(verified(g)), backend_(backend), plan_(g, backend, observe, lender) {
  outputs_.resize(g.outputs().size());
}

std::span<const TensorView> Executor::run(std::span<const TensorView> inputs,
                                          StepObserver* observer) {
  const auto& ids = graph_.inputs();
  if (inputs.size() != ids.size())
    throw Error("graph '" + printable(graph_.name) + "' takes " + std::to_string(ids.size()) +
                " inputs, got " + std::to_string(inputs.size()));
  for (size_t i = 0; i < ids.size(); ++i) {
    const Value& v = graph_.value(ids[i]);
    const TensorView& t = inputs[i];
    if (t.dtype != v.dtype || t.shape != v.shape || !t.is_contiguous())
      throw Error("input '" + printable(v.name) + "' must be a contiguous " +
                  std::string(dtype_name(v.dtype)) + to_string(v.shape) + " tensor, got " +
                  std::string(dtype_name(t.dtype)) + to_string(t.shape));
    plan_.bind_input(i, t.data);
  }
  using Clock = std::chrono::steady_clock;
  auto& steps = plan_.steps();
  if (observer) {
    for (size_t s = 0; s < steps.size(); ++s) {
      Step& st = steps[s];
      auto t0 = Clock::now();
      st.kernel->run(st.inputs, st.outputs);
      backend_.sync();
      observer->on_step(s, std::chrono::duration<double>(Clock::now() - t0).count());
    }
  } else if (!launch_recording(inputs)) {
    run_steps();
  }
  backend_.sync();
  for (Step& st : steps) st.kernel->after_iteration();
  ++runs_;
  for (size_t i = 0; i < outputs_.size(); ++i) outputs_[i] = plan_.output(i);
  return outputs_;
}

void Executor::run_steps() {
  for (Step& st : plan_.steps()) st.kernel->run(st.inputs, st.outputs);
}

// The recording of this iteration, launched; false when the steps are to run one by one.
// The first run is never recorded: kernels set themselves up lazily on it.
bool Executor::launch_recording(std::span<const TensorView> inputs) {
  if (runs_ == 0 || !step_by_step_.empty()) return false;
  auto recorded_with = [&] {  // compared in place: a launch allocates nothing
    if (recorded_inputs_.size() != inputs.size()) return false;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].data != recorded_inputs_[i]) return false;
    return true;
  };
  if (recording_ && recorded_with()) {
    recording_->launch();
    return true;
  }
  recording_.reset();
  if (recordings_ == kMaxRecordings) {
    step_by_step_ = "the inputs moved to other addresses after " + std::to_string(kMaxRecordings) +
                    " recordings of the iteration";
    return false;
  }
  ++recordings_;
  std::string why;
  recording_ = backend_.record([this] { run_steps(); }, why);
  if (!recording_) {
    step_by_step_ = why.empty() ? std::string("recording failed") : why;
    return false;
  }
  recorded_inputs_.clear();
  for (const TensorView& t : inputs) recorded_inputs_.push_back(t.data);
  recording_->launch();
  return true;
}

}  // namespace hf
