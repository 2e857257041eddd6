// hotfuse-run: runs a graph on deterministic random inputs, profiles every operator, and
// with --fusion static|all runs it again fused and compares.
//
// Exit codes: 0 success, 2 bad input (file, graph, option), 1 internal error (including
// fused results that do not match unfused ones).
#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "fusion/cpu_kernel_cache.h"
#include "fusion/detect.h"
#include "fusion/workdir.h"
#include "profiler/step_times.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "runtime/session/fuse_graph.h"
#include "runtime/session/fusing_backend.h"

namespace {

using namespace hf;

struct Options {
  std::string graph;
  int iters = 20;
  int warmup = 3;
  std::string backend = "auto";
  std::string fusion = "all";
  std::string report;
  uint64_t seed = 0;
  int threads = 0;
};

struct Measured {
  double median_ms = 0;
  int kernels = 0;
  std::vector<OpRow> rows;
  std::vector<HostTensor> outputs;  // copies: executor views die with the next run
};

Measured measure(const Graph& g, Backend& backend, const std::vector<TensorView>& inputs,
                 const Options& o) {
  Executor exec(g, backend);
  for (int i = 0; i < o.warmup; ++i) exec.run(inputs);
  StepTimes times(exec.plan().steps().size(), o.iters);
  std::vector<double> iter_s;
  std::span<const TensorView> out;
  for (int i = 0; i < o.iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    out = exec.run(inputs, &times);
    iter_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  Measured m;
  m.median_ms = median_of(iter_s) * 1e3;
  m.kernels = static_cast<int>(exec.plan().steps().size());
  m.rows = op_rows(g, exec.plan(), times);
  for (const TensorView& v : out) {
    HostTensor t(v.dtype, v.shape);
    std::memcpy(t.data(), v.data, t.bytes());
    m.outputs.push_back(std::move(t));
  }
  return m;
}

void write_report(const std::string& path, const Graph& g, const Options& o,
                  const Measured& before, const Measured* after, const FusionResult* fused) {
  using json = nlohmann::json;
  json summary = {{"graph", g.name},
                  {"fusion", o.fusion},
                  {"iterations", o.iters},
                  {"unfused_ms", before.median_ms},
                  {"fused_ms", nullptr},
                  {"speedup", nullptr},
                  {"kernels_before", before.kernels},
                  {"kernels_after", before.kernels},
                  {"compile_ms_total", 0.0},
                  {"cache_hits", 0}};
  json regions = json::array();
  if (after && fused && (fused->regions_fused > 0 || fused->static_rewrites > 0)) {
    summary["fused_ms"] = after->median_ms;
    summary["speedup"] = before.median_ms / after->median_ms;
    summary["kernels_after"] = after->kernels;
    summary["compile_ms_total"] = fused->compile_ms_total;
    summary["cache_hits"] = fused->cache_hits;
  }
  if (fused) {
    for (const fusion::Decision& d : fused->detection.decisions) {
      json nodes = json::array();
      for (NodeId n : d.nodes) nodes.push_back(g.node(n).name);
      regions.push_back({{"nodes", nodes}, {"fused", d.fused}, {"reason", d.reason}});
    }
  }
  json ops = json::array();
  for (const OpRow& r : (after ? after->rows : before.rows))
    ops.push_back({{"node", r.node}, {"op", r.op}, {"output", r.output},
                   {"time_ms", r.seconds * 1e3}, {"bytes", r.bytes}, {"gbps", r.gbps()}});
  json doc = {{"summary", summary}, {"decisions", regions}, {"ops", ops}};
  if (fused) doc["failures"] = fused->failures;
  std::ofstream f(path);
  if (!f) throw Error("--report " + path + ": cannot write the file");
  f << doc.dump(2) << "\n";
  if (!f) throw Error("--report " + path + ": write error");
}

int run(const Options& o) {
  if (o.backend == "cuda")
    throw Error("--backend cuda: this build has no CUDA backend; use --backend cpu or auto");
  auto level = fusion::parse_fusion_level(o.fusion);
  Graph g = read_graph_json(o.graph);
  cpu::ThreadPool pool(o.threads);
  cpu::CpuBackend cpu_backend(&pool);
  if (o.backend == "auto")
    std::cout << "backend auto: using cpu (this build has no CUDA backend)\n";

  std::vector<HostTensor> inputs = random_inputs(g, o.seed);
  std::vector<TensorView> views;
  for (const HostTensor& t : inputs) views.push_back(t.view());

  std::cout << "graph '" << g.name << "' (" << o.graph << "): " << g.live_node_count()
            << " nodes; cpu, " << pool.size() << " threads; " << o.iters << " iterations after "
            << o.warmup << " warm-up\n";
  Measured before = measure(g, cpu_backend, views, o);
  std::cout << "\nunfused: " << before.kernels << " kernels, median " << before.median_ms
            << " ms per iteration\n";
  print_op_table(std::cout, before.rows);

  if (*level == fusion::FusionLevel::Off) {
    if (!o.report.empty()) write_report(o.report, g, o, before, nullptr, nullptr);
    return 0;
  }
  if (fusion::jit_backend_from_env() == "NVRTC")  // validated: a bad value is an error
    std::cerr << "hotfuse-run: MGB_JIT_BACKEND=NVRTC needs the CUDA backend; this run is on "
                 "the CPU, so kernels are generated as C++\n";
  fusion::CpuKernelCache& cache = fusion::CpuKernelCache::process();
  FusionResult fused = fuse_graph(g, *level, cache);
  for (const std::string& f : fused.failures) std::cerr << "hotfuse-run: " << f << "\n";
  FusingCpuBackend fusing(cpu_backend, cache);
  Measured after = measure(fused.graph, fusing, views, o);
  std::cout << "\nfused (--fusion " << o.fusion << "): " << after.kernels << " kernels, median "
            << after.median_ms << " ms per iteration\n";
  print_op_table(std::cout, after.rows);

  double worst = 0;
  for (size_t i = 0; i < after.outputs.size(); ++i) {
    const TensorView& e = before.outputs[i].view();
    Mismatch m = compare(e, after.outputs[i].view(), fused_tolerance(e.dtype));
    worst = std::max(worst, m.worst_ratio);
    if (m.index >= 0)
      throw std::runtime_error("fused output '" + g.value(g.outputs()[i]).name +
                               "' differs from unfused at element " + std::to_string(m.index) +
                               ": " + std::to_string(m.actual) + " vs " +
                               std::to_string(m.expected));
  }
  std::cout << "\nkernels " << before.kernels << " -> " << after.kernels << "; " << before.median_ms
            << " ms -> " << after.median_ms << " ms per iteration (" << before.median_ms / after.median_ms
            << "x); compile " << fused.compile_ms_total << " ms (" << fused.compiled
            << " compiled, " << fused.cache_hits << " from cache); outputs match unfused (worst element within " << worst
            << " of its tolerance)\n";
  if (!o.report.empty()) write_report(o.report, g, o, before, &after, &fused);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"hotfuse-run: run a graph on random inputs, profile every operator, fuse"};
  app.add_option("GRAPH", o.graph, "graph file (native JSON, see docs/graph-format.md)")
      ->required();
  app.add_option("--iters", o.iters, "timed iterations")->check(CLI::Range(1, 1000000000))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "untimed iterations first")
      ->check(CLI::Range(0, 1000000000))->capture_default_str();
  app.add_option("--backend", o.backend, "where to run: auto picks cuda when a GPU is present")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))->capture_default_str();
  app.add_option("--fusion", o.fusion,
                 "off: unfused only; static: MegEngine's pattern rewrites (FUSE_MUL_ADD3...); "
                 "all: JIT-compile every fusible region; fused runs are checked against unfused")
      ->check(CLI::IsMember({"off", "static", "all"}))->capture_default_str();
  app.add_option("--report", o.report, "write a JSON summary (docs/report.md) to this file");
  app.add_option("--seed", o.seed, "seed of the random inputs")->capture_default_str();
  app.add_option("--threads", o.threads,
                 "CPU threads (0: HOTFUSE_NUM_THREADS, else all hardware threads)")
      ->check(CLI::Range(0, 1024))->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "hotfuse-run: " << e.what() << " (see --help)\n";
    return 2;
  }
  try {
    return run(o);
  } catch (const hf::Error& e) {
    std::cerr << "hotfuse-run: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "hotfuse-run: out of memory while planning or running " << o.graph << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "hotfuse-run: internal error: " << e.what() << "\n";
    return 1;
  }
}
