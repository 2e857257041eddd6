// Fusion end to end on the CPU: detect, generate, compile (real host compiler), load, run
// through the executor, and compare with the unfused run on the same inputs. Also the
// caches, the work directory, compile failures and hostile node names.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>

#include <filesystem>
#include <random>

#include "fusion/codegen_cuda.h"
#include "fusion/nvrtc_compiler.h"
#include "fusion/region_spec.h"
#include "fusion/spec_interpreter.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/stream_store.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "session/fuse_graph.h"
#include "session/fusing_backend.h"
#include "tests/support/jit_env.h"
#include "tests/support/random_dag.h"
#include "tests/support/reference.h"

namespace hf {
namespace {

namespace fs = std::filesystem;

// Runs g unfused and fused on the same inputs; checks every output within the fused
// tolerances, and returns the fusion result for further checks.
FusionResult expect_fused_matches_unfused(const Graph& g, fusion::KernelCache& cache,
                                          uint64_t seed = 3) {
  cpu::CpuBackend cpu_backend;
  std::vector<HostTensor> in = random_inputs(g, seed);
  Executor unfused(g, cpu_backend);
  std::vector<HostTensor> want = copies(unfused.run(views(in)));
  FusionResult fr = fuse_graph(g, fusion::FusionLevel::All, cache);
  EXPECT_TRUE(fr.failures.empty()) << fr.failures.front();
  FusingCpuBackend fusing(cpu_backend, cache);
  Executor fused(fr.graph, fusing);
  for (int iter = 0; iter < 2; ++iter) {
    auto got = fused.run(views(in));
    for (size_t i = 0; i < got.size(); ++i) {
      Mismatch m = compare(want[i].view(), got[i], fused_tolerance(got[i].dtype));
      EXPECT_EQ(m.index, -1) << g.name << " output " << i << " element " << m.index << ": unfused "
                             << m.expected << ", fused " << m.actual;
    }
  }
  return fr;
}

Graph example(const std::string& name) {
  return read_graph_json(std::string(HF_SOURCE_DIR) + "/traces/graphs/" + name + ".json");
}

TEST(FusionE2E, EveryExampleFusesAndMatchesUnfused) {
  JitEnv env;
  // Kernels per iteration after fusion: what the detector promises for each example.
  const std::map<std::string, int> expected_kernels = {
      {"abc", 1},  {"ab_plus_c", 1}, {"gelu_chain", 1},     {"activation_chain", 1},
      {"adam", 1}, {"layernorm", 1}, {"bias_activation", 1}};
  for (const auto& [name, kernels] : expected_kernels) {
    SCOPED_TRACE(name);
    Graph g = example(name);
    FusionResult fr = expect_fused_matches_unfused(g, *env.cache);
    EXPECT_EQ(kernel_count(fr.graph), kernels);
    EXPECT_LT(kernel_count(fr.graph), kernel_count(g));
    EXPECT_GE(fr.regions_fused, 1);
  }
}

// Outputs beyond the last-level cache take the streaming-store path of generated kernels
// (a block in L1, then non-temporal stores); an odd size and two outputs exercise the
// unaligned heads and partial blocks of every thread's range. The size follows the
// machine's cache (32 MiB on the EPYC VMs, 260 MiB on some Xeons).
TEST(FusionE2E, StreamedOutputsMatchUnfused) {
  JitEnv env;
  // The kernel moves four arrays of `elements` floats (a, b in; q, r out).
  const size_t elements = cpu::stream_threshold_bytes() / 16 + 37;
  const std::string n = std::to_string(elements);
  Graph g = parse_graph_json(
      R"({"format": "hotfuse-graph", "version": 1, "name": "big", "inputs": [
        {"name": "a", "dtype": "f32", "shape": [)" +
          n + R"(]},
        {"name": "b", "dtype": "f32", "shape": [)" +
          n + R"(]}],
       "nodes": [
        {"name": "p", "op": "Elemwise", "mode": "MUL", "inputs": ["a", "b"], "outputs": ["p"]},
        {"name": "q", "op": "Elemwise", "mode": "ADD", "inputs": ["p", "a"], "outputs": ["q"]},
        {"name": "r", "op": "Elemwise", "mode": "TANH", "inputs": ["p"], "outputs": ["r"]}],
       "outputs": ["q", "r"]})",
      "big");
  ASSERT_TRUE(cpu::should_stream(4 * sizeof(float) * elements));
  FusionResult fr = expect_fused_matches_unfused(g, *env.cache);
  EXPECT_EQ(kernel_count(fr.graph), 1);
}

TEST(FusionE2E, SecondProcessLoadsFromDiskAndCompilesNothing) {
  JitEnv env;
  Graph g = example("adam");
  FusionResult first = fuse_graph(g, fusion::FusionLevel::All, *env.cache);
  EXPECT_EQ(first.compiled, 1);
  EXPECT_EQ(env.cache->compiles(), 1);
  auto second = env.fresh_process();
  FusionResult again = expect_fused_matches_unfused(g, *second);
  EXPECT_EQ(again.compiled, 0);
  EXPECT_EQ(again.cache_hits, 1);
  EXPECT_EQ(second->compiles(), 0);
}

TEST(FusionE2E, CorruptDiskEntryIsRebuilt) {
  JitEnv env;
  Graph g = example("abc");
  fuse_graph(g, fusion::FusionLevel::All, *env.cache);
  for (const auto& e : fs::directory_iterator(env.root / "cache")) {
    fs::resize_file(e.path(), fs::file_size(e.path()) / 2);  // truncate every entry
  }
  auto second = env.fresh_process();
  FusionResult again = expect_fused_matches_unfused(g, *second);
  EXPECT_EQ(again.compiled, 1);  // discarded and compiled again, results still right
  EXPECT_EQ(env.disk->corrupt_discarded(), 1u);
}

TEST(FusionE2E, KernelIsReusedAcrossBatchSizesButNotAcrossRanks) {
  JitEnv env;
  auto chain = [](Shape s) {
    Graph g;
    ValueId x = g.add_input("x", DType::F32, s);
    ValueId b = g.add_input("b", DType::F32, {s.back()});
    Node add{"add", OpType::Elemwise, Mode::ADD, {}, {x, b}, {}, nullptr, false};
    ValueId t = g.add_node(add)[0];
    Node act{"act", OpType::Elemwise, Mode::SILU, {}, {t}, {}, nullptr, false};
    g.mark_output(g.add_node(act)[0]);
    return g;
  };
  expect_fused_matches_unfused(chain({8, 64}), *env.cache);
  EXPECT_EQ(env.cache->compiles(), 1);
  FusionResult bigger = expect_fused_matches_unfused(chain({32, 64}), *env.cache);  // new batch
  EXPECT_EQ(env.cache->compiles(), 1);
  EXPECT_EQ(bigger.cache_hits, 1);
  expect_fused_matches_unfused(chain({4, 8, 64}), *env.cache);  // new rank: a new kernel
  EXPECT_EQ(env.cache->compiles(), 2);
}

TEST(FusionE2E, FailedCompileFallsBackToUnfusedWithOneMessage) {
  JitEnv env(/*keep=*/false);
  ::setenv("HOTFUSE_CXX", "/bin/false", 1);
  Graph g = example("ab_plus_c");
  FusionResult fr = fuse_graph(g, fusion::FusionLevel::All, *env.cache);
  ::unsetenv("HOTFUSE_CXX");
  ASSERT_EQ(fr.failures.size(), 1u);
  EXPECT_NE(fr.failures[0].find("failed to compile; its region runs unfused"), std::string::npos);
  EXPECT_EQ(fr.regions_fused, 0);
  EXPECT_EQ(kernel_count(fr.graph), kernel_count(g));
  // The source and log are kept for the user even though intermediates are not.
  size_t pos = fr.failures[0].find("source ");
  std::string src = fr.failures[0].substr(pos + 7, fr.failures[0].find(',', pos) - pos - 7);
  EXPECT_TRUE(fs::exists(src)) << src;
}

TEST(FusionE2E, HostileNodeNamesCannotInjectCode) {
  JitEnv env;
  std::string text = R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [1000]}],
    "nodes": [
      {"name": "a */ } extern \"C\" int evil() { return 1; } /* \n\\", "op": "Elemwise", "mode": "EXP", "inputs": ["x"], "outputs": ["t"]},
      {"name": "b\u2028\"; system(\"rm -rf /\"); //", "op": "Elemwise", "mode": "RELU", "inputs": ["t"], "outputs": ["y"]}],
    "outputs": ["y"]})";
  Graph g = parse_graph_json(text, "hostile.json");
  FusionResult fr = expect_fused_matches_unfused(g, *env.cache);
  EXPECT_EQ(fr.regions_fused, 1);
  for (const auto& e : fs::directory_iterator(env.root / "work")) {
    if (e.path().extension() != ".so") continue;
    void* h = dlopen(e.path().c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(dlsym(h, "evil"), nullptr) << "a node name became code";
    dlclose(h);
  }
}

TEST(FusionE2E, WorkdirKeepsIntermediatesOnlyWhenAsked) {
  fs::path kept;
  {
    JitEnv env(/*keep=*/true);
    fuse_graph(example("abc"), fusion::FusionLevel::All, *env.cache);
    kept = env.root / "work";
    int sources = 0;
    for (const auto& e : fs::directory_iterator(kept)) sources += e.path().extension() == ".cpp";
    EXPECT_EQ(sources, 1);
    env.cache.reset();
    env.workdir.reset();
    EXPECT_TRUE(fs::exists(kept));  // MGB_JIT_KEEP_INTERM=1 semantics
  }
  {
    JitEnv env(/*keep=*/false);
    fuse_graph(example("abc"), fusion::FusionLevel::All, *env.cache);
    fs::path work = env.root / "work";
    env.cache.reset();
    env.workdir.reset();
    int left = 0;
    if (fs::exists(work))
      for (auto it = fs::recursive_directory_iterator(work);
           it != fs::recursive_directory_iterator(); ++it)
        left += it->is_regular_file();
    EXPECT_EQ(left, 0);
  }
}

TEST(FusionE2E, RandomDagsMatchUnfusedF32AndF16) {
  JitEnv env;
  std::mt19937 rng(1234);
  int fused_regions = 0;
  for (int i = 0; i < 24; ++i) {
    DType t = i % 3 == 2 ? DType::F16 : DType::F32;
    Graph g = random_dag(rng, t);
    SCOPED_TRACE("dag " + std::to_string(i) + "\n" + write_graph_json(g));
    fused_regions += expect_fused_matches_unfused(g, *env.cache, i).regions_fused;
  }
  EXPECT_GE(fused_regions, 12);  // the property must actually exercise fused kernels
}

// Every region of the examples and of random DAGs fused with its spec interpreted
// (fusion/spec_interpreter.h) instead of compiled: the unfused results within the fused
// tolerances, and bit for bit where the graph is elementwise only (each step is the unfused
// op's loop). Nothing is compiled.
TEST(FusionE2E, InterpretedRegionsMatchUnfused) {
  cpu::CpuBackend cpu_backend;
  JitEnv env;
  fusion::KernelCache& unused = *env.cache;
  int interpreted = 0;
  auto check = [&](const Graph& g, uint64_t seed, bool bitwise) {
    std::vector<HostTensor> in = random_inputs(g, seed);
    Executor unfused(g, cpu_backend);
    std::vector<HostTensor> want = copies(unfused.run(views(in)));
    Graph fused_graph = g;
    for (const fusion::Region& r : fusion::detect_regions(g).regions) {
      const fusion::RegionKernel k = fusion::build_region_kernel(g, r);
      if (k.outputs.empty() || !fusion::interpretable(k.spec)) continue;
      fusion::fuse_region(fused_graph, r, fusion::KernelTier::Interpreted);
      ++interpreted;
    }
    FusingCpuBackend fusing(cpu_backend, unused);
    Executor fused(fused_graph, fusing);
    auto got = fused.run(views(in));
    for (size_t i = 0; i < got.size(); ++i) {
      Mismatch m = compare(want[i].view(), got[i], fused_tolerance(got[i].dtype));
      EXPECT_EQ(m.index, -1) << "output " << i << " element " << m.index << ": unfused "
                             << m.expected << ", interpreted " << m.actual;
      if (bitwise)
        EXPECT_EQ(std::memcmp(want[i].data(), got[i].data, want[i].bytes()), 0) << "output " << i;
    }
  };
  for (const char* name : {"abc", "ab_plus_c", "gelu_chain", "activation_chain", "adam",
                           "bias_activation", "layernorm"}) {
    SCOPED_TRACE(name);
    check(example(name), 3, std::string(name) != "layernorm");
  }
  std::mt19937 rng(1234);
  for (int i = 0; i < 24; ++i) {
    Graph g = random_dag(rng, DType::F32);
    SCOPED_TRACE("dag " + std::to_string(i) + "\n" + write_graph_json(g));
    check(g, static_cast<uint64_t>(i), false);
  }
  EXPECT_EQ(unused.compiles(), 0);
  EXPECT_GE(interpreted, 20);
}

TEST(FusionE2E, EveryExampleKernelCompilesWithNvrtcForSm80AndSm90) {
  if (!fusion::nvrtc_available())
    GTEST_SKIP() << "this build has no NVRTC (CUDA toolkit not found)";
  for (const char* name : {"abc", "ab_plus_c", "gelu_chain", "activation_chain", "adam",
                           "layernorm", "bias_activation"}) {
    Graph g = example(name);
    fusion::Detection d = fusion::detect_regions(g);
    for (const fusion::Region& r : d.regions) {
      fusion::RegionKernel k = fusion::build_region_kernel(g, r);
      std::string src = fusion::generate_cuda(k.spec, "hf_" + k.spec.hash_hex(), name);
      for (int arch : {80, 90}) {
        fusion::PtxResult p = fusion::compile_ptx(src, "hf_" + k.spec.hash_hex(), arch);
        EXPECT_TRUE(p.ok) << name << " sm_" << arch << ":\n" << p.log;
      }
    }
  }
}

}  // namespace
}  // namespace hf
