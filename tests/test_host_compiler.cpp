// fusion/host_compiler: generated C++ -> shared object -> dlopen, with the real host
// compiler; failures are results with a kept log, never crashes; no shell anywhere.
#include "fusion/host_compiler.h"

#include <gtest/gtest.h>

#include <csignal>

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>
#include <thread>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "fusion/kernel_abi.h"
#include "fusion/subprocess_util.h"
#include "runtime/ir/error.h"
#include "tests/support/scoped_env.h"
#include "tests/support/temp_dir.h"

namespace hf::fusion {
namespace {

namespace fs = std::filesystem;

class HostCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override { workdir_ = Workdir::open(std::nullopt, /*keep=*/false); }
  void TearDown() override { workdir_.reset(); }
  TempDir tmp_{"hf-test-hostcc"};
  fs::path scratch_ = tmp_.root;
  ScopedEnv tmpdir_{"TMPDIR", scratch_.c_str()};
  ScopedEnv no_cxx_{"HOTFUSE_CXX", nullptr};
  std::shared_ptr<Workdir> workdir_;
};

// A kernel in the generated kernels' calling convention, using the shared scalar math.
const char* kKernel = R"(
#include "runtime/ops/scalar_math.h"
#include "fusion/kernel_abi.h"

extern "C" void hf_test_kernel(const hf::fusion::KernelArgs* args, long long begin,
                               long long end) {
  const float* a = (const float*)args->in[0];
  const float* b = (const float*)args->in[1];
  float* out = (float*)args->out[0];
  for (long long i = begin; i < end; ++i)
    out[i] = hf::ModeFn<hf::Mode::FUSE_ADD_RELU>::apply(a[i], b[i]);
}
extern "C" int hf_test_abi_rank() { return hf::fusion::kAbiMaxRank; }
)";

TEST_F(HostCompilerTest, CompilesLoadsAndRuns) {
  HostCompileResult r = compile_host_library(kKernel, "hf_test_add_relu", *workdir_);
  ASSERT_TRUE(r.ok) << r.log;
  std::cout << "host compile of a small kernel: " << r.seconds << " s\n";
  EXPECT_GT(r.seconds, 0);
  EXPECT_EQ(r.library, workdir_->path() / "hf_test_add_relu.so");
  EXPECT_EQ(r.source_file, workdir_->path() / "hf_test_add_relu.cpp");
  EXPECT_EQ(read(r.source_file), kKernel);
  EXPECT_EQ(r.log_file, workdir_->path() / "hf_test_add_relu.log");
  EXPECT_NE(read(r.log_file).find("-march=native"), std::string::npos);
  // No temp output left beside the library (.lock marks a live work directory).
  int files = 0;
  for (const auto& e : fs::directory_iterator(workdir_->path()))
    files += e.path().filename().string().rfind(".", 0) == 0 && e.path().filename() != ".lock";
  EXPECT_EQ(files, 0);

  HostLibrary lib(r.library);
  auto rank = reinterpret_cast<int (*)()>(lib.symbol("hf_test_abi_rank"));
  EXPECT_EQ(rank(), kAbiMaxRank);
  auto fn = reinterpret_cast<HostKernelFn>(lib.symbol("hf_test_kernel"));
  float a[5] = {1, -2, 3, -4, 0.5f}, b[5] = {1, 1, -5, 10, 0.25f}, out[5] = {};
  KernelArgs args{};
  args.in[0] = a;
  args.in[1] = b;
  args.out[0] = out;
  args.numel = 5;
  fn(&args, 0, 5);
  const float want[5] = {2, 0, 0, 6, 0.75f};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(out[i], want[i]) << i;

  try {
    lib.symbol("hf_missing");
    ADD_FAILURE() << "found a missing symbol";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hf_missing"), std::string::npos);
  }
  // Move keeps it loaded.
  HostLibrary moved = std::move(lib);
  EXPECT_EQ(reinterpret_cast<int (*)()>(moved.symbol("hf_test_abi_rank"))(), kAbiMaxRank);

  fs::path dir = workdir_->path();
  workdir_.reset();
  EXPECT_FALSE(fs::exists(dir));  // the loaded object stays mapped; its file may go
  EXPECT_EQ(reinterpret_cast<int (*)()>(moved.symbol("hf_test_abi_rank"))(), kAbiMaxRank);
}

TEST_F(HostCompilerTest, SyntaxErrorIsAResultWithTheLogAndSourceKept) {
  const char* bad = "extern \"C\" int f() { return 1 +; }\n";
  HostCompileResult r = compile_host_library(bad, "hf_test_broken", *workdir_);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.library.empty());
  EXPECT_NE(r.log.find("error"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("hf_test_broken.cpp"), std::string::npos) << r.log;
  EXPECT_EQ(read(r.source_file), bad);
  EXPECT_EQ(read(r.log_file), r.log);
  fs::path dir = workdir_->path();
  workdir_.reset();
  // Kept for the bug report even without MGB_JIT_KEEP_INTERM; the rest is gone.
  EXPECT_EQ(read(dir / "hf_test_broken.cpp"), bad);
  EXPECT_TRUE(fs::exists(dir / "hf_test_broken.log"));
  EXPECT_FALSE(fs::exists(dir / "include"));
}

TEST_F(HostCompilerTest, MissingCompilerIsAClearFailure) {
  ScopedEnv cxx("HOTFUSE_CXX", "/nonexistent/c++");
  EXPECT_EQ(host_compiler_path(), "/nonexistent/c++");
  HostCompileResult r = compile_host_library(kKernel, "hf_test_nocc", *workdir_);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("/nonexistent/c++"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("No such file or directory"), std::string::npos) << r.log;
  EXPECT_NE(host_compiler_identity().find("/nonexistent/c++|"), std::string::npos);
}

TEST_F(HostCompilerTest, NoShellInterpretsTheCompilerOrName) {
  fs::path marker = scratch_ / "pwned";
  std::string evil = "c++; touch " + marker.string();
  ScopedEnv cxx("HOTFUSE_CXX", evil.c_str());
  HostCompileResult r = compile_host_library(kKernel, "hf_test_shell", *workdir_);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(fs::exists(marker));
  for (const char* name : {"a;b", "../x", ".hidden", "a/b", "$(id)", ""}) {
    HostCompileResult n = compile_host_library(kKernel, name, *workdir_);
    EXPECT_FALSE(n.ok) << name;
    EXPECT_NE(n.log.find("invalid kernel name"), std::string::npos) << n.log;
  }
}

TEST_F(HostCompilerTest, IdentityNamesCompilerAndVersion) {
  std::string id = host_compiler_identity();
  EXPECT_EQ(id.rfind(host_compiler_path() + "|", 0), 0u) << id;
  EXPECT_EQ(id.find("unknown version"), std::string::npos) << id;
  EXPECT_EQ(id, host_compiler_identity());
  std::string cache_id = host_cache_identity();
  EXPECT_NE(cache_id.find("-march=native"), std::string::npos);
  EXPECT_NE(cache_id.find("|cpu="), std::string::npos);
  // A digest of the embedded headers: a changed vmath.h or ABI never loads an old library.
  auto h = cache_id.find("|headers=");
  ASSERT_NE(h, std::string::npos) << cache_id;
  EXPECT_EQ(cache_id.size() - (h + 9), 64u) << cache_id;
}

TEST(HostLibraryTest, LoadFailureNamesTheFile) {
  std::string t = (fs::temp_directory_path() / "hf-test-notelf-XXXXXX").string();
  int fd = ::mkstemp(t.data());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "not an ELF file", 15), 15);
  ::close(fd);
  try {
    HostLibrary lib(t);
    ADD_FAILURE() << "loaded garbage";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(t), std::string::npos) << e.what();
  }
  fs::remove(t);
}

TEST(RunProcess, CapturesOutputAndStatus) {
  ProcessResult r =
      run_process({"sh", "-c", "echo out; echo err >&2; exit 3"}, std::chrono::seconds(10));
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.output.find("out"), std::string::npos);
  EXPECT_NE(r.output.find("err"), std::string::npos);
  ProcessResult big =
      run_process({"sh", "-c", "head -c 3000000 /dev/zero"}, std::chrono::seconds(10), 1000);
  EXPECT_TRUE(big.ok());
  EXPECT_EQ(big.output.rfind(std::string(1000, '\0'), 0), 0u);
  EXPECT_NE(big.output.find("[output truncated at 1000 bytes]"), std::string::npos);
}

TEST(RunProcess, TimeoutKillsTheProcessGroup) {
  auto t0 = std::chrono::steady_clock::now();
  // The child of sh holds the output pipe too: killing only sh would leave us waiting.
  ProcessResult r =
      run_process({"sh", "-c", "sleep 30 & sleep 30"}, std::chrono::milliseconds(300));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(s, 5.0);
}

// What a launcher's SIGTERM handler calls: every running child's whole group is killed, so
// run_process returns (the grandchild holding the pipe is dead too) long before its timeout.
TEST(RunProcess, KillRunningProcessesEndsTheirGroups) {
  ProcessResult r;
  std::thread t([&] {
    r = run_process({"sh", "-c", "sleep 300 & sleep 300"}, std::chrono::hours(1));
  });
  while (running_processes() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill_running_processes();
  t.join();
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(running_processes(), 0);
}

// Field `k` (1-based, as proc(5) numbers them) of /proc/<pid>/stat.
std::string proc_stat_field(int pid, int k) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(f, line);
  size_t close = line.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return "";
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  for (int i = 3; i <= k && rest >> field; ++i) {
  }
  return field;
}

// Whether SIGSTOP has reached the process: it is stopped, or the stop is pending (a
// SCHED_IDLE child on a loaded machine may not run for a while, and stops only when it
// does). /proc/<pid>/status's ShdPnd holds the signals sent to the process as a whole.
bool stop_delivered(int pid) {
  if (proc_stat_field(pid, 3) == "T") return true;
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("ShdPnd:", 0) == 0 || line.rfind("SigPnd:", 0) == 0) {
      const unsigned long long mask =
          std::stoull(line.substr(line.find_first_not_of(" \t", 7)), nullptr, 16);
      if (mask & (1ull << (SIGSTOP - 1))) return true;
    }
  return false;
}

// Polls (at most 30 s) until stop_delivered(pid) is `want`: between dequeuing SIGSTOP and
// reaching state T a running child shows neither.
bool wait_stop(int pid, bool want) {
  for (int i = 0; i < 3000; ++i) {
    if (stop_delivered(pid) == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A child started inside a BackgroundChildren scope runs under SCHED_IDLE (or nice +10), is
// stopped by pause() and continued by resume(), and the time it spent stopped is counted
// (run_process adds it to the timeout). One started outside any scope keeps our priority
// and policy. Nothing here waits on the scheduler: an idle-class child on a busy machine may
// not run at all until the cores are free.
TEST(RunProcess, BackgroundChildrenRunLowerAndPause) {
  ProcessResult outside =
      run_process({"sh", "-c", "cut -d' ' -f19,41 /proc/$$/stat"}, std::chrono::seconds(60));
  ASSERT_TRUE(outside.ok()) << outside.status();
  EXPECT_EQ(outside.output, std::to_string(getpriority(PRIO_PROCESS, 0)) + " " +
                                std::to_string(sched_getscheduler(0)) + "\n");

  BackgroundChildren children;
  ProcessResult r;
  std::thread t([&] {
    BackgroundChildren::Scope scope(children);
    r = run_process({"sh", "-c", "sleep 0.2; echo done"}, std::chrono::seconds(600));
  });
  while (children.running() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const int pid = children.process_groups().at(0);
  // SCHED_IDLE (field 41, the policy), or nice +10 where a sandbox refuses it.
  const bool idle = std::stoi(proc_stat_field(pid, 41)) == SCHED_IDLE;
  EXPECT_TRUE(idle || std::stoi(proc_stat_field(pid, 19)) ==
                          std::min(19, getpriority(PRIO_PROCESS, 0) + 10))
      << "policy " << proc_stat_field(pid, 41) << ", nice " << proc_stat_field(pid, 19);
  children.pause();
  EXPECT_TRUE(children.paused());
  EXPECT_TRUE(wait_stop(pid, true)) << "state " << proc_stat_field(pid, 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(stop_delivered(pid)) << "state " << proc_stat_field(pid, 3);  // stays stopped
  children.resume();
  EXPECT_FALSE(children.paused());
  EXPECT_TRUE(wait_stop(pid, false)) << "SIGCONT continues it and discards a pending stop";
  t.join();
  EXPECT_TRUE(r.ok()) << r.status() << ": " << r.error;
  EXPECT_EQ(r.output, "done\n");
  EXPECT_GE(children.paused_total(), std::chrono::milliseconds(300));
  EXPECT_EQ(children.running(), 0);
}

}  // namespace
}  // namespace hf::fusion
