#include "viewer/model/session_timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "viewer/model/color.h"

namespace hf::viewer {

namespace {

double start_of(const std::vector<IterationPoint>& its, int64_t index, bool* found) {
  for (const IterationPoint& p : its)
    if (p.index == index) {
      *found = true;
      return p.start_us;
    }
  *found = false;
  return 0;
}

}  // namespace

SessionTimeline session_timeline(const Report* report, const Trace* trace) {
  SessionTimeline t;
  if (report && !report->iterations.empty()) {
    for (const Iteration& it : report->iterations)
      t.iterations.push_back({it.index, it.phase, it.start_ms * 1e3, it.ms, it.kernels});
  } else if (trace) {
    for (const auto& [index, ev] : trace->by_iteration) {
      const TraceEvent& e = trace->events[ev];
      const nlohmann::json args = e.args_json();
      int64_t kernels = 0;
      if (args.is_object() && args.contains("kernels") && args["kernels"].is_number())
        kernels = args["kernels"].get<int64_t>();
      double ms = e.dur * 1e-3;
      if (args.is_object() && args.contains("ms") && args["ms"].is_number())
        ms = args["ms"].get<double>();
      t.iterations.push_back({index, e.phase, e.ts, ms, kernels});
    }
  }
  std::stable_sort(t.iterations.begin(), t.iterations.end(),
                   [](const IterationPoint& a, const IterationPoint& b) { return a.index < b.index; });

  for (const IterationPoint& p : t.iterations) {
    if (t.phases.empty() || t.phases.back().phase != p.phase) {
      t.phases.push_back({p.phase, p.index, p.index, p.start_us, p.start_us + p.ms * 1e3});
      t.markers.push_back({MarkerKind::Phase, p.index, p.start_us, p.phase});
    } else {
      t.phases.back().last = p.index;
      t.phases.back().end_us = p.start_us + p.ms * 1e3;
    }
  }

  // Swaps and reverts: the regions say at which iteration; that iteration's start is the
  // moment (the swap happens at the boundary before it).
  std::set<int64_t> swaps, reverts;
  if (report)
    for (const Region& r : report->regions) {
      if (r.swapped_at) swaps.insert(*r.swapped_at);
      if (r.reverted_at) reverts.insert(*r.reverted_at);
    }
  auto add = [&](MarkerKind k, int64_t it, const std::string& label) {
    bool found = false;
    double ts = start_of(t.iterations, it, &found);
    if (found) t.markers.push_back({k, it, ts, label});
  };
  for (int64_t it : swaps) add(MarkerKind::Swap, it, "swap");
  for (int64_t it : reverts) add(MarkerKind::Revert, it, "revert");

  // The session's messages: from the trace's instants (they carry their time), else the
  // report's events at the end of their iteration.
  bool from_trace = false;
  if (trace) {
    for (int idx : trace->global_instants) {
      const TraceEvent& e = trace->events[idx];
      if (e.cat != "session") continue;
      from_trace = true;
      std::string text = e.name;
      const nlohmann::json args = e.args_json();
      if (args.is_object() && args.contains("text") && args["text"].is_string())
        text = args["text"].get<std::string>();
      if (swaps.empty() && text.rfind("swapped in", 0) == 0) {
        t.markers.push_back({MarkerKind::Swap, e.iteration, e.ts, "swap"});
        swaps.insert(e.iteration);
      }
      t.markers.push_back({MarkerKind::Message, e.iteration, e.ts, text});
    }
  }
  if (!from_trace && report) {
    for (const SessionEvent& ev : report->events) {
      for (const IterationPoint& p : t.iterations)
        if (p.index == ev.iteration) {
          t.markers.push_back({MarkerKind::Message, ev.iteration, p.start_us + p.ms * 1e3, ev.text});
          break;
        }
    }
  }
  if (!swaps.empty()) t.first_swap = *swaps.begin();
  std::stable_sort(t.markers.begin(), t.markers.end(),
                   [](const SessionMarker& a, const SessionMarker& b) { return a.ts_us < b.ts_us; });
  return t;
}

double SessionTimeline::median_ms(const std::string& phase) const {
  std::vector<double> v;
  for (const IterationPoint& p : iterations)
    if (p.phase == phase) v.push_back(p.ms);
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

uint32_t phase_color(const std::string& phase) {
  // Okabe-Ito palette.
  if (phase == "warmup") return rgba(0xbb, 0xbb, 0xbb);
  if (phase == "profiling") return rgba(0x56, 0xb4, 0xe9);
  if (phase == "compiling") return rgba(0xe6, 0x9f, 0x00);
  if (phase == "validating") return rgba(0xcc, 0x79, 0xa7);
  if (phase == "reprofiling") return rgba(0xf0, 0xe4, 0x42);
  if (phase == "steady") return rgba(0x00, 0x9e, 0x73);
  return rgba(0x99, 0x99, 0x99);
}

}  // namespace hf::viewer
