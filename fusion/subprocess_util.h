// Runs a program without a shell (the host compiler; dump/ renders SVGs with `dot`). The
// compiler's path and arguments come from the environment and from generated file names,
// so they are passed as an argv vector to posix_spawnp: no quoting, no word splitting,
// nothing a shell could interpret.
#pragma once
#include <chrono>
#include <cstddef>
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

// argv[0] is looked up in PATH when it has no '/'. stdin is /dev/null. `nice` lowers the
// priority of the process group by that much (the adaptive session compiles while
// iterations run: the compiler should take what the executor leaves).
// The process runs in a process group of its own, registered while it runs (below).
ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          size_t max_output = size_t(1) << 20, int nice = 0);

// SIGKILL to the process group of every run_process child still running. Async-signal-safe:
// a launcher's SIGTERM/SIGINT handler calls it, so a compiler (a group of its own, which a
// terminal's or a job's signal does not reach) does not outlive the run.
void kill_running_processes() noexcept;
// How many run_process children are running now (tests wait on it).
int running_processes() noexcept;

}  // namespace hf::fusion
