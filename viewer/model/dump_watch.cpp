#include "viewer/model/dump_watch.h"

#if defined(__linux__)
#include <sys/inotify.h>
#include <unistd.h>
#endif

namespace hf::viewer {

DumpWatch::~DumpWatch() {
  stop();
}

void DumpWatch::stop() {
#if defined(__linux__)
  if (fd_ >= 0) ::close(fd_);
#endif
  fd_ = -1;
}

bool DumpWatch::watch(const std::filesystem::path& dir) {
  stop();
#if defined(__linux__)
  fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) return false;
  // CLOSE_WRITE rather than MODIFY: a file is looked at once it is complete. The folder
  // itself deleted or moved away (rm -rf DIR before a new dump) is a change too.
  const uint32_t mask = IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM |
                        IN_DELETE_SELF | IN_MOVE_SELF;
  if (inotify_add_watch(fd_, dir.c_str(), mask) < 0) {
    stop();
    return false;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(dir / "kernels", ec))
    inotify_add_watch(fd_, (dir / "kernels").c_str(), mask);
  return true;
#else
  (void)dir;
  return false;
#endif
}

bool DumpWatch::changed() {
#if defined(__linux__)
  if (fd_ < 0) return false;
  bool any = false;
  alignas(inotify_event) char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n <= 0) break;  // EAGAIN: drained
    any = true;
  }
  return any;
#else
  return false;
#endif
}

}  // namespace hf::viewer
