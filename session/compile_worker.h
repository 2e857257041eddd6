// Background threads that compile region kernels, hottest first, while iterations keep
// running (one compiler process each: as many as there are cores to give them). The executor never
// waits for it: finished jobs are collected at iteration boundaries with take_done(), which does
// not block.
//
// A worker for work nobody waits on (`background`) starts its compilers at a lower
// priority and can stop them while an iteration runs (pause/resume, fusion::
// BackgroundChildren); one whose caller waits (wait_idle) compiles at full priority.
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
#include "fusion/subprocess_util.h"

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
  // `threads`: jobs compiled at once.
  explicit CompileWorker(EnsureKernel ensure, std::function<void(int region)> before_compile = {},
                         bool background = false, int threads = 1);
  // The cache's ensure.
  explicit CompileWorker(fusion::KernelCache& cache,
                         std::function<void(int region)> before_compile = {},
                         bool background = false, int threads = 1);
  // Lets the jobs in progress finish, drops the queued ones, joins.
  ~CompileWorker();
  CompileWorker(const CompileWorker&) = delete;
  CompileWorker& operator=(const CompileWorker&) = delete;

  void submit(std::vector<CompileJob> jobs);
  std::vector<CompileDone> take_done();  // finished since the last call; never blocks
  void wait_idle();                      // until nothing is queued or running
  int pending() const;                   // queued + running
  // Stops / continues the compiler processes running now or started later (background only).
  void pause() { children_.pause(); }
  void resume() { children_.resume(); }
  bool background() const { return background_; }

 private:
  void loop();
  EnsureKernel ensure_;
  std::function<void(int)> before_compile_;
  const bool background_;
  fusion::BackgroundChildren children_;
  mutable std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<CompileJob> queue_;  // sorted, hottest first
  std::vector<CompileDone> done_;
  int running_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;  // last: started once the members above exist
};

}  // namespace hf
