// JIT cost (issue 9, part 3), per fused kernel of the example graphs (tools/make_examples.py):
//
//   BM_CompileHost/<graph>   cold: generate C++, run the host compiler, dlopen (empty caches)
//   BM_CompileNvrtc/<graph>  cold: generate CUDA, NVRTC to PTX for sm_80 (no GPU needed)
//   BM_LoadDisk/<graph>      warm: the kernel from the disk cache (DiskCache) into a fresh
//                            in-memory cache: verify, write into the workdir, dlopen
//   BM_Run*/<graph>          one Executor::run of the graph at 64 elements, 1 and 2 threads:
//                            unfused vs fused, so the time is host overhead, not math.
//                            Counter: kernels (steps per iteration).
//
// The graphs come from $HF_JIT_BENCH_GRAPHS (a make_examples.py output folder; bench/run_all.sh
// sets it); without it every benchmark is skipped with that reason. The compile benchmarks
// run a fixed 3 iterations each (a compile is ~0.3 s); the time is the real (wall) time.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "fusion/codegen_cuda.h"
#include "fusion/detect.h"
#include "fusion/disk_cache.h"
#include "fusion/host_toolchain.h"
#include "fusion/kernel_cache.h"
#include "fusion/nvrtc_compiler.h"
#include "fusion/region_spec.h"
#include "fusion/workdir.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "session/fuse_graph.h"
#include "session/fusing_backend.h"

namespace fs = std::filesystem;
using namespace hf;

namespace {

const char* kGraphs[] = {"abc",  "ab_plus_c", "gelu_chain",     "activation_chain",
                         "adam", "layernorm", "bias_activation"};

std::string graph_text(const std::string& name) {
  const char* dir = std::getenv("HF_JIT_BENCH_GRAPHS");
  if (!dir) return {};
  std::ifstream f(fs::path(dir) / (name + ".json"));
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A fresh private temp directory, removed when this object dies.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "hf-jit-bench-XXXXXX").string();
    if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// The first region's kernel spec of the graph (every example fuses into one region).
bool first_spec(benchmark::State& state, const std::string& name, fusion::KernelSpec* spec) {
  std::string text = graph_text(name);
  if (text.empty()) {
    state.SkipWithError("set HF_JIT_BENCH_GRAPHS to a tools/make_examples.py folder");
    return false;
  }
  Graph g = parse_graph_json(text, name);
  fusion::Detection d = fusion::detect_regions(g);
  if (d.regions.empty()) {
    state.SkipWithError("no region detected");
    return false;
  }
  *spec = fusion::build_region_kernel(g, d.regions.front()).spec;
  return true;
}

void BM_CompileHost(benchmark::State& state, const std::string& name) {
  fusion::KernelSpec spec;
  if (!first_spec(state, name, &spec)) return;
  for (auto _ : state) {
    TempDir cache_dir;
    fusion::KernelCache cache(fusion::host_toolchain(), fusion::Workdir::open(std::nullopt, false),
                              std::make_shared<fusion::DiskCache>(cache_dir.path));
    auto t0 = std::chrono::steady_clock::now();
    fusion::CompileOutcome r = cache.ensure(spec, name);
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!r.ok || r.source != fusion::CompileOutcome::Compiled) {
      state.SkipWithError(("not compiled: " + r.message).c_str());
      return;
    }
  }
}

void BM_LoadDisk(benchmark::State& state, const std::string& name) {
  fusion::KernelSpec spec;
  if (!first_spec(state, name, &spec)) return;
  TempDir cache_dir;
  auto disk = std::make_shared<fusion::DiskCache>(cache_dir.path);
  {
    fusion::KernelCache warmup(fusion::host_toolchain(), fusion::Workdir::open(std::nullopt, false),
                               disk);
    if (!warmup.ensure(spec, name).ok) {
      state.SkipWithError("compile failed");
      return;
    }
  }
  for (auto _ : state) {
    fusion::KernelCache cache(fusion::host_toolchain(), fusion::Workdir::open(std::nullopt, false),
                              disk);
    auto t0 = std::chrono::steady_clock::now();
    fusion::CompileOutcome r = cache.ensure(spec, name);
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!r.ok || r.source != fusion::CompileOutcome::Disk) {
      state.SkipWithError("not a disk hit");
      return;
    }
  }
}

void BM_CompileNvrtc(benchmark::State& state, const std::string& name) {
  if (!fusion::nvrtc_available()) {
    state.SkipWithError("NVRTC not available in this build");
    return;
  }
  fusion::KernelSpec spec;
  if (!first_spec(state, name, &spec)) return;
  std::string kname = fusion::KernelCache::kernel_name(spec);
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    std::string src = fusion::generate_cuda(spec, kname, name);
    fusion::PtxResult r = fusion::compile_ptx(src, kname, fusion::clamp_arch(80));
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!r.ok) {
      state.SkipWithError(("NVRTC failed: " + r.log.substr(0, 200)).c_str());
      return;
    }
  }
  state.SetLabel(fusion::nvrtc_identity());
}

// The graph at 64 elements (1-D examples only: their shape is a single [N]).
std::string tiny(const std::string& text) {
  if (std::regex_search(text, std::regex("\"shape\": \\[\\d+,"))) return {};
  std::smatch m;
  static const std::regex one_dim("\"shape\": \\[(\\d+)\\]");
  if (!std::regex_search(text, m, one_dim)) return {};
  return std::regex_replace(text, std::regex("\"shape\": \\[" + m[1].str() + "\\]"),
                            "\"shape\": [64]");
}

void BM_Run(benchmark::State& state, const std::string& name, bool fused) {
  std::string text = graph_text(name);
  if (text.empty()) {
    state.SkipWithError("set HF_JIT_BENCH_GRAPHS to a tools/make_examples.py folder");
    return;
  }
  text = tiny(text);
  if (text.empty()) {
    state.SkipWithError("not a 1-D graph");
    return;
  }
  Graph g = parse_graph_json(text, name);
  TempDir cache_dir;
  fusion::KernelCache cache(fusion::host_toolchain(), fusion::Workdir::open(std::nullopt, false),
                            std::make_shared<fusion::DiskCache>(cache_dir.path));
  FusionResult fr =
      fuse_graph(g, fused ? fusion::FusionLevel::All : fusion::FusionLevel::Off, cache);
  if (fused && fr.regions_fused == 0) {
    state.SkipWithError("nothing fused");
    return;
  }
  cpu::ThreadPool pool(static_cast<int>(state.range(0)));
  cpu::CpuBackend base(&pool);
  FusingCpuBackend backend(base, cache);
  Executor exec(fr.graph, backend);
  std::vector<HostTensor> inputs = random_inputs(g, 1);
  std::vector<TensorView> views;
  for (const HostTensor& t : inputs) views.push_back(t.view());
  for (auto _ : state) benchmark::DoNotOptimize(exec.run(views).data());
  state.counters["kernels"] = static_cast<double>(exec.plan().steps().size());
}

int register_all() {
  for (const char* n : kGraphs) {
    std::string name = n;
    benchmark::RegisterBenchmark(("BM_CompileHost/" + name).c_str(), BM_CompileHost, name)
        ->Iterations(3)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_CompileNvrtc/" + name).c_str(), BM_CompileNvrtc, name)
        ->Iterations(3)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_LoadDisk/" + name).c_str(), BM_LoadDisk, name)
        ->Iterations(20)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_RunUnfused/" + name).c_str(), BM_Run, name, false)
        ->Arg(1)
        ->Arg(2)
        ->ArgName("threads")
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_RunFused/" + name).c_str(), BM_Run, name, true)
        ->Arg(1)
        ->Arg(2)
        ->ArgName("threads")
        ->Unit(benchmark::kMicrosecond);
  }
  return 0;
}
const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
