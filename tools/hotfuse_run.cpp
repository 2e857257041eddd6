// hotfuse-run: runs a graph on deterministic random inputs and profiles every operator.
//
// Exit codes: 0 success, 2 bad input (file, graph, option), 1 internal error.
#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>

#include "profiler/step_times.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"

namespace {

struct Options {
  std::string graph;
  int iters = 20;
  int warmup = 3;
  std::string backend = "auto";
  uint64_t seed = 0;
  int threads = 0;
};

int run(const Options& o) {
  using namespace hf;
  if (o.backend == "cuda")
    throw Error("--backend cuda: this build has no CUDA backend; use --backend cpu or auto");
  Graph g = read_graph_json(o.graph);
  cpu::ThreadPool pool(o.threads);
  cpu::CpuBackend backend(&pool);
  if (o.backend == "auto")
    std::cout << "backend auto: using cpu (this build has no CUDA backend)\n";

  Executor exec(g, backend);
  std::vector<HostTensor> inputs = random_inputs(g, o.seed);
  std::vector<TensorView> views;
  for (const HostTensor& t : inputs) views.push_back(t.view());

  std::cout << "graph '" << g.name << "' (" << o.graph << "): " << g.live_node_count()
            << " nodes, " << exec.plan().steps().size() << " kernels, "
            << exec.plan().buffer_bytes() / 1048576.0 << " MiB planned; cpu, " << pool.size()
            << " threads\n";
  for (int i = 0; i < o.warmup; ++i) exec.run(views);
  StepTimes times(exec.plan().steps().size(), o.iters);
  std::vector<double> iter_s;
  for (int i = 0; i < o.iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    exec.run(views, &times);
    iter_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::cout << "iterations: " << o.iters << " (after " << o.warmup << " warm-up), median "
            << median_of(iter_s) * 1e3 << " ms per iteration\n";
  print_op_table(std::cout, op_rows(g, exec.plan(), times));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"hotfuse-run: run a graph on random inputs and profile every operator"};
  app.add_option("GRAPH", o.graph, "graph file (native JSON, see docs/graph-format.md)")
      ->required();
  app.add_option("--iters", o.iters, "timed iterations")->check(CLI::Range(1, 1000000000))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "untimed iterations first")
      ->check(CLI::Range(0, 1000000000))->capture_default_str();
  app.add_option("--backend", o.backend, "where to run: auto picks cuda when a GPU is present")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))->capture_default_str();
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
