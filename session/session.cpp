#include "session/session.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>
#include <unordered_set>

#include "fusion/kernel_blocks.h"
#include "fusion/spec_interpreter.h"
#include "fusion/static_patterns.h"
#include "profiler/step_times.h"
#include "profiler/table_text.h"
#include "runtime/exec/compare.h"
#include "runtime/ir/constant.h"
#include "runtime/ir/error.h"
#include "runtime/ir/op_table.h"
#include "session/background_share.h"
#include "session/check_parts.h"
#include "session/compile_worker.h"

namespace hf {

namespace {

using Clock = std::chrono::steady_clock;

std::string fmt_ms(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, ms >= 1 ? "%.2f ms" : "%.3f ms", ms);
  return b;
}

}  // namespace

std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::Warmup:
      return "warmup";
    case Phase::Profiling:
      return "profiling";
    case Phase::Compiling:
      return "compiling";
    case Phase::Validating:
      return "validating";
    case Phase::Reprofiling:
      return "reprofiling";
    case Phase::Steady:
      return "steady";
  }
  return "?";
}

std::string_view policy_name(FusionPolicy p) {
  switch (p) {
    case FusionPolicy::Off:
      return "off";
    case FusionPolicy::Static:
      return "static";
    case FusionPolicy::All:
      return "all";
    case FusionPolicy::Adaptive:
      return "adaptive";
  }
  return "?";
}

std::optional<FusionPolicy> parse_policy(std::string_view s) {
  for (FusionPolicy p :
       {FusionPolicy::Off, FusionPolicy::Static, FusionPolicy::All, FusionPolicy::Adaptive})
    if (policy_name(p) == s) return p;
  return std::nullopt;
}

std::string_view region_state_name(RegionState s) {
  switch (s) {
    case RegionState::Rejected:
      return "rejected";
    case RegionState::Queued:
      return "queued";
    case RegionState::Failed:
      return "failed";
    case RegionState::Swapped:
      return "swapped";
    case RegionState::Reverted:
      return "reverted";
  }
  return "?";
}

struct Session::Running {
  std::unique_ptr<Graph> graph;
  std::unique_ptr<Executor> exec;
  std::map<NodeId, int> region_of_fused_node;
  std::vector<int> labels;  // per step: its TraceLabel, when tracing
  int steps() const { return static_cast<int>(exec->plan().steps().size()); }
};

// One region's kernel alone, run on the live-ins the plan in use read in an observed
// iteration; its live-outs are then compared with what the unfused ops computed there.
struct Session::RegionCheck {
  int region = -1;
  std::unique_ptr<fusion::RegionGraph> sub;  // on the heap: `exec` refers to its graph
  std::unique_ptr<Executor> exec;
  // The kernel runs on block `part` of `parts` (of its rows), and is compared there, one
  // block after another (cut_check): an epilogue's `sub` has inputs and live-outs of a
  // block's shape (check_parts.h), a generated kernel's computes a block per run
  // (FusedRegion::blocks) into live-outs of the whole shape.
  int parts = 1, part = 0;
  // Reads graph inputs and runs in parts: block k runs right after the k-th observed
  // iteration, on its inputs (the caller's may change between iterations).
  bool per_observation = false;
  bool ran = false;                 // on the current block
  std::span<const TensorView> got;  // the kernel's live-outs, once it ran
  size_t output = 0;                // the live-out being compared
  int64_t compared = 0;             // its elements compared so far
  double worst = 0;                 // of the tolerance, over what was compared
  std::string failure;
};

// Regions whose kernels are being validated: the plan in use, keeping their live-ins and
// live-outs, runs one iteration; then, one after another over as many iterations' shares
// as it takes, each kernel runs alone on those live-ins and its live-outs are compared,
// slice by slice.
struct Session::Validation {
  std::unique_ptr<Running> observe;
  std::vector<RegionCheck> checks;
  bool touching = false;     // faulter_ is faulting in its buffers
  bool touched = false;      // every buffer faulted in: `observe` may run
  bool inputs_read = false;  // the kernels that read graph inputs ran, on that iteration's
  int observed_at = -1;      // the iteration `observe` ran in: its kept values are that one's
  bool observed() const { return observed_at >= 0; }
  size_t next = 0;  // the check in progress
};

// The next plan: the kept regions plus the validated ones it adds.
struct Session::Candidate {
  std::unique_ptr<Running> plan;
  std::vector<int> fresh;
  bool touching = false, touched = false;  // as a Validation's
};

Session::Session(const Graph& g, cpu::CpuBackend& backend, fusion::KernelCache& cache,
                 const MachinePeak& machine, SessionOptions options)
    : Session(g, cpu_session_target(backend, cache), machine, std::move(options)) {}

Session::Session(const Graph& g, SessionTarget target, const MachinePeak& machine,
                 SessionOptions options)
    : lowered_(target.lower ? target.lower(g) : nullptr),
      graph_(lowered_ ? *lowered_ : g),
      target_(std::move(target)),
      machine_(machine),
      options_(std::move(options)),
      start_(Clock::now()) {
  if (!target_.backend || !target_.make_fusing || !target_.kernels)
    throw Error("Session: the SessionTarget lacks a backend or a kernel cache");
  FusedRunHook hook;
  if (options_.after_fused_run)
    hook = [this](const fusion::KernelSpec& spec, std::span<const TensorView> out) {
      for (size_t r = 0; r < kernels_.size(); ++r)
        if (!kernels_[r].outputs.empty() && kernels_[r].spec == spec) {
          options_.after_fused_run(static_cast<int>(r), out);
          return;
        }
    };
  fusing_ = target_.make_fusing(std::move(hook));

  verify(graph_);
  options_.detect.epilogues = options_.epilogues && target_.epilogues;
  options_.detect.epilogue_runs = target_.epilogue_runs;
  // `static` rewrites patterns instead of fusing regions: nothing to detect.
  if (options_.policy != FusionPolicy::Static)
    detection_ = fusion::detect_regions(graph_, options_.detect);
  region_of_node_.assign(graph_.nodes().size(), -1);
  for (size_t r = 0; r < detection_.regions.size(); ++r)
    for (NodeId n : detection_.regions[r].nodes) region_of_node_[n] = static_cast<int>(r);
  for (size_t r = 0; r < detection_.regions.size(); ++r) {
    kernels_.push_back(fusion::build_region_kernel(graph_, detection_.regions[r]));
    RegionRecord rec;
    rec.id = static_cast<int>(r);
    rec.nodes = detection_.regions[r].nodes;
    const fusion::RegionKernel& k = kernels_.back();
    rec.kernel = k.epilogue ? k.epilogue->summary() : fusion::KernelCache::kernel_name(k.spec);
    if (const fusion::Decision* d = detection_.decision_of(rec.nodes.front()))
      rec.detection = d->reason;
    rec.reason = "not profiled yet";
    regions_.push_back(std::move(rec));
  }
  current_ = build(graph_, {});  // plans it unfused
  kernels_before_ = current_->steps();
  peak_bytes_before_ = current_->exec->plan().buffer_bytes();
  fusion::KernelCache* cache = target_.kernels;
  worker_ = std::make_unique<CompileWorker>(
      [cache](const fusion::KernelSpec& spec, const std::string& origin) {
        return cache->ensure(spec, origin);
      },
      options_.before_compile, /*background=*/!sync_compile(),
      sync_compile() || target_.executor_fills_cores ? target_.cores : 1);
  phase_ =
      options_.warmup_iters > 0 || options_.warmup_min_s > 0 ? Phase::Warmup : Phase::Profiling;
}

Session::~Session() = default;

std::unique_ptr<Session::Running> Session::build(const Graph& base, const std::vector<int>& regions,
                                                 std::span<const ValueId> observe,
                                                 const Running* lender,
                                                 const std::vector<int>& admitted) {
  auto r = std::make_unique<Running>();
  r->graph = std::make_unique<Graph>(base);
  for (int id : regions) {
    const bool a = std::find(admitted.begin(), admitted.end(), id) != admitted.end();
    const fusion::KernelTier tier = a ? admitted_tier(id) : regions_[id].tier;
    r->region_of_fused_node[fusion::fuse_region(*r->graph, detection_.regions[id], tier)] = id;
  }
  r->exec = std::make_unique<Executor>(*r->graph, *fusing_, observe,
                                       lender ? &lender->exec->plan() : nullptr);
  if (options_.trace) {
    for (const Step& st : r->exec->plan().steps()) {
      const Node& n = r->graph->node(st.node);
      const int region = region_of(*r, st.node);
      std::string op = row_op(n);
      if (n.op == OpType::Fused) op += " " + regions_.at(region).kernel;
      r->labels.push_back(static_cast<int>(labels_.size()));
      labels_.push_back({n.name, op, st.node, region, node_bytes(*r->graph, n),
                         r->region_of_fused_node.count(st.node) > 0});
    }
  }
  return r;
}

fusion::KernelTier Session::admitted_tier(int region) const {
  return compiling_up_.count(region) ? fusion::KernelTier::Compiled : regions_[region].tier;
}

const Graph& Session::current_graph() const {
  return *current_->graph;
}
int Session::kernels_now() const {
  return current_->steps();
}
size_t Session::peak_bytes_now() const {
  return current_->exec->plan().buffer_bytes();
}
bool Session::launches_recorded() const {
  return current_->exec->replaying();
}
std::string Session::step_by_step_reason() const {
  if (current_->exec->replaying()) return "";
  const std::string& why = current_->exec->step_by_step_reason();
  return why.empty() ? "not recorded yet" : why;
}

double Session::since_start(Clock::time_point t) const {
  return std::chrono::duration<double>(t - start_).count();
}

void Session::event(std::string text) {
  events_.push_back({static_cast<int>(iterations_.size()) - 1, std::move(text)});
}

std::vector<SessionEvent> Session::take_events() {
  std::vector<SessionEvent> out(events_.begin() + events_taken_, events_.end());
  events_taken_ = events_.size();
  return out;
}

double Session::median_ms(Phase p) const {
  std::vector<double> v;
  for (const IterationRecord& it : iterations_)
    if (it.phase == p) v.push_back(it.ms);
  return median_of(std::move(v));
}

std::vector<int> Session::kept() const {
  std::vector<int> out;
  for (const RegionRecord& r : regions_)
    if (r.state == RegionState::Swapped) out.push_back(r.id);
  return out;
}

void Session::revert(int region, std::string reason) {
  RegionRecord& r = regions_[region];
  r.state = RegionState::Reverted;
  r.reason = std::move(reason);
  r.reverted_at = static_cast<int>(iterations_.size()) - 1;
  event("reverted region " + std::to_string(region) + " (" + r.kernel + "): " + r.reason);
}

// Records every step's start and duration (the observer is told just after a step ends)
// and passes the duration on to the profile, if one is being taken.
class Session::TraceObserver final : public StepObserver {
 public:
  TraceObserver(Session& s, const Running& plan, int iteration, StepTimes* times)
      : s_(s), plan_(plan), iteration_(iteration), times_(times) {}
  void on_step(size_t step, double seconds) override {
    double end = s_.since_start(Clock::now());
    s_.steps_.push_back({iteration_, plan_.labels[step], end - seconds, seconds});
    if (times_) times_->on_step(step, seconds);
  }

 private:
  Session& s_;
  const Running& plan_;
  int iteration_;
  StepTimes* times_;
};

std::span<const TensorView> Session::run(std::span<const TensorView> inputs) {
  const auto t0 = Clock::now();
  // A background compiler waits while this iteration runs, where it would take a core from
  // it (it gets them back in background_work).
  if (stops_compiler()) worker_->pause();
  reference_.reset();  // the last iteration's outputs are no longer needed
  retired_.clear();
  // A caller that waits for the fusion gets the plan the last iteration had no room for
  // now, so that no iteration runs between selection and swap but validating ones.
  if (phase_ == Phase::Compiling && sync_compile()) prepare_plans(Clock::time_point::max());
  if (phase_ == Phase::Compiling) {
    if (candidate_ && candidate_->touched) {
      swap_candidate();
    } else if (validation_ && validation_->touched && !validation_->observed()) {
      phase_ = Phase::Validating;
    }
  }
  const Phase ran = phase_;
  const int iteration = static_cast<int>(iterations_.size());
  const bool observing = ran == Phase::Validating && !static_pending_;
  // Re-profiling alternates the new plan and the one it replaced (baseline_), after the new
  // plan's cold first run: both are timed in the same window, so a machine that got busier
  // or quieter since the unfused profile cannot make a kernel look faster or slower.
  const bool on_baseline =
      phase_ == Phase::Reprofiling && baseline_ && phase_iters_ > 0 && phase_iters_ % 2 == 0;
  const int kernels = observing     ? validation_->observe->steps()
                      : on_baseline ? baseline_->steps()
                                    : current_->steps();
  std::span<const TensorView> out;
  StepTimes* times = nullptr;
  // The first iteration on a freshly built plan runs its kernels for the first time (their
  // lazy set-up, caches cold for them): it is run but not profiled, or a good kernel could
  // look slow.
  const bool cold_plan = phase_ == Phase::Reprofiling && phase_iters_ == 0;
  // A plan that added only regions kept before is timed from its second iteration on, in
  // whatever phase (nothing else times it), for fused_ops_.
  const bool timing_kept =
      timed_from_ >= 0 && iteration >= timed_from_ && ran != Phase::Validating && !on_baseline;
  if (((phase_ == Phase::Profiling || phase_ == Phase::Reprofiling) && !cold_plan) || timing_kept) {
    int window = phase_ == Phase::Profiling ? options_.profile_iters : options_.reprofile_iters;
    std::unique_ptr<StepTimes>& t = on_baseline ? baseline_times_ : times_;
    if (!t) t = std::make_unique<StepTimes>(kernels, window);
    times = t.get();
  }
  const auto own_work_from = Clock::now();
  if (phase_ == Phase::Validating) {
    if (static_pending_) {
      out = validate_static(inputs);
    } else {  // the plan in use, keeping what the checks compare
      out = validation_->observe->exec->run(inputs);
      validation_->observed_at = iteration;
      phase_ = Phase::Compiling;
    }
  } else {
    Running& plan = on_baseline ? *baseline_ : *current_;
    if (options_.trace && steps_.size() < options_.trace_max_steps) {
      TraceObserver tracer(*this, plan, iteration, times);
      out = plan.exec->run(inputs, &tracer);
    } else {
      out = plan.exec->run(inputs, times);
    }
  }
  const Clock::duration own_work = Clock::now() - own_work_from;
  iterations_.push_back({static_cast<int>(iterations_.size()), since_start(t0),
                         std::chrono::duration<double, std::milli>(Clock::now() - t0).count(), ran,
                         kernels, std::chrono::duration<double, std::milli>(own_work).count()});

  // Transitions happen between iterations, after this one is recorded.
  ++phase_iters_;
  auto enter = [&](Phase p) {
    phase_ = p;
    phase_iters_ = 0;
  };
  switch (ran) {
    case Phase::Warmup:
      if (phase_iters_ >= options_.warmup_iters &&
          since_start(Clock::now()) >= options_.warmup_min_s)
        enter(Phase::Profiling);
      break;
    case Phase::Profiling:
      if (phase_iters_ >= std::max(1, options_.profile_iters)) {
        end_profiling();
        phase_iters_ = 0;
      }
      break;
    case Phase::Validating:
      phase_iters_ = 0;
      break;
    case Phase::Reprofiling:
      // 1: cold_plan; with a baseline, every other iteration is its
      if (phase_iters_ >= 1 + (baseline_ ? 2 : 1) * std::max(1, options_.reprofile_iters)) {
        end_reprofiling();
        phase_iters_ = 0;
      }
      break;
    default:
      break;
  }
  if (timing_kept && (times_->steps() == 0 ||
                      static_cast<int>(times_->samples(0).size()) >= options_.reprofile_iters)) {
    take_fused_profile();
    timed_from_ = -1;
  }
  if (phase_ == Phase::Compiling) {
    if (sync_compile()) worker_->wait_idle();
    collect_compiles();
    if (ready_.empty() && !validation_ && passed_.empty() && !candidate_ && !plan_stale_ &&
        worker_->pending() == 0) {
      phase_ = Phase::Steady;
      event("steady: " + count_of(kept().size(), "fused kernel") + ", " +
            std::to_string(kernels_before_) + " -> " + std::to_string(current_->steps()) +
            " launches");
    }
  }
  background_work(inputs, t0, own_work);
  worker_->resume();
  iterations_.back().ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  return out;
}

// Short iterations bank their share until it makes a slice worth stopping for: a compiler
// continued for a few microseconds gets nothing done.
constexpr double kMinSliceS = 0.25e-3;

// Where the executor fills the cores, and iterations are long enough that stopping and
// continuing the compiler around each (two signals) costs next to nothing: a graph of a few
// microseconds per iteration leaves the cores idle most of the time anyway.
bool Session::stops_compiler() const {
  constexpr double kLongIterationMs = 0.5;
  return target_.executor_fills_cores && unfused_ms_ >= kLongIterationMs;
}

double Session::background_budget_s() const {
  if (sync_compile()) return INFINITY;  // the caller waits for the fusion anyway
  return options_.background_share * unfused_ms_ * 1e-3;
}

// At an iteration boundary: the prepared plan replaces the one in use. With regions it
// adds, this iteration is the first of their re-profile.
void Session::swap_candidate() {
  std::unique_ptr<Candidate> c = std::move(candidate_);
  const int iter = static_cast<int>(iterations_.size());
  const int before = current_->steps();
  std::vector<int> judged;  // the fresh regions not kept before: re-profiled
  for (int r : c->fresh)
    if (!regions_[r].kept_before) judged.push_back(r);
  // Adaptive judges the fresh kernels against the plan they replace, re-profiled in the
  // same window (run()); the other policies keep what they were asked to.
  if (!judged.empty() && options_.policy == FusionPolicy::Adaptive)
    baseline_ = std::move(current_);
  else
    retired_.push_back(std::move(current_));
  current_ = std::move(c->plan);
  if (c->fresh.empty()) {
    events_.push_back(
        {iter, "rebuilt the plan without the reverted kernels (or with interpreted ones again), " +
                   std::to_string(before) + " -> " + std::to_string(current_->steps()) +
                   " launches"});
    return;
  }
  int hits = 0;
  for (int r : c->fresh) {
    regions_[r].state = RegionState::Swapped;
    regions_[r].swapped_at = iter;
    regions_[r].tier = admitted_tier(r);
    hits += regions_[r].cache_hit;
  }
  const size_t kept_before = c->fresh.size() - judged.size();
  events_.push_back(
      {iter, "swapped in " + std::to_string(c->fresh.size()) + " fused kernel" +
                 (c->fresh.size() == 1 ? "" : "s") + " (" + std::to_string(hits) + " from cache" +
                 (kept_before ? ", " + std::to_string(kept_before) + " kept here before" : "") +
                 "), " + std::to_string(before) + " -> " + std::to_string(current_->steps()) +
                 " launches"});
  // The plan changed under any timing of the one before.
  times_.reset();
  timed_from_ = -1;
  if (judged.empty()) {  // nothing to judge: timed once it has run once, for the report
    timed_from_ = iter + 1;
    return;
  }
  batch_ = std::move(judged);
  phase_ = Phase::Reprofiling;
  phase_iters_ = 0;
}

// What an iteration does after its own work, within its budget: prepare the next plan to
// swap in (build it, then fault in its buffers slice by slice), and give a background
// compiler the cores for the rest. Nothing here runs once the session is steady.
void Session::background_work(std::span<const TensorView> inputs, Clock::time_point iteration_start,
                              Clock::duration own_work) {
  const bool compiling = phase_ == Phase::Compiling;
  const double budget_s = background_budget_s();
  const bool waited = !std::isfinite(budget_s);
  // Re-profiling times the plans' own steps, so a background compiler keeps its share
  // between them: the kernels still compiling need not wait for the last ones' judgement.
  const bool compiler_only = phase_ == Phase::Reprofiling && !waited && worker_->pending() > 0;
  if (!compiling && !compiler_only) {
    credit_s_ = 0;
    return;
  }
  // The kernels being validated run on the live-ins the observed iteration read now, while
  // the caller's inputs are still those (they may change before the next iteration).
  if (compiling && validation_ && validation_->observed() && !validation_->inputs_read)
    run_input_checks(inputs);
  // What this iteration already did besides running its plan (swapping, ending a phase,
  // judging, collecting compiles: the iteration that ends profiling selects the regions
  // inline) came out of the same share; a fused plan faster than the unfused median gives
  // what it saved as well (background_share.h).
  if (!waited) {
    const Clock::duration inline_work = Clock::now() - iteration_start - own_work;
    credit_s_ += background_credit_s(options_.background_share, unfused_ms_ * 1e-3,
                                     std::chrono::duration<double>(own_work).count(),
                                     std::chrono::duration<double>(inline_work).count());
    if (credit_s_ < kMinSliceS) return;
  }
  const auto start = Clock::now();
  const auto deadline = waited ? Clock::time_point::max()
                               : start + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(credit_s_));
  if (target_.rest) target_.rest();
  worker_->resume();
  if (compiling) {
    if (validation_ && validation_->observed()) advance_validation(deadline);
    prepare_plans(deadline);
  }
  // The compiler and the page faulter have the cores until the deadline (run() stops the
  // compiler again where iterations are long). Short iterations leave it running, but where
  // the executor's threads take every core it gets next to nothing between them: it needs
  // the slice all the same.
  if ((worker_->pending() > 0 || faulter_.busy()) && target_.executor_fills_cores && !waited)
    std::this_thread::sleep_until(deadline);
  // What this took beyond the credit (building a plan cannot be cut short) is owed; what
  // it left unused is not kept, or a long quiet stretch would bank a long stall.
  if (!waited)
    credit_s_ =
        std::min(0.0, credit_s_ - std::chrono::duration<double>(Clock::now() - start).count());
}

// Makes the next plan (a validation's, or the candidate) and has its buffers faulted in on
// faulter_'s thread (here, at once, when `deadline` is never: someone waits for the
// fusion). A plan is made only once the retired ones are gone (at the next run()): the
// session holds at most the plan in use and one more, plus what a validation keeps.
void Session::prepare_plans(Clock::time_point deadline) {
  // Faults in the plans' buffers: on the faulter's thread, or here and now where someone
  // waits for the fusion (no deadline). True once done.
  auto touch = [&](bool& touching, std::initializer_list<Executor*> first,
                   std::span<RegionCheck> checks = {}) {
    std::vector<Plan*> plans;
    for (Executor* e : first) plans.push_back(&e->plan());
    for (RegionCheck& c : checks)
      if (c.exec) plans.push_back(&c.exec->plan());
    if (deadline == Clock::time_point::max()) {
      for (Plan* p : plans) p->touch_pages(SIZE_MAX);  // no limit: done in one call
      return true;
    }
    if (!touching) {
      faulter_.start(std::move(plans));
      touching = true;
    }
    return !faulter_.busy();
  };
  const bool room = retired_.empty();
  if (room && !validation_ && !candidate_ && !ready_.empty()) prepare_validation();
  if (validation_ && !validation_->touched)
    validation_->touched =
        touch(validation_->touching, {validation_->observe->exec.get()}, validation_->checks);
  if (room && !validation_ && !candidate_ && (!passed_.empty() || plan_stale_)) prepare_candidate();
  if (candidate_ && !candidate_->touched)
    candidate_->touched = touch(candidate_->touching, {candidate_->plan->exec.get()});
}

int Session::region_of(const Running& plan, NodeId n) const {
  auto fused = plan.region_of_fused_node.find(n);
  return fused != plan.region_of_fused_node.end() ? fused->second : region_of(n);
}

// The steps of `plan` that run region r: its fused kernel, or its ops where it is not fused.
std::vector<size_t> Session::region_steps(const Running& plan, int r) const {
  std::vector<size_t> out;
  const auto& steps = plan.exec->plan().steps();
  for (size_t i = 0; i < steps.size(); ++i)
    if (region_of(plan, steps[i].node) == r) out.push_back(i);
  return out;
}

// `steps`' times summed in each timed iteration, in order.
static std::vector<double> iteration_sums(const StepTimes& t, const std::vector<size_t>& steps) {
  if (steps.empty()) return {};
  size_t n = t.samples(steps[0]).size();
  for (size_t s : steps) n = std::min(n, t.samples(s).size());
  std::vector<double> sums(n, 0.0);
  for (size_t i = 0; i < n; ++i)
    for (size_t s : steps) sums[i] += t.samples(s)[i];
  return sums;
}

// The values a region's check needs kept from the observed iteration: its live-ins the
// plan computes (graph inputs are the caller's; constants, the graph's) and its live-outs.
std::vector<ValueId> Session::observed_values(int r) const {
  std::vector<ValueId> values;
  for (ValueId v : kernels_[r].live_ins)
    if (graph_.value(v).producer != kNoNode && !is_constant(graph_, v)) values.push_back(v);
  values.insert(values.end(), kernels_[r].outputs.begin(), kernels_[r].outputs.end());
  return values;
}

// Validation of ready regions: the plan in use again, keeping their live-ins and live-outs,
// and each one's kernel alone. One round keeps at most about the plan in use's own buffers
// again (at least one region): with every region of a CNN at once the kept activations
// were several plans' worth, the session's peak memory; the rest wait for the next round.
void Session::prepare_validation() {
  std::sort(ready_.begin(), ready_.end());
  // Below a few MB a round is not worth another observed iteration (and another plan made
  // of the whole graph: a graph of thousands of tiny regions would take thousands).
  constexpr size_t kMinRoundBytes = size_t(4) << 20;
  const size_t budget = std::max(kMinRoundBytes, current_->exec->plan().buffer_bytes());
  std::vector<int> fresh;
  std::vector<ValueId> observe;
  std::unordered_set<ValueId> kept_values;
  size_t kept_bytes = 0;
  size_t taken = 0;
  for (; taken < ready_.size(); ++taken) {
    std::vector<ValueId> more;
    size_t more_bytes = 0;
    for (ValueId v : observed_values(ready_[taken])) {
      if (kept_values.count(v) || std::find(more.begin(), more.end(), v) != more.end()) continue;
      more.push_back(v);
      const Value& val = graph_.value(v);
      more_bytes += static_cast<size_t>(numel(val.shape)) * dtype_size(val.dtype);
    }
    if (!fresh.empty() && kept_bytes + more_bytes > budget) break;
    fresh.push_back(ready_[taken]);
    observe.insert(observe.end(), more.begin(), more.end());
    kept_values.insert(more.begin(), more.end());
    kept_bytes += more_bytes;
  }
  ready_.erase(ready_.begin(), ready_.begin() + static_cast<std::ptrdiff_t>(taken));
  std::sort(observe.begin(), observe.end());
  auto v = std::make_unique<Validation>();
  // The regions being validated run unfused in the observed iteration, also one whose
  // interpreted kernel is in use (its compiled kernel is checked): their live-outs are the
  // unfused ops'.
  std::vector<int> in_use;
  for (int r : kept())
    if (std::find(fresh.begin(), fresh.end(), r) == fresh.end()) in_use.push_back(r);
  try {
    v->observe = build(plan_base(), in_use, observe, current_.get());
  } catch (const Error& e) {  // out of device memory, say: the plan in use goes on
    for (int r : fresh)
      fail_validation(r, std::string("the plan that checks it could not be built: ") + e.what());
    return;
  }
  for (int r : fresh) {
    RegionCheck c;
    c.region = r;
    try {
      // A kernel that reads graph inputs runs right after the observed iteration: its plan
      // is made now. The others' are made one at a time when their turn comes. One of the
      // former per round may run in parts, a part per observed iteration (the last check
      // of the round, so that the others are done before the iteration is observed again).
      const bool input = reads_graph_input(r);
      const bool may_cut =
          !input || std::none_of(v->checks.begin(), v->checks.end(),
                                 [](const RegionCheck& o) { return o.per_observation; });
      cut_check(c, may_cut ? check_blocks_wanted(r) : 1);
      c.per_observation = input && c.parts > 1;
      if (input) c.exec = std::make_unique<Executor>(c.sub->graph, *fusing_);
    } catch (const Error& e) {
      fail_validation(r, std::string("its kernel could not run alone: ") + e.what());
      continue;
    }
    v->checks.push_back(std::move(c));
  }
  std::stable_partition(v->checks.begin(), v->checks.end(),
                        [](const RegionCheck& c) { return !c.per_observation; });
  if (!v->checks.empty()) validation_ = std::move(v);
}

// Into how many blocks a check's run should be cut to take about half a slice of
// background work each; 1 where someone waits for the fusion (no slices).
int Session::check_blocks_wanted(int r) const {
  const double budget_s = background_budget_s();
  if (!std::isfinite(budget_s) || budget_s <= 0) return 1;
  const double half_slice_s = 0.5 * std::max(budget_s, kMinSliceS);
  const RegionRecord& rec = regions_[r];
  // A generated kernel runs faster than its ops where it pays (or it is reverted anyway);
  // a compiled one is checked after its interpreted one ran.
  const double run_s = kernels_[r].epilogue    ? rec.candidate.heavy_s
                       : rec.interpreted_s > 0 ? rec.interpreted_s
                                               : rec.candidate.unfused_s;
  if (run_s <= half_slice_s) return 1;
  return static_cast<int>(std::min(std::ceil(run_s / half_slice_s), 1e6));
}

// Makes check `c`'s graph, in blocks of rows where `wanted` > 1: a generated host kernel
// computes a block per run (FusedRegion::blocks); an epilogue's region is cut into blocks
// (check_parts.h), if it can be cut so. A device kernel's check is one launch: it stays
// whole.
void Session::cut_check(RegionCheck& c, int wanted) {
  const fusion::RegionKernel& k = kernels_[c.region];
  const fusion::Region& region = detection_.regions[c.region];
  if (!k.epilogue && target_.host_memory)
    c.parts =
        static_cast<int>(std::min<int64_t>(wanted, fusion::kernel_rows(k.spec, k.iteration_shape)));
  c.parts = std::max(c.parts, 1);
  c.sub = std::make_unique<fusion::RegionGraph>(
      fusion::region_graph(graph_, region, /*fused=*/true, {}, admitted_tier(c.region), c.parts));
  if (!k.epilogue || wanted < 2) return;
  const CheckParts split = check_parts(graph_, k, wanted);
  if (split.parts < 2) return;
  try {
    auto blocks = std::make_unique<fusion::RegionGraph>(fusion::region_graph(
        graph_, region, /*fused=*/true, split.cut_shapes, admitted_tier(c.region)));
    // Every live-out must come out as one block of its rows.
    const std::vector<ValueId>& outs = k.outputs;
    for (size_t o = 0; o < outs.size(); ++o)
      if (numel(blocks->graph.value(blocks->graph.outputs()[o]).shape) * split.parts !=
          numel(graph_.value(outs[o]).shape))
        return;
    c.sub = std::move(blocks);
    c.parts = split.parts;
  } catch (const Error&) {  // shapes that do not fit: the check runs whole
  }
}

bool Session::reads_graph_input(int r) const {
  return std::any_of(kernels_[r].live_ins.begin(), kernels_[r].live_ins.end(), [&](ValueId in) {
    return graph_.value(in).producer == kNoNode;  // constants have their Constant node
  });
}

// Reverts a region whose kernel failed validation, keeping its source for the bug report.
void Session::fail_validation(int r, const std::string& failure) {
  RegionRecord& rec = regions_[r];
  if (compiling_up_.count(r)) {
    std::string why = "its compiled kernel failed validation: " + failure;
    try {
      why +=
          "; its source is kept at " +
          target_.kernels->keep_source(kernels_[r].spec, kernel_origin(graph_, kernels_[r].nodes))
              .string();
    } catch (const Error& e) {
      why += std::string("; its source could not be kept: ") + e.what();
    }
    stay_interpreted(r, why);
    return;
  }
  rec.validation = "failed: " + failure;
  rec.swapped_at = static_cast<int>(iterations_.size()) - 1;
  // A mismatch names the value ("value '...' element ..."); anything else kept it from running.
  const bool mismatch = failure.rfind("value '", 0) == 0;
  std::string reason =
      (mismatch ? "fused result differs from unfused: " : "not validated: ") + failure;
  try {  // an epilogue has no source
    if (!kernels_[r].epilogue) {
      auto path =
          target_.kernels->keep_source(kernels_[r].spec, kernel_origin(graph_, kernels_[r].nodes));
      reason += "; its source is kept at " + path.string();
    }
  } catch (const Error& e) {
    reason += std::string("; its source could not be kept: ") + e.what();
  }
  revert(r, std::move(reason));
}

// Plans check `c`'s kernel alone (a failure is the check's); true if it has a plan.
bool Session::build_check(RegionCheck& c) {
  if (c.exec) return true;
  try {
    c.exec = std::make_unique<Executor>(c.sub->graph, *fusing_);
  } catch (const Error& e) {
    c.failure = std::string("its kernel could not run alone: ") + e.what();
  }
  return c.exec != nullptr;
}

// Runs check `c`'s kernel alone on the live-ins the observed iteration kept and, for graph
// inputs, on `inputs` (which must be that iteration's).
void Session::run_check(RegionCheck& c, std::span<const TensorView> inputs) {
  if (!build_check(c)) return;
  c.ran = true;
  const Plan& observed = validation_->observe->exec->plan();
  std::vector<TensorView> bound;
  for (size_t i = 0; i < c.sub->inputs.size(); ++i) {
    const ValueId in = c.sub->inputs[i];
    auto g = std::find(graph_.inputs().begin(), graph_.inputs().end(), in);
    TensorView v =
        g != graph_.inputs().end() ? inputs[g - graph_.inputs().begin()] : observed.observed(in);
    const Shape& shape = c.sub->graph.value(c.sub->graph.inputs()[i]).shape;
    if (shape != v.shape) {  // cut: block `part` of its rows, a contiguous run of elements
      v = contiguous_view(static_cast<char*>(v.data) +
                              static_cast<size_t>(c.part * numel(shape)) * dtype_size(v.dtype),
                          v.dtype, shape);
    }
    bound.push_back(v);
  }
  try {
    c.got = c.exec->run(bound);
  } catch (const Error& e) {
    c.failure = std::string("its kernel could not run alone: ") + e.what();
  }
}

// Right after the observed iteration, while the caller's inputs are still that iteration's
// (they change every iteration in a training loop): the kernels that read graph inputs
// (after an iteration observed again for a check in parts, that check's next block).
// Copying the inputs instead would cost as much, in fresh memory.
void Session::run_input_checks(std::span<const TensorView> inputs) {
  validation_->inputs_read = true;
  for (RegionCheck& c : validation_->checks)
    if (reads_graph_input(c.region) && !c.ran && c.failure.empty()) run_check(c, inputs);
}

// Where block `c.part`'s elements of a live-out are: in the unfused one (`want`), in the
// check's (`got`), and how many.
Session::BlockSpan Session::block_span(const RegionCheck& c, const TensorView& want,
                                       const TensorView& got) const {
  const int64_t n = got.numel();
  if (n != want.numel()) return {c.part * n, 0, n};  // a cut epilogue's block of rows
  if (c.parts == 1) return {0, 0, n};
  const fusion::RegionKernel& k = kernels_[c.region];
  const fusion::KernelBlock b = fusion::kernel_block(k.spec, k.iteration_shape, c.part, c.parts);
  return {b.first(n), b.first(n), b.count(n)};
}

// One check after another until `deadline`: its kernel alone on the kept live-ins, if it
// has not run (one step that is not cut: the region's fused time), then its live-outs
// against the unfused ones, slice by slice. Once all are done, the regions that passed wait for a
// plan.
void Session::advance_validation(Clock::time_point deadline) {
  Validation& v = *validation_;
  const Plan& observed = v.observe->exec->plan();
  constexpr int64_t kSliceElements = int64_t(1) << 16;
  while (v.next < v.checks.size() && Clock::now() < deadline) {
    RegionCheck& c = v.checks[v.next];
    const std::vector<ValueId>& outs = kernels_[c.region].outputs;
    if (c.failure.empty() && c.output >= outs.size() && c.part + 1 < c.parts) {
      ++c.part;  // the next block of rows: run, then compared
      c.output = 0;
      c.ran = false;
      if (c.per_observation) {  // on the next observed iteration's inputs
        v.observed_at = -1;
        v.inputs_read = false;
        return;
      }
    }
    if (!c.failure.empty() || c.output >= outs.size()) {
      c.got = {};
      c.exec.reset();  // its buffers: the next check's plan is made in their place
      ++v.next;
      continue;
    }
    if (!c.ran) {  // reads no graph input (run_input_checks ran the others)
      // Its plan and its run are two steps that cannot be cut: the run waits for the next
      // share where the plan took this one's (a heavy op's library kernel is made, and
      // oneDNN may pack its weights another way for the post-ops, at its first run).
      if (!c.exec) {
        build_check(c);
        continue;
      }
      run_check(c, {});
      continue;
    }
    const TensorView& want = observed.observed(outs[c.output]);
    const TensorView& got = c.got[c.output];
    const BlockSpan block = block_span(c, want, got);
    const int64_t n = block.n;
    // Slices of the live-out, whatever the blocks: a heavy epilogue's tolerance is scaled
    // by its slice's largest unfused magnitude, the same with blocks as without.
    const int64_t at = block.want_at + c.compared;
    const int64_t slice = at / kSliceElements * kSliceElements;
    const int64_t len = std::min({kSliceElements, n - c.compared, slice + kSliceElements - at});
    HostTensor e_host, a_host, s_host;  // downloaded when the plans hold device memory
    const TensorView e = readable_slice(want, at, len, e_host);
    const TensorView a = readable_slice(got, block.got_at + c.compared, len, a_host);
    Tolerance tol = fused_tolerance(e.dtype);
    if (kernels_[c.region].epilogue) {
      const int64_t slice_len = std::min(kSliceElements, want.numel() - slice);
      tol = heavy_epilogue_tolerance(
          at == slice && len == slice_len ? e : readable_slice(want, slice, slice_len, s_host));
    }
    Mismatch m = compare(e, a, tol);
    c.worst = std::max(c.worst, m.worst_ratio);
    if (m.index >= 0) {
      char b[160];
      std::snprintf(b, sizeof b, "' element %lld is %.9g, unfused %.9g",
                    static_cast<long long>(at + m.index), m.actual, m.expected);
      c.failure = "value '" + graph_.value(outs[c.output]).name + b;
    }
    c.compared += len;
    if (c.compared >= n) {
      ++c.output;
      c.compared = 0;
    }
  }
  if (v.next < v.checks.size()) return;
  for (RegionCheck& c : v.checks) {
    if (!c.failure.empty()) {
      fail_validation(c.region, c.failure);
      continue;
    }
    char b[96];
    std::snprintf(b, sizeof b, "%.3g of the tolerance", c.worst);
    regions_[c.region].validation =
        std::string("passed: worst element used ") + b +
        (c.parts > 1 ? ", run in " + std::to_string(c.parts) + " blocks of rows" : "");
    passed_.push_back(c.region);
  }
  // The caller may still read the observed iteration's outputs while it is the last one.
  if (v.observed_at == static_cast<int>(iterations_.size()) - 1)
    retired_.push_back(std::move(v.observe));
  validation_.reset();
}

// The plan to swap in next: the kept regions and the validated ones.
void Session::prepare_candidate() {
  auto c = std::make_unique<Candidate>();
  c->fresh.swap(passed_);
  std::vector<int> regions = kept();  // an interpreted region swapping tiers is in both
  for (int r : c->fresh)
    if (std::find(regions.begin(), regions.end(), r) == regions.end()) regions.push_back(r);
  plan_stale_ = false;
  try {
    c->plan = build(plan_base(), regions, {}, current_.get(), c->fresh);
  } catch (const Error& e) {  // out of device memory, say: the plan in use goes on
    for (int r : c->fresh) {
      if (compiling_up_.count(r)) {
        stay_interpreted(
            r, std::string("the plan with its compiled kernel could not be built: ") + e.what());
        continue;
      }
      regions_[r].swapped_at = static_cast<int>(iterations_.size()) - 1;
      revert(r, std::string("the fused plan could not be built: ") + e.what());
    }
    return;
  }
  candidate_ = std::move(c);
}

std::vector<OpRecord> Session::profiled_ops() const {
  std::vector<OpRow> rows = op_rows(*current_->graph, current_->exec->plan(), *times_);
  const auto& steps = current_->exec->plan().steps();
  std::vector<OpRecord> ops;
  for (size_t s = 0; s < steps.size(); ++s) {
    OpRecord o;
    o.node = steps[s].node;
    o.name = rows[s].node;
    o.op = rows[s].op;
    o.output = rows[s].output;
    o.cost = {rows[s].seconds, rows[s].bytes, rows[s].flops};
    o.cls = classify(o.cost, machine_);
    o.gbps = rows[s].gbps();
    o.peak_share = peak_share(o.cost, machine_);
    o.flop_share = o.cost.seconds > 0 && machine_.gflops > 0
                       ? o.cost.flops / o.cost.seconds * 1e-9 / machine_.gflops
                       : 0;
    o.fused = current_->region_of_fused_node.count(o.node) > 0;
    o.region = region_of(*current_, o.node);
    ops.push_back(std::move(o));
  }
  return ops;
}

void Session::end_profiling() {
  unfused_ops_ = profiled_ops();
  times_.reset();

  unfused_ms_ = median_ms(Phase::Profiling);
  const double iteration_s = unfused_ms_ * 1e-3;
  std::string head = "profiled " + count_of(options_.profile_iters, "iteration") + " (median " +
                     fmt_ms(iteration_s * 1e3) + ", " + count_of(kernels_before_, "kernel") + "): ";
  if (options_.policy == FusionPolicy::Static) {
    static_graph_ = std::make_unique<Graph>(graph_);
    static_rewrites_ = fusion::apply_static_patterns(*static_graph_);
    verify(*static_graph_);
    if (static_rewrites_ == 0) {
      event(head + "no static pattern matches; running unfused");
      phase_ = Phase::Steady;
      return;
    }
    event(head + std::to_string(static_rewrites_) + " static pattern rewrites; validating them");
    static_pending_ = true;
    phase_ = Phase::Validating;
    return;
  }
  // A share is of the larger of the iteration's median and its ops' medians summed: those
  // come from different iterations, and their sum can exceed the median on a noisy machine,
  // which would let a region save more than the whole iteration.
  double ops_s = 0;
  for (const OpRecord& o : unfused_ops_) ops_s += o.cost.seconds;
  const double share_of_s = std::max(iteration_s, ops_s);
  share_of_s_ = share_of_s;
  std::vector<CompileJob> jobs;
  std::vector<int> epilogues, interpreted;
  for (size_t r = 0; r < regions_.size(); ++r) {
    RegionRecord& rec = regions_[r];
    const fusion::RegionKernel& k = kernels_[r];
    if (k.outputs.empty()) {
      rec.reason = "dead code: nothing reads its results";
      continue;
    }
    if (options_.policy == FusionPolicy::Off) {
      rec.reason = "--fusion off: nothing is fused";
      continue;
    }
    RegionCandidate& c = rec.candidate;
    const std::optional<NodeId> heavy = detection_.regions[r].heavy;
    for (const OpRecord& o : unfused_ops_)
      if (o.region == static_cast<int>(r)) {
        c.unfused_s += o.cost.seconds;
        if (heavy && o.node == *heavy) c.heavy_s += o.cost.seconds;
        if (o.cls == OpClass::MemoryBound) c.best_gbps = std::max(c.best_gbps, o.gbps);
      }
    auto bytes = [&](ValueId v) {
      const Value& val = graph_.value(v);
      return double(numel(val.shape)) * dtype_size(val.dtype);
    };
    for (ValueId v : k.live_ins) c.io_bytes += bytes(v);
    for (ValueId v : k.outputs) c.io_bytes += bytes(v);
    c.flops = k.flops;
    c.cached = k.epilogue || target_.kernels->cached(k.spec);
    // Adaptive runs a region the backend can interpret at once, its spec interpreted, and
    // decides on a compile once that kernel is timed (consider_compiling). A kernel in the
    // cache costs no compile: it runs compiled from the start.
    c.interpreted = !k.epilogue && !c.cached && options_.policy == FusionPolicy::Adaptive &&
                    options_.interpret_first && !sync_compile() && target_.interprets &&
                    fusion::interpretable(k.spec);
    rec.selection = k.epilogue ? select_epilogue(c, share_of_s)
                               : select_region(c, share_of_s, machine_, options_.select);
  }
  // One kernel, one compile: regions of the same kernel are judged together too.
  std::map<std::string, std::vector<int>> kernel_groups;
  for (size_t r = 0; r < regions_.size(); ++r)
    if (!kernels_[r].epilogue && !regions_[r].selection.reason.empty())
      kernel_groups[regions_[r].kernel].push_back(static_cast<int>(r));
  for (const auto& [kernel, members] : kernel_groups) {
    std::vector<Selection> ss;
    for (int r : members) ss.push_back(regions_[r].selection);
    const RegionCandidate& first = regions_[members.front()].candidate;
    select_kernel_group(ss, first.cached, share_of_s, options_.select, first.interpreted);
    for (size_t i = 0; i < members.size(); ++i) regions_[members[i]].selection = ss[i];
  }
  for (size_t r = 0; r < regions_.size(); ++r) {
    RegionRecord& rec = regions_[r];
    const fusion::RegionKernel& k = kernels_[r];
    if (rec.selection.reason.empty()) continue;  // dead code, or --fusion off
    if (options_.policy == FusionPolicy::All) {  // the prediction is kept, for the report
      rec.selection.selected = true;
      rec.selection.reason = "--fusion all: every detected region is fused";
    }
    rec.reason = rec.selection.reason;
    if (options_.verdicts) carry_verdict(rec);
    if (!rec.selection.selected) continue;
    rec.state = RegionState::Queued;
    if (k.epilogue) {  // nothing to compile: validated at the next boundary
      epilogues.push_back(static_cast<int>(r));
      continue;
    }
    if (rec.candidate.interpreted) {
      rec.tier = fusion::KernelTier::Interpreted;
      rec.tier_reason = "interpreted: runs at once, while a compile would take a compiler";
      interpreted.push_back(static_cast<int>(r));
      continue;
    }
    rec.tier_reason = "compiled: " + compiled_first_why(k.spec, rec.candidate.cached);
    jobs.push_back({static_cast<int>(r), k.spec, kernel_origin(graph_, kernels_[r].nodes),
                    rec.selection.saving_s});
  }
  head += count_of(regions_.size(), "fusible region") + ", ";
  if (!epilogues.empty() || !interpreted.empty()) {
    if (!epilogues.empty())
      head += count_of(epilogues.size(), "epilogue") + " selected (no compile), ";
    if (!interpreted.empty())
      head += count_of(interpreted.size(), "region") + " selected, interpreted (no compile yet), ";
    for (int r : epilogues) admit(r);
    for (int r : interpreted) admit(r);
    if (jobs.empty()) {
      event(head + (ready_.empty() ? "kept here before: swapping them in" : "validating them"));
      phase_ = Phase::Compiling;  // run() moves on to validating at once
      return;
    }
  }
  if (jobs.empty()) {
    event(head + (options_.policy == FusionPolicy::Off ? "--fusion off" : "none worth a kernel") +
          "; running unfused");
    phase_ = Phase::Steady;
    return;
  }
  // Kernels all in the cache only need loading (a second run of the model): waited for
  // here, they join the next plan at once. A bad entry found while loading is compiled
  // again, so the worker must have its cores back first.
  const bool all_cached = std::all_of(jobs.begin(), jobs.end(), [&](const CompileJob& j) {
    return regions_[j.region].candidate.cached;
  });
  event(head + std::to_string(jobs.size()) + " selected; " +
        (sync_compile() ? "compiling now"
         : all_cached   ? "loading from the kernel cache"
                        : "compiling in the background, hottest first"));
  worker_->submit(std::move(jobs));
  phase_ = Phase::Compiling;
  if (all_cached && !sync_compile()) {
    worker_->resume();
    worker_->wait_idle();
  }
}

std::string region_key(const Graph& g, const RegionRecord& r) {
  return r.kernel + " at '" + g.node(r.nodes.front()).name + "'";
}

void Session::carry_verdict(RegionRecord& rec) {
  const RegionVerdict* v = options_.verdicts->find(region_key(graph_, rec), rec.candidate.io_bytes);
  if (!v || (options_.policy != FusionPolicy::Adaptive && v->kind != RegionVerdict::Wrong)) return;
  std::optional<std::string> why = carried_reason(*v, rec.candidate.io_bytes);
  if (!why) {
    rec.reason += " (decided again: the verdict at " + v->at + " does not hold at this size)";
    return;
  }
  rec.selection.selected = v->kind == RegionVerdict::Kept;
  rec.selection.reason = rec.reason = rec.carried = *why;
  rec.kept_before =
      v->kind == RegionVerdict::Kept && !options_.signature.empty() && v->at == options_.signature;
}

// A region whose kernel is ready: validated next, or, kept before at this very signature,
// on to the next plan as it is.
void Session::admit(int r) {
  RegionRecord& rec = regions_[r];
  if (!rec.kept_before) {
    ready_.push_back(r);
    return;
  }
  rec.validation = "passed before: kept at " + options_.signature + ", not validated again";
  passed_.push_back(r);
}

std::string kernel_origin(const Graph& g, const std::vector<NodeId>& kernel_nodes) {
  std::string origin = "graph '" + g.name + "', nodes:";
  for (NodeId n : kernel_nodes) origin += " " + std::to_string(n) + ":" + g.node(n).name;
  return origin;
}

void Session::collect_compiles() {
  for (CompileDone& d : worker_->take_done()) {
    RegionRecord& r = regions_[d.region];
    r.compile_ms = d.outcome.ms;
    r.cache_hit = d.outcome.source == fusion::CompileOutcome::Memory ||
                  d.outcome.source == fusion::CompileOutcome::Disk;
    r.compile_start_s = since_start(d.start);
    r.compile_end_s = since_start(d.end);
    if (d.outcome.ok) {
      admit(d.region);
    } else if (compiling_up_.count(d.region)) {
      stay_interpreted(d.region, d.outcome.message);
      event(d.outcome.message);
    } else {
      r.state = RegionState::Failed;
      r.reason = d.outcome.message;
      event(d.outcome.message);
    }
  }
}

TensorView Session::readable_slice(const TensorView& v, int64_t first, int64_t count,
                                   HostTensor& copy) const {
  void* start = static_cast<char*>(v.data) + static_cast<size_t>(first) * dtype_size(v.dtype);
  if (target_.host_memory) return contiguous_view(start, v.dtype, {count});
  copy = HostTensor(v.dtype, {count});
  target_.backend->download(copy.data(), start, copy.bytes());
  return copy.view();
}

// `static`: the rewritten graph against the unfused one, every graph output compared.
std::span<const TensorView> Session::validate_static(std::span<const TensorView> inputs) {
  static_pending_ = false;
  reference_ = build(graph_, {});
  std::span<const TensorView> out = reference_->exec->run(inputs);
  const int iter = static_cast<int>(iterations_.size());
  std::string failure;
  try {
    std::unique_ptr<Running> rewritten = build(*static_graph_, {});
    std::span<const TensorView> got = rewritten->exec->run(inputs);
    for (size_t k = 0; k < got.size() && failure.empty(); ++k) {
      HostTensor e_host, a_host;
      Mismatch m =
          compare(readable_slice(out[k], 0, out[k].numel(), e_host),
                  readable_slice(got[k], 0, got[k].numel(), a_host), fused_tolerance(out[k].dtype));
      if (m.index >= 0) {
        char b[160];
        std::snprintf(b, sizeof b, "' element %lld is %.9g, unfused %.9g",
                      static_cast<long long>(m.index), m.actual, m.expected);
        failure = "output '" + graph_.value(graph_.outputs()[k]).name + b;
      }
    }
  } catch (const Error& e) {
    failure = std::string("the rewritten plan: ") + e.what();
  }
  if (!failure.empty()) {
    events_.push_back({iter, "static rewrites reverted: " + failure});
    phase_ = Phase::Steady;
    return out;
  }
  const int before = current_->steps();
  static_kept_ = true;
  current_ = build(plan_base(), {});
  events_.push_back({iter, "swapped in " + std::to_string(static_rewrites_) + " static rewrites, " +
                               std::to_string(before) + " -> " + std::to_string(current_->steps()) +
                               " launches"});
  phase_ = Phase::Reprofiling;
  return out;
}

void Session::take_fused_profile() {
  fused_ops_ = profiled_ops();
  times_.reset();
  for (const OpRecord& o : fused_ops_)
    if (o.fused) regions_[o.region].measured_fused_s = o.cost.seconds;
}

void Session::end_reprofiling() {
  // The fresh regions in the new plan and in the one it replaced, timed in turn
  // (selection.h's judge_in_turn: the fastest iteration of each, and which was slower pair by
  // pair, so that noise on a shared machine does not decide).
  // A region whose compiled kernel replaced its interpreted one is judged against that
  // (the plan before ran it), and keeps the numbers of its first judgement against its ops.
  std::map<int, InTurnVerdict> in_turn;
  if (baseline_ && times_ && baseline_times_)
    for (int r : batch_) {
      const InTurnVerdict v =
          judge_in_turn(iteration_sums(*times_, region_steps(*current_, r)),
                        iteration_sums(*baseline_times_, region_steps(*baseline_, r)));
      if (v.pairs == 0) continue;
      in_turn[r] = v;
      if (compiling_up_.count(r)) continue;
      regions_[r].reprofiled_fused_s = v.fastest_fused_s;
      regions_[r].reprofiled_unfused_s = v.fastest_unfused_s;
      regions_[r].reprofiled_pairs = v.pairs;
      regions_[r].reprofiled_fused_slower = v.fused_slower;
    }
  take_fused_profile();
  if (baseline_) retired_.push_back(std::move(baseline_));
  baseline_times_.reset();

  bool reverted = false;
  std::vector<int> interpreted;  // kept at their first tier
  for (int r : batch_) {
    RegionRecord& rec = regions_[r];
    const auto turn = in_turn.find(r);
    const bool timed_in_turn = turn != in_turn.end();
    if (compiling_up_.count(r)) {
      const double compiled = timed_in_turn ? turn->second.fastest_fused_s : rec.measured_fused_s;
      const double interp = timed_in_turn ? turn->second.fastest_unfused_s : rec.interpreted_s;
      const bool lost = timed_in_turn ? turn->second.slower : compiled >= interp;
      const std::string timing = fmt_ms(compiled * 1e3) + " against the interpreted kernel's " +
                                 fmt_ms(interp * 1e3) +
                                 (timed_in_turn ? " (the fastest of each, timed in turn)" : "");
      if (lost) {
        stay_interpreted(r, "its compiled kernel took " + timing + ", not faster");
      } else {
        compiling_up_.erase(r);
        rec.reprofiled_fused_s = compiled;
        rec.tier_reason = "compiled: " + timing;
      }
      continue;
    }
    const double fused = timed_in_turn ? rec.reprofiled_fused_s : rec.measured_fused_s;
    const double unfused = timed_in_turn ? rec.reprofiled_unfused_s : rec.candidate.unfused_s;
    const bool slower = timed_in_turn ? turn->second.slower : fused >= unfused;
    // Only adaptive judges speed: the other policies fuse what they were asked to.
    if (options_.policy == FusionPolicy::Adaptive && slower) {
      const std::string timing =
          "its kernel took " + fmt_ms(fused * 1e3) + ", not faster than the " +
          fmt_ms(unfused * 1e3) + " of the ops it replaced" +
          (timed_in_turn ? " (the fastest of each, timed in turn; slower in " +
                               std::to_string(rec.reprofiled_fused_slower) + " of " +
                               std::to_string(rec.reprofiled_pairs) + " iterations)"
                         : "");
      reverted = true;
      // Whether a compile pays by the rule that selected the region, now counting it.
      auto compile_pays = [&] {
        RegionCandidate compiled = rec.candidate;
        compiled.interpreted = false;
        return select_region(compiled, share_of_s_, machine_, options_.select).selected;
      };
      if (rec.tier == fusion::KernelTier::Interpreted && compile_pays()) {
        // The interpreter's passes through L1 may cost more than the ops save (short rows,
        // cheap ops), where a compiled kernel keeps the values in registers: the region
        // runs unfused until its compiled kernel is ready, if a compile pays by the rule
        // that selected the region, and is then validated and judged like any.
        rec.interpreted_s = fused;
        rec.state = RegionState::Queued;
        rec.tier = fusion::KernelTier::Compiled;
        rec.tier_reason = "compiled: interpreted, " + timing;
        event("region " + std::to_string(r) + " (" + rec.kernel +
              ") runs unfused until its kernel is compiled: interpreted, " + timing);
        worker_->submit({{r, kernels_[r].spec, kernel_origin(graph_, kernels_[r].nodes),
                          rec.selection.saving_s}});
        continue;
      }
      revert(r, timing);
      continue;
    }
    if (rec.tier == fusion::KernelTier::Interpreted) {
      rec.interpreted_s = fused;
      interpreted.push_back(r);
    }
  }
  batch_.clear();
  consider_compiling(interpreted);
  // The plan in use still runs the reverted kernels, correctly: a plan without them is
  // prepared in the background and swapped in at a later boundary.
  if (reverted) plan_stale_ = true;
  // Each kept region as it was judged: timed in turn with its ops where it was (the same
  // stretch of a shared machine, which the profile's medians before and the re-profile's
  // after are not), else its ops' profile against its kernel's re-profile.
  double before = 0, after = 0;
  bool all_in_turn = true;
  for (int r : kept()) {
    const RegionRecord& rec = regions_[r];
    const bool in_turn = rec.reprofiled_pairs > 0;
    all_in_turn = all_in_turn && in_turn;
    before += in_turn ? rec.reprofiled_unfused_s : rec.candidate.unfused_s;
    after += in_turn ? rec.reprofiled_fused_s : rec.measured_fused_s;
  }
  if (static_kept_)
    event("re-profiled: " + std::to_string(static_rewrites_) + " static rewrites kept, " +
          fmt_ms(median_ms(Phase::Profiling)) + " -> " + fmt_ms(median_ms(Phase::Reprofiling)) +
          " per iteration");
  else
    event("re-profiled: " + count_of(kept().size(), "fused kernel") + " kept, their regions " +
          fmt_ms(before * 1e3) + " -> " + fmt_ms(after * 1e3) + " per iteration" +
          (all_in_turn && !kept().empty() ? " (the fastest of each, timed in turn)" : ""));
  phase_ = Phase::Compiling;  // run() settles to steady when nothing is left
}

// The rule that selected a region over its ops (selection.h), now for its compiled kernel
// over its interpreted one: with the interpreted kernel's time in place of the ops', a
// compile must save min_share of the iteration and be repaid within the expected run.
// Regions of one kernel are judged together (one compile).
void Session::consider_compiling(const std::vector<int>& interpreted) {
  std::map<std::string, std::vector<int>> groups;
  for (int r : interpreted) groups[regions_[r].kernel].push_back(r);
  std::vector<CompileJob> jobs;
  for (const auto& [kernel, members] : groups) {
    std::vector<Selection> ss;
    for (int r : members) {
      RegionCandidate c = regions_[r].candidate;
      c.unfused_s = regions_[r].interpreted_s;
      c.cached = c.interpreted = false;
      ss.push_back(select_region(c, share_of_s_, machine_, options_.select));
    }
    select_kernel_group(ss, false, share_of_s_, options_.select);
    for (size_t i = 0; i < members.size(); ++i) {
      const int r = members[i];
      const Selection& sel = ss[i];
      RegionRecord& rec = regions_[r];
      char b[200];
      std::snprintf(b, sizeof b,
                    "it takes %s, a compiled kernel ~%s: %s per iteration (%.1f%%) to gain",
                    fmt_ms(rec.interpreted_s * 1e3).c_str(), fmt_ms(sel.predicted_s * 1e3).c_str(),
                    fmt_ms(std::max(0.0, sel.saving_s) * 1e3).c_str(), 100 * sel.share);
      if (!sel.selected) {
        rec.tier_reason = std::string("interpreted, not compiled: ") + b +
                          ", under what a compile must save or repay (selection.h)";
        continue;
      }
      rec.tier_reason = std::string("interpreted, compiling: ") + b;
      compiling_up_.insert(r);
      jobs.push_back({r, kernels_[r].spec, kernel_origin(graph_, kernels_[r].nodes), sel.saving_s});
    }
  }
  if (jobs.empty()) return;
  event("compiling the kernels of " + count_of(jobs.size(), "interpreted region") +
        " in the background: compiled, they may save enough more");
  worker_->submit(std::move(jobs));
}

std::string Session::compiled_first_why(const fusion::KernelSpec& spec, bool cached) const {
  std::string why;
  if (cached) return "its kernel is in the kernel cache";
  if (options_.policy != FusionPolicy::Adaptive) return "--fusion all compiles every region";
  if (sync_compile()) return "the caller waits for the compiles (--sync-compile)";
  if (!target_.interprets) return "this backend runs compiled kernels only";
  if (!options_.interpret_first) return "interpreting first is off";
  if (!fusion::interpretable(spec, &why)) return "the interpreter does not run it: " + why;
  return "compiled first";
}

void Session::stay_interpreted(int r, const std::string& why) {
  RegionRecord& rec = regions_[r];
  compiling_up_.erase(r);
  if (rec.tier == fusion::KernelTier::Compiled && rec.state == RegionState::Swapped)
    plan_stale_ = true;  // the plan in use runs the compiled kernel: one without it follows
  rec.tier = fusion::KernelTier::Interpreted;
  rec.tier_reason = "interpreted: " + why;
  event("region " + std::to_string(r) + " (" + rec.kernel + ") stays interpreted: " + why);
}

}  // namespace hf
