// Faults in a fresh plan's buffers (Plan::touch_pages) on a thread of its own, at idle
// priority, while iterations keep running.
//
// The session's next plan and its validation's plan are built after an iteration, and their
// own buffers (graph outputs, kept values) must be faulted in before they run, or their
// first iteration pays for it. A fault cannot be cut short: a 2 MiB huge page is one, and on
// a virtual machine whose memory the host backs on first touch it took 8-9 ms, several
// iterations' share of a short graph. On a thread that runs only where no iteration wants
// the core (SCHED_IDLE) the faults take none of the iterations' time.
#pragma once
#include <atomic>
#include <thread>
#include <vector>

#include "runtime/exec/plan.h"

namespace hf {

class PageFaulter {
 public:
  PageFaulter() = default;
  ~PageFaulter();  // cancels
  PageFaulter(const PageFaulter&) = delete;
  PageFaulter& operator=(const PageFaulter&) = delete;

  // Starts faulting in `plans`, one after another, cancelling any job in progress. They
  // must not run, nor be destroyed, until the job is done (busy() false) or cancelled.
  void start(std::vector<Plan*> plans);
  bool busy() const;  // a job is in progress
  // Stops the job in progress; returns once its thread touches none of its plans.
  void cancel();

 private:
  std::thread thread_;
  std::atomic<bool> stop_{false}, done_{true};
};

}  // namespace hf
