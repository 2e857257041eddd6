#include "dump/trace_json_device.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace hf::dump {

namespace {

using json = nlohmann::json;

constexpr int kPid = 1;        // trace_json()'s one process
constexpr int kApi = 4;        // after its iterations, executor and compile worker tracks
constexpr int kStream0 = 100;  // "gpu stream N" is tid 100 + N

json meta(const char* what, int64_t tid, json args) {
  return {{"name", what}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", std::move(args)}};
}

// CUPTI nanoseconds as trace microseconds, to the nanosecond.
double to_us(uint64_t ns, const DeviceClock& c) {
  const double d = ns >= c.cupti_ns ? static_cast<double>(ns - c.cupti_ns)
                                    : -static_cast<double>(c.cupti_ns - ns);
  return std::round((c.trace_us + d / 1e3) * 1e3) / 1e3;
}

// The largest flow id the trace already uses, so that ours come after it.
int64_t max_flow_id(const json& events) {
  int64_t m = -1;
  for (const json& e : events) {
    const std::string ph = e.value("ph", "");
    if ((ph == "s" || ph == "t" || ph == "f") && e.contains("id") && e["id"].is_number_integer())
      m = std::max(m, e["id"].get<int64_t>());
  }
  return m;
}

}  // namespace

void add_device_launches(json& trace, const std::vector<cuda::DeviceLaunch>& launches,
                         const DeviceClock& clock, const std::string& what) {
  json& events = trace["traceEvents"];
  int64_t id = max_flow_id(events) + 1;
  std::vector<json> added;
  std::set<uint32_t> streams;
  size_t written = 0, skipped = 0;
  for (const cuda::DeviceLaunch& l : launches) {
    if (l.api_end_ns < l.api_start_ns || l.end_ns < l.start_ns) {
      ++skipped;
      continue;
    }
    const double a0 = to_us(l.api_start_ns, clock), a1 = to_us(l.api_end_ns, clock);
    const double k0 = to_us(l.start_ns, clock), k1 = to_us(l.end_ns, clock);
    const int64_t stream_tid = kStream0 + static_cast<int64_t>(l.stream);
    streams.insert(l.stream);
    json args = {{"node", l.node}, {"iteration", l.iteration}, {"correlation", l.correlation}};
    if (!what.empty()) args["window"] = what;
    const std::string kernel = l.kernel.empty() ? "kernel" : l.kernel;
    json api_args = args;
    api_args["thread"] = l.thread;
    added.push_back({{"name", "launch " + kernel},
                     {"cat", "cuda_api"},
                     {"ph", "X"},
                     {"ts", a0},
                     {"dur", a1 - a0},
                     {"pid", kPid},
                     {"tid", kApi},
                     {"args", std::move(api_args)}});
    json k_args = args;
    k_args["stream"] = l.stream;
    added.push_back({{"name", kernel},
                     {"cat", "kernel"},
                     {"ph", "X"},
                     {"ts", k0},
                     {"dur", k1 - k0},
                     {"pid", kPid},
                     {"tid", stream_tid},
                     {"args", std::move(k_args)}});
    // Each flow step binds to the slice enclosing its ts on its track: the middles.
    added.push_back({{"name", "launch"},
                     {"cat", "flow"},
                     {"ph", "s"},
                     {"id", id},
                     {"ts", to_us(l.api_start_ns + (l.api_end_ns - l.api_start_ns) / 2, clock)},
                     {"pid", kPid},
                     {"tid", kApi}});
    added.push_back({{"name", "launch"},
                     {"cat", "flow"},
                     {"ph", "f"},
                     {"bp", "e"},
                     {"id", id},
                     {"ts", to_us(l.start_ns + (l.end_ns - l.start_ns) / 2, clock)},
                     {"pid", kPid},
                     {"tid", stream_tid}});
    ++id;
    ++written;
  }

  // Tracks sort by tid: the API calls after the compile worker, then the streams.
  // Metadata first (as trace_json() writes it), then every event by time, enclosing first.
  std::vector<json> meta_events, timed;
  for (json& e : events) (e.value("ph", "") == "M" ? meta_events : timed).push_back(std::move(e));
  if (written > 0) {
    meta_events.push_back(meta("thread_name", kApi, {{"name", "cuda api"}}));
    for (uint32_t s : streams) {
      const int64_t tid = kStream0 + static_cast<int64_t>(s);
      meta_events.push_back(
          meta("thread_name", tid, {{"name", "gpu stream " + std::to_string(s)}}));
    }
  }
  for (json& e : added) timed.push_back(std::move(e));
  std::stable_sort(timed.begin(), timed.end(), [](const json& a, const json& b) {
    const double ta = a.value("ts", 0.0), tb = b.value("ts", 0.0);
    if (ta != tb) return ta < tb;
    return a.value("dur", 0.0) > b.value("dur", 0.0);
  });
  json out = json::array();
  for (json& e : meta_events) out.push_back(std::move(e));
  for (json& e : timed) out.push_back(std::move(e));
  events = std::move(out);
  trace["otherData"]["device_launches"] = written;
  if (skipped > 0) trace["otherData"]["device_launches_skipped"] = skipped;
}

}  // namespace hf::dump
