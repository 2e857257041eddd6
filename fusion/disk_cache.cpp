#include "fusion/disk_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "fusion/sha256_util.h"
#include "runtime/io/secure_fs.h"
#include "runtime/ir/error.h"

#ifndef HF_VERSION
#define HF_VERSION "unknown"
#endif

namespace hf::fusion {

namespace {

constexpr char kMagic[8] = {'H', 'F', 'K', 'C', 'A', 'C', 'H', 'E'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 32;  // magic, version, key size, payload size, sha
constexpr const char* kSuffix = ".hfc";
constexpr const char* kTempPrefix = ".tmp-";
// A temp file this old belongs to a writer that died; younger ones may be in use.
constexpr time_t kStaleTempSeconds = 3600;

void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(char(v >> (8 * i)));
}
void put_u64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(char(v >> (8 * i)));
}
uint64_t get_le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(uint8_t(p[i])) << (8 * i);
  return v;
}

void check_key(const std::string& key) {
  bool ok = !key.empty() && key.size() <= 128;
  for (char c : key)
    ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                c == '_' || c == '-');
  if (!ok) throw Error("invalid kernel cache key '" + key + "'");
}

// The payload when `data` is a well-formed entry for `key`.
std::optional<std::string_view> parse(std::string_view data, const std::string& key) {
  if (data.size() < kHeaderSize || std::memcmp(data.data(), kMagic, 8) != 0) return std::nullopt;
  if (get_le(data.data() + 8, 4) != kFormatVersion) return std::nullopt;
  uint64_t key_size = get_le(data.data() + 12, 4);
  uint64_t payload_size = get_le(data.data() + 16, 8);
  // Exact size: catches truncation and trailing garbage before any hashing.
  if (key_size != key.size() || payload_size != data.size() - kHeaderSize - key_size)
    return std::nullopt;
  if (data.substr(kHeaderSize, key_size) != key) return std::nullopt;
  std::string_view payload = data.substr(kHeaderSize + key_size);
  auto digest = sha256(payload);
  if (std::memcmp(digest.data(), data.data() + 24, 32) != 0) return std::nullopt;
  return payload;
}

void remove_stale_temps(int dir_fd) {
  int fd = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return;
  }
  time_t now = std::time(nullptr);
  while (dirent* e = ::readdir(d)) {
    if (std::strncmp(e->d_name, kTempPrefix, std::strlen(kTempPrefix)) != 0) continue;
    struct stat st;
    if (::fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        now - st.st_mtime > kStaleTempSeconds)
      ::unlinkat(dir_fd, e->d_name, 0);
  }
  ::closedir(d);
}

}  // namespace

std::optional<std::filesystem::path> DiskCache::default_dir() {
  auto env = [](const char* n) -> std::string {
    const char* v = std::getenv(n);
    return v ? v : "";
  };
  std::string dir = env("HOTFUSE_CACHE_DIR");
  if (dir == "off") return std::nullopt;
  if (!dir.empty()) return std::filesystem::path(dir);
  // XDG Base Directory: a relative XDG_CACHE_HOME is invalid and must be ignored.
  std::string xdg = env("XDG_CACHE_HOME");
  if (!xdg.empty() && xdg[0] == '/') return std::filesystem::path(xdg) / "hotfuse";
  std::string home = env("HOME");
  if (!home.empty()) return std::filesystem::path(home) / ".cache" / "hotfuse";
  return std::nullopt;
}

DiskCache::DiskCache(const std::filesystem::path& dir) : dir_(dir) {
  fsutil::ensure_private_dir(dir_, "kernel cache directory");
  fsutil::Fd fd = fsutil::open_dir_nofollow(dir_);
  if (!fd.valid())
    throw Error("kernel cache directory " + dir_.string() + ": " + fsutil::errno_text(errno));
  // The path was checked before it was opened: check what we actually hold.
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
    throw Error("kernel cache directory " + dir_.string() + ": changed while being opened");
  fd_ = fd.release();
  remove_stale_temps(fd_);
}

DiskCache::~DiskCache() {
  if (fd_ >= 0) ::close(fd_);
}

std::filesystem::path DiskCache::entry_path(const std::string& key) const {
  return dir_ / (key + kSuffix);
}

std::optional<std::string> DiskCache::get(const std::string& key) {
  check_key(key);
  std::string leaf = key + kSuffix;
  fsutil::Fd fd(::openat(fd_, leaf.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  struct stat st {};
  bool bad = false;
  std::string data;
  if (!fd.valid()) {
    if (errno == ENOENT) return std::nullopt;
    bad = errno == ELOOP;           // a symlink where an entry belongs: never followed
    if (!bad) return std::nullopt;  // EACCES, EIO...: a miss, not grounds to delete
  } else {
    bad = ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
          !fsutil::read_all(fd.get(), data);
  }
  std::optional<std::string_view> payload;
  if (!bad) payload = parse(data, key);
  if (payload) return std::string(*payload);
  // Delete only the file we judged: a writer may have renamed a good entry over it since.
  struct stat now;
  if (::fstatat(fd_, leaf.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
      (!fd.valid() ? S_ISLNK(now.st_mode) : now.st_ino == st.st_ino && now.st_dev == st.st_dev))
    ::unlinkat(fd_, leaf.c_str(), 0);
  corrupt_.fetch_add(1);
  return std::nullopt;
}

bool DiskCache::put(const std::string& key, std::string_view payload) {
  check_key(key);
  std::string entry(kMagic, 8);
  entry.reserve(kHeaderSize + key.size() + payload.size());
  put_u32(entry, kFormatVersion);
  put_u32(entry, uint32_t(key.size()));
  put_u64(entry, payload.size());
  auto digest = sha256(payload);
  entry.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  entry += key;
  entry.append(payload);
  return fsutil::write_atomic(fd_, key + kSuffix, entry, /*sync=*/true).empty();
}

namespace {
template <class Parts>
std::string key_of(const Parts& parts) {
  Sha256 h;
  auto add = [&h](std::string_view p) {
    std::string len;
    put_u64(len, p.size());
    h.update(len);
    h.update(p);
  };
  // hotfuse's version and the entry format first: an upgrade never loads an older build's
  // code, whatever the caller put in the key.
  add(HF_VERSION);
  add("hfc1");
  for (std::string_view p : parts) add(p);
  auto d = h.finish();
  return to_hex(d.data(), d.size());
}
}  // namespace

std::string DiskCache::make_key(std::initializer_list<std::string_view> parts) {
  return key_of(parts);
}

std::string DiskCache::make_key(std::span<const std::string> parts) {
  return key_of(parts);
}

}  // namespace hf::fusion
