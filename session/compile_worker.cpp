#include "session/compile_worker.h"

#include <algorithm>
#include <optional>

namespace hf {

CompileWorker::CompileWorker(EnsureKernel ensure, std::function<void(int region)> before_compile,
                             bool background, int threads)
    : ensure_(std::move(ensure)),
      before_compile_(std::move(before_compile)),
      background_(background) {
  for (int t = 0; t < std::max(1, threads); ++t) threads_.emplace_back([this] { loop(); });
}

CompileWorker::CompileWorker(fusion::KernelCache& cache,
                             std::function<void(int region)> before_compile, bool background,
                             int threads)
    : CompileWorker([&cache](const fusion::KernelSpec& spec,
                             const std::string& origin) { return cache.ensure(spec, origin); },
                    std::move(before_compile), background, threads) {}

CompileWorker::~CompileWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  children_.resume();  // a stopped compiler would never let the job in progress finish
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void CompileWorker::submit(std::vector<CompileJob> jobs) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (CompileJob& j : jobs) queue_.push_back(std::move(j));
    std::stable_sort(queue_.begin(), queue_.end(), [](const CompileJob& a, const CompileJob& b) {
      return a.priority > b.priority;
    });
  }
  wake_.notify_all();
}

std::vector<CompileDone> CompileWorker::take_done() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<CompileDone> out;
  out.swap(done_);
  return out;
}

void CompileWorker::wait_idle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return queue_.empty() && running_ == 0; });
}

int CompileWorker::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(queue_.size()) + running_;
}

void CompileWorker::loop() {
  std::optional<fusion::BackgroundChildren::Scope> scope;
  if (background_) scope.emplace(children_);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    CompileJob job = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();

    CompileDone d;
    d.region = job.region;
    d.start = std::chrono::steady_clock::now();
    if (before_compile_) before_compile_(job.region);
    try {
      d.outcome = ensure_(job.spec, job.origin);
    } catch (const std::exception& e) {  // a generator or loader bug must not stop the run
      d.outcome.message = "kernel " + fusion::KernelCache::kernel_name(job.spec) +
                          " could not be generated: " + e.what() + "; its region runs unfused";
    }
    d.end = std::chrono::steady_clock::now();

    lock.lock();
    done_.push_back(std::move(d));
    --running_;
    if (queue_.empty() && running_ == 0) idle_.notify_all();
  }
}

}  // namespace hf
