// A Plan is a graph lowered for one backend: kernels in execution order and every value's
// memory decided once.
//
// Buffer assignment walks the steps in order and gives each produced value a buffer that
// is no longer live (best fit by size), or a new one. A step's output may take the buffer
// of an input that dies at that step when the op reads and writes element by element
// (Elemwise, PowC, same-size TypeCvt) or keeps the bytes as they are (Reshape, BitCast:
// their kernels then copy nothing), or where the backend's kernel for it says it can
// (Backend::writes_over: a CPU Conv adding a residual). Graph outputs and constants get
// their own buffers.
// All buffers are allocated here, so iterations allocate nothing.
//
// The other buffers only carry values within an iteration (scratch): a plan that never runs
// while another does (the adaptive session's next plan or validation beside its plan in
// use) can take its scratch buffers from that one instead of allocating its own. Besides
// the memory, that keeps its first iterations in the caches the other plan warmed.
#pragma once
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "runtime/ir/tensor.h"

#include "runtime/exec/backend.h"

namespace hf {

struct Step {
  NodeId node = kNoNode;
  std::unique_ptr<Kernel> kernel;
  std::vector<TensorView> inputs, outputs;  // data pointers fixed, except graph inputs
};

class Plan {
 public:
  // Throws hf::Error naming the node if the backend cannot run it. Values in `observe`
  // keep their own buffers like graph outputs, so they can be read after a run (the
  // adaptive session compares a region's live-outs fused and unfused this way).
  // `lender`: a plan of the same backend that never runs at the same time as this one; its
  // scratch buffers are shared (each lent to at most one of this plan's, big enough) and
  // stay alive while either plan does.
  Plan(const Graph& g, Backend& backend, std::span<const ValueId> observe = {},
       const Plan* lender = nullptr);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  std::vector<Step>& steps() { return steps_; }
  const std::vector<Step>& steps() const { return steps_; }
  // Points every view of graph input `i` at `data` (called by the Executor each run).
  void bind_input(size_t i, void* data);
  // The view of graph output `i` (valid until the next run).
  const TensorView& output(size_t i) const { return outputs_[i]; }
  // The view of an observed value (hf::Error if it was not observed).
  const TensorView& observed(ValueId v) const;
  size_t buffer_bytes() const { return buffer_bytes_; }  // all planned memory
  size_t lent_bytes() const { return lent_bytes_; }      // of it, taken from the lender
  // Fresh host buffers fault in page by page the first time they are written: a new plan's
  // first run is slower than its next ones by that much. This writes every page of its own
  // buffers once (keeping their bytes; the lender's are in), up to `max_bytes` per call, so
  // the cost can be paid before the plan runs, in slices. Returns true once every page is
  // touched. Only where the buffers are host memory (Backend::reads_host_memory); elsewhere
  // it returns true.
  bool touch_pages(size_t max_bytes);

 private:
  struct InputUse {
    size_t step;
    size_t slot;
  };
  Backend& backend_;
  std::vector<Step> steps_;
  struct Buffer {
    std::shared_ptr<void> memory;
    size_t bytes = 0;
    bool scratch = false;  // may be lent to another plan
    bool lent = false;     // taken from the lender (its pages are in)
  };
  std::vector<Buffer> buffers_;
  std::vector<std::vector<InputUse>> input_uses_;  // per graph input
  std::vector<int> output_is_input_;               // per graph output: input index or -1
  std::vector<TensorView> outputs_;
  std::map<ValueId, TensorView> observed_;
  // Constants read in place (Backend::reads_host_memory and ConstantData): their shared
  // values, held while the plan lives.
  std::map<ValueId, HostTensor> shared_constants_;
  size_t buffer_bytes_ = 0, lent_bytes_ = 0;
  size_t touched_buffer_ = 0, touched_bytes_ = 0;  // touch_pages' position
};

}  // namespace hf
