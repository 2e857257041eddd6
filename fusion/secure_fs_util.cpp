#include "fusion/secure_fs_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <system_error>

#include "runtime/ir/error.h"

namespace hf::fusion::fsutil {

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

void check_private_dir(const std::filesystem::path& dir, std::string_view what) {
  auto fail = [&](const std::string& why) {
    throw Error(std::string(what) + " " + dir.string() + ": " + why);
  };
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) fail(errno_text(errno));
  if (S_ISLNK(st.st_mode)) fail("is a symlink; give the real directory");
  if (!S_ISDIR(st.st_mode)) fail("not a directory");
  if (st.st_uid != ::geteuid())
    fail("owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
         std::to_string(::geteuid()) + ")");
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    fail(std::string("writable by group or others (mode ") + mode +
         "); code in it would be loaded, so it must be private (chmod 700)");
  }
}

bool ensure_private_dir(const std::filesystem::path& dir, std::string_view what) {
  bool created = false;
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT)
      throw Error(std::string(what) + " " + dir.string() + ": " + errno_text(errno));
    std::error_code ec;
    if (dir.has_parent_path()) std::filesystem::create_directories(dir.parent_path(), ec);
    if (::mkdir(dir.c_str(), 0700) == 0) {
      created = true;
      // mkdir's mode is masked by the umask; a strange umask must not leave it unusable.
      ::chmod(dir.c_str(), 0700);
    } else if (errno != EEXIST) {  // EEXIST: another process made it first
      throw Error(std::string("cannot create ") + std::string(what) + " " + dir.string() + ": " +
                  errno_text(errno));
    }
  }
  check_private_dir(dir, what);
  return created;
}

Fd open_dir_nofollow(const std::filesystem::path& dir) {
  return Fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

std::vector<std::string> split_relative(std::string_view relative) {
  auto fail = [&](const char* why) {
    throw Error("invalid path '" + std::string(relative) + "' in the JIT work directory: " + why);
  };
  if (relative.empty()) fail("empty");
  if (relative.front() == '/') fail("absolute");
  std::vector<std::string> comps;
  size_t start = 0;
  while (start <= relative.size()) {
    size_t end = relative.find('/', start);
    if (end == std::string_view::npos) end = relative.size();
    std::string_view c = relative.substr(start, end - start);
    if (c.empty() || c == "." || c == "..") fail("empty, '.' or '..' component");
    if (c.find('\0') != std::string_view::npos) fail("NUL byte");
    comps.emplace_back(c);
    start = end + 1;
  }
  return comps;
}

Fd open_subdir(int root_fd, const std::vector<std::string>& comps,
               std::vector<std::string>* created) {
  Fd cur(::fcntl(root_fd, F_DUPFD_CLOEXEC, 0));
  std::string rel;
  for (const std::string& c : comps) {
    if (!cur.valid()) return Fd();
    rel += rel.empty() ? c : "/" + c;
    if (created) {
      if (::mkdirat(cur.get(), c.c_str(), 0700) == 0)
        created->push_back(rel);
      else if (errno != EEXIST)
        return Fd();
    }
    // O_NOFOLLOW|O_DIRECTORY: a planted symlink, or a file, fails here instead of leading
    // us outside the root.
    cur = Fd(::openat(cur.get(), c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  return cur;
}

std::string unique_temp_name(std::string_view prefix) {
  static std::atomic<unsigned long> counter{0};
  thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[80];
  std::snprintf(buf, sizeof buf, "%ld-%lu-%016llx", long(::getpid()), counter.fetch_add(1),
                (unsigned long long)rng());
  return std::string(prefix) + buf;
}

std::string write_atomic(int dir_fd, const std::string& leaf, std::string_view contents,
                         bool sync) {
  std::string tmp;
  Fd fd;
  for (int attempt = 0; attempt < 100 && !fd.valid(); ++attempt) {
    tmp = unique_temp_name(".tmp-");
    fd = Fd(
        ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid() && errno != EEXIST) return "cannot create a temp file: " + errno_text(errno);
  }
  if (!fd.valid()) return "cannot create a temp file: name collisions";
  auto fail = [&](const char* what) {
    std::string why = std::string(what) + ": " + errno_text(errno);
    fd = Fd();
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    return why;
  };
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd.get(), p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("write failed");
    p += n;
    left -= size_t(n);
  }
  // Without the fsync a crash after the rename could leave the new name with no data.
  if (sync && ::fsync(fd.get()) != 0) return fail("fsync failed");
  if (::close(fd.release()) != 0) return fail("close failed");
  if (::renameat(dir_fd, tmp.c_str(), dir_fd, leaf.c_str()) != 0) return fail("rename failed");
  return "";
}

bool read_all(int fd, std::string& out) {
  out.clear();
  struct stat st;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(size_t(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buf, size_t(n));
  }
}

}  // namespace hf::fusion::fsutil
