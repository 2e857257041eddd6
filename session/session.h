// The session: runs a graph iteration after iteration and fuses, while it runs, what its
// policy asks for. Every `--fusion` mode is a policy of this one pipeline:
//
//   off       profile, select nothing, run unfused.
//   static    profile, then swap in the graph with MegEngine's pattern rewrites
//             (fusion/static_patterns.h), validated like any swap; no detection.
//   all       profile, then select every detected region and compile synchronously.
//   adaptive  profile, then select only the regions worth it, compile in the background.
//
// One small state machine:
//
//   warmup -> profiling -> compiling -> validating -> reprofiling -> steady
//                              ^                           |
//                              +---- more kernels ready ---+
//
//  profiling    unfused iterations, every op timed; then regions are detected, classified
//               and selected (select_region) and the selected ones queued on the
//               CompileWorker, hottest first.
//  compiling    iterations keep running on the plan in use; nothing waits for a compiler.
//               What fusion needs besides iterations runs after each one, within a share
//               of it (SessionOptions::background_share): the compiler (stopped while an
//               iteration runs, where the executor fills the cores), building the plans
//               below and faulting in their buffers, comparing live-outs, slice by slice.
//  validating   one iteration on the plan in use, built again to keep the ready regions'
//               live-ins and live-outs: its results are returned as usual. After it, each
//               region's kernel runs alone on those live-ins (a heavy epilogue longer than
//               half a slice on one block of its rows a share, check_parts.h), and its
//               live-outs are compared with the unfused ones (fused_tolerance) over the
//               next shares; a mismatch reverts the region. The plan with the ones that
//               passed is then prepared and swapped in at a boundary.
//  reprofiling  the fused plan is timed (after one untimed iteration: its kernels are new);
//               a region whose kernel is not faster than the ops it replaced is reverted,
//               and a plan without it is prepared like any other and swapped in. Only the
//               plans' steps are timed, so a background compiler keeps its share between
//               them (the kernels still compiling do not wait for this verdict).
//  steady       nothing pending: the plan stays as it is.
//
// A region kept before at the same signature (SessionOptions::signature) goes from its
// (cached) compile straight to the next plan, without validating or re-profiling; a plan
// that adds only such regions is timed in its first steady iterations, for the report.
//
// Only adaptive reverts a kernel for being slower; every policy reverts a wrong one.
//
// Every decision, taken or not, is kept with its numbers (regions()).
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "fusion/detect.h"
#include "fusion/kernel_cache.h"
#include "fusion/region_spec.h"
#include "profiler/op_class.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/executor.h"
#include "session/page_faulter.h"
#include "session/region_verdicts.h"
#include "session/selection.h"
#include "session/session_target.h"

namespace hf {

enum class Phase { Warmup, Profiling, Compiling, Validating, Reprofiling, Steady };
std::string_view phase_name(Phase p);

enum class FusionPolicy { Off, Static, All, Adaptive };
std::string_view policy_name(FusionPolicy p);  // "off", "static", "all", "adaptive"
std::optional<FusionPolicy> parse_policy(std::string_view s);

struct SessionOptions {
  FusionPolicy policy = FusionPolicy::Adaptive;
  int warmup_iters = 1;  // unfused, untimed: page faults and cold caches
  // ...and at least this long: for ~0.1 s after start-up the thread pool's workers may
  // not run in parallel yet (bench/RESULTS.md), which would skew the profile.
  double warmup_min_s = 0.2;
  int profile_iters = 10;     // unfused iterations profiled before selecting
  int reprofile_iters = 10;   // fused iterations timed after a swap (each in turn: selection.h)
  bool sync_compile = false;  // wait for compiles (deterministic tests and benchmarks; `all`)
  // Without sync_compile, what an iteration may spend on fusion besides its own work, as a
  // share of the unfused iteration's median: preparing plans, validating kernels, and the
  // time a background compiler gets the cores (it is stopped while iterations run). A fused
  // plan faster than the unfused median adds what it saved (background_share.h). Short
  // iterations bank it until it makes a slice worth stopping for.
  double background_share = 0.15;
  SelectionOptions select;
  // Adaptive without sync_compile: a selected region the target can interpret is swapped in
  // at once with its spec interpreted, and compiled only where the compiled kernel could
  // still save what a compile must (RegionRecord::tier). False: every region compiles first.
  bool interpret_first = true;
  fusion::DetectOptions detect;
  // Epilogue regions (a MatMul/Conv with the elementwise ops after it), where the target
  // runs them (SessionTarget::epilogues); detect.epilogues follows this.
  bool epilogues = true;
  // What sessions of the same model at other input shapes decided (ShapeSessions): a
  // region whose verdict holds here (region_verdicts.h) takes it instead of its own
  // selection; adaptive takes every kind, the other policies only wrong kernels. Not owned.
  const RegionVerdicts* verdicts = nullptr;
  // The input signature this graph's verdicts are recorded at (ShapeSessions). A region
  // whose kernel adaptive kept at this very signature (an earlier process, or an earlier
  // session here) is swapped in without being validated or re-profiled again: it was both.
  std::string signature;
  // Test hooks: a slow compiler, a wrong or slow kernel (see FusedRunHook; after_fused_run
  // is CPU only: a CUDA session refuses it).
  // Record every step of every iteration with its start time (for trace.json); at most
  // trace_max_steps records, then tracing stops.
  bool trace = false;
  size_t trace_max_steps = 2'000'000;
  std::function<void(int region)> before_compile;
  std::function<void(int region, std::span<const TensorView> outputs)> after_fused_run;
};

struct OpRecord {
  NodeId node = kNoNode;
  std::string name, op, output;
  OpCost cost;  // medians over the profiled iterations
  OpClass cls = OpClass::MemoryBound;
  double gbps = 0, peak_share = 0;
  double flop_share = 0;  // GFLOP/s over the machine's flop peak (MachinePeak::gflops)
  int region = -1;        // the detected region it belongs to (or, if fused, is)
  bool fused = false;
};

// The origin comment a region's kernel is generated with: "graph '<name>', nodes: 3:mul ...".
std::string kernel_origin(const Graph& g, const std::vector<NodeId>& kernel_nodes);

enum class RegionState { Rejected, Queued, Failed, Swapped, Reverted };
std::string_view region_state_name(RegionState s);

struct RegionRecord {
  int id = -1;
  std::vector<NodeId> nodes;  // in the imported graph
  std::string kernel;         // hf_<spec hash>
  std::string detection;      // the detector's summary of the region
  RegionCandidate candidate;
  Selection selection;
  RegionState state = RegionState::Rejected;
  std::string reason;        // why it is in `state`
  std::string carried;       // the verdict taken over from another input shape, or ""
  bool kept_before = false;  // carried: kept at this very signature (SessionOptions)
  // How its kernel runs in the plans that fuse it (while Swapped: the plan in use). Adaptive
  // starts a region the CPU interprets with its spec interpreted (no compile to wait for)
  // and compiles it only where a compiled kernel could still save min_share of the
  // iteration over the interpreted one; `tier_reason` says what was decided and why.
  fusion::KernelTier tier = fusion::KernelTier::Compiled;
  std::string tier_reason;
  double interpreted_s = -1;     // its interpreted kernel, as re-profiled (as measured_fused_s)
  double measured_fused_s = -1;  // its kernel's median step time after the swap
  // adaptive, re-profiled in turn with the plan the swap replaced: the fastest iteration of
  // its kernel, and of its ops in that plan; the iterations of each timed, and in how many
  // of those pairs the kernel was the slower (what the revert judges, selection.h
  // judge_in_turn); -1 and 0 otherwise
  double reprofiled_fused_s = -1, reprofiled_unfused_s = -1;
  int reprofiled_pairs = 0, reprofiled_fused_slower = 0;
  double compile_ms = 0;
  bool cache_hit = false;
  std::string validation;                           // "", "passed ...", "failed ..."
  int swapped_at = -1, reverted_at = -1;            // iteration indices
  double compile_start_s = -1, compile_end_s = -1;  // since the session started
};

// What identifies a region across the graphs one model imports to at different input shapes:
// its kernel (hf_<spec hash>: sizes are not in the spec) and the name of its first node.
std::string region_key(const Graph& g, const RegionRecord& r);

struct IterationRecord {
  int index = 0;
  double start_s = 0;  // since the session started
  double ms = 0;       // wall time of run(), transitions included
  Phase phase = Phase::Warmup;
  int kernels = 0;  // steps of the plan that ran
  // Running that plan; the rest of `ms` is what fusion took besides (selection, swaps,
  // checks, the background compiler's share).
  double plan_ms = 0;
};

// What a traced step was: one per step of every plan the session built.
struct TraceLabel {
  std::string name, op;   // op: "Elemwise MUL", "Fused hf_..."
  NodeId node = kNoNode;  // in the graph that ran (fused nodes are new ids)
  int region = -1;
  double bytes = 0;
  bool fused = false;
};

struct StepRecord {
  int iteration = 0;
  int label = 0;                  // index into trace_labels()
  double start_s = 0, dur_s = 0;  // since the session started
};

struct SessionEvent {
  int iteration = 0;
  std::string text;
};

class Session {
 public:
  // Runs on target.backend (the CPU's, or the CUDA backend's: cuda_session_target); inputs
  // and outputs of run() are in that backend's memory. `machine` is what ops are classified
  // against (probe_machine on the CPU, cuda_machine_peak on a GPU). Throws hf::Error when
  // the graph is invalid or has an op the backend cannot run.
  Session(const Graph& g, SessionTarget target, const MachinePeak& machine,
          SessionOptions options = {});
  // On the CPU backend with host-compiled kernels (cpu_session_target).
  Session(const Graph& g, cpu::CpuBackend& backend, fusion::KernelCache& cache,
          const MachinePeak& machine, SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // One iteration; the outputs are valid until the next call.
  std::span<const TensorView> run(std::span<const TensorView> inputs);

  Phase phase() const { return phase_; }
  bool settled() const { return phase_ == Phase::Steady; }

  std::vector<SessionEvent> take_events();                             // those since the last call
  const std::vector<SessionEvent>& events() const { return events_; }  // all
  const std::vector<StepRecord>& traced_steps() const { return steps_; }
  const std::vector<TraceLabel>& trace_labels() const { return labels_; }
  const std::vector<IterationRecord>& iterations() const { return iterations_; }
  const std::vector<RegionRecord>& regions() const { return regions_; }
  const std::vector<OpRecord>& unfused_ops() const { return unfused_ops_; }
  const std::vector<OpRecord>& fused_ops() const { return fused_ops_; }  // last re-profile
  const fusion::Detection& detection() const { return detection_; }
  const MachinePeak& machine() const { return machine_; }
  const SessionOptions& options() const { return options_; }
  const SessionTarget& target() const { return target_; }
  Backend& fusing_backend() { return *fusing_; }  // runs current_graph()
  // `static`: the pattern rewrites in the plan now (0 before the swap or once reverted).
  int static_rewrites() const { return static_kept_ ? static_rewrites_ : 0; }
  const Graph& graph() const { return graph_; }
  const Graph& current_graph() const;  // as executed now
  int kernels_before() const { return kernels_before_; }
  int kernels_now() const;
  size_t peak_bytes_before() const { return peak_bytes_before_; }
  size_t peak_bytes_now() const;
  // How untimed iterations of the plan in use are launched (Executor): recorded (one CUDA
  // graph launch each), else why they run step by step ("not recorded yet" before a second
  // untimed run of the plan).
  bool launches_recorded() const;
  std::string step_by_step_reason() const;
  double median_ms(Phase p) const;  // of the iterations in that phase; 0 when none
  // When the session was made: IterationRecord::start_s counts from here.
  std::chrono::steady_clock::time_point start_time() const { return start_; }

 private:
  struct Running;      // a graph, its executor, and which region each fused node is
  struct RegionCheck;  // a region's kernel, planned to run alone
  struct Validation;   // the regions being validated
  struct Candidate;    // the next plan
  class TraceObserver;
  // `base` (graph_ or the statically rewritten graph) with `regions` fused; its scratch
  // buffers shared with `lender`'s where given (a plan that never runs beside it, Plan).
  // Fused regions run at their tier, those in `admitted` at the one being admitted.
  std::unique_ptr<Running> build(const Graph& base, const std::vector<int>& regions,
                                 std::span<const ValueId> observe = {},
                                 const Running* lender = nullptr,
                                 const std::vector<int>& admitted = {});
  // The tier a region's kernel is validated and swapped in at: compiled where the region
  // runs interpreted and its compiled kernel is on its way (compiling_up_).
  fusion::KernelTier admitted_tier(int region) const;
  // Interpreted regions just kept: compile those whose compiled kernels could pay.
  void consider_compiling(const std::vector<int>& interpreted);
  // The compiled kernel of an interpreted region failed or lost: it stays interpreted.
  void stay_interpreted(int region, const std::string& why);
  // Why a selected region compiles before it runs (RegionRecord::tier_reason).
  std::string compiled_first_why(const fusion::KernelSpec& spec, bool cached) const;
  const Graph& plan_base() const { return static_kept_ ? *static_graph_ : graph_; }
  // The detected region of a node of graph_, or -1 (also for nodes a rewrite added).
  int region_of(NodeId n) const {
    return n >= 0 && static_cast<size_t>(n) < region_of_node_.size() ? region_of_node_[n] : -1;
  }
  // The region node n of `plan` runs: the one it is, if fused, else the one its op is in.
  int region_of(const Running& plan, NodeId n) const;
  bool sync_compile() const {
    return options_.sync_compile || options_.policy == FusionPolicy::All;
  }
  std::span<const TensorView> validate_static(std::span<const TensorView> inputs);
  std::vector<OpRecord> profiled_ops() const;  // of current_, from times_
  std::vector<size_t> region_steps(const Running& plan, int region) const;
  void end_profiling();
  void carry_verdict(RegionRecord& rec);  // options_.verdicts' one for rec, where it holds
  void admit(int region);                 // compiled (or an epilogue): to validation
  void collect_compiles();
  // Between iterations, within the share: validation, the next plan, the compiler.
  // Since iteration_start run() spent own_work running the plan; the rest was inline work.
  void background_work(std::span<const TensorView> inputs,
                       std::chrono::steady_clock::time_point iteration_start,
                       std::chrono::steady_clock::duration own_work);
  double background_budget_s() const;  // per iteration; infinite when someone waits
  bool stops_compiler() const;         // while an iteration runs
  void prepare_plans(std::chrono::steady_clock::time_point deadline);
  void prepare_validation();
  std::vector<ValueId> observed_values(int region) const;
  int check_blocks_wanted(int region) const;
  void cut_check(struct RegionCheck& c, int wanted);
  bool reads_graph_input(int region) const;
  struct BlockSpan {
    int64_t want_at = 0, got_at = 0, n = 0;
  };
  BlockSpan block_span(const struct RegionCheck& c, const TensorView& want,
                       const TensorView& got) const;
  bool build_check(struct RegionCheck& c);
  void run_check(struct RegionCheck& c, std::span<const TensorView> inputs);
  void run_input_checks(std::span<const TensorView> inputs);
  void advance_validation(std::chrono::steady_clock::time_point deadline);
  void fail_validation(int region, const std::string& failure);
  void prepare_candidate();
  void swap_candidate();
  // Elements [first, first + count) of contiguous `v`: in place in host memory, else
  // downloaded into `copy`.
  TensorView readable_slice(const TensorView& v, int64_t first, int64_t count,
                            HostTensor& copy) const;
  void take_fused_profile();  // fused_ops_ and measured_fused_s, from times_ of current_
  void end_reprofiling();
  std::vector<int> kept() const;  // regions swapped in and not reverted
  void event(std::string text);
  void revert(int region, std::string reason);
  double since_start(std::chrono::steady_clock::time_point t) const;

  std::unique_ptr<const Graph> lowered_;  // SessionTarget::lower's rewrite, if it made one
  const Graph& graph_;                    // *lowered_, else the caller's graph
  SessionTarget target_;
  MachinePeak machine_;
  SessionOptions options_;
  std::chrono::steady_clock::time_point start_;

  std::unique_ptr<Backend> fusing_;
  fusion::Detection detection_;
  std::vector<fusion::RegionKernel> kernels_;  // per detected region (empty spec: dead)
  std::vector<RegionRecord> regions_;
  std::vector<OpRecord> unfused_ops_, fused_ops_;
  std::vector<IterationRecord> iterations_;
  std::vector<SessionEvent> events_;
  std::vector<int> region_of_node_;  // per node of graph_: its detected region, or -1
  std::vector<StepRecord> steps_;
  std::vector<TraceLabel> labels_;
  size_t events_taken_ = 0;

  Phase phase_ = Phase::Warmup;
  int phase_iters_ = 0;                     // iterations run in the current phase
  std::unique_ptr<Running> current_;        // what iterations run
  std::unique_ptr<Running> reference_;      // `static`: the validating iteration's unfused run
  std::unique_ptr<Validation> validation_;  // being prepared, observed or compared
  std::vector<int> passed_;                 // validated, waiting for the next plan
  std::unique_ptr<Candidate> candidate_;    // the next plan, being prepared
  bool plan_stale_ = false;                 // current_ runs a reverted region
  double unfused_ms_ = 0;                   // the profiling iterations' median, once profiled
  double share_of_s_ = 0;                   // what a region's saving is a share of (end_profiling)
  double credit_s_ = 0;                     // background share banked, or owed when < 0
  std::vector<std::unique_ptr<Running>> retired_;  // done, but this iteration's outputs
  std::unique_ptr<class StepTimes> times_;         // profiling / reprofiling
  // adaptive, re-profiling: the plan a swap replaced, timed in turn with the new one
  std::unique_ptr<Running> baseline_;
  std::unique_ptr<class StepTimes> baseline_times_;
  std::unique_ptr<class CompileWorker> worker_;
  std::vector<int> ready_;  // compiled, waiting for the next boundary
  // Interpreted regions whose compiled kernels are compiling, validated or judged.
  std::set<int> compiling_up_;
  std::vector<int> batch_;               // swapped at the last boundary, being re-profiled
  std::unique_ptr<Graph> static_graph_;  // `static`: graph_ rewritten, once profiled
  int static_rewrites_ = 0;
  bool static_pending_ = false, static_kept_ = false;
  int kernels_before_ = 0;
  size_t peak_bytes_before_ = 0;
  // A swap that added only regions kept before: the first iteration after it that times
  // the plan (into times_) for fused_ops_; -1 when none is pending.
  int timed_from_ = -1;
  // Faults in the validation's or the candidate's buffers. Last: destroyed (its thread
  // stopped) before the plans it may be touching.
  PageFaulter faulter_;
};

}  // namespace hf
