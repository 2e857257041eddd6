// Runs a program without a shell (the host compiler; dump/ renders SVGs with `dot`). The
// compiler's path and arguments come from the environment and from generated file names,
// so they are passed as an argv vector to posix_spawnp: no quoting, no word splitting,
// nothing a shell could interpret.
#pragma once
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace hf::fusion {

struct ProcessResult {
  bool started = false;    // false: spawn failed, `error` says why
  bool timed_out = false;  // killed (with its process group) after the timeout
  int exit_code = -1;      // when it exited normally
  int signal = 0;          // when a signal ended it
  std::string output;      // stdout and stderr interleaved, cut after max_output bytes
  std::string error;
  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
  std::string status() const;  // "exit code 1", "killed by signal 9", "timed out after ..."
};

// argv[0] is looked up in PATH when it has no '/'. stdin is /dev/null. The process runs in
// a process group of its own, registered while it runs (below); started on a thread inside
// a BackgroundChildren::Scope, it also joins that set: lower priority, and paused with it.
ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          size_t max_output = size_t(1) << 20);

// The children one thread starts for work nobody waits on (the adaptive session's compiles,
// while iterations run). They run under SCHED_IDLE (only on a core nothing else wants; nice
// +10 where the policy is refused), and their owner can stop them while an iteration runs
// and let them go on between iterations: on a machine whose cores the executor fills, a
// compiler sharing a core slows every parallel kernel to its slowest thread, however low
// its priority. Thread-safe.
class BackgroundChildren {
 public:
  BackgroundChildren() = default;
  ~BackgroundChildren();  // resumes any it paused
  BackgroundChildren(const BackgroundChildren&) = delete;
  BackgroundChildren& operator=(const BackgroundChildren&) = delete;

  void pause();         // SIGSTOP to every running child's group; later ones start stopped
  void resume();        // SIGCONT to them
  int running() const;  // children started and not yet reaped
  std::vector<int> process_groups() const;  // theirs (each child leads its own group)
  bool paused() const;
  // Time spent paused since construction, the current pause included: a child's timeout
  // counts only the time it could run.
  std::chrono::steady_clock::duration paused_total() const;

  // While alive, run_process on this thread starts its children in `children`.
  class Scope {
   public:
    explicit Scope(BackgroundChildren& children);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    BackgroundChildren* previous_;
  };

  // Used by run_process.
  void add(int pgid);
  void remove(int pgid);

 private:
  mutable std::mutex mu_;
  std::vector<int> groups_;
  bool paused_ = false;
  std::chrono::steady_clock::time_point paused_since_;
  std::chrono::steady_clock::duration paused_before_{};
};

// SIGKILL to the process group of every run_process child still running. Async-signal-safe:
// a launcher's SIGTERM/SIGINT handler calls it, so a compiler (a group of its own, which a
// terminal's or a job's signal does not reach) does not outlive the run.
void kill_running_processes() noexcept;
// How many run_process children are running now (tests wait on it).
int running_processes() noexcept;

}  // namespace hf::fusion
