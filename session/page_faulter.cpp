#include "session/page_faulter.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace hf {

namespace {

// This thread only where a core is idle: SCHED_IDLE, else the lowest nice (a sandbox may
// refuse the policy). Per thread on Linux: the rest of the process is untouched.
void lower_this_threads_priority() {
  sched_param idle{};
  if (::pthread_setschedparam(::pthread_self(), SCHED_IDLE, &idle) != 0)
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 19);
}

}  // namespace

PageFaulter::~PageFaulter() {
  cancel();
}

void PageFaulter::start(std::vector<Plan*> plans) {
  cancel();
  stop_.store(false);
  done_.store(false);
  thread_ = std::thread([this, plans = std::move(plans)] {
    lower_this_threads_priority();
    // Slices, so that a cancel waits for at most one.
    constexpr size_t kSlice = size_t(1) << 20;
    for (Plan* p : plans)
      while (!stop_.load(std::memory_order_relaxed) && !p->touch_pages(kSlice)) {
      }
    done_.store(true, std::memory_order_release);
  });
}

bool PageFaulter::busy() const {
  return !done_.load(std::memory_order_acquire);
}

void PageFaulter::cancel() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  done_.store(true);
}

}  // namespace hf
