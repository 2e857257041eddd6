#include "session/session_report.h"

#include "profiler/resident_memory.h"
#include "runtime/ir/f32_precision.h"
#include "session/phase_stats.h"

namespace hf {

namespace {

using json = nlohmann::json;

// Iterations beyond this are summarised, not listed: a tiny graph can run hundreds of
// thousands while a kernel compiles.
constexpr size_t kMaxListedIterations = 20000;

json ms_or_null(double s) {
  return s >= 0 ? json(s * 1e3) : json(nullptr);
}

json op_json(const OpRecord& o) {
  return {{"node", o.name},
          {"node_id", o.node},
          {"op", o.op},
          {"output", o.output},
          {"time_ms", o.cost.seconds * 1e3},
          {"bytes", o.cost.bytes},
          {"flops", o.cost.flops},
          {"gbps", o.gbps},
          {"peak_share", o.peak_share},
          {"gflops", o.cost.seconds > 0 ? o.cost.flops / o.cost.seconds * 1e-9 : 0.0},
          {"flop_peak_share", o.flop_share},
          {"class", std::string(op_class_name(o.cls))},
          {"region", o.region >= 0 ? json(o.region) : json(nullptr)},
          {"fused", o.fused}};
}

}  // namespace

json session_report(const Session& s, const ReportContext& ctx) {
  const Graph& g = s.graph();
  int kept = 0, selected = 0, reverted = 0, failed = 0, hits = 0;
  double compile_ms = 0;
  json failures = json::array();
  for (const RegionRecord& r : s.regions()) {
    if (r.state == RegionState::Failed) failures.push_back(r.reason);
    kept += r.state == RegionState::Swapped;
    selected += r.selection.selected;
    reverted += r.state == RegionState::Reverted;
    failed += r.state == RegionState::Failed;
    hits += r.cache_hit;
    compile_ms += r.compile_ms;
  }
  const double unfused = s.median_ms(Phase::Profiling);
  const double fused = s.median_ms(Phase::Steady);
  const bool has_fused = (kept > 0 || s.static_rewrites() > 0) && fused > 0;
  json summary = {{"graph", g.name},
                  {"graph_file", ctx.graph_file},
                  {"fusion", std::string(policy_name(s.options().policy))},
                  {"f32_precision", f32_precision() == F32Precision::Highest ? "highest" : "high"},
                  {"iterations", ctx.timed_iterations},
                  {"iterations_total", s.iterations().size()},
                  {"phase", std::string(phase_name(s.phase()))},
                  {"unfused_ms", unfused},
                  {"fused_ms", has_fused ? json(fused) : json(nullptr)},
                  {"speedup", has_fused ? json(unfused / fused) : json(nullptr)},
                  {"kernels_before", s.kernels_before()},
                  {"kernels_after", s.kernels_now()},
                  {"compile_ms_total", compile_ms},
                  {"cache_hits", hits},
                  {"peak_bytes_before", s.peak_bytes_before()},
                  {"peak_bytes_after", s.peak_bytes_now()},
                  {"peak_rss_bytes", peak_resident_bytes()},
                  {"regions_detected", s.regions().size()},
                  {"regions_selected", selected},
                  {"regions_kept", kept},
                  {"regions_reverted", reverted},
                  {"regions_failed", failed},
                  {"static_rewrites", s.static_rewrites()},
                  {"launch", s.launches_recorded() ? "recorded" : "step by step"},
                  {"launch_reason", s.step_by_step_reason()}};

  const MachinePeak& m = s.machine();
  json machine = {
      {"cpu", m.cpu},       {"threads", m.threads},     {"bandwidth_gbps", m.bandwidth_gbps},
      {"gflops", m.gflops}, {"launch_us", m.launch_us}, {"balance_flops_per_byte", m.balance()},
      {"source", m.source}};

  json iterations = json::array();
  for (const IterationRecord& it : s.iterations()) {
    if (iterations.size() == kMaxListedIterations) break;
    iterations.push_back({{"index", it.index},
                          {"phase", std::string(phase_name(it.phase))},
                          {"start_ms", it.start_s * 1e3},
                          {"ms", it.ms},
                          {"kernels", it.kernels},
                          {"plan_ms", it.plan_ms}});
  }
  summary["iterations_listed"] = iterations.size();
  json phases = json::object();
  for (const PhaseStats& p : phase_stats(s.iterations()))
    phases[std::string(phase_name(p.phase))] = {{"count", p.count},
                                                {"median_ms", p.median_ms},
                                                {"p90_ms", p.p90_ms},
                                                {"max_ms", p.max_ms},
                                                {"max_over_unfused", p.max_over_unfused}};
  summary["phases"] = phases;
  const std::optional<double> steady = steady_after_ms(s.iterations());
  summary["steady_after_ms"] = steady ? json(*steady) : json(nullptr);

  json ops_before = json::array(), ops_after = json::array();
  for (const OpRecord& o : s.unfused_ops()) ops_before.push_back(op_json(o));
  for (const OpRecord& o : s.fused_ops()) ops_after.push_back(op_json(o));
  // `ops` keeps the meaning each mode documented before the modes became one pipeline:
  // adaptive, the unfused profile; off|static|all, the plan that ran last.
  const bool last_plan = s.options().policy != FusionPolicy::Adaptive && has_fused;
  const json& ops = last_plan ? ops_after : ops_before;

  json regions = json::array();
  for (const RegionRecord& r : s.regions()) {
    json names = json::array(), ids = json::array();
    for (NodeId n : r.nodes) {
      names.push_back(g.node(n).name);
      ids.push_back(n);
    }
    regions.push_back({{"id", r.id},
                       {"kernel", r.kernel},
                       {"nodes", names},
                       {"node_ids", ids},
                       {"state", std::string(region_state_name(r.state))},
                       {"reason", r.reason},
                       {"carried_over", !r.carried.empty()},
                       {"detection", r.detection},
                       {"selected", r.selection.selected},
                       {"unfused_ms", r.candidate.unfused_s * 1e3},
                       {"predicted_ms", r.selection.predicted_s * 1e3},
                       {"fused_ms", ms_or_null(r.measured_fused_s)},
                       {"reprofiled_fused_ms", ms_or_null(r.reprofiled_fused_s)},
                       {"reprofiled_unfused_ms", ms_or_null(r.reprofiled_unfused_s)},
                       {"reprofiled_iterations",
                        r.reprofiled_pairs > 0 ? json(r.reprofiled_pairs) : json(nullptr)},
                       {"reprofiled_fused_slower",
                        r.reprofiled_pairs > 0 ? json(r.reprofiled_fused_slower) : json(nullptr)},
                       {"predicted_saving_ms", r.selection.saving_s * 1e3},
                       {"share", r.selection.share},
                       {"io_bytes", r.candidate.io_bytes},
                       {"tier", r.tier_reason.empty()
                                    ? json(nullptr)
                                    : json(r.tier == fusion::KernelTier::Interpreted ? "interpreted"
                                                                                     : "compiled")},
                       {"tier_reason", r.tier_reason},
                       {"interpreted_ms", ms_or_null(r.interpreted_s)},
                       {"compile_ms", r.compile_ms},
                       {"cache_hit", r.cache_hit},
                       {"compile_start_ms", ms_or_null(r.compile_start_s)},
                       {"compile_end_ms", ms_or_null(r.compile_end_s)},
                       {"validation", r.validation},
                       {"swapped_at", r.swapped_at >= 0 ? json(r.swapped_at) : json(nullptr)},
                       {"reverted_at", r.reverted_at >= 0 ? json(r.reverted_at) : json(nullptr)}});
  }

  json decisions = json::array();
  for (const fusion::Decision& d : s.detection().decisions) {
    json nodes = json::array();
    for (NodeId n : d.nodes) nodes.push_back(g.node(n).name);
    decisions.push_back({{"nodes", nodes}, {"fused", d.fused}, {"reason", d.reason}});
  }
  json events = json::array();
  for (const SessionEvent& e : s.events())
    events.push_back({{"iteration", e.iteration}, {"text", e.text}});
  return {{"summary", summary},     {"machine", machine},   {"iterations", iterations},
          {"events", events},       {"ops", ops},           {"ops_before", ops_before},
          {"ops_after", ops_after}, {"failures", failures}, {"regions", regions},
          {"decisions", decisions}};
}

json shapes_report(const std::vector<ShapeRecord>& shapes, size_t capacity) {
  json list = json::array();
  for (const ShapeRecord& r : shapes) {
    json inputs = json::object();
    for (const auto& [name, shape] : r.shapes) inputs[name] = shape;
    list.push_back({{"inputs", inputs},
                    {"sessions", r.sessions},
                    {"iterations", r.iterations},
                    {"kernels_compiled", r.compiled},
                    {"cache_hits", r.from_cache},
                    {"verdicts_carried", r.carried},
                    {"kernels_before", r.kernels_before},
                    {"kernels_after", r.kernels_now},
                    {"plan_kept", r.live}});
  }
  return {{"plans_kept_at_most", capacity}, {"signatures", list}};
}

}  // namespace hf
