#include "viewer/model/trace.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "viewer/model/json_fields.h"

namespace hf::viewer {

using json = nlohmann::json;

namespace {

// pid and tid are numbers in Chrome's format; some writers use strings: those get ids of
// their own, above any number seen.
struct IdMap {
  std::map<std::string, int64_t> names;
  int64_t next = int64_t{1} << 40;
  int64_t get(const json& e, const char* key, const std::string& path) {
    auto it = e.find(key);
    if (it == e.end() || it->is_null()) return 0;
    if (it->is_number()) return it->get<int64_t>();
    if (it->is_string()) {
      auto [pos, added] = names.emplace(it->get<std::string>(), next);
      if (added) ++next;
      return pos->second;
    }
    throw FormatError(field_path(path, key) + ": expected a number or a string, got " +
                      json_type_name(*it));
  }
};

int64_t arg_int(const json& args, const char* key) {
  if (!args.is_object()) return -1;
  auto it = args.find(key);
  if (it == args.end() || !it->is_number()) return -1;
  double d = it->get<double>();
  return std::isfinite(d) ? static_cast<int64_t>(d) : -1;
}

std::string arg_string(const json& args, const char* key) {
  if (!args.is_object()) return {};
  auto it = args.find(key);
  return it != args.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const std::vector<int>& lookup(const std::map<int64_t, std::vector<int>>& m, int64_t key) {
  static const std::vector<int> none;
  auto it = m.find(key);
  return it == m.end() ? none : it->second;
}

// A flow step as read, bound to an event once the tracks are sorted and nested.
struct FlowPoint {
  std::string key;  // cat + name + id: the steps of one flow share it
  std::string name, cat;
  char ph = 's';
  bool enclosing = true;  // bind to the enclosing slice (else to the next one: "f" without bp e)
  std::pair<int64_t, int64_t> thread;
  double ts = 0;
};

// The steps of one flow share cat, name and id (as Perfetto's JSON importer matches them).
std::string flow_key(const json& e, const std::string& cat, const std::string& name) {
  for (const char* k : {"id", "id2", "bind_id"}) {
    auto it = e.find(k);
    if (it != e.end() && !it->is_null()) return cat + "\x1f" + name + "\x1f" + it->dump();
  }
  return {};
}

// The deepest complete event of the track that contains t, or -1.
int enclosing_event(const Trace& t, const Track& tr, double ts) {
  auto [a, b] = t.visible(tr, ts, ts);
  int best = -1;
  for (size_t i = a; i < b; ++i) {
    const TraceEvent& ev = t.events[tr.events[i]];
    if (ev.ts <= ts && ts <= ev.end() && (best < 0 || ev.depth > t.events[best].depth))
      best = tr.events[i];
  }
  return best;
}

// The first complete event of the track that starts at or after t, or -1.
int next_event(const Trace& t, const Track& tr, double ts) {
  auto it = std::lower_bound(tr.events.begin(), tr.events.end(), ts,
                             [&](int idx, double v) { return t.events[idx].ts < v; });
  return it == tr.events.end() ? -1 : *it;
}

}  // namespace

Trace parse_trace(const json& j) {
  const json* events = nullptr;
  Trace t;
  if (j.is_array()) {
    events = &j;
  } else if (j.is_object()) {
    if (!j.contains("traceEvents"))
      throw FormatError("no \"traceEvents\": not a Chrome Trace Event Format file");
    events = &array_field(j, "traceEvents", "");
    t.display_time_unit = string_or(j, "displayTimeUnit", "");
    if (j.contains("otherData")) t.other_data = j["otherData"];
  } else {
    throw FormatError(std::string("expected a JSON object or array, got ") + json_type_name(j));
  }

  IdMap pids, tids;
  std::map<std::pair<int64_t, int64_t>, int> track_of;
  std::map<int64_t, std::string> process_names;
  auto track = [&](int64_t pid, int64_t tid) {
    auto [it, added] =
        track_of.emplace(std::make_pair(pid, tid), static_cast<int>(t.tracks.size()));
    if (added) {
      Track tr;
      tr.pid = pid;
      tr.tid = tid;
      tr.sort_index = tid;
      t.tracks.push_back(tr);
    }
    return it->second;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> open;  // B events by thread
  std::vector<json> event_args;  // per event while parsing (B/E merge theirs)
  std::vector<FlowPoint> flow_points;
  std::map<std::pair<std::string, std::string>, CounterSeries> counters;  // (name, key)

  for (size_t i = 0; i < events->size(); ++i) {
    const std::string p = index_path("traceEvents", i);
    const json& e = (*events)[i];
    if (!e.is_object()) throw FormatError(p + ": expected an object, got " + json_type_name(e));
    const std::string ph = string_or(e, "ph", p);
    if (ph.size() != 1) {
      ++t.ignored;
      continue;
    }
    const int64_t pid = pids.get(e, "pid", p), tid = tids.get(e, "tid", p);
    const json args = e.contains("args") ? e["args"] : json();
    if (ph == "M") {
      const std::string what = string_or(e, "name", p);
      if (what == "process_name") {
        process_names[pid] = arg_string(args, "name");
      } else if (what == "thread_name") {
        t.tracks[track(pid, tid)].name = arg_string(args, "name");
      } else if (what == "thread_sort_index") {
        int64_t s = arg_int(args, "sort_index");
        if (s >= 0) t.tracks[track(pid, tid)].sort_index = s;
      }
      continue;
    }
    if (ph == "s" || ph == "t" || ph == "f") {
      FlowPoint fp;
      fp.cat = string_or(e, "cat", p);
      fp.name = string_or(e, "name", p);
      fp.key = flow_key(e, fp.cat, fp.name);
      fp.ph = ph[0];
      fp.enclosing = ph != "f" || string_or(e, "bp", p) == "e";
      fp.thread = {pid, tid};
      fp.ts = number_or(e, "ts", p, 0);
      if (fp.key.empty() || !std::isfinite(fp.ts))
        ++t.unbound_flows;
      else
        flow_points.push_back(std::move(fp));
      continue;
    }
    if (ph == "C") {
      const double ts = number_or(e, "ts", p, 0);
      const std::string name = string_or(e, "name", p);
      if (!args.is_object() || !std::isfinite(ts)) {
        ++t.ignored;
        continue;
      }
      for (auto it = args.begin(); it != args.end(); ++it) {
        if (!it->is_number()) continue;
        const double v = it->get<double>();
        if (!std::isfinite(v)) continue;
        CounterSeries& c = counters[{name, it.key()}];
        c.key = it.key();
        c.name = args.size() > 1 ? name + " " + it.key() : name;
        c.points.emplace_back(ts, v);
      }
      continue;
    }
    if (ph != "X" && ph != "B" && ph != "E" && ph != "i" && ph != "I") {
      ++t.ignored;
      continue;
    }
    const double ts = number_or(e, "ts", p, 0);
    if (!std::isfinite(ts)) throw FormatError(field_path(p, "ts") + ": not a finite number");
    if (ph == "E") {
      auto& stack = open[{pid, tid}];
      if (stack.empty()) {
        ++t.unmatched;
        continue;
      }
      const size_t begin = stack.back();
      stack.pop_back();
      TraceEvent& b = t.events[begin];
      b.dur = std::max(0.0, ts - b.ts);
      json& bargs = event_args[begin];
      if (args.is_object()) {
        if (bargs.is_object())
          bargs.update(args);
        else if (bargs.is_null())
          bargs = args;
      }
      continue;
    }
    TraceEvent ev;
    ev.name = string_or(e, "name", p);
    ev.cat = string_or(e, "cat", p);
    ev.ts = ts;
    ev.track = track(pid, tid);
    if (ph == "X") {
      ev.dur = std::max(0.0, number_or(e, "dur", p, 0));
      if (!std::isfinite(ev.dur)) throw FormatError(field_path(p, "dur") + ": not finite");
    } else if (ph == "B") {
      open[{pid, tid}].push_back(t.events.size());
    } else {
      ev.ph = 'i';
      const std::string scope = string_or(e, "s", p, "t");
      ev.global = scope == "g" || scope == "p";
    }
    ev.node = arg_int(args, "node");
    ev.region = arg_int(args, "region");
    ev.iteration = arg_int(args, "iteration");
    if (ev.iteration < 0 && ev.cat == "iteration") ev.iteration = arg_int(args, "index");
    ev.phase = arg_string(args, "phase");
    t.events.push_back(std::move(ev));
    event_args.push_back(args);
  }
  for (auto& [thread, stack] : open) t.unmatched += stack.size();
  for (size_t i = 0; i < t.events.size(); ++i)
    if (!event_args[i].is_null())
      t.events[i].args = event_args[i].dump(-1, ' ', false, json::error_handler_t::replace);
  std::vector<json>().swap(event_args);

  if (!process_names.empty()) t.process_name = process_names.begin()->second;
  for (Track& tr : t.tracks)
    if (tr.name.empty()) tr.name = "thread " + std::to_string(tr.tid);

  // Display order: by pid, then sort index, then tid; remap the events' track indices.
  std::vector<int> order(t.tracks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const Track &x = t.tracks[a], &y = t.tracks[b];
    return std::tie(x.pid, x.sort_index, x.tid) < std::tie(y.pid, y.sort_index, y.tid);
  });
  std::vector<int> new_index(order.size());
  std::vector<Track> sorted;
  for (size_t i = 0; i < order.size(); ++i) {
    new_index[order[i]] = static_cast<int>(i);
    sorted.push_back(std::move(t.tracks[order[i]]));
  }
  t.tracks = std::move(sorted);

  t.start = std::numeric_limits<double>::infinity();
  t.end = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < t.events.size(); ++i) {
    TraceEvent& ev = t.events[i];
    ev.track = new_index[ev.track];
    t.start = std::min(t.start, ev.ts);
    t.end = std::max(t.end, ev.end());
    const int idx = static_cast<int>(i);
    if (ev.ph == 'X') {
      t.tracks[ev.track].events.push_back(idx);
      if (ev.node >= 0) t.by_node[ev.node].push_back(idx);
      if (ev.region >= 0) t.by_region[ev.region].push_back(idx);
      if (ev.cat == "iteration" && ev.iteration >= 0) t.by_iteration.emplace(ev.iteration, idx);
    } else if (ev.global) {
      t.global_instants.push_back(idx);
    } else {
      t.tracks[ev.track].instants.push_back(idx);
    }
  }
  if (t.events.empty()) t.start = t.end = 0;

  auto by_time = [&](int a, int b) {
    const TraceEvent &x = t.events[a], &y = t.events[b];
    if (x.ts != y.ts) return x.ts < y.ts;
    return x.dur > y.dur;  // enclosing first
  };
  for (Track& tr : t.tracks) {
    std::stable_sort(tr.events.begin(), tr.events.end(), by_time);
    std::stable_sort(tr.instants.begin(), tr.instants.end(), by_time);
    // Nesting: a stack of the open events' ends.
    std::vector<double> ends;
    for (int idx : tr.events) {
      TraceEvent& ev = t.events[idx];
      while (!ends.empty() && ends.back() <= ev.ts) ends.pop_back();
      ev.depth = static_cast<int>(ends.size());
      tr.depths = std::max(tr.depths, ev.depth + 1);
      tr.max_dur = std::max(tr.max_dur, ev.dur);
      ends.push_back(ev.end());
    }
  }
  std::stable_sort(t.global_instants.begin(), t.global_instants.end(), by_time);
  for (auto& [k, v] : t.by_node) std::stable_sort(v.begin(), v.end(), by_time);
  for (auto& [k, v] : t.by_region) std::stable_sort(v.begin(), v.end(), by_time);

  // Flows: bind each step to its event, then link consecutive steps of one flow. A flow
  // ends at its "f"; a later "s" with the same id starts a new one.
  std::map<std::string, FlowPoint*> open_flow;
  std::map<std::string, int> open_event;
  for (FlowPoint& fp : flow_points) {
    auto tr = track_of.find(fp.thread);
    int ev = -1;
    if (tr != track_of.end()) {
      const Track& track = t.tracks[new_index[tr->second]];
      ev = fp.enclosing ? enclosing_event(t, track, fp.ts) : next_event(t, track, fp.ts);
    }
    if (ev < 0) {
      ++t.unbound_flows;
      if (fp.ph == 's') open_event.erase(fp.key);
      continue;
    }
    if (fp.ph == 's') {
      open_event[fp.key] = ev;
      open_flow[fp.key] = &fp;
      continue;
    }
    auto from = open_event.find(fp.key);
    if (from == open_event.end()) {
      ++t.unbound_flows;
      continue;
    }
    const FlowPoint& start = *open_flow[fp.key];
    t.flows.push_back({start.name, start.cat, from->second, ev});
    if (fp.ph == 'f')
      open_event.erase(from);
    else
      from->second = ev;
  }
  t.unbound_flows += open_event.size();

  for (auto& [key, c] : counters) {
    std::stable_sort(c.points.begin(), c.points.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    c.min = c.max = c.points.front().second;
    for (const auto& [ts, v] : c.points) {
      c.min = std::min(c.min, v);
      c.max = std::max(c.max, v);
      t.start = std::min(t.start, ts);
      t.end = std::max(t.end, ts);
    }
    t.counters.push_back(std::move(c));
  }
  return t;
}

Trace parse_trace_text(const std::string& text) {
  return parse_trace(parse_json_text(text));
}

json TraceEvent::args_json() const {
  if (args.empty()) return json();
  return json::parse(args, nullptr, false);  // written by us: valid; discarded -> null-ish
}

std::vector<int> Trace::flows_of(int event) const {
  std::vector<int> out;
  for (size_t i = 0; i < flows.size(); ++i)
    if (flows[i].from == event || flows[i].to == event) out.push_back(static_cast<int>(i));
  return out;
}

const std::vector<int>& Trace::events_of_node(int64_t node) const {
  return lookup(by_node, node);
}

const std::vector<int>& Trace::events_of_region(int64_t region) const {
  return lookup(by_region, region);
}

int Trace::iteration_event(int64_t iteration) const {
  auto it = by_iteration.find(iteration);
  return it == by_iteration.end() ? -1 : it->second;
}

std::pair<size_t, size_t> Trace::visible(const Track& tr, double t0, double t1) const {
  auto ts_less = [&](int idx, double v) { return events[idx].ts < v; };
  auto first = std::lower_bound(tr.events.begin(), tr.events.end(), t0 - tr.max_dur, ts_less);
  auto last = std::upper_bound(tr.events.begin(), tr.events.end(), t1,
                               [&](double v, int idx) { return v < events[idx].ts; });
  // Skip the leading ones that end before t0.
  while (first != last && events[*first].end() < t0) ++first;
  return {static_cast<size_t>(first - tr.events.begin()),
          static_cast<size_t>(std::max(first, last) - tr.events.begin())};
}

int Trace::event_at(int track_index, int depth, double t, double slack) const {
  if (track_index < 0 || static_cast<size_t>(track_index) >= tracks.size()) return -1;
  const Track& tr = tracks[track_index];
  auto [a, b] = visible(tr, t - slack, t + slack);
  int best = -1;
  double best_d = std::numeric_limits<double>::infinity();
  for (size_t i = a; i < b; ++i) {
    const TraceEvent& ev = events[tr.events[i]];
    if (ev.depth != depth) continue;
    const double d = t < ev.ts ? ev.ts - t : t > ev.end() ? t - ev.end() : 0.0;
    if (d <= slack && d < best_d) {
      best_d = d;
      best = tr.events[i];
      if (d == 0) break;
    }
  }
  return best;
}

}  // namespace hf::viewer
