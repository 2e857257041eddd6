#include "fusion/leftovers.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "runtime/io/secure_fs.h"

namespace hf::fusion {

namespace {

constexpr const char* kLock = ".lock";
// Longer than the compiler's own timeout (host_compiler.cpp), so a temporary a slow
// compile is still writing is never taken for a dead one.
constexpr time_t kTemporaryAge = 10 * 60;

std::vector<std::string> entries(int dir_fd) {
  std::vector<std::string> names;
  int fd = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return names;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return names;
  }
  while (dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
  ::closedir(d);
  return names;
}

}  // namespace

int lock_workdir(int dir_fd) {
  // Locked under a private name, then renamed: a run cleaning up never sees an unlocked
  // .lock of a live directory.
  std::string tmp = fsutil::unique_temp_name(".lock.tmp-");
  int fd = ::openat(dir_fd, tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || ::renameat(dir_fd, tmp.c_str(), dir_fd, kLock) != 0) {
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    ::close(fd);
    return -1;
  }
  return fd;
}

void remove_abandoned_workdirs(const std::filesystem::path& base) noexcept {
  try {
    fsutil::Fd base_fd = fsutil::open_dir_nofollow(base);
    if (!base_fd.valid()) return;
    for (const std::string& name : entries(base_fd.get())) {
      if (name.rfind("hotfuse-jit-", 0) != 0) continue;
      struct stat st;
      if (::fstatat(base_fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
          !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
        continue;
      fsutil::Fd dir = fsutil::open_dir_nofollow(base / name);
      if (!dir.valid()) continue;
      int lock = ::openat(dir.get(), kLock, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
      if (lock < 0) continue;
      bool abandoned = ::flock(lock, LOCK_EX | LOCK_NB) == 0;
      ::close(lock);
      if (!abandoned) continue;
      std::error_code ec;
      std::filesystem::remove_all(base / name, ec);  // does not follow symlinks inside
    }
  } catch (...) {
  }
}

void remove_dead_temporaries(int dir_fd) noexcept {
  try {
    const time_t now = std::time(nullptr);
    for (const std::string& name : entries(dir_fd)) {
      size_t at = name.find(".tmp-");
      if (name.empty() || name[0] != '.' || at == std::string::npos) continue;
      char* end = nullptr;
      long pid = std::strtol(name.c_str() + at + 5, &end, 10);
      if (pid <= 0 || !end || *end != '-') continue;
      struct stat st;
      if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
          st.st_uid != ::geteuid() || now - st.st_mtime < kTemporaryAge)
        continue;
      if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or unknown
      ::unlinkat(dir_fd, name.c_str(), 0);
    }
  } catch (...) {
  }
}

}  // namespace hf::fusion
