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

// One step of a flow (the legacy flow events Chrome and Perfetto read: "s" starts it, "f"
// ends it, both with the same cat and id). Each binds to the slice that encloses ts on its
// thread ("bp":"e" asks the same of the "f"), so ts is the middle of that slice.
json flow(const char* ph, std::string name, int64_t id, int tid, double ts) {
  json e = {{"name", std::move(name)},
            {"cat", "flow"},
            {"ph", ph},
            {"id", id},
            {"ts", ts},
            {"pid", kPid},
            {"tid", tid}};
  if (std::string(ph) == "f") e["bp"] = "e";
  return e;
}

// A counter sample: Perfetto draws one track per name (and args key).
json counter(const char* name, double ts, const char* key, double value) {
  return {{"name", name}, {"ph", "C"}, {"ts", ts}, {"pid", kPid}, {"args", {{key, value}}}};
}

// A slice's middle, in trace microseconds: where flow steps bind to it.
double middle(int64_t ts_ns, int64_t dur_ns) {
  return us(ts_ns + dur_ns / 2);
}

// Flows of a region: its last traced op before the compile -> the compile job -> the
// iteration it was swapped in at -> its fused kernel's first run. Ids: 3 per region.
void region_flows(const Session& s, size_t listed, std::vector<json>& events) {
  const auto& iterations = s.iterations();
  const auto& labels = s.trace_labels();
  auto iteration_ns = [&](int i) {
    const IterationRecord& it = iterations[i];
    const int64_t ts = static_cast<int64_t>(std::floor(it.start_s * 1e9));
    const int64_t end = static_cast<int64_t>(std::ceil((it.start_s + it.ms * 1e-3) * 1e9)) + 1;
    return std::make_pair(ts, end - ts);
  };
  for (const RegionRecord& r : s.regions()) {
    if (r.compile_start_s < 0 || r.compile_end_s < r.compile_start_s) continue;
    const int64_t c_ts = ns_round(r.compile_start_s);
    const double compile_mid = middle(c_ts, ns_round(r.compile_end_s) - c_ts);
    const std::string region = "region " + std::to_string(r.id);
    const int64_t id = int64_t{3} * r.id;
    const StepRecord* op = nullptr;
    const StepRecord* fused = nullptr;
    for (const StepRecord& st : s.traced_steps()) {
      if (st.iteration < 0 || static_cast<size_t>(st.iteration) >= listed) continue;
      const TraceLabel& l = labels.at(st.label);
      if (l.region != r.id) continue;
      if (!l.fused && st.start_s <= r.compile_start_s) op = &st;
      if (l.fused && !fused && r.swapped_at >= 0 && st.iteration >= r.swapped_at) fused = &st;
    }
    if (op) {
      events.push_back(flow("s", region + ": compile", id, kExecutor,
                            middle(ns_round(op->start_s), ns_round(op->dur_s))));
      events.push_back(flow("f", region + ": compile", id, kCompiler, compile_mid));
    }
    if (r.swapped_at < 0 || static_cast<size_t>(r.swapped_at) >= listed) continue;
    const auto [it_ts, it_dur] = iteration_ns(r.swapped_at);
    events.push_back(flow("s", region + ": swap", id + 1, kCompiler, compile_mid));
    events.push_back(flow("f", region + ": swap", id + 1, kIterations, middle(it_ts, it_dur)));
    if (!fused) continue;
    const double fused_mid = middle(ns_round(fused->start_s), ns_round(fused->dur_s));
    const auto [f_ts, f_dur] = iteration_ns(fused->iteration);
    events.push_back(flow("s", region + ": fused kernel", id + 2, kIterations,
                          std::max(us(f_ts), std::min(fused_mid, us(f_ts + f_dur)))));
    events.push_back(flow("f", region + ": fused kernel", id + 2, kExecutor, fused_mid));
  }
}

// Counter tracks from what the session records: the plan's peak memory (the unfused plan's
// until the first swap that stayed, then the plan running now), and per traced iteration
// the bytes its steps moved over its wall time.
void counters(const Session& s, size_t listed, std::vector<json>& events) {
  const auto& iterations = s.iterations();
  if (listed == 0) return;
  const double first_ts = us(static_cast<int64_t>(std::floor(iterations[0].start_s * 1e9)));
  events.push_back(
      counter("memory in use", first_ts, "bytes", static_cast<double>(s.peak_bytes_before())));
  int kept_at = -1;
  for (const RegionRecord& r : s.regions())
    if (r.state == RegionState::Swapped && r.swapped_at >= 0)
      kept_at = kept_at < 0 ? r.swapped_at : std::min(kept_at, r.swapped_at);
  if (kept_at >= 0 && static_cast<size_t>(kept_at) < listed)
    events.push_back(counter(
        "memory in use", us(static_cast<int64_t>(std::floor(iterations[kept_at].start_s * 1e9))),
        "bytes", static_cast<double>(s.peak_bytes_now())));

  std::vector<double> bytes(listed, 0.0);
  std::vector<bool> traced(listed, false);
  for (const StepRecord& st : s.traced_steps()) {
    if (st.iteration < 0 || static_cast<size_t>(st.iteration) >= listed) continue;
    bytes[st.iteration] += s.trace_labels().at(st.label).bytes;
    traced[st.iteration] = true;
  }
  for (size_t i = 0; i < listed; ++i) {
    const IterationRecord& it = iterations[i];
    if (!traced[i] || it.ms <= 0) continue;
    events.push_back(counter("achieved GB/s",
                             us(static_cast<int64_t>(std::floor(it.start_s * 1e9))), "gbps",
                             bytes[i] / (it.ms * 1e-3) * 1e-9));
  }
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
    json args = {{"index", it.index},
                 {"phase", phase},
                 {"ms", it.ms},
                 {"kernels", it.kernels},
                 {"plan_ms", it.plan_ms}};
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

  region_flows(s, listed, events);
  counters(s, listed, events);

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
