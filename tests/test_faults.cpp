// Faults injected into the JIT path (docs/reliability.md): the host compiler missing,
// failing or writing garbage, a full disk, an unusable or vanished work directory, the
// cache directory deleted mid-run, corrupt cache entries, kernel libraries that do not
// load, and allocations over the memory cap. Each must leave the run correct (fused
// outputs compared with unfused ones) and say what happened in one line.
//
// hotfuse-run is started as a child where the fault is a property of the process (a
// compiler in the environment, a file size limit); the rest runs in this process.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <onnx/onnx_pb.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "fusion/subprocess_util.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/onnx_import.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "session/fuse_graph.h"
#include "session/fusing_backend.h"
#include "tests/support/fused_vs_unfused.h"
#include "tests/support/jit_env.h"
#include "tests/support/reference.h"
#include "tests/support/scoped_env.h"
#include "tests/support/temp_dir.h"

namespace hf {
namespace {

namespace fs = std::filesystem;

const std::string kGraph = std::string(HF_SOURCE_DIR) + "/traces/graphs/ab_plus_c.json";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

std::vector<std::string> lines_with(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  std::istringstream s(text);
  for (std::string line; std::getline(s, line);)
    if (line.find(what) != std::string::npos) out.push_back(line);
  return out;
}

// A scratch directory (0700) with a private cache and work directory for child processes.
class FaultTest : public ::testing::Test {
 protected:
  // An executable script in the scratch directory.
  fs::path script(const std::string& name, const std::string& body) {
    fs::path p = root_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    ::chmod(p.c_str(), 0700);
    return p;
  }
  // hotfuse-run --fusion all on the one-region example, with its own cache and workdir.
  // `limit`: a prlimit(1) option for the child, e.g. "--fsize=2048".
  fusion::ProcessResult run_cli(const std::string& limit = "") {
    ScopedEnv cache("HOTFUSE_CACHE_DIR", (root_ / "cache").c_str());
    ScopedEnv work("MGB_JIT_WORKDIR", (root_ / "work").c_str());
    std::vector<std::string> argv;
    if (!limit.empty()) argv = {"prlimit", limit};
    std::vector<std::string> run = {std::string(HF_BINARY_DIR) + "/hotfuse-run",
                                    kGraph,
                                    "--fusion",
                                    "all",
                                    "--iters",
                                    "2",
                                    "--warmup",
                                    "1",
                                    "--threads",
                                    "1"};
    argv.insert(argv.end(), run.begin(), run.end());
    return fusion::run_process(argv, std::chrono::seconds(120));
  }
  // The run succeeded, its outputs matched unfused, and the one region's failure was
  // reported in exactly one line containing `why`.
  void expect_unfused_with_one_line(const fusion::ProcessResult& r, const std::string& why) {
    ASSERT_TRUE(r.ok()) << r.status() << "\n" << r.output;
    EXPECT_EQ(count(r.output, "outputs match unfused"), 1u) << r.output;
    std::vector<std::string> lines = lines_with(r.output, "runs unfused");
    ASSERT_EQ(lines.size(), 1u) << r.output;
    EXPECT_NE(lines[0].find(why), std::string::npos) << lines[0];
    EXPECT_EQ(count(r.output, "internal error"), 0u) << r.output;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.output, m, std::regex("kernels ([0-9]+) -> ([0-9]+)")))
        << r.output;
    EXPECT_EQ(m[1], m[2]) << "the failed region must run unfused";
  }
  TempDir tmp_{"hf-faults"};
  fs::path root_ = tmp_.root;
};

TEST_F(FaultTest, CompilerMissing) {
  ScopedEnv cxx("HOTFUSE_CXX", "/nonexistent/c++");
  expect_unfused_with_one_line(run_cli(), "failed to compile");
}

TEST_F(FaultTest, CompilerFails) {
  ScopedEnv cxx("HOTFUSE_CXX",
                script("fails", "echo 'internal compiler error' >&2\nexit 1\n").c_str());
  expect_unfused_with_one_line(run_cli(), "failed to compile");
}

// A compiler that "succeeds" but writes garbage where the shared object should be.
TEST_F(FaultTest, CompilerWritesGarbage) {
  ScopedEnv cxx("HOTFUSE_CXX",
                script("garbage",
                       "out=\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
                       "[ -n \"$out\" ] && printf 'not an ELF file' > \"$out\"\nexit 0\n")
                    .c_str());
  expect_unfused_with_one_line(run_cli(), "compiled but did not load");
}

// A compiler that writes a valid shared object without the kernel's symbol.
TEST_F(FaultTest, CompilerOutputLacksTheKernelSymbol) {
  ScopedEnv cxx("HOTFUSE_CXX",
                script("empty_so",
                       "out=\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
                       "[ -n \"$out\" ] || exit 0\n"
                       "exec c++ -shared -fPIC -x c++ /dev/null -o \"$out\"\n")
                    .c_str());
  expect_unfused_with_one_line(run_cli(), "not found");
}

// A full disk: a file size limit binds root too (writes fail with EFBIG, the same path as
// ENOSPC; hotfuse-run ignores SIGXFSZ so a limit is a write error, not a kill).
TEST_F(FaultTest, DiskFull) {
  expect_unfused_with_one_line(run_cli("--fsize=2048"), "failed to compile");
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root_ / "cache", ec))
    EXPECT_EQ(e.path().extension(), ".hfc") << "a partial write left behind: " << e.path();
}

// Read-only as root: the immutable attribute stops even root's writes (where the file
// system supports it).
TEST_F(FaultTest, ReadOnlyWorkdir) {
  fs::create_directory(root_ / "work");
  ::chmod((root_ / "work").c_str(), 0700);
  int fd = ::open((root_ / "work").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  int flags = 0;
  if (::ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) {
    ::close(fd);
    GTEST_SKIP() << "this file system has no inode flags";
  }
  int immutable = flags | FS_IMMUTABLE_FL;
  if (::ioctl(fd, FS_IOC_SETFLAGS, &immutable) != 0) {
    ::close(fd);
    GTEST_SKIP() << "cannot set the immutable attribute here (needs CAP_LINUX_IMMUTABLE)";
  }
  fusion::ProcessResult r = run_cli();
  ::ioctl(fd, FS_IOC_SETFLAGS, &flags);
  ::close(fd);
  expect_unfused_with_one_line(r, "failed to compile");
}

// A work directory that is a file, or not private: refused before anything runs, with
// the directory named and exit code 2 (a configuration error, not a fault to run around).
TEST_F(FaultTest, UnusableWorkdirIsAClearError) {
  std::ofstream(root_ / "work") << "a file";
  fusion::ProcessResult r = run_cli();
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find((root_ / "work").string()), std::string::npos) << r.output;
  EXPECT_EQ(lines_with(r.output, "hotfuse-run:").size(), 1u) << r.output;
}

// The work directory removed under a running process: every write into it fails.
TEST_F(FaultTest, WorkdirDeletedMidRun) {
  JitEnv env;
  fs::remove_all(env.root / "work");
  Graph g = read_graph_json(kGraph);
  FusionResult fr = fuse_and_compare(g, *env.cache, 11);
  ASSERT_EQ(fr.failures.size(), 1u);
  EXPECT_EQ(fr.failures[0].find('\n'), std::string::npos) << fr.failures[0];
  EXPECT_NE(fr.failures[0].find("runs unfused"), std::string::npos) << fr.failures[0];
  EXPECT_EQ(fr.regions_fused, 0);
}

// The cache directory removed under a running process: lookups miss, writes fail, and the
// kernel is compiled and used anyway (nothing to report).
TEST_F(FaultTest, CacheDirectoryDeletedMidRun) {
  JitEnv env;
  Graph g = read_graph_json(kGraph);
  fuse_and_compare(g, *env.cache, 11);
  fs::remove_all(env.root / "cache");
  auto second = env.fresh_process();
  FusionResult fr = fuse_and_compare(g, *second, 11);
  EXPECT_TRUE(fr.failures.empty()) << fr.failures.front();
  EXPECT_EQ(fr.regions_fused, 1);
  EXPECT_EQ(second->compiles(), 1);
  EXPECT_FALSE(fs::exists(env.root / "cache")) << "the cache must not be recreated mid-run";
}

// The one entry the first run stored, by key.
std::string only_key(const fs::path& cache_dir) {
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(cache_dir)) entries.push_back(e.path());
  EXPECT_EQ(entries.size(), 1u);
  return entries.empty() ? "" : entries[0].stem().string();
}

// Entries that pass the checksum but are not loadable code: one line each, then the
// kernel is compiled again and the results are right.
class BadLibraryInCache : public ::testing::TestWithParam<std::string> {};

TEST_P(BadLibraryInCache, IsReportedAndRebuilt) {
  JitEnv env;
  Graph g = read_graph_json(kGraph);
  fuse_and_compare(g, *env.cache, 11);
  std::string key = only_key(env.root / "cache");
  std::string payload = GetParam();
  if (payload == "no-symbol") {
    fusion::ProcessResult r = fusion::run_process(
        {"c++", "-shared", "-fPIC", "-x", "c++", "/dev/null", "-o", (env.root / "e.so").string()},
        std::chrono::seconds(60));
    ASSERT_TRUE(r.ok()) << r.output;
    payload = read(env.root / "e.so");
  }
  ASSERT_TRUE(env.disk->put(key, payload));  // a valid checksum over bad contents
  // A second process: this one's library unloaded (dlopen would return it for the path).
  env.cache.reset();
  auto second = env.fresh_process();
  ::testing::internal::CaptureStderr();
  FusionResult fr = fuse_and_compare(g, *second, 11);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(fr.failures.empty()) << fr.failures.front();
  EXPECT_EQ(fr.regions_fused, 1);
  EXPECT_EQ(second->compiles(), 1);
  std::vector<std::string> lines = lines_with(err, "did not load");
  ASSERT_EQ(lines.size(), 1u) << err;
  EXPECT_NE(lines[0].find("compiling it again"), std::string::npos) << lines[0];
  EXPECT_NE(env.disk->get(key), payload) << "the bad entry was replaced";
}

INSTANTIATE_TEST_SUITE_P(Faults, BadLibraryInCache,
                         ::testing::Values(std::string("\x7f"
                                                       "ELF garbage"),
                                           std::string("no-symbol")));

// Corrupt entries (checksum mismatch, another key's entry, empty file): discarded without
// a word, rebuilt, results right.
TEST_F(FaultTest, CorruptCacheEntriesAreRebuilt) {
  JitEnv env;
  Graph g = read_graph_json(kGraph);
  fuse_and_compare(g, *env.cache, 11);
  fs::path entry = env.disk->entry_path(only_key(env.root / "cache"));
  std::string good = read(entry);
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x10;
  std::string other_key = good;  // the same file claiming another key
  other_key[64] = other_key[64] == 'a' ? 'b' : 'a';
  int round = 0;
  for (const std::string& bad : {flipped, other_key, std::string()}) {
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bad;
    auto again = env.fresh_process();
    FusionResult fr = fuse_and_compare(g, *again, 11);
    EXPECT_EQ(fr.regions_fused, 1) << "round " << round;
    EXPECT_EQ(again->compiles(), 1) << "round " << round;
    EXPECT_EQ(env.disk->corrupt_discarded(), static_cast<size_t>(++round));
  }
}

// An ONNX model of one Exp node whose input claims `dims`.
std::string onnx_with_input(const std::vector<int64_t>& dims) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("huge");
  auto declare = [&](onnx::ValueInfoProto* v, const char* name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  declare(g->add_input(), "x");
  declare(g->add_output(), "y");
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("Exp");
  n->add_input("x");
  n->add_output("y");
  return m.SerializeAsString();
}

// Host memory: a 1e12-element input claimed by a tiny file (JSON or ONNX) is refused before
// allocating, naming the input and the cap; the cap is overridable.
TEST_F(FaultTest, HugeShapeIsAClearErrorNotAnOutOfMemory) {
  std::ofstream(root_ / "huge.json")
      << R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [1000000, 1000000]}],
    "nodes": [{"name": "e", "op": "Elemwise", "mode": "EXP", "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})";
  std::ofstream(root_ / "huge.onnx", std::ios::binary) << onnx_with_input({1000000, 1000000});
  for (const char* file : {"huge.json", "huge.onnx"}) {
    ASSERT_LT(fs::file_size(root_ / file), 1024u);
    fusion::ProcessResult r = fusion::run_process(
        {std::string(HF_BINARY_DIR) + "/hotfuse-run", (root_ / file).string(), "--fusion", "off"},
        std::chrono::seconds(60));
    EXPECT_EQ(r.exit_code, 2) << file << ": " << r.status() << "\n" << r.output;
    std::vector<std::string> lines = lines_with(r.output, "hotfuse-run:");
    ASSERT_EQ(lines.size(), 1u) << r.output;
    EXPECT_NE(lines[0].find("graph input 'x'"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("HOTFUSE_MAX_BYTES"), std::string::npos) << lines[0];
  }

  // A small cap refuses a graph that would otherwise run; a bad cap value is an error.
  Graph g = read_graph_json(kGraph);
  cpu::CpuBackend backend;
  {
    ScopedEnv cap("HOTFUSE_MAX_BYTES", "1K");
    EXPECT_THROW(random_inputs(g, 1), Error);
    EXPECT_THROW(Executor(g, backend), Error);
  }
  {
    ScopedEnv cap("HOTFUSE_MAX_BYTES", "lots");
    try {
      random_inputs(g, 1);
      ADD_FAILURE() << "accepted HOTFUSE_MAX_BYTES=lots";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("HOTFUSE_MAX_BYTES='lots'"), std::string::npos);
    }
  }
  ScopedEnv cap("HOTFUSE_MAX_BYTES", "1G");
  Executor ok(g, backend);
  EXPECT_EQ(ok.run(views(random_inputs(g, 1))).size(), g.outputs().size());
}

// A JSON shape whose element count overflows int64_t (numel() was undefined behaviour on
// it): an error naming the input, before anything multiplies the dimensions.
TEST(HostileInput, JsonShapeThatOverflowsIsAnError) {
  for (const char* shape :
       {"[4294967296, 4294967296, 4]", "[1099511627777]", "[0, 9223372036854775807]"}) {
    std::string text = std::string(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": )") +
                       shape +
                       R"(}], "nodes": [{"name": "e", "op": "Elemwise", "mode": "EXP",
                       "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]})";
    try {
      parse_graph_json(text, "overflow.json");
      ADD_FAILURE() << "accepted " << shape;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("too many elements"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("overflow.json"), std::string::npos) << e.what();
    }
  }
}

// A fractional or huge floating-point dimension (1e128 to int64_t was undefined behaviour,
// 2.5 became 2): an error, not a conversion.
TEST(HostileInput, JsonShapeMustHoldIntegers) {
  for (const char* shape : {"[2.5]", "[1e128]", "[4, 1.0]"}) {
    std::string text = std::string(R"({"inputs": [{"name": "x", "dtype": "f32", "shape": )") +
                       shape + R"(}], "nodes": [], "outputs": ["x"]})";
    try {
      parse_graph_json(text, "float.json");
      ADD_FAILURE() << "accepted " << shape;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("must hold integers"), std::string::npos) << e.what();
    }
  }
}

// Inputs the fuzzers found (tests/data/fuzz/<target>/, docs/reliability.md): each must be a
// clean hf::Error naming the file, or a valid graph; any other exception fails.
TEST(HostileInput, FuzzFindingsAreCleanErrors) {
  const fs::path dir = fs::path(HF_SOURCE_DIR) / "tests" / "data" / "fuzz";
  int inputs = 0;
  for (const char* target : {"graph_json", "onnx"}) {
    if (!fs::exists(dir / target)) continue;
    for (const auto& e : fs::directory_iterator(dir / target)) {
      ++inputs;
      std::string bytes = read(e.path());
      try {
        if (std::string(target) == "onnx")
          parse_graph_onnx(bytes, "finding.onnx");
        else
          parse_graph_json(bytes, "finding.json");
      } catch (const Error& err) {
        EXPECT_EQ(std::string(err.what()).find('\n'), std::string::npos) << err.what();
        EXPECT_EQ(std::string(err.what()).rfind("finding.", 0), 0u) << err.what();
      } catch (const std::exception& err) {
        ADD_FAILURE() << e.path() << ": not an hf::Error: " << err.what();
      }
    }
  }
  EXPECT_GT(inputs, 0);
}

// Out of memory for real (an address-space limit in a child): exit 2 and one line, not a
// crash. Sanitizers reserve terabytes of shadow memory, so they cannot run under the limit.
TEST_F(FaultTest, OutOfMemoryIsOneLineAndExitCode2) {
#if defined(HF_SANITIZED)
  GTEST_SKIP() << "sanitizer builds cannot run under an address-space limit";
#endif
  fs::path graph = root_ / "big.json";  // 2 GiB of input, under the default cap here
  std::ofstream(graph) << R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [536870912]}],
    "nodes": [{"name": "e", "op": "Elemwise", "mode": "EXP", "inputs": ["x"], "outputs": ["y"]}],
    "outputs": ["y"]})";
  ScopedEnv cap("HOTFUSE_MAX_BYTES", "64G");
  fusion::ProcessResult r = fusion::run_process(
      {"prlimit", "--as=1073741824", std::string(HF_BINARY_DIR) + "/hotfuse-run", graph.string(),
       "--fusion", "off", "--threads", "1"},
      std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 2) << r.status() << "\n" << r.output;
  std::vector<std::string> lines = lines_with(r.output, "hotfuse-run:");
  ASSERT_EQ(lines.size(), 1u) << r.output;
  EXPECT_NE(lines[0].find("out of memory"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace hf
