// A small fork-join pool for data-parallel kernels. The calling thread takes part, so a pool
// of N threads owns N-1 workers. parallel_for returns when every chunk is done: a kernel's
// time measured around it is the whole kernel's time.
//
// Size: HOTFUSE_NUM_THREADS=N (an integer from 1 to 1024) sets the size of pools built with
// threads <= 0, ThreadPool::global() included; otherwise the hardware thread count. Any
// other value is an hf::Error naming the variable, thrown by the constructor.
//
// Workers that finish a job spin for ~200 us before blocking, so back-to-back kernels pay
// no futex wake-up. Chunks are claimed dynamically (up to 8 per thread).
//
// Nesting and concurrency: parallel_for called from inside a parallel_for body (on any
// pool) runs fn(0, n) serially on the calling thread, as does a call made while another
// thread is running a job on the same pool; neither waits, so neither can deadlock.
// Exceptions: the first exception thrown by fn is rethrown to the caller once every chunk
// has finished; chunks not yet started when it was thrown are skipped.
#pragma once
#include <cstdint>
#include <functional>

namespace hf::cpu {

class ThreadPool {
 public:
  // threads <= 0: the HOTFUSE_NUM_THREADS environment variable, else the hardware threads
  // (hf::Error when the variable is set to anything but 1..1024).
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;
  // The size a pool built with threads <= 0 gets (HOTFUSE_NUM_THREADS, else the hardware
  // threads); hf::Error for a bad value. A launcher checks it first, on any backend.
  static int size_from_environment();

  // Calls fn(begin, end) on disjoint chunks covering [0, n). Chunks hold at least `grain`
  // items, so small problems run on the calling thread alone, with no wake-up cost.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  // Workers that just finished spin a while for the next job (kSpinFor); this sends the
  // ones spinning now to sleep at once, for a caller that knows no job comes soon and
  // wants the cores for something else. The next job wakes them as usual.
  void rest();

  // The process-wide pool the CPU backend uses.
  static ThreadPool& global();

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace hf::cpu
