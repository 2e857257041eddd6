// The on-disk kernel cache: compiled code (PTX, CUBIN, shared objects) under content
// addresses, shared by processes and runs, so a second run of a graph compiles nothing.
//
// An entry is one file <dir>/<key>.hfc: a header {magic, format version, key, payload
// size, SHA-256 of the payload} and the payload. Writes go to a private temp file that is
// fsync'ed and renamed over the entry, so a reader never sees a torn file and concurrent
// writers of one key are safe. get() verifies the header and checksum before returning a
// byte and discards a bad entry. The directory must be ours and private (the cache holds
// code that gets loaded); entries are opened without following symlinks. docs/jit.md.
#pragma once
#include <atomic>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace hf::fusion {

class DiskCache {
 public:
  // $HOTFUSE_CACHE_DIR, else $XDG_CACHE_HOME/hotfuse, else $HOME/.cache/hotfuse; nullopt
  // when HOTFUSE_CACHE_DIR=off or no variable gives a directory.
  static std::optional<std::filesystem::path> default_dir();

  // Creates `dir` (0700) when missing. hf::Error naming it when it is a symlink, not a
  // directory, not owned by this user, or writable by group or others.
  explicit DiskCache(const std::filesystem::path& dir);
  ~DiskCache();
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  // Keys are 1-128 of [A-Za-z0-9_-] (make_key's digests are); hf::Error for another.
  //
  // The payload, or nullopt when absent or bad (truncated, corrupt, a symlink, another
  // key's entry); a bad entry is deleted and counted. Thread-safe.
  std::optional<std::string> get(const std::string& key);
  // False (and nothing visible under `key`) when the write fails: disk full, read-only,
  // directory gone. The caller continues without the cache. Thread-safe.
  bool put(const std::string& key, std::string_view payload);

  // SHA-256 of the parts, each prefixed by its length (so {"ab","c"} != {"a","bc"}), as 64
  // hex digits. hotfuse's version (HF_VERSION) is always hashed in too. Build keys from
  // everything else the payload depends on: source, target, arch, compiler identity and
  // version, flags.
  static std::string make_key(std::initializer_list<std::string_view> parts);
  // The same, for parts only known at run time (KernelCache: a toolchain's key_parts()).
  static std::string make_key(std::span<const std::string> parts);

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path entry_path(const std::string& key) const;
  size_t corrupt_discarded() const { return corrupt_.load(); }

 private:
  std::filesystem::path dir_;
  int fd_ = -1;  // dir_, held open so a later swap of the path cannot redirect us
  std::atomic<size_t> corrupt_{0};
};

}  // namespace hf::fusion
