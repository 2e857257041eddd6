// fusion/disk_cache: round trips across instances (a second process), corrupt and
// truncated entries discarded, the private-directory and symlink rules, concurrent
// writers in separate processes, and writes that fail without being fatal. Every test
// uses its own temp directory, never the user's cache.
#include "fusion/disk_cache.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "fusion/sha256_util.h"
#include "runtime/ir/error.h"
#include "tests/support/scoped_env.h"
#include "tests/support/temp_dir.h"

namespace hf::fusion {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& data) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << data;
}

class DiskCacheTest : public ::testing::Test {
 protected:
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, ec);
  }
  TempDir tmp_{"hf-test-cache"};
  fs::path scratch_ = tmp_.root, dir_ = scratch_ / "cache";
};

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  std::string million(1000000, 'a');
  EXPECT_EQ(sha256_hex(million),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Incremental updates of odd sizes agree with one shot.
  Sha256 h;
  for (size_t i = 0; i < million.size(); i += 997)
    h.update(std::string_view(million).substr(i, 997));
  auto d = h.finish();
  EXPECT_EQ(to_hex(d.data(), d.size()), sha256_hex(million));
}

TEST(DiskCacheKey, IsAnUnambiguousDigest) {
  std::string k = DiskCache::make_key({"source", "cpu", "x86-64", "g++ 12", "-O3", "0.1.0"});
  EXPECT_EQ(k.size(), 64u);
  EXPECT_EQ(k.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(k, DiskCache::make_key({"source", "cpu", "x86-64", "g++ 12", "-O3", "0.1.0"}));
  EXPECT_NE(DiskCache::make_key({"ab", "c"}), DiskCache::make_key({"a", "bc"}));
  EXPECT_NE(DiskCache::make_key({"a", ""}), DiskCache::make_key({"a"}));
  EXPECT_NE(DiskCache::make_key({"sm_80"}), DiskCache::make_key({"sm_90"}));
}

TEST_F(DiskCacheTest, RoundTripAcrossInstances) {
  std::string binary("\0\x01\xff payload\n", 12);
  std::string big(3 << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 4096) big[i] = char(i / 4096);
  std::string k1 = DiskCache::make_key({"one"}), k2 = DiskCache::make_key({"two"}),
              k3 = DiskCache::make_key({"three"});
  {
    DiskCache c(dir_);
    struct stat st;
    ASSERT_EQ(::lstat(dir_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_EQ(c.get(k1), std::nullopt);
    ASSERT_TRUE(c.put(k1, binary));
    ASSERT_TRUE(c.put(k2, big));
    ASSERT_TRUE(c.put(k3, ""));
    EXPECT_EQ(c.get(k1), binary);
    ASSERT_EQ(::lstat(c.entry_path(k1).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
  DiskCache again(dir_);  // what a second process sees
  EXPECT_EQ(again.get(k1), binary);
  EXPECT_EQ(again.get(k2), big);
  EXPECT_EQ(again.get(k3), "");
  ASSERT_TRUE(again.put(k1, "replaced"));
  EXPECT_EQ(again.get(k1), "replaced");
  EXPECT_EQ(again.corrupt_discarded(), 0u);
  // Only entries: no temp files left behind.
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().extension(), ".hfc") << e.path();
  EXPECT_THROW(again.get("../etc/passwd"), Error);
  EXPECT_THROW(again.put("", "x"), Error);
}

TEST_F(DiskCacheTest, TruncatedAndCorruptEntriesAreDiscardedAndRebuilt) {
  DiskCache c(dir_);
  std::string payload = "PTX or ELF bytes, long enough to flip a bit in the middle";
  std::string k = DiskCache::make_key({"k"});
  fs::path file = c.entry_path(k);
  ASSERT_TRUE(c.put(k, payload));
  const std::string good = read(file);

  auto check_discarded = [&](const std::string& damaged, size_t expected_count, const char* what) {
    write(file, damaged);
    EXPECT_EQ(c.get(k), std::nullopt) << what;
    EXPECT_EQ(c.corrupt_discarded(), expected_count) << what;
    EXPECT_FALSE(fs::exists(file)) << what;
    ASSERT_TRUE(c.put(k, payload));  // rebuilt
    EXPECT_EQ(c.get(k), payload) << what;
  };
  check_discarded(good.substr(0, good.size() - 1), 1, "truncated by one byte");
  check_discarded(good.substr(0, 20), 2, "truncated in the header");
  check_discarded("", 3, "empty");
  std::string flipped = good;
  flipped[flipped.size() - 10] ^= 0x04;
  check_discarded(flipped, 4, "bit flip in the payload");
  flipped = good;
  flipped[30] ^= 0x01;
  check_discarded(flipped, 5, "bit flip in the checksum");
  flipped = good;
  flipped[0] = 'X';
  check_discarded(flipped, 6, "bad magic");
  check_discarded(good + "trailing", 7, "trailing garbage");
  // A valid entry of another key, copied under this key's name.
  std::string other = DiskCache::make_key({"other"});
  ASSERT_TRUE(c.put(other, payload));
  check_discarded(read(c.entry_path(other)), 8, "another key's entry");
}

TEST_F(DiskCacheTest, RefusesSharedSymlinkedOrForeignDirectories) {
  fs::create_directory(dir_);
  auto expect_refused = [&](const fs::path& dir, const std::string& why) {
    try {
      DiskCache c(dir);
      ADD_FAILURE() << "accepted " << dir << " (" << why << ")";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(dir.string()), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  for (unsigned mode : {0777u, 0775u, 0757u, 01777u}) {
    ASSERT_EQ(::chmod(dir_.c_str(), mode), 0);
    expect_refused(dir_, "writable by group or others");
  }
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  EXPECT_NO_THROW(DiskCache c(dir_));
  fs::create_directory_symlink(dir_, scratch_ / "link");
  expect_refused(scratch_ / "link", "symlink");
  write(scratch_ / "file", "");
  expect_refused(scratch_ / "file", "not a directory");
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(dir_.c_str(), 12345, -1), 0);
    expect_refused(dir_, "owned by uid 12345");
  }
}

TEST_F(DiskCacheTest, SymlinkedEntryIsNotFollowed) {
  DiskCache c(dir_);
  std::string k = DiskCache::make_key({"k"}), planted = DiskCache::make_key({"planted"});
  ASSERT_TRUE(c.put(planted, "attacker code"));
  // A well-formed entry for `k` outside the cache, linked in under k's name.
  fs::path outside = scratch_ / "evil.hfc";
  {
    DiskCache elsewhere(scratch_ / "elsewhere");
    ASSERT_TRUE(elsewhere.put(k, "attacker code"));
    fs::copy_file(elsewhere.entry_path(k), outside);
  }
  fs::create_symlink(outside, c.entry_path(k));
  EXPECT_EQ(c.get(k), std::nullopt);
  EXPECT_EQ(c.corrupt_discarded(), 1u);
  EXPECT_FALSE(fs::is_symlink(c.entry_path(k)));  // the link is gone
  EXPECT_TRUE(fs::exists(outside));               // its target is untouched
  // put() replaces a planted link instead of writing through it.
  fs::create_symlink(outside, c.entry_path(k));
  const std::string before = read(outside);
  ASSERT_TRUE(c.put(k, "ours"));
  EXPECT_EQ(read(outside), before);
  EXPECT_EQ(c.get(k), "ours");
}

TEST_F(DiskCacheTest, ConcurrentWritersInSeparateProcesses) {
  DiskCache parent(dir_);
  const std::string shared = DiskCache::make_key({"shared"});
  constexpr int kChildren = 8, kRounds = 150;
  auto payload_of = [](int child) { return std::string(1000 + 37 * child, char('a' + child)); };
  std::vector<pid_t> pids;
  for (int child = 0; child < kChildren; ++child) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // A separate DiskCache, as in a separate program run.
      int bad = 0;
      try {
        DiskCache c(dir_);
        for (int i = 0; i < kRounds; ++i) {
          bad += !c.put(shared, payload_of(child));
          bad += !c.put(DiskCache::make_key({"own", std::to_string(child), std::to_string(i % 10)}),
                        payload_of(child) + std::to_string(i));
          std::optional<std::string> seen = c.get(shared);
          // Always some writer's whole payload, never a mix or a torn file.
          bool whole = false;
          for (int w = 0; w < kChildren; ++w) whole |= seen == payload_of(w);
          bad += !whole;
        }
        bad += int(c.corrupt_discarded());
      } catch (...) {
        bad += 1000;
      }
      ::_exit(bad > 255 ? 255 : bad);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "child failed " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1) << " checks";
  }
  std::optional<std::string> final_shared = parent.get(shared);
  ASSERT_TRUE(final_shared);
  bool whole = false;
  for (int w = 0; w < kChildren; ++w) whole |= final_shared == payload_of(w);
  EXPECT_TRUE(whole);
  for (int child = 0; child < kChildren; ++child)
    for (int j = 0; j < 10; ++j) {
      auto v = parent.get(DiskCache::make_key({"own", std::to_string(child), std::to_string(j)}));
      ASSERT_TRUE(v) << child << " " << j;
      EXPECT_EQ(v->rfind(payload_of(child), 0), 0u);
    }
  EXPECT_EQ(parent.corrupt_discarded(), 0u);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().extension(), ".hfc") << "left behind: " << e.path();
    ++files;
  }
  EXPECT_EQ(files, 1u + kChildren * 10);
}

TEST_F(DiskCacheTest, WriteIntoAVanishedDirectoryFails) {
  std::string k = DiskCache::make_key({"k"});
  DiskCache c(dir_);
  fs::remove_all(dir_);
  EXPECT_FALSE(c.put(k, "x"));
  EXPECT_EQ(c.get(k), std::nullopt);
}

// A full disk, simulated with a file size limit (which binds root too), in a child so the
// limit does not outlive the test.
TEST_F(DiskCacheTest, WriteOnAFullDiskFailsAndLeavesNothing) {
  std::string k = DiskCache::make_key({"k"});
  DiskCache c(dir_);
  ASSERT_TRUE(c.put(k, "old"));
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG instead of killing us
    rlimit lim{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    bool stored = c.put(k, std::string(100000, 'n'));
    ::_exit(stored ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "put() claimed success";
  EXPECT_EQ(c.get(k), "old");  // the old entry is intact
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().extension(), ".hfc") << "left behind: " << e.path();
}

TEST_F(DiskCacheTest, WriteIntoAReadOnlyDirectoryFails) {
  DiskCache c(dir_);
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into a read-only directory anyway";
  ASSERT_EQ(::chmod(dir_.c_str(), 0500), 0);
  std::string k = DiskCache::make_key({"k"});
  EXPECT_FALSE(c.put(k, "x"));
  EXPECT_EQ(c.get(k), std::nullopt);
}

TEST(DiskCacheDefaultDir, FromEnvironment) {
  ScopedEnv none("HOTFUSE_CACHE_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    EXPECT_EQ(DiskCache::default_dir(), fs::path("/x/cache/hotfuse"));
    ScopedEnv dir("HOTFUSE_CACHE_DIR", "/y/kernels");
    EXPECT_EQ(DiskCache::default_dir(), fs::path("/y/kernels"));
    ScopedEnv off("HOTFUSE_CACHE_DIR", "off");
    EXPECT_EQ(DiskCache::default_dir(), std::nullopt);
  }
  ScopedEnv home("HOME", "/home/u");
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(DiskCache::default_dir(), fs::path("/home/u/.cache/hotfuse"));
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "relative/ignored");
    EXPECT_EQ(DiskCache::default_dir(), fs::path("/home/u/.cache/hotfuse"));
  }
  ScopedEnv no_home("HOME", nullptr);
  ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(DiskCache::default_dir(), std::nullopt);
}

}  // namespace
}  // namespace hf::fusion
