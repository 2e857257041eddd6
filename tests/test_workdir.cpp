// fusion/workdir: MegEngine's MGB_JIT_WORKDIR / MGB_JIT_KEEP_INTERM / MGB_JIT_BACKEND, the
// private-directory rules, and that cleanup removes only what the Workdir wrote.
#include "fusion/workdir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "runtime/ir/error.h"
#include "tests/support/scoped_env.h"
#include "tests/support/temp_dir.h"

namespace hf::fusion {
namespace {

namespace fs = std::filesystem;

// A private scratch directory for one test, removed afterwards.
class WorkdirTest : public ::testing::Test {
 protected:
  TempDir tmp_{"hf-test-workdir"};
  fs::path scratch_ = tmp_.root;
  ScopedEnv no_dir_{"MGB_JIT_WORKDIR", nullptr};
  ScopedEnv no_keep_{"MGB_JIT_KEEP_INTERM", nullptr};
};

unsigned mode_of(const fs::path& p) {
  struct stat st;
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

void touch(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

TEST_F(WorkdirTest, DefaultIsAPrivateTempDirRemovedOnDestruction) {
  ScopedEnv tmp("TMPDIR", scratch_.c_str());
  auto w = Workdir::from_env();
  fs::path dir = w->path();
  EXPECT_EQ(dir.parent_path(), scratch_);
  EXPECT_EQ(dir.filename().string().rfind("hotfuse-jit-", 0), 0u) << dir;
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_FALSE(w->keep());
  fs::path f = w->write_file("sub/dir/k.cpp", "int x;\n");
  EXPECT_EQ(f, dir / "sub/dir/k.cpp");
  EXPECT_EQ(read(f), "int x;\n");
  EXPECT_EQ(mode_of(f), 0600u);
  EXPECT_EQ(mode_of(dir / "sub"), 0700u);
  // Rewriting replaces the contents.
  w->write_file("sub/dir/k.cpp", "int y;\n");
  EXPECT_EQ(read(f), "int y;\n");
  fs::path inc = w->include_dir();
  EXPECT_EQ(inc, dir / "include");
  EXPECT_NE(read(inc / "runtime/ops/scalar_math.h").find("ModeFn"), std::string::npos);
  EXPECT_TRUE(fs::exists(inc / "fusion/kernel_abi.h"));
  EXPECT_EQ(w->include_dir(), inc);  // once
  w.reset();
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(fs::is_empty(scratch_));
}

TEST_F(WorkdirTest, KeepInterm1KeepsEverything) {
  ScopedEnv tmp("TMPDIR", scratch_.c_str());
  ScopedEnv keep("MGB_JIT_KEEP_INTERM", "1");
  auto w = Workdir::from_env();
  EXPECT_TRUE(w->keep());
  fs::path dir = w->path();
  w->write_file("a.cpp", "x");
  w->include_dir();
  w.reset();
  EXPECT_EQ(read(dir / "a.cpp"), "x");
  EXPECT_TRUE(fs::exists(dir / "include/runtime/ops/hd.h"));
}

TEST_F(WorkdirTest, KeepInterm0RemovesAndOtherValuesAreRejected) {
  ScopedEnv tmp("TMPDIR", scratch_.c_str());
  {
    ScopedEnv keep("MGB_JIT_KEEP_INTERM", "0");
    EXPECT_FALSE(Workdir::from_env()->keep());
  }
  ScopedEnv keep("MGB_JIT_KEEP_INTERM", "yes");
  try {
    Workdir::from_env();
    FAIL() << "accepted MGB_JIT_KEEP_INTERM=yes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MGB_JIT_KEEP_INTERM"), std::string::npos) << e.what();
  }
}

TEST_F(WorkdirTest, UserWorkdirKeepsTheUsersFiles) {
  fs::path dir = scratch_ / "mine";
  fs::create_directory(dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  touch(dir / "notes.txt", "user data");
  fs::create_directory(dir / "include");  // a user's dir we also write into
  touch(dir / "include/user.h", "user header");
  ScopedEnv env("MGB_JIT_WORKDIR", dir.c_str());
  auto w = Workdir::from_env();
  EXPECT_EQ(w->path(), dir);
  w->write_file("k.cpp", "k");
  w->write_file("new/deep/k.log", "log");
  w->include_dir();
  w->track("k.so");  // a compiler's output
  touch(dir / "k.so", "elf");
  w.reset();
  EXPECT_EQ(read(dir / "notes.txt"), "user data");
  EXPECT_EQ(read(dir / "include/user.h"), "user header");
  EXPECT_FALSE(fs::exists(dir / "k.cpp"));
  EXPECT_FALSE(fs::exists(dir / "k.so"));
  EXPECT_FALSE(fs::exists(dir / "new"));
  EXPECT_FALSE(fs::exists(dir / "include/runtime"));
  EXPECT_FALSE(fs::exists(dir / "include/fusion"));
  EXPECT_TRUE(fs::exists(dir / "include"));
}

TEST_F(WorkdirTest, MissingUserWorkdirIsCreatedPrivateAndRemoved) {
  fs::path dir = scratch_ / "a" / "jit";
  ScopedEnv env("MGB_JIT_WORKDIR", dir.c_str());
  auto w = Workdir::from_env();
  EXPECT_EQ(mode_of(dir), 0700u);
  w->write_file("k.cpp", "k");
  w.reset();
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(fs::exists(scratch_ / "a"));  // parents are not ours to judge
}

TEST_F(WorkdirTest, RetainedFilesSurviveCleanup) {
  ScopedEnv tmp("TMPDIR", scratch_.c_str());
  auto w = Workdir::from_env();
  fs::path dir = w->path();
  w->write_file("bad.cpp", "oops");
  w->write_file("good.cpp", "fine");
  w->include_dir();
  w->retain("bad.cpp");
  w.reset();
  EXPECT_EQ(read(dir / "bad.cpp"), "oops");
  EXPECT_FALSE(fs::exists(dir / "good.cpp"));
  EXPECT_FALSE(fs::exists(dir / "include"));
}

void expect_refused(const fs::path& dir, const std::string& why) {
  ScopedEnv env("MGB_JIT_WORKDIR", dir.c_str());
  try {
    Workdir::from_env();
    ADD_FAILURE() << "accepted " << dir << " (" << why << ")";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(dir.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("MGB_JIT_WORKDIR"), std::string::npos) << msg;
    EXPECT_NE(msg.find(why), std::string::npos) << msg;
  }
}

TEST_F(WorkdirTest, RefusesDirectoriesOthersCanWriteOrThatAreNotDirectories) {
  fs::path dir = scratch_ / "shared";
  fs::create_directory(dir);
  for (unsigned mode : {0777u, 0770u, 0707u, 0720u}) {
    ASSERT_EQ(::chmod(dir.c_str(), mode), 0);
    expect_refused(dir, "writable by group or others");
  }
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  fs::create_directory_symlink(dir, scratch_ / "link");
  expect_refused(scratch_ / "link", "symlink");
  touch(scratch_ / "file", "");
  expect_refused(scratch_ / "file", "not a directory");
  if (::geteuid() == 0) {  // only root can give a directory away
    ASSERT_EQ(::chown(dir.c_str(), 12345, -1), 0);
    expect_refused(dir, "owned by uid 12345");
  }
}

TEST_F(WorkdirTest, WriteFileRefusesEscapesAndSymlinks) {
  ScopedEnv tmp("TMPDIR", scratch_.c_str());
  auto w = Workdir::from_env();
  for (const char* bad : {"../x", "a/../../x", "/etc/x", "", "a//b", "./x", "a/"})
    EXPECT_THROW(w->write_file(bad, "x"), Error) << bad;
  // A symlinked directory inside the workdir is not followed.
  fs::path outside = scratch_ / "outside";
  fs::create_directory(outside);
  fs::create_directory_symlink(outside, w->path() / "sub");
  EXPECT_THROW(w->write_file("sub/x.cpp", "x"), Error);
  EXPECT_TRUE(fs::is_empty(outside));
  // A symlink planted at a file name is replaced, its target untouched.
  touch(outside / "victim", "precious");
  fs::create_symlink(outside / "victim", w->path() / "k.cpp");
  w->write_file("k.cpp", "generated");
  EXPECT_EQ(read(outside / "victim"), "precious");
  EXPECT_FALSE(fs::is_symlink(w->path() / "k.cpp"));
  EXPECT_EQ(read(w->path() / "k.cpp"), "generated");
  w.reset();
  EXPECT_EQ(read(outside / "victim"), "precious");
}

TEST(JitBackend, FromEnv) {
  {
    ScopedEnv e("MGB_JIT_BACKEND", nullptr);
    EXPECT_EQ(jit_backend_from_env(), std::nullopt);
  }
  {
    ScopedEnv e("MGB_JIT_BACKEND", "");
    EXPECT_EQ(jit_backend_from_env(), std::nullopt);
  }
  {
    ScopedEnv e("MGB_JIT_BACKEND", "NVRTC");
    EXPECT_EQ(jit_backend_from_env(), "NVRTC");
  }
  {
    ScopedEnv e("MGB_JIT_BACKEND", "cpu");
    EXPECT_EQ(jit_backend_from_env(), "CPU");
  }
  ScopedEnv e("MGB_JIT_BACKEND", "HALIDE");
  try {
    jit_backend_from_env();
    FAIL() << "accepted MGB_JIT_BACKEND=HALIDE";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("MGB_JIT_BACKEND=HALIDE"), std::string::npos)
        << err.what();
  }
}

// Killed runs' leftovers (fusion/leftovers.h): a fresh work directory whose .lock nobody
// holds is removed by the next run; a live one (its lock held), a kept one (no lock), a
// symlink and another name stay.
TEST_F(WorkdirTest, AbandonedWorkdirsOfKilledRunsAreRemovedByTheNextRun) {
  ScopedEnv tmp("TMPDIR", scratch_.c_str());
  for (const char* d : {"hotfuse-jit-dead", "hotfuse-jit-live", "hotfuse-jit-kept", "other"}) {
    fs::create_directory(scratch_ / d);
    touch(scratch_ / d / "k.cpp", "x");
  }
  for (const char* d : {"hotfuse-jit-dead", "hotfuse-jit-live", "other"})
    touch(scratch_ / d / ".lock", "");
  fs::create_directory(scratch_ / "target");
  touch(scratch_ / "target" / ".lock", "");
  fs::create_directory_symlink(scratch_ / "target", scratch_ / "hotfuse-jit-link");
  int held = ::open((scratch_ / "hotfuse-jit-live" / ".lock").c_str(), O_RDWR);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  {
    auto w = Workdir::open(std::nullopt, false);
    // Its own directory is marked live: a second process would leave it alone.
    int probe = ::open((w->path() / ".lock").c_str(), O_RDWR);
    ASSERT_GE(probe, 0);
    EXPECT_NE(::flock(probe, LOCK_EX | LOCK_NB), 0);
    ::close(probe);
  }
  ::close(held);
  EXPECT_FALSE(fs::exists(scratch_ / "hotfuse-jit-dead"));
  EXPECT_TRUE(fs::exists(scratch_ / "hotfuse-jit-live" / "k.cpp"));
  EXPECT_TRUE(fs::exists(scratch_ / "hotfuse-jit-kept" / "k.cpp"));
  EXPECT_TRUE(fs::exists(scratch_ / "other" / "k.cpp"));
  EXPECT_TRUE(fs::exists(scratch_ / "target" / ".lock"));
  EXPECT_TRUE(fs::is_symlink(scratch_ / "hotfuse-jit-link"));
}

// A shared MGB_JIT_WORKDIR: compiler temporaries of dead processes, once old, are removed;
// a live process's, or a fresh one, stay.
TEST_F(WorkdirTest, DeadCompilersTemporariesInASharedWorkdirAreRemoved) {
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ::waitpid(dead, nullptr, 0);
  fs::path shared = scratch_ / "shared";
  fs::create_directory(shared, scratch_);
  fs::permissions(shared, fs::perms::owner_all);
  auto temp = [&](pid_t pid, const char* tag, bool old) {
    fs::path p = shared / (".hf_k.so.tmp-" + std::to_string(pid) + "-1-" + tag);
    touch(p, "partial");
    if (old) {
      timespec times[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
      ::utimensat(AT_FDCWD, p.c_str(), times, 0);
    }
    return p;
  };
  fs::path gone = temp(dead, "a", true), fresh = temp(dead, "b", false),
           live = temp(::getpid(), "c", true);
  Workdir::open(shared, false);
  EXPECT_FALSE(fs::exists(gone));
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_TRUE(fs::exists(live));
}

}  // namespace
}  // namespace hf::fusion
