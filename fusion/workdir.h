// The JIT work directory: where generated sources, PTX, shared objects and compile logs
// go. MegEngine's environment variables, same names and meaning:
//   MGB_JIT_WORKDIR       the directory (default: a fresh mkdtemp dir under $TMPDIR or /tmp)
//   MGB_JIT_KEEP_INTERM=1 keep what was written after exit (default: remove it)
//   MGB_JIT_BACKEND       NVRTC or CPU: force the code generator where both are possible
// Cleanup removes only what this Workdir created, never a user's files. docs/jit.md.
#pragma once
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace hf::fusion {

class Workdir {
 public:
  // From MGB_JIT_WORKDIR / MGB_JIT_KEEP_INTERM; hf::Error naming the variable or directory
  // when either is unusable.
  static std::shared_ptr<Workdir> from_env();
  // `dir` empty: a fresh temp dir. An existing `dir` must be a directory owned by us and
  // not writable by group or others; a missing one is created 0700.
  static std::shared_ptr<Workdir> open(const std::optional<std::filesystem::path>& dir, bool keep);

  ~Workdir();
  Workdir(const Workdir&) = delete;
  Workdir& operator=(const Workdir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  bool keep() const { return keep_; }

  // Writes path()/relative (0600, atomically, creating subdirectories 0700, never through
  // a symlink; hf::Error for "..", an absolute path or an I/O failure). Returns its path.
  std::filesystem::path write_file(const std::string& relative, std::string_view contents);
  // Counts a file someone else wrote here (a compiler's output) as ours, to be cleaned up.
  void track(const std::string& relative);
  // Keeps a file at cleanup even without MGB_JIT_KEEP_INTERM (a failed compile's source
  // and log, for the bug report).
  void retain(const std::string& relative);
  // <workdir>/include with the embedded headers (fusion/embedded_headers.h), written on
  // the first call, for the host compiler's -I.
  std::filesystem::path include_dir();

 private:
  Workdir() = default;
  void cleanup() noexcept;

  std::filesystem::path path_;
  int fd_ = -1;       // path_, opened without following symlinks
  int lock_fd_ = -1;  // holds path_/.lock for a fresh directory (fusion/leftovers.h)
  bool keep_ = false;
  bool fresh_ = false;    // a mkdtemp dir: everything in it is ours
  bool created_ = false;  // we made path_ (fresh or a missing MGB_JIT_WORKDIR)
  std::mutex mu_;
  std::set<std::string> files_, retained_;
  std::vector<std::string> dirs_;  // in creation order: parents before children
  bool include_written_ = false;
};

// Every MGB_JIT_* variable checked without creating anything, for a launcher to call before
// anything runs: MGB_JIT_KEEP_INTERM, MGB_JIT_BACKEND, and MGB_JIT_WORKDIR (an existing
// directory must pass Workdir::open's rules; a missing one must be creatable under its
// nearest existing ancestor). hf::Error naming the variable.
void check_jit_environment();

// MGB_JIT_BACKEND: "NVRTC", "CPU" (any case) or unset/empty; hf::Error for anything else.
std::optional<std::string> jit_backend_from_env();

}  // namespace hf::fusion
