#include "fusion/workdir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "fusion/embedded_headers.h"
#include "fusion/leftovers.h"
#include "runtime/io/secure_fs.h"
#include "runtime/ir/error.h"

namespace hf::fusion {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool keep_from_env() {
  std::string keep = env("MGB_JIT_KEEP_INTERM");
  if (keep != "" && keep != "0" && keep != "1")
    throw Error("MGB_JIT_KEEP_INTERM=" + keep + ": expected 1 (keep) or 0");
  return keep == "1";
}

}  // namespace

std::shared_ptr<Workdir> Workdir::from_env() {
  const bool keep = keep_from_env();
  std::string dir = env("MGB_JIT_WORKDIR");
  try {
    return open(dir.empty() ? std::nullopt : std::optional<std::filesystem::path>(dir), keep);
  } catch (const Error& e) {
    throw Error(dir.empty() ? std::string(e.what()) : "MGB_JIT_WORKDIR: " + std::string(e.what()));
  }
}

void check_jit_environment() {
  keep_from_env();
  jit_backend_from_env();
  const std::string dir = env("MGB_JIT_WORKDIR");
  if (dir.empty()) return;
  const std::filesystem::path path = std::filesystem::absolute(dir).lexically_normal();
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 || errno != ENOENT) {
    try {
      fsutil::check_private_dir(path, "JIT work directory");
    } catch (const Error& e) {
      throw Error("MGB_JIT_WORKDIR: " + std::string(e.what()));
    }
    return;
  }
  // Missing: Workdir::open creates it, so its nearest existing ancestor must be a directory.
  for (std::filesystem::path up = path.parent_path();; up = up.parent_path()) {
    if (::stat(up.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        throw Error("MGB_JIT_WORKDIR: cannot create JIT work directory " + path.string() + ": " +
                    up.string() + " is not a directory");
      return;
    }
    if (errno != ENOENT || up == up.parent_path())
      throw Error("MGB_JIT_WORKDIR: cannot create JIT work directory " + path.string() + ": " +
                  up.string() + ": " + fsutil::errno_text(errno));
  }
}

std::shared_ptr<Workdir> Workdir::open(const std::optional<std::filesystem::path>& dir, bool keep) {
  std::shared_ptr<Workdir> w(new Workdir());
  w->keep_ = keep;
  if (dir) {
    w->path_ = std::filesystem::absolute(*dir).lexically_normal();
    if (!w->path_.has_filename()) w->path_ = w->path_.parent_path();  // "dir/"
    w->created_ = fsutil::ensure_private_dir(w->path_, "JIT work directory");
  } else {
    std::string base = env("TMPDIR");
    if (base.empty()) base = "/tmp";
    remove_abandoned_workdirs(base);
    std::string templ = (std::filesystem::path(base) / "hotfuse-jit-XXXXXX").string();
    if (!::mkdtemp(templ.data()))
      throw Error("cannot create a JIT work directory under " + base + ": " +
                  fsutil::errno_text(errno));
    w->path_ = templ;
    w->fresh_ = w->created_ = true;
    fsutil::check_private_dir(w->path_, "JIT work directory");
  }
  fsutil::Fd fd = fsutil::open_dir_nofollow(w->path_);
  if (!fd.valid())
    throw Error("JIT work directory " + w->path_.string() + ": " + fsutil::errno_text(errno));
  w->fd_ = fd.release();
  if (w->fresh_ && !keep)
    w->lock_fd_ = lock_workdir(w->fd_);  // a kept directory has no lock: never "abandoned"
  else if (!w->fresh_)
    remove_dead_temporaries(w->fd_);  // a shared MGB_JIT_WORKDIR: killed runs' .so.tmp files
  return w;
}

Workdir::~Workdir() {
  if (!keep_) cleanup();
  if (lock_fd_ >= 0) ::close(lock_fd_);
  if (fd_ >= 0) ::close(fd_);
}

void Workdir::cleanup() noexcept {
  // A directory that stays (retained logs) must not look abandoned to the next run.
  if (lock_fd_ >= 0 && !(fresh_ && retained_.empty())) ::unlinkat(fd_, ".lock", 0);
  if (fresh_ && retained_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);  // does not follow symlinks inside
    return;
  }
  for (const std::string& f : files_) {
    if (retained_.count(f)) continue;
    try {
      std::vector<std::string> comps = fsutil::split_relative(f);
      std::string leaf = comps.back();
      comps.pop_back();
      fsutil::Fd dir = fsutil::open_subdir(fd_, comps, nullptr);
      if (dir.valid()) ::unlinkat(dir.get(), leaf.c_str(), 0);
    } catch (...) {
    }
  }
  // Children before parents; a directory that still holds something (a user's file, a
  // retained log) stays.
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it)
    ::unlinkat(fd_, it->c_str(), AT_REMOVEDIR);
  if (created_) ::rmdir(path_.c_str());
}

std::filesystem::path Workdir::write_file(const std::string& relative, std::string_view contents) {
  std::vector<std::string> comps = fsutil::split_relative(relative);
  std::string leaf = comps.back();
  comps.pop_back();
  std::lock_guard lock(mu_);
  std::vector<std::string> created;
  fsutil::Fd dir = fsutil::open_subdir(fd_, comps, &created);
  dirs_.insert(dirs_.end(), created.begin(), created.end());
  if (!dir.valid())
    throw Error("cannot write " + (path_ / relative).string() + ": " + fsutil::errno_text(errno) +
                (errno == ELOOP || errno == ENOTDIR ? " (a symlink or file is in the way)" : ""));
  std::string why = fsutil::write_atomic(dir.get(), leaf, contents, /*sync=*/false);
  if (!why.empty()) throw Error("cannot write " + (path_ / relative).string() + ": " + why);
  files_.insert(relative);
  return path_ / relative;
}

void Workdir::track(const std::string& relative) {
  fsutil::split_relative(relative);
  std::lock_guard lock(mu_);
  files_.insert(relative);
}

void Workdir::retain(const std::string& relative) {
  std::lock_guard lock(mu_);
  retained_.insert(relative);
}

std::filesystem::path Workdir::include_dir() {
  std::filesystem::path dir = path_ / "include";
  {
    std::lock_guard lock(mu_);
    if (include_written_) return dir;
  }
  // Written outside the lock (write_file takes it); two racing first calls write the same
  // bytes atomically, which is harmless.
  for (const EmbeddedHeader& h : embedded_headers())
    write_file("include/" + std::string(h.path), h.contents);
  std::lock_guard lock(mu_);
  include_written_ = true;
  return dir;
}

std::optional<std::string> jit_backend_from_env() {
  std::string v = env("MGB_JIT_BACKEND");
  if (v.empty()) return std::nullopt;
  std::string up = v;
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return std::toupper(c); });
  if (up == "NVRTC" || up == "CPU") return up;
  throw Error("MGB_JIT_BACKEND=" + v + ": expected NVRTC or CPU");
}

}  // namespace hf::fusion
