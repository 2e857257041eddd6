// The CPU backend: graph nodes mapped onto the kernels in kernels.h, run on a thread pool.
#pragma once
#include "runtime/cpu/thread_pool.h"
#include "runtime/exec/backend.h"

namespace hf::cpu {

class CpuBackend final : public Backend {
 public:
  // pool: the pool kernels run on; nullptr means ThreadPool::global().
  explicit CpuBackend(ThreadPool* pool = nullptr);
  std::string_view name() const override { return "cpu"; }
  std::unique_ptr<Kernel> make_kernel(const Graph& g, const Node& n) override;
  void* alloc(size_t bytes) override { return alloc_host(bytes); }
  void free(void* p) override { free_host(p); }
  bool reads_host_memory() const override { return true; }
  // A Conv epilogue whose first step adds a residual (conv_post_ops.h leads_with_residual).
  bool writes_over(const Graph& g, const Node& n, ValueId input) const override;
  ThreadPool& pool() { return *pool_; }

 private:
  std::unique_ptr<Kernel> make_nn_kernel(const Graph& g, const Node& n);  // Conv, pools, ...
  std::unique_ptr<Kernel> make_matmul_kernel(const Graph& g, const Node& n);
  // A Fused node whose payload is a HeavyEpilogue (runtime/ir/epilogue.h).
  std::unique_ptr<Kernel> make_epilogue_kernel(const Graph& g, const Node& n);
  ThreadPool* pool_;
};

}  // namespace hf::cpu
