#include "session/session.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "fusion/static_patterns.h"
#include "profiler/step_times.h"
#include "profiler/table_text.h"
#include "runtime/exec/compare.h"
#include "runtime/ir/error.h"
#include "runtime/ir/op_table.h"
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
      options_.before_compile);
  phase_ =
      options_.warmup_iters > 0 || options_.warmup_min_s > 0 ? Phase::Warmup : Phase::Profiling;
}

Session::~Session() = default;

std::unique_ptr<Session::Running> Session::build(const Graph& base, const std::vector<int>& regions,
                                                 std::span<const ValueId> observe) {
  auto r = std::make_unique<Running>();
  r->graph = std::make_unique<Graph>(base);
  for (int id : regions)
    r->region_of_fused_node[fusion::fuse_region(*r->graph, detection_.regions[id])] = id;
  r->exec = std::make_unique<Executor>(*r->graph, *fusing_, observe);
  if (options_.trace) {
    for (const Step& st : r->exec->plan().steps()) {
      const Node& n = r->graph->node(st.node);
      auto fused = r->region_of_fused_node.find(st.node);
      int region = fused != r->region_of_fused_node.end() ? fused->second : region_of(st.node);
      std::string op = row_op(n);
      if (n.op == OpType::Fused) op += " " + regions_.at(region).kernel;
      r->labels.push_back(static_cast<int>(labels_.size()));
      labels_.push_back({n.name, op, st.node, region, node_bytes(*r->graph, n),
                         fused != r->region_of_fused_node.end()});
    }
  }
  return r;
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
  TraceObserver(Session& s, int iteration, StepTimes* times)
      : s_(s), iteration_(iteration), times_(times) {}
  void on_step(size_t step, double seconds) override {
    double end = s_.since_start(Clock::now());
    s_.steps_.push_back({iteration_, s_.current_->labels[step], end - seconds, seconds});
    if (times_) times_->on_step(step, seconds);
  }

 private:
  Session& s_;
  int iteration_;
  StepTimes* times_;
};

std::span<const TensorView> Session::run(std::span<const TensorView> inputs) {
  const auto t0 = Clock::now();
  reference_.reset();  // the last iteration's outputs are no longer needed
  retired_.reset();
  if (phase_ == Phase::Compiling) {
    collect_compiles();
    if (!ready_.empty()) phase_ = Phase::Validating;
  }
  const Phase ran = phase_;
  const int kernels = current_->steps();
  std::span<const TensorView> out;
  const int iteration = static_cast<int>(iterations_.size());
  StepTimes* times = nullptr;
  // The first iteration on a freshly built plan touches its new buffers for the first time
  // (page faults): it is run but not profiled, or a good kernel could look slow.
  const bool cold_plan = phase_ == Phase::Reprofiling && phase_iters_ == 0;
  if ((phase_ == Phase::Profiling || phase_ == Phase::Reprofiling) && !cold_plan) {
    int window = phase_ == Phase::Profiling ? options_.profile_iters : options_.reprofile_iters;
    if (!times_) times_ = std::make_unique<StepTimes>(kernels, window);
    times = times_.get();
  }
  if (phase_ == Phase::Validating) {
    out = validate_and_swap(inputs);
  } else if (options_.trace && steps_.size() < options_.trace_max_steps) {
    TraceObserver tracer(*this, iteration, times);
    out = current_->exec->run(inputs, &tracer);
  } else {
    out = current_->exec->run(inputs, times);
  }
  iterations_.push_back({static_cast<int>(iterations_.size()), since_start(t0),
                         std::chrono::duration<double, std::milli>(Clock::now() - t0).count(), ran,
                         kernels});

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
      if (phase_iters_ >= 1 + std::max(1, options_.reprofile_iters)) {  // 1: cold_plan
        end_reprofiling();
        phase_iters_ = 0;
      }
      break;
    default:
      break;
  }
  if (phase_ == Phase::Compiling) {
    if (sync_compile()) worker_->wait_idle();
    collect_compiles();
    if (!ready_.empty()) {
      phase_ = Phase::Validating;
    } else if (worker_->pending() == 0) {
      phase_ = Phase::Steady;
      event("steady: " + count_of(kept().size(), "fused kernel") + ", " +
            std::to_string(kernels_before_) + " -> " + std::to_string(current_->steps()) +
            " launches");
    }
  }
  return out;
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
    auto fused = current_->region_of_fused_node.find(o.node);
    o.fused = fused != current_->region_of_fused_node.end();
    o.region = o.fused ? fused->second : region_of(o.node);
    ops.push_back(std::move(o));
  }
  return ops;
}

void Session::end_profiling() {
  unfused_ops_ = profiled_ops();
  times_.reset();

  const double iteration_s = median_ms(Phase::Profiling) * 1e-3;
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
  std::vector<CompileJob> jobs;
  std::vector<int> epilogues;
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
    rec.selection = k.epilogue ? select_epilogue(c, iteration_s)
                               : select_region(c, iteration_s, machine_, options_.select);
    if (options_.policy == FusionPolicy::All) {  // the prediction is kept, for the report
      rec.selection.selected = true;
      rec.selection.reason = "--fusion all: every detected region is fused";
    }
    rec.reason = rec.selection.reason;
    if (!rec.selection.selected) continue;
    rec.state = RegionState::Queued;
    if (k.epilogue) {  // nothing to compile: validated at the next boundary
      epilogues.push_back(static_cast<int>(r));
      continue;
    }
    jobs.push_back({static_cast<int>(r), k.spec, kernel_origin(graph_, kernels_[r].nodes),
                    rec.selection.saving_s});
  }
  head += count_of(regions_.size(), "fusible region") + ", ";
  if (!epilogues.empty()) {
    head += count_of(epilogues.size(), "epilogue") + " selected (no compile), ";
    ready_.insert(ready_.end(), epilogues.begin(), epilogues.end());
    if (jobs.empty()) {
      event(head + "validating them");
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
  event(head + std::to_string(jobs.size()) + " selected; compiling " +
        (sync_compile() ? "now" : "in the background, hottest first"));
  worker_->submit(std::move(jobs));
  phase_ = Phase::Compiling;
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
      ready_.push_back(d.region);
    } else {
      r.state = RegionState::Failed;
      r.reason = d.outcome.message;
      event(d.outcome.message);
    }
  }
}

const TensorView& Session::readable(const TensorView& v, HostTensor& copy) const {
  if (target_.host_memory) return v;
  copy = HostTensor(v.dtype, v.shape);
  target_.backend->download(copy.data(), v.data, copy.bytes());
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
      Mismatch m = compare(readable(out[k], e_host), readable(got[k], a_host),
                           fused_tolerance(out[k].dtype));
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

std::span<const TensorView> Session::validate_and_swap(std::span<const TensorView> inputs) {
  if (static_pending_) return validate_static(inputs);
  std::vector<int> fresh;
  fresh.swap(ready_);
  std::sort(fresh.begin(), fresh.end());
  std::vector<ValueId> observe;
  for (int r : fresh)
    for (ValueId v : kernels_[r].outputs) observe.push_back(v);

  // The unfused graph is the reference; its outputs are what this iteration returns.
  reference_ = build(graph_, {}, observe);
  std::span<const TensorView> out = reference_->exec->run(inputs);
  std::vector<int> candidate = kept();
  candidate.insert(candidate.end(), fresh.begin(), fresh.end());
  std::unique_ptr<Running> fused;
  try {
    fused = build(plan_base(), candidate, observe);
    fused->exec->run(inputs);
  } catch (const Error& e) {
    // Out of device memory, say: the unfused plan ran and its results stand.
    const int iter = static_cast<int>(iterations_.size());
    for (int r : fresh) {
      RegionRecord& rec = regions_[r];
      rec.state = RegionState::Reverted;
      rec.swapped_at = rec.reverted_at = iter;
      rec.reason = std::string("the fused plan could not run: ") + e.what();
      events_.push_back(
          {iter, "reverted region " + std::to_string(r) + " (" + rec.kernel + "): " + rec.reason});
    }
    fresh.clear();
  }
  if (fused) {
    const int iter = static_cast<int>(iterations_.size());
    for (int r : fresh) {
      RegionRecord& rec = regions_[r];
      double worst = 0;
      std::string failure;
      for (ValueId v : kernels_[r].outputs) {
        HostTensor e_host, a_host;  // downloaded when the plans hold device memory
        const TensorView& e = readable(reference_->exec->plan().observed(v), e_host);
        const TensorView& a = readable(fused->exec->plan().observed(v), a_host);
        Mismatch m = compare(e, a, fused_tolerance(e.dtype));
        worst = std::max(worst, m.worst_ratio);
        if (m.index >= 0 && failure.empty()) {
          char b[160];
          std::snprintf(b, sizeof b, "' element %lld is %.9g, unfused %.9g",
                        static_cast<long long>(m.index), m.actual, m.expected);
          failure = "value '" + graph_.value(v).name + b;
        }
      }
      char b[96];
      std::snprintf(b, sizeof b, "%.3g of the tolerance", worst);
      if (!failure.empty()) {
        rec.validation = "failed: " + failure;
        rec.swapped_at = iter;
        rec.state = RegionState::Reverted;
        rec.reverted_at = iter;
        rec.reason = "fused result differs from unfused: " + failure;
        try {  // keep the code that ran wrong, for the bug report (an epilogue has none)
          if (!kernels_[r].epilogue) {
            auto path = target_.kernels->keep_source(kernels_[r].spec,
                                                     kernel_origin(graph_, kernels_[r].nodes));
            rec.reason += "; its source is kept at " + path.string();
          }
        } catch (const Error& e) {
          rec.reason += std::string("; its source could not be kept: ") + e.what();
        }
        events_.push_back({iter, "reverted region " + std::to_string(r) + " (" + rec.kernel +
                                     "): " + rec.reason});
        continue;
      }
      rec.validation = std::string("passed: worst element used ") + b;
      rec.state = RegionState::Swapped;
      rec.swapped_at = iter;
      batch_.push_back(r);
    }
    fused.reset();  // its buffers go before the new plan takes its own
  }

  const int iter = static_cast<int>(iterations_.size());
  if (batch_.empty()) {
    phase_ = worker_->pending() ? Phase::Compiling : Phase::Steady;
    return out;
  }
  const int before = current_->steps();
  current_ = build(plan_base(), kept());  // the previous plan and its buffers are released here
  int hits = 0;
  for (int r : batch_) hits += regions_[r].cache_hit;
  events_.push_back({iter, "swapped in " + std::to_string(batch_.size()) + " fused kernel" +
                               (batch_.size() == 1 ? "" : "s") + " (" + std::to_string(hits) +
                               " from cache), " + std::to_string(before) + " -> " +
                               std::to_string(current_->steps()) + " launches"});
  phase_ = Phase::Reprofiling;
  return out;
}

void Session::end_reprofiling() {
  fused_ops_ = profiled_ops();
  times_.reset();
  for (const OpRecord& o : fused_ops_)
    if (o.fused) regions_[o.region].measured_fused_s = o.cost.seconds;

  bool reverted = false;
  for (int r : batch_) {
    RegionRecord& rec = regions_[r];
    // Only adaptive judges speed: the other policies fuse what they were asked to.
    if (options_.policy == FusionPolicy::Adaptive &&
        rec.measured_fused_s >= rec.candidate.unfused_s) {
      revert(r, "its kernel took " + fmt_ms(rec.measured_fused_s * 1e3) + ", not faster than the " +
                    fmt_ms(rec.candidate.unfused_s * 1e3) + " of the ops it replaced");
      reverted = true;
    }
  }
  batch_.clear();
  if (reverted) {
    retired_ = std::move(current_);  // this iteration's outputs live in its buffers
    current_ = build(plan_base(), kept());
  }
  double before = 0, after = 0;
  for (int r : kept()) {
    before += regions_[r].candidate.unfused_s;
    after += regions_[r].measured_fused_s;
  }
  if (static_kept_)
    event("re-profiled: " + std::to_string(static_rewrites_) + " static rewrites kept, " +
          fmt_ms(median_ms(Phase::Profiling)) + " -> " + fmt_ms(median_ms(Phase::Reprofiling)) +
          " per iteration");
  else
    event("re-profiled: " + count_of(kept().size(), "fused kernel") + " kept, their regions " +
          fmt_ms(before * 1e3) + " -> " + fmt_ms(after * 1e3) + " per iteration");
  phase_ = Phase::Compiling;  // run() settles to steady when nothing is left
}

}  // namespace hf
