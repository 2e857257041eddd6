// A small fork-join pool for data-parallel kernels. The calling thread takes part, so a pool
// of N threads owns N-1 workers. parallel_for returns when every chunk is done: a kernel's
// time measured around it is the whole kernel's time.
#pragma once
#include <cstdint>
#include <functional>

namespace hf::cpu {

class ThreadPool {
 public:
  // threads <= 0: the HOTFUSE_NUM_THREADS environment variable, else the hardware threads.
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;

  // Calls fn(begin, end) on disjoint chunks covering [0, n). Chunks hold at least `grain`
  // items, so small problems run on the calling thread alone, with no wake-up cost.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  // The process-wide pool the CPU backend uses.
  static ThreadPool& global();

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace hf::cpu
