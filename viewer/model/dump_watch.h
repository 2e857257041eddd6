// Notices when a dump folder's files change (inotify, Linux's own API), so that the viewer
// reloads a dump that hotfuse-run rewrites while it is open. Never blocks: changed() only
// drains what the kernel queued. Where inotify is not available, nothing is noticed (F5
// still reloads).
#pragma once
#include <filesystem>

namespace hf::viewer {

class DumpWatch {
 public:
  DumpWatch() = default;
  ~DumpWatch();
  DumpWatch(const DumpWatch&) = delete;
  DumpWatch& operator=(const DumpWatch&) = delete;

  // Watches `dir` (a dump folder, or the folder of a file opened alone) and its kernels/
  // folder; stops watching what was watched before. false when it cannot.
  bool watch(const std::filesystem::path& dir);
  void stop();
  // Whether a file was written, created, moved in or deleted, or the folder itself deleted
  // or moved, since the last call.
  bool changed();
  bool active() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace hf::viewer
