// What the adaptive session was refactored onto, tested on the CPU: the kernel cache over
// the host toolchain, the compile worker over any EnsureKernel, and a session on
// a target whose memory is not the host's (validation downloads the live-outs it compares:
// the CUDA path, exercised here with a backend whose download is memcpy, counted).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "fusion/codegen_cpp.h"
#include "fusion/host_toolchain.h"
#include "fusion/region_spec.h"
#include "runtime/exec/compare.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "session/compile_worker.h"
#include "session/session.h"
#include "tests/support/jit_env.h"

namespace hf {
namespace {

Graph example(const std::string& name) {
  // A path, not a chain of string +: GCC 12 warns (-Warray-bounds) on the inlined copies.
  const std::filesystem::path dir = std::filesystem::path(HF_SOURCE_DIR) / "traces/graphs";
  return read_graph_json((dir / (name + ".json")).string());
}

fusion::KernelSpec first_spec(const Graph& g) {
  fusion::Detection d = fusion::detect_regions(g);
  EXPECT_FALSE(d.regions.empty());
  return fusion::build_region_kernel(g, d.regions.at(0)).spec;
}

TEST(KernelCache, HostCacheEnsuresCachesAndKeepsSources) {
  JitEnv env;
  fusion::KernelCache& k = *env.cache;
  fusion::KernelSpec spec = first_spec(example("gelu_chain"));
  const std::string name = fusion::KernelCache::kernel_name(spec);
  EXPECT_FALSE(k.cached(spec));
  fusion::CompileOutcome c = k.ensure(spec, "test");
  ASSERT_TRUE(c.ok) << c.message;
  EXPECT_EQ(c.source, fusion::CompileOutcome::Compiled);
  EXPECT_TRUE(k.cached(spec));
  // What FusingCpuBackend looks up.
  EXPECT_NE(dynamic_cast<const fusion::HostKernel*>(k.find(spec)), nullptr);
  EXPECT_EQ(k.ensure(spec, "test").source, fusion::CompileOutcome::Memory);
  EXPECT_EQ(k.compiles(), 1);
  EXPECT_EQ(k.memory_hits(), 1);
  EXPECT_EQ(k.disk_hits(), 0);

  auto second = env.fresh_process();
  EXPECT_TRUE(second->cached(spec));  // on disk
  c = second->ensure(spec, "test");
  ASSERT_TRUE(c.ok) << c.message;
  EXPECT_EQ(c.source, fusion::CompileOutcome::Disk);
  EXPECT_NE(dynamic_cast<const fusion::HostKernel*>(second->find(spec)), nullptr);
  EXPECT_EQ(second->compiles(), 0);
  EXPECT_EQ(second->disk_hits(), 1);

  std::filesystem::path kept = k.keep_source(spec, "graph 'g', nodes: 1:a");
  EXPECT_EQ(kept.filename(), name + ".cpp");
  std::ifstream f(kept);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(name), std::string::npos);
  EXPECT_EQ(text, k.source(spec, "graph 'g', nodes: 1:a"));
}

// The key CpuKernelCache computed before KernelCache replaced it, for every example's
// kernels: libraries cached by an earlier build still hit.
TEST(KernelCache, HostDiskKeyIsTheOldCpuCachesKey) {
  JitEnv env;
  int kernels = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(HF_SOURCE_DIR) + "/traces/graphs")) {
    Graph g = read_graph_json(e.path().string());
    for (const fusion::Region& r : fusion::detect_regions(g).regions) {
      fusion::KernelSpec spec = fusion::build_region_kernel(g, r).spec;
      const std::string name = fusion::KernelCache::kernel_name(spec);
      EXPECT_EQ(env.cache->disk_key(spec),
                fusion::DiskCache::make_key(
                    {fusion::generate_cpp(spec, name, ""), "cpu", fusion::host_cache_identity()}))
          << e.path();
      ++kernels;
    }
  }
  EXPECT_GE(kernels, 7);
}

TEST(CompileWorker, CompilesThroughAnyEnsureKernelAndSurvivesItsExceptions) {
  Graph g = example("gelu_chain");
  fusion::KernelSpec spec = first_spec(g);
  std::atomic<int> calls{0};
  CompileWorker worker([&](const fusion::KernelSpec& s, const std::string& origin) {
    ++calls;
    if (origin == "throws") throw std::runtime_error("generator bug");
    fusion::CompileOutcome c;
    c.ok = s.hash() == spec.hash();
    c.source = fusion::CompileOutcome::Disk;
    return c;
  });
  worker.submit({{0, spec, "fine", 1}, {1, spec, "throws", 0}});
  worker.wait_idle();
  std::vector<CompileDone> done = worker.take_done();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(done[0].region, 0);  // priority 1 first
  EXPECT_TRUE(done[0].outcome.ok);
  EXPECT_EQ(done[0].outcome.source, fusion::CompileOutcome::Disk);
  EXPECT_FALSE(done[1].outcome.ok);
  EXPECT_NE(done[1].outcome.message.find("generator bug"), std::string::npos)
      << done[1].outcome.message;
  EXPECT_NE(done[1].outcome.message.find("its region runs unfused"), std::string::npos);
}

// The CPU backend, but its memory treated as a device's: the session must download what
// it validates (through this backend) instead of reading plan buffers in place.
class CountingBackend final : public WrappingBackend {
 public:
  explicit CountingBackend(Backend& inner) : WrappingBackend(inner) {}
  std::unique_ptr<Kernel> make_kernel(const Graph& g, const Node& n) override {
    return inner().make_kernel(g, n);
  }
  void download(void* dst, const void* src, size_t bytes) override {
    ++downloads;
    WrappingBackend::download(dst, src, bytes);
  }
  int downloads = 0;
};

TEST(SessionTarget, DeviceMemoryTargetValidatesDownloadedLiveOuts) {
  JitEnv env;
  Graph g = example("activation_chain");
  cpu::CpuBackend cpu;
  CountingBackend counting(cpu);
  SessionTarget t = cpu_session_target(cpu, *env.cache);
  t.backend = &counting;
  t.host_memory = false;
  SessionOptions o;
  o.sync_compile = true;
  o.warmup_min_s = 0;
  o.select.min_share = 0;
  o.select.expected_iters = 1'000'000'000;
  std::vector<HostTensor> in = random_inputs(g, 2);
  std::vector<TensorView> views;
  for (const HostTensor& h : in) views.push_back(h.view());
  std::vector<HostTensor> want;
  {
    Executor unfused(g, cpu);
    for (const TensorView& v : unfused.run(views)) {
      want.emplace_back(v.dtype, v.shape);
      std::memcpy(want.back().data(), v.data, want.back().bytes());
    }
  }
  // A machine so fast that every region's predicted kernel time is ~0: selection picks
  // every region whatever the load did to the profile, so validation always happens (with
  // the measured peak, a loaded ASan run once rejected the only region).
  MachinePeak machine = measure_machine(cpu::ThreadPool::global());
  machine.bandwidth_gbps = 1e6;
  machine.gflops = 1e9;
  machine.launch_us = 0;
  Session s(g, std::move(t), machine, o);
  int validating = 0;
  for (int i = 0; i < 200 && !s.settled(); ++i) {
    int before = counting.downloads;
    std::span<const TensorView> out = s.run(views);
    if (s.iterations().back().phase == Phase::Validating) {
      ++validating;
      EXPECT_GT(counting.downloads, before);  // both sides of every live-out
    } else {
      EXPECT_EQ(counting.downloads, before);  // only validation reads plan memory
    }
    for (size_t k = 0; k < out.size(); ++k)
      EXPECT_EQ(compare(want[k].view(), out[k], fused_tolerance(out[k].dtype)).index, -1);
  }
  ASSERT_TRUE(s.settled()) << phase_name(s.phase());
  std::string states;
  for (const RegionRecord& r : s.regions())
    states += "region " + std::to_string(r.id) + ": " + std::string(region_state_name(r.state)) +
              " (" + r.reason + ")\n";
  EXPECT_GT(validating, 0) << states;
  int validated = 0;
  for (const RegionRecord& r : s.regions())
    if (r.swapped_at >= 0) {
      ++validated;
      EXPECT_EQ(r.validation.rfind("passed", 0), 0u) << r.validation;
    }
  EXPECT_GT(validated, 0);
}

}  // namespace
}  // namespace hf
