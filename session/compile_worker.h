// One background thread that compiles region kernels, hottest first, while iterations
// keep running. The executor never waits for it: finished jobs are collected at iteration
// boundaries with take_done(), which does not block.
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fusion/kernel_cache.h"

namespace hf {

// Generates, compiles or loads the kernel of a spec and says how it went
// (KernelCache::ensure, or a test's stand-in). Called on the worker's thread while
// iterations run: it must be thread-safe.
using EnsureKernel = std::function<fusion::CompileOutcome(const fusion::KernelSpec& spec,
                                                          const std::string& origin)>;

struct CompileJob {
  int region = -1;
  fusion::KernelSpec spec;
  std::string origin;   // the graph nodes, for the source comment
  double priority = 0;  // higher first (the predicted saving)
};

struct CompileDone {
  int region = -1;
  fusion::CompileOutcome outcome;
  std::chrono::steady_clock::time_point start, end;
};

class CompileWorker {
 public:
  // ensure: called on the worker thread. before_compile: a test hook run on the worker thread
  // before each job (e.g. a sleep, to stand in for a slow compiler).
  explicit CompileWorker(EnsureKernel ensure, std::function<void(int region)> before_compile = {});
  // The cache's ensure.
  explicit CompileWorker(fusion::KernelCache& cache,
                         std::function<void(int region)> before_compile = {});
  // Lets the job in progress finish, drops the queued ones, joins.
  ~CompileWorker();
  CompileWorker(const CompileWorker&) = delete;
  CompileWorker& operator=(const CompileWorker&) = delete;

  void submit(std::vector<CompileJob> jobs);
  std::vector<CompileDone> take_done();  // finished since the last call; never blocks
  void wait_idle();                      // until nothing is queued or running
  int pending() const;                   // queued + running

 private:
  void loop();
  EnsureKernel ensure_;
  std::function<void(int)> before_compile_;
  mutable std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<CompileJob> queue_;  // sorted, hottest first
  std::vector<CompileDone> done_;
  int running_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace hf
