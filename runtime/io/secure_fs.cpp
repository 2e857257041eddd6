#include "runtime/io/secure_fs.h"

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

namespace hf::fsutil {

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

namespace {

// Writes all of `contents`; false (errno set) on failure.
bool write_all(int fd, std::string_view contents) {
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;
    if (n <= 0) return false;
    p += n;
    left -= size_t(n);
  }
  return true;
}

}  // namespace

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

std::vector<std::string> split_relative(std::string_view relative, std::string_view where) {
  auto fail = [&](const char* why) {
    throw Error("invalid path '" + std::string(relative) + "' in " + std::string(where) + ": " +
                why);
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
               std::vector<std::string>* created, mode_t mode) {
  Fd cur(::fcntl(root_fd, F_DUPFD_CLOEXEC, 0));
  std::string rel;
  for (const std::string& c : comps) {
    if (!cur.valid()) return Fd();
    rel += rel.empty() ? c : "/" + c;
    if (created) {
      if (::mkdirat(cur.get(), c.c_str(), mode) == 0)
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

std::string write_atomic(int dir_fd, const std::string& leaf, std::string_view contents, bool sync,
                         mode_t mode, std::string_view temp_prefix) {
  std::string tmp;
  Fd fd;
  for (int attempt = 0; attempt < 100 && !fd.valid(); ++attempt) {
    tmp = unique_temp_name(temp_prefix);
    fd = Fd(
        ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!fd.valid() && errno != EEXIST) return "cannot create a temp file: " + errno_text(errno);
  }
  if (!fd.valid()) return "cannot create a temp file: name collisions";
  auto fail = [&](const char* what) {
    std::string why = std::string(what) + ": " + errno_text(errno);
    fd = Fd();
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    return why;
  };
  if (!write_all(fd.get(), contents)) return fail("write failed");
  // Without the fsync a crash after the rename could leave the new name with no data.
  if (sync && ::fsync(fd.get()) != 0) return fail("fsync failed");
  if (::close(fd.release()) != 0) return fail("close failed");
  if (::renameat(dir_fd, tmp.c_str(), dir_fd, leaf.c_str()) != 0) return fail("rename failed");
  return "";
}

std::string create_exclusive(int dir_fd, const std::string& leaf, std::string_view contents,
                             mode_t mode) {
  Fd fd(::openat(dir_fd, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd.valid()) return "cannot create the file: " + errno_text(errno);
  bool ok = write_all(fd.get(), contents);
  int err = errno;
  ok = ::close(fd.release()) == 0 && ok;
  if (ok) return "";
  if (err == 0) err = errno;
  ::unlinkat(dir_fd, leaf.c_str(), 0);
  return "write failed: " + errno_text(err);
}

namespace {

std::filesystem::path directory_of(const std::filesystem::path& file) {
  std::filesystem::path dir = file.parent_path();
  return dir.empty() ? std::filesystem::path(".") : dir;
}

}  // namespace

void check_output_file(const std::filesystem::path& file, std::string_view what) {
  auto fail = [&](const std::string& why) {
    throw Error(std::string(what) + " " + file.string() + ": " + why);
  };
  if (!file.has_filename()) fail("not a file name");
  const std::filesystem::path dir = directory_of(file);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) fail("directory " + dir.string() + ": " + errno_text(errno));
  if (!S_ISDIR(st.st_mode)) fail(dir.string() + " is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    fail("cannot write in directory " + dir.string() + ": " + errno_text(errno));
  if (::lstat(file.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      fail(
          "is a symbolic link, which hotfuse does not write through (remove it or name "
          "another file)");
    if (S_ISDIR(st.st_mode)) fail("is a directory");
    if (!S_ISREG(st.st_mode)) fail("exists and is not a regular file");
  } else if (errno != ENOENT) {
    fail(errno_text(errno));
  }
}

void write_output_file(const std::filesystem::path& file, std::string_view contents,
                       std::string_view what, mode_t mode) {
  auto fail = [&](const std::string& why) {
    throw Error(std::string(what) + " " + file.string() + ": " + why);
  };
  if (!file.has_filename()) fail("not a file name");
  const std::filesystem::path dir = directory_of(file);
  Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!d.valid()) fail("directory " + dir.string() + ": " + errno_text(errno));
  const std::string leaf = file.filename().string();
  std::string why =
      write_atomic(d.get(), leaf, contents, /*sync=*/true, mode, "." + leaf + ".tmp-");
  if (!why.empty()) fail(why);
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

}  // namespace hf::fsutil
