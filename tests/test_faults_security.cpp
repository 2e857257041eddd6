// The security rules of docs/security.md, end to end: symlinks planted in the work
// directory or the cache are never followed (the attacker's file is neither loaded nor
// written), directories others can write are refused, everything created is private,
// and names from an ONNX model never reach generated source as code.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fusion/region_spec.h"
#include "fusion/subprocess_util.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/onnx_import.h"
#include "runtime/io/random_inputs.h"
#include "session/fuse_graph.h"
#include "session/fusing_backend.h"
#include "tests/support/fused_vs_unfused.h"
#include "tests/support/jit_env.h"
#include "tests/support/reference.h"
#include "tests/support/scoped_env.h"

namespace hf {
namespace {

namespace fs = std::filesystem;
namespace pb = ::ONNX_NAMESPACE;

const std::string kGraph = std::string(HF_SOURCE_DIR) + "/traces/graphs/ab_plus_c.json";

std::string kernel_of(const Graph& g) {
  fusion::Detection d = fusion::detect_regions(g);
  EXPECT_EQ(d.regions.size(), 1u);
  return fusion::KernelCache::kernel_name(fusion::build_region_kernel(g, d.regions[0]).spec);
}

// A real shared object exporting `symbol`: what an attacker would plant.
void build_attacker_library(const fs::path& out, const std::string& symbol) {
  fs::path src = out.string() + ".cpp";
  std::ofstream(src) << "extern \"C\" int " << symbol << "() { return 666; }\n";
  fusion::ProcessResult r = fusion::run_process(
      {"c++", "-shared", "-fPIC", "-o", out.string(), src.string()}, std::chrono::seconds(60));
  ASSERT_TRUE(r.ok()) << r.output;
}

bool mapped(const fs::path& file) {
  return read("/proc/self/maps").find(file.string()) != std::string::npos;
}

// Symlinks planted at the names the JIT writes (<kernel>.cpp, .so, .log) to files of the
// attacker's: replaced, never written through, and the attacker's library never loaded.
TEST(Security, SymlinksPlantedInTheWorkdirAreNotFollowed) {
  JitEnv env;
  Graph g = read_graph_json(kGraph);
  std::string name = kernel_of(g);
  fs::path attacker = env.root / "attacker";
  fs::create_directory(attacker);
  build_attacker_library(attacker / "evil.so", name);
  std::string evil_so = read(attacker / "evil.so");
  std::ofstream(attacker / "victim.txt") << "precious";
  fs::create_symlink(attacker / "evil.so", env.root / "work" / (name + ".so"));
  fs::create_symlink(attacker / "victim.txt", env.root / "work" / (name + ".cpp"));
  fs::create_symlink(attacker / "victim.txt", env.root / "work" / (name + ".log"));

  FusionResult fr = fuse_and_compare(g, *env.cache, 5);  // the attacker's kernel returns 666
  EXPECT_EQ(fr.regions_fused, 1);
  EXPECT_FALSE(mapped(attacker / "evil.so")) << "the planted library was loaded";
  EXPECT_EQ(read(attacker / "evil.so"), evil_so);
  EXPECT_EQ(read(attacker / "victim.txt"), "precious");
  EXPECT_FALSE(fs::is_symlink(env.root / "work" / (name + ".so")));
}

// A symlink planted as a cache entry, pointing at a valid entry (the right key, the right
// checksum) in the attacker's directory: not loaded, and not overwritten when the kernel
// is stored again.
TEST(Security, SymlinkPlantedInTheCacheIsNotFollowed) {
  JitEnv env;
  Graph g = read_graph_json(kGraph);
  fuse_and_compare(g, *env.cache, 5);
  fs::path entry;
  for (const auto& e : fs::directory_iterator(env.root / "cache")) entry = e.path();
  ASSERT_FALSE(entry.empty());
  fs::path attacker = env.root / "attacker.hfc";
  fs::rename(entry, attacker);
  fs::create_symlink(attacker, entry);
  std::string planted = read(attacker);

  env.cache.reset();  // a second process: nothing loaded yet
  auto second = env.fresh_process();
  FusionResult fr = fuse_and_compare(g, *second, 5);
  EXPECT_EQ(fr.regions_fused, 1);
  EXPECT_EQ(second->compiles(), 1) << "the symlinked entry was used";
  EXPECT_EQ(env.disk->corrupt_discarded(), 1u);
  EXPECT_EQ(read(attacker), planted) << "written through the symlink";
  EXPECT_FALSE(fs::is_symlink(entry));
}

fusion::ProcessResult run_cli(const fs::path& cache, const fs::path& work) {
  ScopedEnv c("HOTFUSE_CACHE_DIR", cache.c_str());
  ScopedEnv w("MGB_JIT_WORKDIR", work.c_str());
  return fusion::run_process({std::string(HF_BINARY_DIR) + "/hotfuse-run", kGraph, "--fusion",
                              "all", "--iters", "1", "--warmup", "1", "--threads", "1"},
                             std::chrono::seconds(120));
}

// A cache directory others can write: the cache is disabled with one line and the run goes
// on (fused, correct). A work directory others can write: exit code 2 naming it. Root is
// not exempt: the check is on the mode bits, not on access().
TEST(Security, DirectoriesOthersCanWriteAreRefused) {
  JitEnv env;
  fs::create_directory(env.root / "shared");
  ::chmod((env.root / "shared").c_str(), 0777);
  fusion::ProcessResult r = run_cli(env.root / "shared", env.root / "w1");
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_NE(r.output.find("disk kernel cache disabled"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("outputs match unfused"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_empty(env.root / "shared")) << "wrote into a shared directory";

  r = run_cli(env.root / "cache", env.root / "shared");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find((env.root / "shared").string()), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_empty(env.root / "shared"));
}

// Everything the JIT and the cache create is private: directories 0700, files 0600.
TEST(Security, CreatedFilesAndDirectoriesArePrivate) {
  JitEnv env(/*keep=*/true);
  fs::path cache = env.root / "new-cache", work = env.root / "new-work";
  ScopedEnv keep("MGB_JIT_KEEP_INTERM", "1");
  ::umask(0);  // the process's umask must not be what makes them private
  fusion::ProcessResult r = run_cli(cache, work);
  ::umask(022);
  ASSERT_TRUE(r.ok()) << r.output;
  int files = 0;
  for (const fs::path& top : {cache, work}) {
    EXPECT_EQ(fs::status(top).permissions() & fs::perms::all, fs::perms::owner_all) << top;
    for (const auto& e : fs::recursive_directory_iterator(top)) {
      auto p = fs::symlink_status(e.path()).permissions() & fs::perms::all;
      if (e.is_directory()) {
        EXPECT_EQ(p, fs::perms::owner_all) << e.path();
      } else {
        ++files;
        EXPECT_EQ(p & ~fs::perms::owner_exec, fs::perms::owner_read | fs::perms::owner_write)
            << e.path();
      }
    }
  }
  EXPECT_GT(files, 3);
}

// Node and value names from an ONNX model that try to close the comment they are printed
// in, or to break a string, are data: the kernel has only its own symbol, results match.
TEST(Security, OnnxNamesCannotInjectCode) {
  pb::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  pb::GraphProto* g = m.mutable_graph();
  g->set_name("g */ extern \"C\" int evil_graph() { return 1; } /*");
  auto input = [&](pb::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(pb::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(4096);
  };
  const std::string x = "x */ extern \"C\" int evil_x() { return 1; } /*\n#include </etc/passwd>";
  const std::string t = "t\"; system(\"touch /tmp/hf-pwned\"); //\\";
  const std::string y = "y $(touch /tmp/hf-pwned) `id` ; | & > /tmp/hf-pwned";
  input(g->add_input(), x);
  auto* n1 = g->add_node();
  n1->set_op_type("Exp");
  n1->set_name("n1 */ } extern \"C\" int evil_node() { return 1; } /*");
  n1->add_input(x);
  n1->add_output(t);
  auto* n2 = g->add_node();
  n2->set_op_type("Relu");
  n2->set_name("n2 \u2028 \\\n*/ #define exp evil");
  n2->add_input(t);
  n2->add_output(y);
  input(g->add_output(), y);

  Graph graph = parse_graph_onnx(m.SerializeAsString(), "hostile.onnx");
  JitEnv env(/*keep=*/true);
  FusionResult fr = fuse_and_compare(graph, *env.cache, 5);
  EXPECT_EQ(fr.regions_fused, 1);
  EXPECT_FALSE(fs::exists("/tmp/hf-pwned"));
  int libraries = 0;
  for (const auto& e : fs::directory_iterator(env.root / "work")) {
    if (e.path().extension() == ".cpp") {
      // A name may appear inside a one-line comment; never on a line of code.
      std::istringstream src(read(e.path()));
      for (std::string line; std::getline(src, line);) {
        if (line.find_first_not_of(' ') != std::string::npos &&
            line.compare(line.find_first_not_of(' '), 2, "//") == 0)
          continue;
        for (const char* code : {"evil", "/etc/passwd", "system(", "pwned"})
          EXPECT_EQ(line.find(code), std::string::npos)
              << "a name reached the source as code in " << e.path() << ": " << line;
      }
    }
    if (e.path().extension() != ".so") continue;
    ++libraries;
    void* h = dlopen(e.path().c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << dlerror();
    for (const char* s : {"evil_graph", "evil_x", "evil_node"})
      EXPECT_EQ(dlsym(h, s), nullptr) << s;
    dlclose(h);
  }
  EXPECT_EQ(libraries, 1);
}

}  // namespace
}  // namespace hf
