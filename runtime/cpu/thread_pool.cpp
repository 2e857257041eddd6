#include "runtime/cpu/thread_pool.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/ir/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace hf::cpu {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Kernels come back to back in a graph run, so a worker that has just finished spins this
// long for the next job before it blocks: a futex wake-up costs 5-50 us, as much as a whole
// op at 2^20 elements.
constexpr auto kSpinFor = std::chrono::microseconds(200);

// More chunks than threads, claimed dynamically, so the caller is not left waiting for a
// worker that wakes late or runs on a busy core.
constexpr int64_t kChunksPerThread = 8;

// The claim word: job generation (24 bits) | next chunk (20 bits) | chunk count (20 bits).
// A worker touches a job's fields only after a successful CAS on it, and the caller does
// not rewrite them before every claimed chunk is done, so no worker reads a stale job.
constexpr int kCountBits = 20;
constexpr uint64_t kCountMask = (uint64_t{1} << kCountBits) - 1;
constexpr uint64_t pack(uint64_t gen, uint64_t next, uint64_t count) {
  return (gen << (2 * kCountBits)) | (next << kCountBits) | count;
}

thread_local bool tl_in_parallel = false;

// A value that is set must be a thread count (like --threads, at most 1024): "abc" or "-1"
// silently meant "every hardware thread" before, which is not what was asked for.
int threads_from_env() {
  if (const char* s = std::getenv("HOTFUSE_NUM_THREADS")) {
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || v < 1 || v > 1024)
      throw Error("HOTFUSE_NUM_THREADS=" + std::string(s) +
                  ": must be a thread count from 1 to 1024 (unset: every hardware thread)");
    return static_cast<int>(v);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

}  // namespace

int ThreadPool::size_from_environment() {
  return threads_from_env();
}

struct ThreadPool::Impl {
  int size = 1;
  std::vector<std::thread> workers;

  // The current job; written only while no chunk of the previous one is outstanding.
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0;
  int64_t chunk = 0;
  std::exception_ptr error;
  std::mutex error_mutex;
  std::atomic<bool> failed{false};

  alignas(64) std::atomic<uint64_t> claim{0};
  alignas(64) std::atomic<int64_t> done{0};
  alignas(64) std::atomic<uint32_t> gen{0};
  std::atomic<uint32_t> rest_at{~0u};  // workers that have seen this generation stop spinning
  std::atomic<int> sleepers{0};
  std::atomic<bool> stop{false};
  std::mutex sleep_mutex;
  std::condition_variable wake;

  // One job at a time; a second caller runs its loop serially instead of waiting.
  std::mutex call_mutex;

  void run_chunk(uint64_t i) {
    if (!failed.load(std::memory_order_relaxed)) {
      int64_t b = static_cast<int64_t>(i) * chunk;
      int64_t e = std::min(n, b + chunk);
      try {
        (*fn)(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lk(error_mutex);
        if (!error) error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
    done.fetch_add(1, std::memory_order_release);
  }

  // Claims and runs chunks of whatever job is published until none is left.
  void drain() {
    uint64_t c = claim.load(std::memory_order_acquire);
    for (;;) {
      uint64_t next = (c >> kCountBits) & kCountMask;
      if (next >= (c & kCountMask)) return;
      if (claim.compare_exchange_weak(c, c + (uint64_t{1} << kCountBits), std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        run_chunk(next);
        c = claim.load(std::memory_order_acquire);
      }
    }
  }

  // `seen` is the generation at construction: reading it on the new thread instead could
  // pick up a later job, or the destructor's wake-up, and then wait forever.
  void worker_loop(uint32_t seen) {
    for (;;) {
      auto spin_until = std::chrono::steady_clock::now() + kSpinFor;
      for (int i = 0; gen.load(std::memory_order_acquire) == seen; ++i) {
        cpu_relax();
        if ((i & 63) == 63 && (rest_at.load(std::memory_order_relaxed) == seen ||
                               std::chrono::steady_clock::now() > spin_until)) {
          std::unique_lock<std::mutex> lk(sleep_mutex);
          sleepers.fetch_add(1, std::memory_order_seq_cst);
          wake.wait(lk, [&] { return gen.load(std::memory_order_seq_cst) != seen; });
          sleepers.fetch_sub(1, std::memory_order_relaxed);
          break;
        }
      }
      seen = gen.load(std::memory_order_acquire);
      if (stop.load(std::memory_order_acquire)) return;
      tl_in_parallel = true;
      drain();
      tl_in_parallel = false;
    }
  }

  void publish(uint64_t word) {
    claim.store(word, std::memory_order_release);
    gen.fetch_add(1, std::memory_order_seq_cst);
    // Pairs with the sleeper's increment-then-check: either it sees the new generation or
    // we see it counted, and taking the mutex means it is already inside wait().
    if (sleepers.load(std::memory_order_seq_cst) > 0) {
      { std::lock_guard<std::mutex> lk(sleep_mutex); }
      wake.notify_all();
    }
  }
};

ThreadPool::ThreadPool(int threads) {
  // Sized before anything is allocated: a bad HOTFUSE_NUM_THREADS throws with nothing to free.
  const int size = threads > 0 ? threads : threads_from_env();
  impl_ = new Impl;
  impl_->size = size;
  impl_->workers.reserve(impl_->size - 1);
  const uint32_t gen0 = impl_->gen.load();
  for (int i = 1; i < impl_->size; ++i)
    impl_->workers.emplace_back([this, gen0] { impl_->worker_loop(gen0); });
}

ThreadPool::~ThreadPool() {
  impl_->stop.store(true, std::memory_order_release);
  impl_->publish(impl_->claim.load());
  for (auto& t : impl_->workers) t.join();
  delete impl_;
}

int ThreadPool::size() const {
  return impl_->size;
}

void ThreadPool::rest() {
  impl_->rest_at.store(impl_->gen.load(std::memory_order_acquire), std::memory_order_relaxed);
}

void ThreadPool::parallel_for(int64_t n, int64_t grain,
                              const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  Impl& p = *impl_;
  if (p.size == 1 || n <= grain || tl_in_parallel) {
    fn(0, n);
    return;
  }
  std::unique_lock<std::mutex> call(p.call_mutex, std::try_to_lock);
  if (!call.owns_lock()) {
    fn(0, n);
    return;
  }

  // n / grain rounded down: every chunk but the last then holds at least `grain` items.
  int64_t chunks = std::min(n / grain, p.size * kChunksPerThread);
  p.chunk = (n + chunks - 1) / chunks;
  chunks = (n + p.chunk - 1) / p.chunk;
  p.fn = &fn;
  p.n = n;
  p.error = nullptr;
  p.failed.store(false, std::memory_order_relaxed);
  p.done.store(0, std::memory_order_relaxed);
  uint64_t next_gen = ((p.claim.load(std::memory_order_relaxed) >> (2 * kCountBits)) + 1) &
                      ((uint64_t{1} << 24) - 1);
  p.publish(pack(next_gen, 0, static_cast<uint64_t>(chunks)));

  tl_in_parallel = true;
  p.drain();
  tl_in_parallel = false;
  for (int i = 0; p.done.load(std::memory_order_acquire) < chunks; ++i) {
    cpu_relax();
    if (i > 4096) std::this_thread::yield();  // the worker holding a chunk was preempted
  }
  if (p.error) {
    std::exception_ptr e = p.error;
    p.error = nullptr;
    std::rethrow_exception(e);
  }
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool(0);
  return pool;
}

}  // namespace hf::cpu
