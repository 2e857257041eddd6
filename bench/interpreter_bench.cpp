// Interpreted against compiled fused kernels (fusion/spec_interpreter.h): one Executor::run
// of a graph whose every region is fused, with its spec interpreted or its kernel compiled
// (the host compiler, once, before timing), on the CPU backend's threads.
//
//   BM_Fused/<graph>/<tier>   tier 0: compiled, 1: interpreted
//
// Graphs: the examples (traces/graphs, or $HF_JIT_BENCH_GRAPHS) and a GPT-2 block's softmax
// (12 heads x 128 x 128) and LayerNorm (128 x 768) at the sizes the model runs them. Run
// from the repository root, with --benchmark_enable_random_interleaving=true on a shared
// machine.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "fusion/detect.h"
#include "fusion/host_toolchain.h"
#include "fusion/kernel_cache.h"
#include "fusion/region_spec.h"
#include "fusion/workdir.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "session/fusing_backend.h"

namespace fs = std::filesystem;
using namespace hf;

namespace {

const char* kGraphs[] = {"abc",       "ab_plus_c",       "gelu_chain",   "activation_chain", "adam",
                         "layernorm", "bias_activation", "gpt2_softmax", "gpt2_layernorm"};

const char* kGpt2Softmax = R"({"format": "hotfuse-graph", "version": 1, "name": "gpt2_softmax",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [1, 12, 128, 128]}],
  "nodes": [
    {"name": "max", "op": "Reduce", "attrs": {"mode": "MAX", "axes": [-1], "keepdims": 1},
     "inputs": ["x"], "outputs": ["max"]},
    {"name": "sub", "op": "Elemwise", "mode": "SUB", "inputs": ["x", "max"], "outputs": ["sub"]},
    {"name": "exp", "op": "Elemwise", "mode": "EXP", "inputs": ["sub"], "outputs": ["exp"]},
    {"name": "sum", "op": "Reduce", "attrs": {"mode": "SUM", "axes": [-1], "keepdims": 1},
     "inputs": ["exp"], "outputs": ["sum"]},
    {"name": "y", "op": "Elemwise", "mode": "TRUE_DIV", "inputs": ["exp", "sum"],
     "outputs": ["y"]}],
  "outputs": ["y"]})";

std::string graph_text(const std::string& name) {
  if (name == "gpt2_softmax") return kGpt2Softmax;
  const char* env = std::getenv("HF_JIT_BENCH_GRAPHS");
  const fs::path dir = env ? env : "traces/graphs";
  std::ifstream f(dir / ((name == "gpt2_layernorm" ? std::string("layernorm") : name) + ".json"));
  std::stringstream s;
  s << f.rdbuf();
  std::string text = s.str();
  if (name == "gpt2_layernorm") {  // the example's rows of 1024 x 1024, as GPT-2's 128 x 768
    auto at = text.find("[1024, 1024]");
    if (at != std::string::npos) text.replace(at, 12, "[128, 768]");
    at = text.find("[1024]");
    while (at != std::string::npos) {
      text.replace(at, 6, "[768]");
      at = text.find("[1024]");
    }
  }
  return text;
}

fusion::KernelCache& cache() {
  static auto* c = [] {
    static fs::path dir =
        fs::temp_directory_path() / ("hf-interp-bench-" + std::to_string(getpid()));
    return new fusion::KernelCache(fusion::host_toolchain(), fusion::Workdir::open(dir, false),
                                   nullptr);
  }();
  return *c;
}

void BM_Fused(benchmark::State& state, const std::string& name) {
  const std::string text = graph_text(name);
  if (text.empty()) {
    state.SkipWithError("graph not found: run from the repository root");
    return;
  }
  const Graph g = parse_graph_json(text, name);
  const auto tier = state.range(0) ? fusion::KernelTier::Interpreted : fusion::KernelTier::Compiled;
  Graph fused = g;
  for (const fusion::Region& r : fusion::detect_regions(g).regions) {
    const fusion::RegionKernel k = fusion::build_region_kernel(g, r);
    if (k.outputs.empty()) continue;
    if (tier == fusion::KernelTier::Compiled && !cache().ensure(k.spec, name).ok) {
      state.SkipWithError("compile failed");
      return;
    }
    fusion::fuse_region(fused, r, tier);
  }
  static cpu::CpuBackend backend;
  FusingCpuBackend fusing(backend, cache());
  Executor exec(fused, fusing);
  const std::vector<HostTensor> in = random_inputs(g, 1);
  std::vector<TensorView> views;
  for (const HostTensor& t : in) views.push_back(t.view());
  for (int i = 0; i < 3; ++i) exec.run(views);
  for (auto _ : state) benchmark::DoNotOptimize(exec.run(views).data());
  state.counters["kernels"] = static_cast<double>(exec.plan().steps().size());
}

const bool registered = [] {
  for (const char* g : kGraphs)
    benchmark::RegisterBenchmark(("BM_Fused/" + std::string(g)).c_str(), BM_Fused, g)
        ->Arg(0)
        ->Arg(1)
        ->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
