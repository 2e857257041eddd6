// trace.json (Chrome Trace Event Format, as dump/trace_json.h writes it and as Perfetto and
// chrome://tracing read it) as the viewer reads it.
//
// Accepted: the object form {"traceEvents": [...]} and the bare array form. Events:
//   X  complete events (ts, dur in microseconds)
//   B/E begin/end pairs on one thread, turned into complete events
//   i/I instant events ("s": "g" or "p" global: drawn across every track; else on its track)
//   M  metadata: process_name, thread_name, thread_sort_index
//   s/t/f  flow events (the legacy flow format: the steps of a flow share cat, name and id,
//      as Perfetto matches them): each step is bound to the complete event that encloses it
//      on its thread (an "f" without "bp":"e" to the next one that starts there, as Chrome
//      does), consecutive steps becoming Flow arrows
//   C  counters: one CounterSeries per name and args key
// Anything else (async events, samples) is counted in `ignored` and left out.
// args.node / args.region / args.iteration / args.phase, when present, are lifted into the
// event so that the timeline can be linked to the graph (docs/viewer.md).
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace hf::viewer {

struct TraceEvent {
  std::string name, cat;
  char ph = 'X';             // 'X' (complete; B/E pairs become X) or 'i' (instant)
  double ts = 0, dur = 0;    // microseconds
  int track = -1;            // index into Trace::tracks
  int depth = 0;             // nesting level on its track (0: outermost)
  bool global = false;       // an instant drawn across all tracks
  std::string args;          // "args" as compact JSON text ("" when none): kept as text, as
                             // traces have up to hundreds of thousands of events
  nlohmann::json args_json() const;  // parsed (null when none)
  int64_t node = -1;         // args.node
  int64_t region = -1;       // args.region
  int64_t iteration = -1;    // args.iteration, or args.index of an iteration event
  std::string phase;         // args.phase
  double end() const { return ts + dur; }
};

struct Track {
  int64_t pid = 0, tid = 0;
  std::string name;          // thread_name, else "thread <tid>"
  int64_t sort_index = 0;    // thread_sort_index, else tid
  std::vector<int> events;   // complete events, by ts (then longest first)
  std::vector<int> instants; // instants on this track only, by ts
  int depths = 1;            // rows needed by nesting
  double max_dur = 0;        // longest complete event (for range queries)
};

// An arrow between two complete events (indices into Trace::events).
struct Flow {
  std::string name, cat;
  int from = -1, to = -1;
};

// A counter track ("C" events): the value of one args key over time.
struct CounterSeries {
  std::string name;   // the event's name, then " " and the key when the event has several
  std::string key;    // the args key ("bytes", "gbps", ...): it says the unit
  std::vector<std::pair<double, double>> points;  // (ts, value), by ts
  double min = 0, max = 0;
};

struct Trace {
  std::string process_name;
  std::string display_time_unit;
  std::vector<TraceEvent> events;
  std::vector<Track> tracks;        // in display order
  std::vector<int> global_instants; // by ts
  double start = 0, end = 0;        // microseconds, over every event
  size_t ignored = 0;               // events of kinds the viewer does not draw
  size_t unmatched = 0;             // B without E or E without B
  std::vector<Flow> flows;          // bound flow steps, in the file's order
  size_t unbound_flows = 0;         // flow steps with no event to attach to
  std::vector<CounterSeries> counters;  // by name
  nlohmann::json other_data;

  // Events (complete ones) whose args.node / args.region is this id, by ts.
  const std::vector<int>& events_of_node(int64_t node) const;
  const std::vector<int>& events_of_region(int64_t region) const;
  // The complete event of an iteration (cat "iteration", args.index), or -1.
  int iteration_event(int64_t iteration) const;

  // The complete events of a track that overlap [t0, t1]: indices into track.events.
  std::pair<size_t, size_t> visible(const Track& t, double t0, double t1) const;
  // The complete event at time t on row `depth` of track `track` (within `slack` us on
  // either side, the closest), or -1.
  int event_at(int track, int depth, double t, double slack) const;

  // The flows that start or end at an event.
  std::vector<int> flows_of(int event) const;

  std::map<int64_t, std::vector<int>> by_node, by_region;
  std::map<int64_t, int> by_iteration;
};

Trace parse_trace(const nlohmann::json& j);
Trace parse_trace_text(const std::string& text);

}  // namespace hf::viewer
