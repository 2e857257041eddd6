// What killed runs leave behind, found and removed by the next run: fresh JIT work
// directories (hotfuse-jit-* under $TMPDIR) and compiler temporaries (.<kernel>.so.tmp-<pid>-*)
// in a shared MGB_JIT_WORKDIR. A run that ends normally removes its own; these are the
// ones a SIGKILL, a crash or a power loss leaves (docs/reliability.md).
#pragma once
#include <filesystem>

namespace hf::fusion {

// Creates <dir_fd>/.lock, locked (flock) through the returned descriptor for as long as it
// stays open: the mark of a work directory whose process is alive. -1 if it cannot.
int lock_workdir(int dir_fd);

// Removes each hotfuse-jit-* directory directly under `base` that is ours (owned by this
// user, a real directory) and holds a .lock that no process holds: its run was killed.
// Directories without a .lock (kept with MGB_JIT_KEEP_INTERM, or another user's) stay.
void remove_abandoned_workdirs(const std::filesystem::path& base) noexcept;

// Removes from `dir_fd` the compiler temporaries (".*.tmp-<pid>-*") of processes that no
// longer exist, once older than the compile timeout: never one a live compile writes.
void remove_dead_temporaries(int dir_fd) noexcept;

}  // namespace hf::fusion
