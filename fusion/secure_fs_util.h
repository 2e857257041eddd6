// File-system primitives for the JIT work directory and the kernel cache, private to
// fusion/. Both hold code that gets compiled and loaded, so every path below a trusted
// root is opened component by component without following symlinks (openat + O_NOFOLLOW),
// files are created 0600 and replaced atomically (temp file + rename), and a root must be
// a real directory owned by us that nobody else can write.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hf::fusion::fsutil {

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

// The components of a relative path; hf::Error for an empty or absolute path or one with
// an empty, "." or ".." component.
std::vector<std::string> split_relative(std::string_view relative);

// Opens root/comps[0]/.../comps[n-1] component by component, never following a symlink.
// With `created`, missing directories are made (0700) and their relative paths appended.
// Returns an invalid Fd and sets errno on failure.
Fd open_subdir(int root_fd, const std::vector<std::string>& comps,
               std::vector<std::string>* created);

// Replaces dir_fd/leaf by `contents` atomically: a fresh 0600 temp file in the same
// directory (O_EXCL, O_NOFOLLOW), optionally fsync'ed, then renamed over `leaf`. Readers see
// the old file or the new one, never a torn one, and a process that has the old file
// mapped (dlopen) keeps its copy. Returns "" on success, else why it failed.
std::string write_atomic(int dir_fd, const std::string& leaf, std::string_view contents, bool sync);

// Reads a whole file from `fd`. False on a read error.
bool read_all(int fd, std::string& out);

// A name for a temp file that no other process or thread picks: prefix + pid + counter +
// random bits (callers still create it with O_EXCL).
std::string unique_temp_name(std::string_view prefix);

}  // namespace hf::fusion::fsutil
