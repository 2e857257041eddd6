// The one secure-file layer: every file hotfuse writes or reads back from a directory
// someone else might also write to goes through it (the JIT work directory, the kernel
// cache and the machine probe's entry in it, --report, --dump, --save-outputs). The rules,
// and the test behind each: docs/security.md.
//
//  - Below a root we hold open, paths are opened component by component without following
//    symlinks (openat + O_NOFOLLOW); ".." and absolute paths are refused.
//  - A file is written to a fresh temp file in its own directory (O_EXCL | O_NOFOLLOW) and
//    renamed over its name: readers see the old file or the new one, never a torn one, and
//    a symlink planted at the name is replaced, never written through.
//  - A file read back must be a regular file owned by us, opened with O_NOFOLLOW and
//    O_NONBLOCK (a FIFO planted at its name cannot hang the open).
//  - A directory that holds code (the cache, the work directory) must be a real directory
//    owned by us that nobody else can write; missing ones are created 0700.
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hf::fsutil {

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_ = -1;
};

std::string errno_text(int err);

// hf::Error "<what> <dir>: <reason>" unless `dir` is a directory (not a symlink), owned by
// the effective user, and not writable by group or others.
void check_private_dir(const std::filesystem::path& dir, std::string_view what);

// Creates `dir` with mode 0700 when missing (its missing parents with the default mode),
// then check_private_dir. Returns true when this call created `dir`.
bool ensure_private_dir(const std::filesystem::path& dir, std::string_view what);

// Opens a directory without following a symlink in its last component.
Fd open_dir_nofollow(const std::filesystem::path& dir);

// The components of a relative path; hf::Error "invalid path '<relative>' in <where>: ..."
// for an empty or absolute path or one with an empty, "." or ".." component.
std::vector<std::string> split_relative(std::string_view relative,
                                        std::string_view where = "the JIT work directory");

// Opens root/comps[0]/.../comps[n-1] component by component, never following a symlink.
// With `created`, missing directories are made (`mode`, 0700 by default) and their relative
// paths appended. Returns an invalid Fd and sets errno on failure.
Fd open_subdir(int root_fd, const std::vector<std::string>& comps,
               std::vector<std::string>* created, mode_t mode = 0700);

// Replaces dir_fd/leaf by `contents` atomically: a fresh temp file (`temp_prefix` + a
// unique suffix, `mode` before the umask: 0600 by default) in the same directory (O_EXCL,
// O_NOFOLLOW), optionally fsync'ed, then renamed over `leaf`. Readers see the old file or
// the new one, never a torn one; a symlink at `leaf` is replaced, not followed; a process
// that has the old file mapped (dlopen) keeps its copy. Returns "" on success, else why it
// failed (the temp file is removed).
std::string write_atomic(int dir_fd, const std::string& leaf, std::string_view contents, bool sync,
                         mode_t mode = 0600, std::string_view temp_prefix = ".tmp-");

// Creates dir_fd/leaf exclusively (O_EXCL | O_NOFOLLOW: an existing file or symlink is never
// replaced; errno EEXIST) and writes `contents`; a failed write removes it. "" on success.
std::string create_exclusive(int dir_fd, const std::string& leaf, std::string_view contents,
                             mode_t mode);

// A file named by the user (--report FILE), checked before anything runs: hf::Error
// "<what> <file>: ..." unless its directory exists and is a writable directory and the file
// is absent or a regular file. A symlink at `file` is refused: hotfuse never writes
// through one, and in a shared directory it may be someone else's.
void check_output_file(const std::filesystem::path& file, std::string_view what);

// Writes a user-named file atomically (write_atomic in its directory, fsync'ed; `mode`
// before the umask). hf::Error "<what> <file>: ..." on failure; nothing is left behind.
void write_output_file(const std::filesystem::path& file, std::string_view contents,
                       std::string_view what, mode_t mode = 0644);

// Reads a whole file from `fd`. False on a read error.
bool read_all(int fd, std::string& out);

// A name for a temp file that no other process or thread picks: prefix + pid + counter +
// random bits (callers still create it with O_EXCL).
std::string unique_temp_name(std::string_view prefix);

}  // namespace hf::fsutil
