// hotfuse-run: runs a graph on deterministic random inputs and profiles every operator.
// --fusion adaptive (the default) runs an adaptive Session: profile unfused, fuse the hot
// regions in the background, swap them in, validate, keep what is faster. static|all run
// the graph again fused up front; every fused run is checked against the unfused one.
//
// Exit codes: 0 success, 2 bad input (file, graph, option), 1 internal error (including
// fused results that do not match unfused ones).
#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "dump/dump_dir.h"
#include "dump/write_dump.h"
#include "fusion/detect.h"
#include "fusion/kernel_cache.h"
#include "fusion/workdir.h"
#include "profiler/machine_probe.h"
#include "profiler/step_times.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/device_inputs.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/onnx_import.h"
#include "runtime/io/random_inputs.h"
#include "runtime/io/test_data.h"
#include "runtime/ir/error.h"
#include "session/backend_select.h"
#include "session/fuse_graph.h"
#include "session/fusing_cuda_backend.h"
#if HF_HAVE_CUDA_BACKEND
#include "profiler/cupti_profile.h"
#include "runtime/cuda/caching_allocator.h"
#include "runtime/cuda/copy_probe.h"
#include "runtime/cuda/device_peak.h"
#endif
#include "session/fusing_backend.h"
#include "session/session.h"
#include "session/session_report.h"
#include "tools/check_mode.h"
#include "tools/output_files.h"

namespace {

using namespace hf;

struct Options {
  std::string graph;
  int iters = 20;
  int warmup = 3;
  std::string backend = "auto";
  std::string fusion = "adaptive";
  std::string report;
  uint64_t seed = 0;
  int threads = 0;
  // adaptive only
  int profile_iters = 10;
  int reprofile_iters = 5;
  double min_saving = 1.0;  // percent of the iteration
  int64_t expected_iters = 10000;
  bool sync_compile = false;
  double settle_timeout = 300;  // seconds
  std::string dump;             // --dump DIR (docs/dumps.md)
  bool force = false;           // --force: overwrite the dump's files in a non-empty DIR
  // TensorProto files (docs/onnx.md)
  std::string check;  // --check DIR: run DIR's test data sets, compare the outputs
  double atol = 1e-3, rtol = 1e-3;
  std::string inputs;        // --inputs DIR: input_*.pb instead of random inputs
  std::string save_outputs;  // --save-outputs DIR: output_*.pb
};

constexpr std::chrono::milliseconds kMinWarmup{200};

struct Measured {
  double median_ms = 0;
  int kernels = 0;
  size_t peak_bytes = 0;  // memory the plan allocates (Plan::buffer_bytes)
  std::vector<OpRow> rows;
  std::vector<HostTensor> outputs;  // copies: executor views die with the next run
};

// Host copies of a backend's output views (device memory on CUDA).
std::vector<HostTensor> copies(Backend& backend, std::span<const TensorView> views) {
  std::vector<HostTensor> out;
  for (const TensorView& v : views) {
    HostTensor t(v.dtype, v.shape);
    backend.download(t.data(), v.data, t.bytes());
    out.push_back(std::move(t));
  }
  return out;
}

Measured measure(const Graph& g, Backend& backend, const std::vector<TensorView>& inputs,
                 const Options& o) {
  Executor exec(g, backend);
  // --warmup iterations, and at least 0.2 s: the thread pool's workers may not run in
  // parallel yet right after start-up (bench/RESULTS.md), which would skew every number.
  auto w0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.warmup || std::chrono::steady_clock::now() - w0 < kMinWarmup; ++i)
    exec.run(inputs);
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
  m.peak_bytes = exec.plan().buffer_bytes();
  m.rows = op_rows(g, exec.plan(), times);
  m.outputs = copies(backend, out);
  return m;
}

nlohmann::json report_doc(const Graph& g, const Options& o, const Measured& before,
                          const Measured* after, const FusionResult* fused) {
  using json = nlohmann::json;
  json summary = {{"graph", g.name},
                  {"fusion", o.fusion},
                  {"iterations", o.iters},
                  {"unfused_ms", before.median_ms},
                  {"fused_ms", nullptr},
                  {"speedup", nullptr},
                  {"kernels_before", before.kernels},
                  {"kernels_after", before.kernels},
                  {"peak_bytes_before", before.peak_bytes},
                  {"peak_bytes_after", before.peak_bytes},
                  {"compile_ms_total", 0.0},
                  {"cache_hits", 0}};
  json regions = json::array();
  if (after && fused && (fused->regions_fused > 0 || fused->static_rewrites > 0)) {
    summary["fused_ms"] = after->median_ms;
    summary["speedup"] = before.median_ms / after->median_ms;
    summary["kernels_after"] = after->kernels;
    summary["peak_bytes_after"] = after->peak_bytes;
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
    ops.push_back({{"node", r.node},
                   {"op", r.op},
                   {"output", r.output},
                   {"time_ms", r.seconds * 1e3},
                   {"bytes", r.bytes},
                   {"gbps", r.gbps()}});
  json doc = {{"summary", summary}, {"decisions", regions}, {"ops", ops}};
  if (fused) doc["failures"] = fused->failures;
  return doc;
}

void write_report(const std::string& path, const Graph& g, const Options& o, const Measured& before,
                  const Measured* after, const FusionResult* fused) {
  nlohmann::json doc = report_doc(g, o, before, after, fused);
  std::ofstream f(path);
  if (!f) throw Error("--report " + path + ": cannot write the file");
  f << doc.dump(2) << "\n";
  if (!f) throw Error("--report " + path + ": write error");
}

// The worst share of its tolerance any output element used; throws on a mismatch.
double check_outputs(const Graph& g, const std::vector<HostTensor>& unfused,
                     const std::vector<HostTensor>& fused) {
  double worst = 0;
  for (size_t i = 0; i < fused.size(); ++i) {
    const TensorView& e = unfused[i].view();
    Mismatch m = compare(e, fused[i].view(), fused_tolerance(e.dtype));
    worst = std::max(worst, m.worst_ratio);
    if (m.index >= 0)
      throw std::runtime_error("fused output '" + g.value(g.outputs()[i]).name +
                               "' differs from unfused at element " + std::to_string(m.index) +
                               ": " + std::to_string(m.actual) + " vs " +
                               std::to_string(m.expected));
  }
  return worst;
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) std::cerr << "hotfuse-run: " << w << "\n";
}

void dump_fusion(dump::DumpDir* dir, const Graph& g, const Options& o, const Measured& before,
                 const Measured* after, const FusionResult* fused) {
  if (!dir) return;
  dump::FusionDump d;
  d.graph = &g;
  d.mode = o.fusion;
  d.before_rows = &before.rows;
  d.before_ms = before.median_ms;
  d.fused = fused;
  d.after_rows = after ? &after->rows : nullptr;
  d.after_ms = after ? after->median_ms : 0;
  d.report = report_doc(g, o, before, after, fused);
  print_warnings(dump::write_fusion_dump(*dir, d));
  std::cout << "dump: " << dir->written().size() << " files in " << dir->path().string() << "\n";
}

std::vector<OpRow> rows_of(const std::vector<OpRecord>& ops) {
  std::vector<OpRow> rows;
  for (const OpRecord& o : ops)
    rows.push_back({o.name, o.op, o.output, o.cost.seconds, o.cost.bytes, o.cost.flops});
  return rows;
}

SessionOptions session_options(const Options& o) {
  SessionOptions so;
  so.warmup_iters = o.warmup;
  so.profile_iters = o.profile_iters;
  so.reprofile_iters = o.reprofile_iters;
  so.sync_compile = o.sync_compile;
  so.select.min_share = o.min_saving / 100;
  so.select.expected_iters = o.expected_iters;
  return so;
}

// --fusion adaptive on either backend: `views` are in `target`'s backend memory (the
// host's on the CPU, DeviceInputs on CUDA); outputs are downloaded to compare and save.
int run_adaptive(const Options& o, const Graph& g, SessionTarget target, const MachinePeak& machine,
                 const std::vector<TensorView>& views, dump::DumpDir* dump_dir,
                 dump::DumpDir* save_dir) {
  Backend& backend = *target.backend;
  std::printf("machine: %.1f GB/s, %.0f GFLOP/s, %.1f us per launch (%s)\n", machine.bandwidth_gbps,
              machine.gflops, machine.launch_us, machine.source.c_str());
  SessionOptions so = session_options(o);
  so.trace = dump_dir != nullptr;  // trace.json
  so.trace_max_steps = 200000;
  Session session(g, std::move(target), machine, so);

  auto print_events = [&] {
    for (const SessionEvent& e : session.take_events())
      std::cout << "iter " << e.iteration << ": " << e.text << "\n";
  };
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  while (!session.settled()) {
    session.run(views);
    print_events();
    if (elapsed() > o.settle_timeout) {
      std::cerr << "hotfuse-run: still " << phase_name(session.phase()) << " after "
                << o.settle_timeout << " s (--settle-timeout); measuring as it is\n";
      break;
    }
  }
  std::span<const TensorView> out;
  for (int i = 0; i < o.iters; ++i) {
    out = session.run(views);
    print_events();
  }
  std::vector<HostTensor> fused = copies(backend, out);
  if (save_dir) save_outputs(*save_dir, g, fused);

  std::cout << "\nunfused profile (" << o.profile_iters << " iterations):\n";
  std::vector<OpRow> rows = rows_of(session.unfused_ops());
  print_op_table(std::cout, rows);
  if (!session.fused_ops().empty()) {
    std::cout << "\nfused profile (after the last swap):\n";
    print_op_table(std::cout, rows_of(session.fused_ops()));
  }
  std::cout << "\nregions:\n";
  for (const RegionRecord& r : session.regions())
    std::cout << "  " << r.id << " " << r.kernel << " [" << region_state_name(r.state) << "] "
              << r.reason << "\n";

  // The session validated every swap; check the final outputs end to end as well.
  Executor reference(g, backend);
  double worst = check_outputs(g, copies(backend, reference.run(views)), fused);
  double before = session.median_ms(Phase::Profiling);
  double after = session.median_ms(Phase::Steady);
  int kept = 0;
  for (const RegionRecord& r : session.regions()) kept += r.state == RegionState::Swapped;
  if (kept == 0)
    std::cout << "\nnothing fused: " << session.kernels_before() << " kernels, " << after
              << " ms per iteration\n";
  else
    std::cout << "\nkernels " << session.kernels_before() << " -> " << session.kernels_now() << "; "
              << before << " ms -> " << after << " ms per iteration (" << before / after
              << "x); peak memory " << session.peak_bytes_before() << " -> "
              << session.peak_bytes_now() << " bytes; outputs match unfused (worst element "
              << "within " << worst << " of its tolerance)\n";
  if (!o.report.empty()) {
    nlohmann::json doc = session_report(session, {o.graph, o.iters});
    std::ofstream f(o.report);
    if (!f) throw Error("--report " + o.report + ": cannot write the file");
    f << doc.dump(2) << "\n";
    if (!f) throw Error("--report " + o.report + ": write error");
  }
  if (dump_dir) {
    nlohmann::json report = session_report(session, {o.graph, o.iters});
    print_warnings(dump::write_session_dump(*dump_dir, session, report));
    std::cout << "dump: " << dump_dir->written().size() << " files in " << dump_dir->path().string()
              << "\n";
  }
  return 0;
}

// After a fused run on either backend: outputs checked against the unfused run (a mismatch
// throws), the summary line, then what the user asked to be written.
int finish_fused(const Options& o, const Graph& g, const Measured& before, const Measured& after,
                 const FusionResult& fused, dump::DumpDir* dir, dump::DumpDir* save) {
  double worst = check_outputs(g, before.outputs, after.outputs);
  std::cout << "\nkernels " << before.kernels << " -> " << after.kernels << "; " << before.median_ms
            << " ms -> " << after.median_ms << " ms per iteration ("
            << before.median_ms / after.median_ms << "x); compile " << fused.compile_ms_total
            << " ms (" << fused.compiled << " compiled, " << fused.cache_hits
            << " from cache); outputs match unfused (worst element within " << worst
            << " of its tolerance)\n";
  if (save) save_outputs(*save, g, after.outputs);
  if (!o.report.empty()) write_report(o.report, g, o, before, &after, &fused);
  dump_fusion(dir, g, o, before, &after, &fused);
  return 0;
}

#if HF_HAVE_CUDA_BACKEND
// Device time per op from CUPTI, and the cost of recording it; without CUPTI one warning
// and CUDA-event timing around every step instead.
void print_device_profile(const Graph& g, Backend& b, const cuda::CudaBackend& gpu,
                          const std::vector<TensorView>& in, const Options& o, const char* what) {
  static bool warned = false;
  cuda::CuptiProfile p = cuda::profile_with_cupti(g, b, gpu, in, o.iters);
  if (!p.cupti && !warned) {
    std::cerr << "hotfuse-run: CUPTI unavailable (" << p.why_not
              << "); device times come from CUDA events around each step\n";
    warned = true;
  }
  std::cout << "\n" << what << ", device time per op (";
  if (p.cupti)
    std::cout << "CUPTI, " << p.records << " records, " << p.uncorrelated << " without a node, "
              << p.dropped << " dropped";
  else
    std::cout << "CUDA events";
  std::cout << "; profiling overhead " << 100 * p.overhead() << "%: " << p.plain_ms << " -> "
            << p.traced_ms << " ms per iteration):\n";
  print_op_table(std::cout, p.rows);
}

// --backend cuda (or auto on a GPU machine) with --fusion adaptive: the session on the
// device, its yardsticks measured there (device_peak), NVRTC kernels compiled on its worker.
int run_cuda_adaptive(const Options& o, const Graph& g, cuda::CudaBackend& gpu,
                      const std::vector<HostTensor>& inputs, dump::DumpDir* dir,
                      dump::DumpDir* save) {
  const cuda::DeviceStatus& dev = gpu.device();
  std::cout << "graph '" << g.name << "' (" << o.graph << "): " << g.live_node_count()
            << " nodes; cuda " << dev.name << "; adaptive fusion\n";
  if (fusion::jit_backend_from_env() == "CPU")  // a bad value throws
    std::cerr << "hotfuse-run: MGB_JIT_BACKEND=CPU needs the CPU backend; this run is on CUDA, "
                 "so kernels are generated for NVRTC\n";
  MachinePeak machine = cuda::device_peak(gpu);
  DeviceInputs in(gpu, inputs);
  std::unique_ptr<fusion::KernelCache> cache = cuda_kernel_cache(dev.arch);
  // Declared after `in` and `cache`: the session (inside run_adaptive) goes first.
  return run_adaptive(o, g, cuda_session_target(gpu, *cache), machine, in.views, dir, save);
}

// --backend cuda (or auto on a GPU machine) with --fusion off|static|all: the unfused run
// on the CUDA backend, then the fused graph with NVRTC kernels, checked against it.
int run_cuda(const Options& o, const Graph& g, cuda::CudaBackend& gpu, fusion::FusionLevel level,
             const std::vector<HostTensor>& inputs, dump::DumpDir* dir, dump::DumpDir* save) {
  const cuda::DeviceStatus& dev = gpu.device();
  std::cout << "graph '" << g.name << "' (" << o.graph << "): " << g.live_node_count()
            << " nodes; cuda " << dev.name << "; " << o.iters << " iterations after " << o.warmup
            << " warm-up\n";
  std::cout << "device-to-device copy: " << cuda::d2d_copy_gbps(gpu) << " GB/s\n";
  DeviceInputs in(gpu, inputs);
  Measured before = measure(g, gpu, in.views, o);
  std::cout << "\nunfused: " << before.kernels << " kernels, median " << before.median_ms
            << " ms per iteration\n";
  print_op_table(std::cout, before.rows);
  print_device_profile(g, gpu, gpu, in.views, o, "unfused");
  if (level == fusion::FusionLevel::Off) {
    if (save) save_outputs(*save, g, before.outputs);
    if (!o.report.empty()) write_report(o.report, g, o, before, nullptr, nullptr);
    dump_fusion(dir, g, o, before, nullptr, nullptr);
    return 0;
  }
  if (fusion::jit_backend_from_env() == "CPU")  // a bad value throws
    std::cerr << "hotfuse-run: MGB_JIT_BACKEND=CPU needs the CPU backend; this run is on CUDA, "
                 "so kernels are generated for NVRTC\n";
  std::unique_ptr<fusion::KernelCache> cache = cuda_kernel_cache(dev.arch);
  FusionResult fused = fuse_graph(g, level, *cache);
  for (const std::string& f : fused.failures) std::cerr << "hotfuse-run: " << f << "\n";
  FusingCudaBackend fusing(gpu, *cache);
  Measured after;
  try {
    after = measure(fused.graph, fusing, in.views, o);
  } catch (const cuda::DeviceOutOfMemory& e) {
    // Device memory is the one fault the fused plan can hit that the unfused one, already
    // run and checked, did not: degrade to it with one line (docs/reliability.md).
    std::cerr << "hotfuse-run: the fused plan: " << e.what()
              << "; the unfused plan and its results stand\n";
    if (save) save_outputs(*save, g, before.outputs);
    if (!o.report.empty()) write_report(o.report, g, o, before, nullptr, nullptr);
    dump_fusion(dir, g, o, before, nullptr, nullptr);
    return 0;
  }
  std::cout << "\nfused (--fusion " << o.fusion << "): " << after.kernels << " kernels, median "
            << after.median_ms << " ms per iteration\n";
  print_op_table(std::cout, after.rows);
  print_device_profile(fused.graph, fusing, gpu, in.views, o, "fused");
  return finish_fused(o, g, before, after, fused, dir, save);
}
#endif

int check(const Options& o, Backend* cuda) {
  CheckOptions c;
  c.cuda = cuda;
  c.dir = o.check;
  c.atol = o.atol;
  c.rtol = o.rtol;
  c.fusion = o.fusion;
  c.threads = o.threads;
  c.session = session_options(o);
  c.settle_timeout = o.settle_timeout;
  return run_check(c);
}

int run(const Options& o) {
  if (!o.check.empty()) {
    // As a plain run: cuda without a device is exit 2, auto says which backend it picked.
    BackendChoice choice = choose_backend(o.backend);
    if (!choice.line.empty()) std::cout << choice.line << "\n" << std::flush;
    return check(o, choice.cuda.get());
  }
  // Refused before the graph is read: a missing device costs nothing.
  BackendChoice choice = choose_backend(o.backend);
  auto level = fusion::parse_fusion_level(o.fusion == "adaptive" ? "all" : o.fusion);
  Graph g = is_onnx_path(o.graph) ? read_graph_onnx(o.graph) : read_graph_json(o.graph);
  // Checked before anything runs: a refused directory costs nothing.
  std::optional<dump::DumpDir> dump_dir;
  if (!o.dump.empty()) dump_dir.emplace(o.dump, o.force);
  dump::DumpDir* dir = dump_dir ? &*dump_dir : nullptr;
  std::optional<dump::DumpDir> save_dir;
  if (!o.save_outputs.empty()) save_dir.emplace(save_outputs_dir(o.save_outputs, o.force));
  dump::DumpDir* save = save_dir ? &*save_dir : nullptr;
  std::vector<HostTensor> inputs =
      o.inputs.empty() ? random_inputs(g, o.seed) : read_graph_inputs(g, o.inputs);
  if (!choice.line.empty()) std::cout << choice.line << "\n";
#if HF_HAVE_CUDA_BACKEND
  if (choice.cuda && o.fusion == "adaptive")
    return run_cuda_adaptive(o, g, static_cast<cuda::CudaBackend&>(*choice.cuda), inputs, dir,
                             save);
  if (choice.cuda)
    return run_cuda(o, g, static_cast<cuda::CudaBackend&>(*choice.cuda), *level, inputs, dir, save);
#endif
  cpu::ThreadPool pool(o.threads);
  cpu::CpuBackend cpu_backend(&pool);

  std::vector<TensorView> views;
  for (const HostTensor& t : inputs) views.push_back(t.view());
  if (o.fusion != "off" && fusion::jit_backend_from_env() == "NVRTC")  // a bad value throws
    std::cerr << "hotfuse-run: MGB_JIT_BACKEND=NVRTC needs the CUDA backend; this run is on "
                 "the CPU, so kernels are generated as C++\n";
  if (o.fusion == "adaptive") {
    std::cout << "graph '" << g.name << "' (" << o.graph << "): " << g.live_node_count()
              << " nodes; cpu, " << pool.size() << " threads; adaptive fusion\n";
    MachinePeak machine = probe_machine(pool, fusion::DiskCache::default_dir());
    return run_adaptive(o, g, cpu_session_target(cpu_backend, fusion::KernelCache::host()), machine,
                        views, dir, save_dir ? &*save_dir : nullptr);
  }

  std::cout << "graph '" << g.name << "' (" << o.graph << "): " << g.live_node_count()
            << " nodes; cpu, " << pool.size() << " threads; " << o.iters << " iterations after "
            << o.warmup << " warm-up\n";
  Measured before = measure(g, cpu_backend, views, o);
  std::cout << "\nunfused: " << before.kernels << " kernels, median " << before.median_ms
            << " ms per iteration\n";
  print_op_table(std::cout, before.rows);

  if (*level == fusion::FusionLevel::Off) {
    if (save_dir) save_outputs(*save_dir, g, before.outputs);
    if (!o.report.empty()) write_report(o.report, g, o, before, nullptr, nullptr);
    dump_fusion(dir, g, o, before, nullptr, nullptr);
    return 0;
  }
  fusion::KernelCache& cache = fusion::KernelCache::host();
  FusionResult fused = fuse_graph(g, *level, cache);
  for (const std::string& f : fused.failures) std::cerr << "hotfuse-run: " << f << "\n";
  FusingCpuBackend fusing(cpu_backend, cache);
  Measured after = measure(fused.graph, fusing, views, o);
  std::cout << "\nfused (--fusion " << o.fusion << "): " << after.kernels << " kernels, median "
            << after.median_ms << " ms per iteration\n";
  print_op_table(std::cout, after.rows);

  return finish_fused(o, g, before, after, fused, dir, save_dir ? &*save_dir : nullptr);
}

// A tolerance: a number >= 0 (CLI11's range check prints its bound in full).
const CLI::Validator kTolerance(
    [](std::string& s) -> std::string {
      size_t used = 0;
      double v = -1;
      try {
        v = std::stod(s, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      return used == s.size() && v >= 0 ? "" : "must be a number >= 0, got '" + s + "'";
    },
    "TOL>=0");

// --check, --atol, --rtol, --inputs, --save-outputs (TensorProto files, docs/onnx.md).
void add_tensor_file_options(CLI::App& app, Options& o) {
  CLI::Option* check =
      app.add_option("--check", o.check,
                     "run DIR/model.onnx on DIR/test_data_set_*/input_*.pb and compare with "
                     "output_*.pb (ONNX backend tests); exit 0 only if every data set passes");
  app.add_option("--atol", o.atol, "--check: absolute tolerance")
      ->check(kTolerance)
      ->capture_default_str();
  app.add_option("--rtol", o.rtol, "--check: relative tolerance")
      ->check(kTolerance)
      ->capture_default_str();
  app.add_option("--inputs", o.inputs, "read the inputs from DIR/input_*.pb instead of random ones")
      ->excludes(check);
  app.add_option("--save-outputs", o.save_outputs,
                 "write the outputs to DIR/output_*.pb; a non-empty DIR is refused without --force")
      ->excludes(check);
}

void check_option_combinations(const Options& o) {
  if (o.graph.empty() == o.check.empty())
    throw CLI::ValidationError(o.check.empty() ? "GRAPH is required (or --check DIR)"
                                               : "GRAPH and --check DIR exclude each other");
  if (o.force && o.dump.empty() && o.save_outputs.empty())
    throw CLI::ValidationError("--force needs --dump or --save-outputs");
  if (!o.check.empty() && (!o.report.empty() || !o.dump.empty()))
    throw CLI::ValidationError("--check writes no --report or --dump; run the model without it");
}

}  // namespace

int main(int argc, char** argv) {
  // Over a file size limit, a write fails (EFBIG, handled like a full disk: the cache and
  // JIT fall back) instead of the signal killing the run.
  std::signal(SIGXFSZ, SIG_IGN);
  Options o;
  CLI::App app{"hotfuse-run: run a graph on random inputs, profile every operator, fuse"};
  app.add_option("GRAPH", o.graph,
                 "graph file: native JSON (docs/graph-format.md) or ONNX, *.onnx (docs/onnx.md)");
  app.add_option("--iters", o.iters, "timed iterations (adaptive: once settled)")
      ->check(CLI::Range(1, 1000000000))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "untimed iterations first (and at least 0.2 s)")
      ->check(CLI::Range(0, 1000000000))
      ->capture_default_str();
  app.add_option("--backend", o.backend, "where to run: auto picks cuda when a GPU is present")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--fusion", o.fusion,
                 "adaptive: profile unfused, JIT-compile the hot regions in the background, "
                 "swap them in, keep what is faster; off: unfused only; static: MegEngine's "
                 "pattern rewrites (FUSE_MUL_ADD3...); all: JIT-compile every fusible region "
                 "up front. Fused runs are checked against unfused")
      ->check(CLI::IsMember({"adaptive", "off", "static", "all"}))
      ->capture_default_str();
  app.add_option("--profile-iters", o.profile_iters,
                 "adaptive: unfused iterations profiled before choosing regions")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--reprofile-iters", o.reprofile_iters,
                 "adaptive: fused iterations timed after a swap before keeping it")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--min-saving", o.min_saving,
                 "adaptive: fuse a region only if it saves at least this percent of an iteration")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  app.add_option("--expected-iters", o.expected_iters,
                 "adaptive: iterations a compile must pay for itself within")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 62))
      ->capture_default_str();
  app.add_flag("--sync-compile", o.sync_compile,
               "adaptive: wait for compiles instead of running on meanwhile (deterministic)");
  app.add_option("--settle-timeout", o.settle_timeout,
                 "adaptive: seconds to wait for compiles and swaps before timing --iters")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  app.add_option("--report", o.report, "write a JSON summary (docs/report.md) to this file");
  app.add_option("--dump", o.dump,
                 "write before/after Graphviz graphs (.dot, .svg), trace.json (Perfetto), "
                 "report.json and the kernels' sources to this directory (docs/dumps.md); "
                 "a non-empty directory is refused without --force");
  app.add_flag("--force", o.force,
               "--dump, --save-outputs: write into a non-empty directory, replacing only the "
               "files they write");
  add_tensor_file_options(app, o);
  app.add_option("--seed", o.seed, "seed of the random inputs")->capture_default_str();
  app.add_option("--threads", o.threads,
                 "CPU threads (0: HOTFUSE_NUM_THREADS, else all hardware threads)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
    check_option_combinations(o);
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
