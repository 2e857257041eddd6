#include "fusion/subprocess_util.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <thread>

#include "runtime/io/secure_fs.h"

extern char** environ;

namespace hf::fusion {

namespace {

// Process groups of the children running now; 0 marks a free slot. A fixed array of
// atomics, so a signal handler can read it. More concurrent children than slots are not
// registered (the compile worker runs one at a time).
constexpr int kMaxTracked = 64;
std::atomic<pid_t> g_running[kMaxTracked];

int track(pid_t pid) {
  for (int k = 0; k < kMaxTracked; ++k) {
    pid_t free = 0;
    if (g_running[k].compare_exchange_strong(free, pid)) return k;
  }
  return -1;
}

thread_local BackgroundChildren* t_background = nullptr;

}  // namespace

BackgroundChildren::~BackgroundChildren() {
  resume();
}

void BackgroundChildren::pause() {
  std::lock_guard<std::mutex> lock(mu_);
  if (paused_) return;
  paused_ = true;
  paused_since_ = std::chrono::steady_clock::now();
  for (int g : groups_) ::kill(-g, SIGSTOP);
}

void BackgroundChildren::resume() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!paused_) return;
  paused_ = false;
  paused_before_ += std::chrono::steady_clock::now() - paused_since_;
  for (int g : groups_) ::kill(-g, SIGCONT);
}

int BackgroundChildren::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(groups_.size());
}

std::chrono::steady_clock::duration BackgroundChildren::paused_total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return paused_before_ + (paused_ ? std::chrono::steady_clock::now() - paused_since_
                                   : std::chrono::steady_clock::duration{});
}

std::vector<int> BackgroundChildren::process_groups() const {
  std::lock_guard<std::mutex> lock(mu_);
  return groups_;
}

bool BackgroundChildren::paused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return paused_;
}

void BackgroundChildren::add(int pgid) {
  std::lock_guard<std::mutex> lock(mu_);
  groups_.push_back(pgid);
  if (paused_) ::kill(-pgid, SIGSTOP);
}

void BackgroundChildren::remove(int pgid) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase(groups_, pgid);
}

BackgroundChildren::Scope::Scope(BackgroundChildren& children) : previous_(t_background) {
  t_background = &children;
}

BackgroundChildren::Scope::~Scope() {
  t_background = previous_;
}

void kill_running_processes() noexcept {
  for (auto& slot : g_running)
    if (pid_t pid = slot.load(); pid > 0) ::kill(-pid, SIGKILL);
}

int running_processes() noexcept {
  int n = 0;
  for (auto& slot : g_running) n += slot.load() > 0;
  return n;
}

std::string ProcessResult::status() const {
  if (!started) return "could not start: " + error;
  if (timed_out) return "timed out: " + error;
  if (signal) return "killed by signal " + std::to_string(signal);
  return "exit code " + std::to_string(exit_code);
}

ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          size_t max_output) {
  using Clock = std::chrono::steady_clock;
  ProcessResult r;
  if (argv.empty()) {
    r.error = "empty command";
    return r;
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    r.error = "pipe: " + fsutil::errno_text(errno);
    return r;
  }
  fsutil::Fd read_end(pipe_fds[0]), write_end(pipe_fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, so a timeout kills the driver's children (cc1plus, as, ld) too.
  posix_spawnattr_setpgroup(&attr, 0);
  // Default signal dispositions: the caller may ignore SIGPIPE or SIGCHLD.
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attr, &all);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int err = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  BackgroundChildren* background = t_background;
  if (err == 0 && background) {
    // SCHED_IDLE: the compiler runs only on a core nothing else wants, and never preempts a
    // thread it wakes beside (a niced process continued after a long stop does, for its
    // slice). posix_spawn takes only the POSIX policies, so it is set here, as soon as the
    // driver has exec'ed (it starts cc1plus, which inherits it, only once it has read its
    // specs). Nice +10 where a sandbox refuses the policy.
    sched_param idle{};
    if (::sched_setscheduler(pid, SCHED_IDLE, &idle) != 0)
      ::setpriority(PRIO_PGRP, pid, std::min(19, ::getpriority(PRIO_PROCESS, 0) + 10));
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  write_end = fsutil::Fd();
  if (err != 0) {
    r.error = argv[0] + ": " + fsutil::errno_text(err);
    return r;
  }
  r.started = true;
  // Unregistered once reaped (below), so a killed group's id is never signalled after the
  // kernel could have reused it.
  const int slot = track(pid);
  if (background) background->add(pid);

  // Time spent paused does not count against the timeout.
  const auto start = Clock::now();
  const auto paused0 = background ? background->paused_total() : Clock::duration{};
  auto deadline = [&] {
    return start + timeout +
           (background ? background->paused_total() - paused0 : Clock::duration{});
  };
  char buf[1 << 14];
  bool truncated = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline() - Clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      break;
    }
    pollfd p{read_end.get(), POLLIN, 0};
    int n = ::poll(&p, 1, int(std::min<long long>(left.count(), 100)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;  // poll timeout: the loop re-checks the deadline
    ssize_t got = ::read(read_end.get(), buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // EOF: every writer (the process group) closed its end
    // Past the cap keep draining, or a verbose compiler would block on a full pipe.
    size_t room = max_output > r.output.size() ? max_output - r.output.size() : 0;
    r.output.append(buf, std::min(room, size_t(got)));
    truncated |= size_t(got) > room;
  }
  if (truncated) r.output += "\n[output truncated at " + std::to_string(max_output) + " bytes]\n";
  // Output closed does not mean exited: keep honouring the deadline while reaping.
  int status = 0;
  for (;;) {
    if (!r.timed_out && Clock::now() >= deadline()) r.timed_out = true;
    if (r.timed_out) {
      ::kill(-pid, SIGKILL);
      r.error = "killed after " + std::to_string(timeout.count()) + " ms";
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (background) background->remove(pid);
  if (slot >= 0) g_running[slot].store(0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !r.timed_out) r.signal = WTERMSIG(status);
  return r;
}

}  // namespace hf::fusion
