#include "dump/trace_json.h"

#include <algorithm>
#include <cmath>

#include "dump/dot_escape.h"

namespace hf::dump {

namespace {

using json = nlohmann::json;

constexpr int kPid = 1;
constexpr int kIterations = 1, kExecutor = 2, kCompiler = 3;

// Times are whole nanoseconds, written as microseconds ("ts": 1234.567).
int64_t ns_round(double s) {
  return std::llround(s * 1e9);
}
double us(int64_t ns) {
  return static_cast<double>(ns) / 1e3;
}

json meta(const char* what, int tid, json args) {
  return {{"name", what}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", std::move(args)}};
}

json complete(std::string name, const char* cat, int tid, double ts, double dur, json args) {
  return {{"name", std::move(name)},   {"cat", cat},  {"ph", "X"},  {"ts", ts},
          {"dur", std::max(0.0, dur)}, {"pid", kPid}, {"tid", tid}, {"args", std::move(args)}};
}

json instant(std::string name, const char* cat, double ts, json args) {
  return {{"name", std::move(name)},
          {"cat", cat},
          {"ph", "i"},
          {"s", "g"},
          {"ts", ts},
          {"pid", kPid},
          {"tid", kIterations},
          {"args", std::move(args)}};
}

}  // namespace

json trace_json(const Session& s, const TraceOptions& o) {
  std::vector<json> events;
  const auto& iterations = s.iterations();
  const size_t listed = std::min(iterations.size(), o.max_iterations);
  const std::string graph = s.graph().name;

  // Iterations, each widened to whole nanoseconds (plus one) so that the rounded steps
  // inside stay inside; args.ms is the measured wall time.
  for (size_t i = 0; i < listed; ++i) {
    const IterationRecord& it = iterations[i];
    const std::string phase(phase_name(it.phase));
    const int64_t ts = static_cast<int64_t>(std::floor(it.start_s * 1e9));
    const int64_t end = static_cast<int64_t>(std::ceil((it.start_s + it.ms * 1e-3) * 1e9)) + 1;
    json args = {{"index", it.index}, {"phase", phase}, {"ms", it.ms}, {"kernels", it.kernels}};
    if (it.phase == Phase::Validating)
      args["note"] =
          "runs the unfused and the candidate fused graph on the same inputs and "
          "compares them; its steps are not traced";
    events.push_back(complete("iteration " + std::to_string(it.index) + " (" + phase + ")",
                              "iteration", kIterations, us(ts), us(end - ts), std::move(args)));
    if (i == 0 || iterations[i - 1].phase != it.phase)
      events.push_back(
          instant("phase: " + phase, "phase", us(ts), {{"iteration", it.index}, {"phase", phase}}));
  }

  // Steps.
  size_t traced = 0;
  for (const StepRecord& st : s.traced_steps()) {
    if (st.iteration < 0 || static_cast<size_t>(st.iteration) >= listed) continue;
    const TraceLabel& l = s.trace_labels().at(st.label);
    json args = {{"iteration", st.iteration},
                 {"phase", std::string(phase_name(iterations[st.iteration].phase))},
                 {"node", l.node},
                 {"op", l.op},
                 {"region", l.region >= 0 ? json(l.region) : json(nullptr)},
                 {"bytes", l.bytes},
                 {"gbps", st.dur_s > 0 ? l.bytes / st.dur_s * 1e-9 : 0.0},
                 {"fused", l.fused}};
    events.push_back(complete(l.name, l.fused ? "fused" : "op", kExecutor, us(ns_round(st.start_s)),
                              us(ns_round(st.dur_s)), std::move(args)));
    ++traced;
  }

  // Compiles, on the worker.
  for (const RegionRecord& r : s.regions()) {
    if (r.compile_start_s < 0 || r.compile_end_s < r.compile_start_s) continue;
    json args = {{"region", r.id},
                 {"cache_hit", r.cache_hit},
                 {"compile_ms", r.compile_ms},
                 {"state", std::string(region_state_name(r.state))},
                 {"reason", r.reason},
                 {"node_ids", r.nodes}};
    const int64_t ts = ns_round(r.compile_start_s);
    events.push_back(complete(r.kernel + (r.cache_hit ? " (cached)" : ""), "compile", kCompiler,
                              us(ts), us(ns_round(r.compile_end_s) - ts), std::move(args)));
  }

  // The session's messages, at the end of the iteration they were printed after.
  for (const SessionEvent& e : s.events()) {
    double ts = 0;
    if (e.iteration >= 0 && static_cast<size_t>(e.iteration) < iterations.size()) {
      if (static_cast<size_t>(e.iteration) >= listed) continue;
      const IterationRecord& it = iterations[e.iteration];
      ts = us(ns_round(it.start_s + it.ms * 1e-3));
    } else if (!iterations.empty() && e.iteration >= 0) {
      const IterationRecord& it = iterations.back();
      ts = us(ns_round(it.start_s + it.ms * 1e-3));
    }
    events.push_back(instant(ellipsize(e.text, 80), "session", ts,
                             {{"iteration", e.iteration}, {"text", e.text}}));
  }

  std::stable_sort(events.begin(), events.end(), [](const json& a, const json& b) {
    double ta = a["ts"].get<double>(), tb = b["ts"].get<double>();
    if (ta != tb) return ta < tb;
    // Enclosing events first at equal times.
    return a.value("dur", 0.0) > b.value("dur", 0.0);
  });

  json out = json::array();
  out.push_back(meta("process_name", 0, {{"name", o.process_name}}));
  const std::pair<int, const char*> tracks[] = {
      {kIterations, "iterations"}, {kExecutor, "executor"}, {kCompiler, "compile worker"}};
  for (const auto& [tid, name] : tracks) {
    out.push_back(meta("thread_name", tid, {{"name", name}}));
  }
  for (json& e : events) out.push_back(std::move(e));

  json other = {{"graph", graph},
                {"iterations", iterations.size()},
                {"iterations_listed", listed},
                {"steps_listed", traced},
                {"steps_traced", s.traced_steps().size()}};
  return {{"traceEvents", std::move(out)}, {"displayTimeUnit", "ms"}, {"otherData", other}};
}

}  // namespace hf::dump
