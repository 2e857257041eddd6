// hotfuse-run: runs a graph on deterministic random inputs and profiles every operator.
// Every --fusion mode is a policy of one Session (session/session.h): profile unfused, then
// fuse what the policy selects (adaptive, the default: the hot regions, compiled in the
// background, kept only if faster), validate each swap; the final outputs are checked
// against the unfused plan.
//
// Exit codes: 0 success, 2 bad input (file, graph, option), 1 internal error (including
// fused results that do not match unfused ones).
#include <signal.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "dump/dump_dir.h"
#include "dump/write_dump.h"
#include "fusion/subprocess_util.h"
#include "fusion/workdir.h"
#include "profiler/step_times.h"
#include "profiler/table_text.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/device_inputs.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/onnx_import.h"
#include "runtime/io/random_inputs.h"
#include "runtime/io/secure_fs.h"
#include "runtime/io/test_data.h"
#include "runtime/ir/error.h"
#include "runtime/ir/f32_precision.h"
#include "runtime/ir/memory_cap.h"
#include "session/backend_select.h"
#include "session/phase_stats.h"
#include "session/run_target.h"
#include "session/session.h"
#include "session/session_report.h"
#include "session/shape_sessions.h"
#include "session/verdict_store.h"
#include "tools/check_mode.h"
#include "tools/graph_file.h"
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
  // the session (profile_iters and reprofile_iters apply to every mode)
  int profile_iters = 10;
  int reprofile_iters = 10;
  double min_saving = 1.0;  // percent of the iteration
  int64_t expected_iters = 10000;
  bool sync_compile = false;
  double settle_timeout = 300;  // seconds
  int64_t settle_iters = 1000000;
  std::string dump;    // --dump DIR (docs/dumps.md)
  bool force = false;  // --force: overwrite the dump's files in a non-empty DIR
  // TensorProto files (docs/onnx.md)
  std::string check;  // --check DIR: run DIR's test data sets, compare the outputs
  double atol = 1e-3, rtol = 1e-3;
  // Not given: run() chooses them (TF32 on CUDA relaxes the defaults).
  bool atol_given = false, rtol_given = false;
  std::string inputs;               // --inputs DIR: input_*.pb instead of random inputs
  std::vector<std::string> shapes;  // --shape NAME=D0xD1x...: symbolic input dimensions
  std::string save_outputs;         // --save-outputs DIR: output_*.pb
};

// The worst share of its tolerance any output element used; throws on a mismatch.
double check_outputs(const Graph& g, const std::vector<HostTensor>& unfused,
                     const std::vector<HostTensor>& fused) {
  double worst = 0;
  for (size_t i = 0; i < fused.size(); ++i) {
    const TensorView& e = unfused[i].view();
    Mismatch m = compare(e, fused[i].view(), graph_output_tolerance(e.dtype));
    worst = std::max(worst, m.worst_ratio);
    if (m.index >= 0)
      throw std::runtime_error("fused output '" + g.value(g.outputs()[i]).name +
                               "' differs from unfused at element " + std::to_string(m.index) +
                               ": " + std::to_string(m.actual) + " vs " +
                               std::to_string(m.expected));
  }
  return worst;
}

std::vector<OpRow> rows_of(const std::vector<OpRecord>& ops) {
  std::vector<OpRow> rows;
  for (const OpRecord& o : ops)
    rows.push_back({o.name, o.op, o.output, o.cost.seconds, o.cost.bytes, o.cost.flops});
  return rows;
}

SessionOptions session_options(const Options& o) {
  SessionOptions so;
  so.policy = *parse_policy(o.fusion);  // CLI11 checked the name
  so.warmup_iters = o.warmup;
  so.profile_iters = o.profile_iters;
  so.reprofile_iters = o.reprofile_iters;
  so.sync_compile = o.sync_compile;
  so.select.min_share = o.min_saving / 100;
  so.select.expected_iters = o.expected_iters;
  return so;
}

// Atomically (a temp file in its directory renamed over it): a full disk leaves the old
// report or none, never a torn one, and a symlink at the name is replaced, never followed.
void write_report(const std::string& path, const nlohmann::json& doc) {
  fsutil::write_output_file(path, doc.dump(2) + "\n", "--report");
}

// Every setting checked before the graph is read, a backend chosen or anything written
// (docs/jit.md): one line naming the option or variable, exit code 2, nothing left behind.
void check_configuration(const Options& o) {
  fusion::check_jit_environment();  // MGB_JIT_KEEP_INTERM, MGB_JIT_BACKEND, MGB_JIT_WORKDIR
  memory_cap_bytes();               // HOTFUSE_MAX_BYTES
  cpu::ThreadPool::size_from_environment();  // HOTFUSE_NUM_THREADS, on the CUDA backend too
  VerdictStore::check_environment();         // HOTFUSE_VERDICTS
  f32_precision();                           // HOTFUSE_F32_PRECISION
  if (!o.report.empty()) fsutil::check_output_file(o.report, "--report");
  if (!o.dump.empty()) dump::DumpDir::check(o.dump, o.force, "--dump");
  if (!o.save_outputs.empty()) dump::DumpDir::check(o.save_outputs, o.force, "--save-outputs");
}

// The one line that says what fusion did, after the outputs were checked end to end.
void print_summary(const Session& s, double worst) {
  const double before = s.median_ms(Phase::Profiling), after = s.median_ms(Phase::Steady);
  const std::string checked =
      "outputs match unfused (worst element within " + std::to_string(worst) + " of its tolerance)";
  int kept = 0, compiled = 0, hits = 0;
  double compile_ms = 0;
  for (const RegionRecord& r : s.regions()) {
    kept += r.state == RegionState::Swapped;
    compile_ms += r.compile_ms;
    hits += r.cache_hit;
    compiled += r.compile_ms > 0 && !r.cache_hit && r.state != RegionState::Failed;
  }
  std::cout << "\n";
  if (kept == 0 && s.static_rewrites() == 0) {
    std::cout << "nothing fused: kernels " << s.kernels_before() << " -> " << s.kernels_now()
              << ", " << after << " ms per iteration";
    if (s.options().policy != FusionPolicy::Off) std::cout << "; " << checked;
    std::cout << "\n";
    return;
  }
  std::cout << "kernels " << s.kernels_before() << " -> " << s.kernels_now() << "; " << before
            << " ms -> " << after << " ms per iteration (" << before / after << "x)";
  if (kept > 0)
    std::cout << "; compile " << compile_ms << " ms (" << compiled << " compiled, " << hits
              << " from cache)";
  std::cout << "; peak memory " << s.peak_bytes_before() << " -> " << s.peak_bytes_now()
            << " bytes; " << checked << "\n";
}

// On a backend that records iterations (CUDA graphs): whether the final plan's were.
void print_launch(const Session& s, bool records) {
  if (!records) return;
  if (s.launches_recorded())
    std::cout << "iterations launched as one CUDA graph each (HOTFUSE_CUDA_GRAPHS=off: kernel "
                 "by kernel)\n";
  else
    std::cout << "iterations launched kernel by kernel: " << printable(s.step_by_step_reason())
              << "\n";
}

// How long iterations took in each phase, and when the session settled.
void print_phases(const Session& s, std::chrono::steady_clock::time_point process_start) {
  std::cout << "\nphases (ms per iteration, wall time of run(); max over the unfused median):\n";
  for (const PhaseStats& p : phase_stats(s.iterations()))
    std::printf("  %-12s %6d  median %8.3f  p90 %8.3f  max %8.3f  (%.2fx)\n",
                std::string(phase_name(p.phase)).c_str(), p.count, p.median_ms, p.p90_ms, p.max_ms,
                p.max_over_unfused);
  if (std::optional<double> t = steady_after_ms(s.iterations())) {
    const double before =
        std::chrono::duration<double, std::milli>(s.start_time() - process_start).count();
    std::printf("steady after %.0f ms (%.0f ms since the process started)\n", *t, before + *t);
  }
}

// One line per input signature: what its sessions compiled, found and took over.
void print_shapes(ShapeSessions& sessions) {
  std::cout << "\ninput shapes (plans of the last " << sessions.capacity() << " kept):\n";
  for (const ShapeRecord& r : sessions.shapes())
    std::cout << "  " << printable(r.signature) << ": " << count_of(r.iterations, "iteration")
              << ", kernels compiled " << r.compiled << ", from the cache " << r.from_cache
              << ", verdicts carried over " << r.carried << ", kernels " << r.kernels_before
              << " -> " << r.kernels_now
              << (r.sessions > 1 ? ", planned " + std::to_string(r.sessions) + " times" : "")
              << (r.live ? "" : ", plan dropped") << "\n";
}

// Every --fusion mode on either backend: a Session with the mode as its policy, run until
// it settles, then --iters timed iterations; its outputs checked against the unfused plan.
// Several --shape signatures run in turn through one ShapeSessions, then the first again.
int run(const Options& o, std::chrono::steady_clock::time_point process_start) {
  check_configuration(o);
  const std::vector<std::map<std::string, Shape>> signatures = parse_shape_options(o.shapes);
  if (!o.check.empty()) {
    // As a plain run: cuda without a device is exit 2, auto says which backend it picked.
    BackendChoice choice = choose_backend(o.backend);
    if (!choice.line.empty()) std::cout << choice.line << "\n" << std::flush;
    CheckOptions c;
    c.cuda = choice.cuda.get();
    c.dir = o.check;
    c.atol = o.atol;
    c.rtol = o.rtol;
    // On CUDA at HOTFUSE_F32_PRECISION=high, f32 Convs and MatMuls round their inputs to
    // TF32 (docs/math.md): unless given, the tolerances are those TF32 results are held to.
    if (c.cuda && f32_precision() == F32Precision::High) {
      if (!o.atol_given) c.atol = kTf32CheckTolerance;
      if (!o.rtol_given) c.rtol = kTf32CheckTolerance;
      c.tolerance_note = " (TF32 on CUDA; HOTFUSE_F32_PRECISION=highest checks FP32 math)";
    }
    c.threads = o.threads;
    c.session = session_options(o);
    c.settle = {o.settle_timeout, o.settle_iters};
    return run_check(c);
  }
  if (signatures.size() > 1 && !o.inputs.empty())
    throw Error("--inputs gives one set of inputs; with " + std::to_string(signatures.size()) +
                " sets of --shape the inputs are random");
  // Refused before the graph is read: a missing device costs nothing.
  BackendChoice choice = choose_backend(o.backend);
  // The graph and the inputs of each signature, all read before anything runs.
  std::vector<Graph> graphs;
  std::vector<std::vector<HostTensor>> host_inputs;
  for (const std::map<std::string, Shape>& shapes : signatures) {
    graphs.push_back(read_graph_file(o.graph, shapes, o.inputs));
    host_inputs.push_back(o.inputs.empty() ? random_inputs(graphs.back(), o.seed)
                                           : read_graph_inputs(graphs.back(), o.inputs));
  }
  const Graph& g = graphs.front();
  if (!choice.line.empty()) std::cout << choice.line << "\n";

  SessionOptions so = session_options(o);
  // The target (thread pool, JIT work directory, kernel cache) before any directory is
  // created: what it refuses leaves nothing behind.
  std::unique_ptr<RunTarget> target =
      make_run_target(choice.cuda.get(), o.threads, so.policy != FusionPolicy::Off);
  std::optional<dump::DumpDir> dump_dir;
  if (!o.dump.empty()) dump_dir.emplace(o.dump, o.force);
  std::optional<dump::DumpDir> save_dir;
  if (!o.save_outputs.empty()) save_dir.emplace(save_outputs_dir(o.save_outputs, o.force));
  Backend& backend = target->backend();
  std::cout << "graph '" << printable(g.name) << "' (" << printable(o.graph)
            << "): " << g.live_node_count() << " nodes; " << target->where() << "; --fusion "
            << o.fusion << "\n";
  const MachinePeak& machine = target->machine();
  std::printf("machine: %.1f GB/s, %.0f GFLOP/s, %.1f us per launch (%s)\n", machine.bandwidth_gbps,
              machine.gflops, machine.launch_us, machine.source.c_str());
  std::vector<std::unique_ptr<DeviceInputs>> in;
  for (const std::vector<HostTensor>& h : host_inputs)
    in.push_back(std::make_unique<DeviceInputs>(backend, h));
  so.trace = dump_dir.has_value();  // trace.json
  so.trace_max_steps = 200000;
  // A graph at another signature is the one read above (the model is not imported twice).
  GraphForInputs read_again = graph_file_for_inputs(o.graph, g);
  auto graph_for = [&](const std::vector<Shape>& shapes, const SmallInputs& small) {
    for (const Graph& known : graphs)
      if (known.specialised_inputs.empty() && takes_shapes(known, shapes)) return known;
    return read_again(shapes, small);
  };
  // Declared after `in` and `target`: the sessions go first.
  ShapeSessions sessions(graph_for, target->session_target(), machine, so);

  // Each signature settles and runs --iters iterations; with several, the first runs again
  // at the end, on its plan kept in the cache. Its outputs are the ones saved and reported.
  std::vector<std::vector<HostTensor>> outputs(signatures.size());
  auto run_signature = [&](size_t k) {
    Session& session = sessions.session_for(in[k]->views);
    auto print_events = [&] {
      for (const SessionEvent& e : session.take_events())
        std::cout << "iter " << e.iteration << ": " << printable(e.text) << "\n";
    };
    if (signatures.size() > 1)
      std::cout << "\ninput shapes " << k + 1 << " of " << signatures.size() << " ("
                << printable(input_signature_text(graphs[k])) << ")\n";
    settle(session, in[k]->views, {o.settle_timeout, o.settle_iters}, "measuring as it is",
           print_events);
    std::span<const TensorView> out;
    for (int i = 0; i < o.iters; ++i) {
      out = session.run(in[k]->views);
      print_events();
    }
    outputs[k] = download(backend, out);
  };
  for (size_t k = 0; k < signatures.size(); ++k) run_signature(k);
  if (signatures.size() > 1) run_signature(0);
  Session& session = sessions.session_for(in[0]->views);
  if (save_dir) save_outputs(*save_dir, g, outputs[0]);

  std::cout << "\nunfused profile (" << o.profile_iters << " iterations):\n";
  print_op_table(std::cout, rows_of(session.unfused_ops()), session.machine().gflops);
  if (!session.fused_ops().empty()) {
    std::cout << "\nfused profile (after the last swap):\n";
    print_op_table(std::cout, rows_of(session.fused_ops()), session.machine().gflops);
  }
  if (!session.regions().empty()) std::cout << "\nregions:\n";
  for (const RegionRecord& r : session.regions())  // a failure was said once, as it happened
    std::cout << "  " << r.id << " " << r.kernel << " [" << region_state_name(r.state) << "] "
              << (r.state == RegionState::Failed ? "its compile failed (above)"
                                                 : printable(r.reason))
              << (r.tier_reason.empty() ? "" : "\n      " + printable(r.tier_reason)) << "\n";
  target->print_device_profile(session, in[0]->views, o.iters);
  print_phases(session, process_start);
  if (signatures.size() > 1) print_shapes(sessions);

  // The session validated every swap; check the final outputs end to end as well, against
  // the unfused plan of the graph as the sessions run it (after the target's lowering: the
  // CPU's NHWC Conv chains), so both sides run the same Conv algorithms: Winograd's rounding
  // (docs/math.md) against a direct convolution would be no fusion error. Lowered here, not
  // taken from the sessions: asking them for another signature would switch sessions.
  double worst = 0;
  const auto lower = target->session_target().lower;
  if (so.policy != FusionPolicy::Off)
    for (size_t k = 0; k < signatures.size(); ++k) {
      std::unique_ptr<Graph> lowered = lower ? lower(graphs[k]) : nullptr;
      Executor reference(lowered ? *lowered : graphs[k], backend);
      worst = std::max(
          worst,
          check_outputs(graphs[k], download(backend, reference.run(in[k]->views)), outputs[k]));
    }
  print_summary(session, worst);
  print_launch(session, backend.name() == "cuda");
  nlohmann::json report = session_report(session, {o.graph, o.iters});
  report["shapes"] = shapes_report(sessions.shapes(), sessions.capacity());
  if (!o.report.empty()) write_report(o.report, report);
  if (save_dir) {  // what --save-outputs wrote, named
    std::cout << "outputs: " << count_of(save_dir->written().size(), "file") << " in "
              << printable(save_dir->path().string()) << " (";
    for (size_t k = 0; k < save_dir->written().size(); ++k)
      std::cout << (k ? ", " : "") << save_dir->written()[k] << " '"
                << printable(g.value(g.outputs()[k]).name) << "'";
    std::cout << ")\n";
  }
  if (dump_dir) {
    for (const std::string& w :
         dump::write_session_dump(*dump_dir, session, report, target->device_launches()))
      std::cerr << "hotfuse-run: " << printable(w) << "\n";
    std::cout << "dump: " << count_of(dump_dir->written().size(), "file") << " in "
              << dump_dir->path().string() << "\n";
  }
  return 0;
}

// An integer option in [lo, hi]. CLI11's Range said "Value abc not in range 1 to 1000000000"
// for a value that is not a number at all.
CLI::Validator integer_in(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        size_t used = 0;
        long long v = 0;
        try {
          v = std::stoll(s, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used > 0 && used == s.size() && v >= lo && v <= hi) return "";
        return "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
               ", got '" + s + "'";
      },
      "INT " + std::to_string(lo) + ".." + std::to_string(hi));
}

// A number option in [lo, hi].
CLI::Validator number_in(double lo, double hi) {
  auto text = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return std::string(b);
  };
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        size_t used = 0;
        double v = 0;
        try {
          v = std::stod(s, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used > 0 && used == s.size() && v >= lo && v <= hi) return "";
        return "must be a number from " + text(lo) + " to " + text(hi) + ", got '" + s + "'";
      },
      "NUMBER " + text(lo) + ".." + text(hi));
}

// The edit distance between two option names, for "did you mean".
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// A misspelled option, named as such with the closest one: CLI11 said "The following
// arguments were not expected: g.json --fusoin", naming the graph as the problem too.
void check_option_names(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options())
    for (const std::string& n : opt->get_lnames()) names.push_back(n);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") return;  // what follows is not an option
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) continue;
    std::string name =
        arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 2);
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    std::string best;
    size_t best_d = std::max<size_t>(2, name.size() / 3) + 1;
    for (const std::string& n : names)
      if (size_t d = edit_distance(name, n); d < best_d) best_d = d, best = n;
    throw CLI::ValidationError("unknown option --" + name +
                               (best.empty() ? "" : " (did you mean --" + best + "?)"));
  }
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
  app.add_option("--atol", o.atol,
                 "--check: absolute tolerance (1e-2 on CUDA at HOTFUSE_F32_PRECISION=high: TF32)")
      ->check(kTolerance)
      ->capture_default_str();
  app.add_option("--rtol", o.rtol,
                 "--check: relative tolerance (1e-2 on CUDA at HOTFUSE_F32_PRECISION=high: TF32)")
      ->check(kTolerance)
      ->capture_default_str();
  app.add_option("--inputs", o.inputs, "read the inputs from DIR/input_*.pb instead of random ones")
      ->excludes(check);
  app.add_option("--shape", o.shapes,
                 "NAME=D0xD1x...: the shape of ONNX input NAME, setting the dimensions the model "
                 "leaves symbolic (repeatable; --inputs files give theirs); naming an input again "
                 "runs another set of shapes after the first, in the same process")
      ->excludes(check)
      ->allow_extra_args(false);
  app.add_option("--save-outputs", o.save_outputs,
                 "write the outputs to DIR/output_*.pb; a non-empty DIR is refused without --force")
      ->excludes(check);
}

void check_option_combinations(const CLI::App& app, const Options& o) {
  if (o.check.empty() && (app.count("--atol") > 0 || app.count("--rtol") > 0))
    throw CLI::ValidationError(
        "--atol and --rtol are tolerances of --check DIR; without it "
        "they would change nothing");
  if (o.graph.empty() == o.check.empty())
    throw CLI::ValidationError(o.check.empty() ? "GRAPH is required (or --check DIR)"
                                               : "GRAPH and --check DIR exclude each other");
  if (o.force && o.dump.empty() && o.save_outputs.empty())
    throw CLI::ValidationError("--force needs --dump or --save-outputs");
  if (!o.check.empty() && (!o.report.empty() || !o.dump.empty()))
    throw CLI::ValidationError("--check writes no --report or --dump; run the model without it");
}

}  // namespace

// SIGTERM, SIGINT and SIGHUP end the run as they would, after killing the compilers it
// runs: each is a process group of its own, which the signal (from a terminal, a job
// control or a service manager) does not reach. A signal the parent ignores stays ignored.
extern "C" void end_with_compilers(int sig) {
  fusion::kill_running_processes();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void forward_termination_to_compilers() {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = end_with_compilers;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

int main(int argc, char** argv) {
  const auto process_start = std::chrono::steady_clock::now();
  // Over a file size limit, a write fails (EFBIG, handled like a full disk: the cache and
  // JIT fall back) instead of the signal killing the run.
  std::signal(SIGXFSZ, SIG_IGN);
  forward_termination_to_compilers();
  Options o;
  CLI::App app{"hotfuse-run: run a graph on random inputs, profile every operator, fuse"};
  app.add_option("GRAPH", o.graph,
                 "graph file: ONNX, *.onnx (docs/onnx.md), or native JSON, *.json "
                 "(docs/graph-format.md); another name: JSON if it starts with '{', else ONNX");
  app.add_option("--iters", o.iters, "timed iterations (adaptive: once settled)")
      ->check(integer_in(1, 1000000000))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "untimed iterations first (and at least 0.2 s)")
      ->check(integer_in(0, 1000000000))
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
      ->check(integer_in(1, 1000000))
      ->capture_default_str();
  app.add_option("--reprofile-iters", o.reprofile_iters,
                 "adaptive: fused iterations timed after a swap before keeping it")
      ->check(integer_in(1, 1000000))
      ->capture_default_str();
  app.add_option("--min-saving", o.min_saving,
                 "adaptive: fuse a region only if it saves at least this percent of an iteration")
      ->check(number_in(0, 100))
      ->capture_default_str();
  app.add_option("--expected-iters", o.expected_iters,
                 "adaptive: iterations a compile must pay for itself within")
      ->check(integer_in(1, int64_t{1} << 62))
      ->capture_default_str();
  app.add_flag("--sync-compile", o.sync_compile,
               "adaptive: wait for compiles instead of running on meanwhile (deterministic)");
  app.add_option("--settle-timeout", o.settle_timeout,
                 "adaptive: seconds to wait for compiles and swaps before timing --iters")
      ->check(number_in(0, 1e9))
      ->capture_default_str();
  app.add_option("--settle-iters", o.settle_iters,
                 "adaptive: iterations to run at most while compiles and swaps settle")
      ->check(integer_in(1, 1000000000))
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
  // Digits only: CLI11 reads "-1" into a uint64_t as 2^64 - 1 (a seed nobody asked for).
  app.add_option("--seed", o.seed, "seed of the random inputs")
      ->check(CLI::Validator(
          [](std::string& s) {
            return s.empty() || s.find_first_not_of("0123456789") != std::string::npos
                       ? std::string("must be an integer from 0 to 18446744073709551615, got " + s)
                       : std::string();
          },
          "UINT64"))
      ->capture_default_str();
  app.add_option("--threads", o.threads,
                 "CPU threads (0: HOTFUSE_NUM_THREADS, else all hardware threads)")
      ->check(integer_in(0, 1024))
      ->capture_default_str();
  try {
    check_option_names(app, argc, argv);
    app.parse(argc, argv);
    check_option_combinations(app, o);
    o.atol_given = app.count("--atol") > 0;
    o.rtol_given = app.count("--rtol") > 0;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "hotfuse-run: " << printable(e.what()) << " (see --help)\n";
    return 2;
  }
  try {
    return run(o, process_start);
  } catch (const hf::Error& e) {
    std::cerr << "hotfuse-run: " << printable(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "hotfuse-run: out of memory while planning or running " << printable(o.graph)
              << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "hotfuse-run: internal error: " << printable(e.what()) << "\n";
    return 1;
  }
}
