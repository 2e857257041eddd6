// What the panels share: the loaded dump, the two graph layouts (computed on a background
// thread), the session's phases and markers, the selection and the hover, and the requests
// one panel makes of another (focus the timeline on a time range).
#pragma once
#include <future>
#include <map>
#include <optional>
#include <string>

#include "viewer/model/dump.h"
#include "viewer/model/graph_layout.h"
#include "viewer/model/selection.h"
#include "viewer/model/session_timeline.h"
#include "viewer/ui/fonts.h"

namespace hf::viewer::ui {

enum class Panel { Graph, Timeline, Hotspots, Summary, Details, Count };
const char* panel_name(Panel p);  // "Graph", ...
// "graph" -> Panel::Graph (case-insensitive); Count when unknown.
Panel panel_from_name(const std::string& name);

// One graph of the dump (before.dot or after.dot) and its layout.
struct GraphSlot {
  std::string file;  // "before.dot"
  std::string dot;   // empty when the dump has none
  std::optional<GraphLayout> layout;
  std::string error;  // the layout's error, or ""
  std::future<GraphLayout> pending;

  bool present() const { return !dot.empty(); }
  bool laying_out() const { return pending.valid(); }
  // Starts the layout on a background thread.
  void start();
  // Collects a finished layout (wait: block until it is done). True when it changed.
  bool poll(bool wait = false);
};

// The trace's steps of one node: how many, and their median duration.
struct StepStats {
  int count = 0, steady = 0;
  double median_us = 0, steady_median_us = 0;
};

struct SharedState {
  Dump dump;
  GraphSlot before, after;
  SessionTimeline session;
  Fonts fonts;
  bool headless = false;  // --screenshot: no hover, no animation

  Selection selection;
  int selection_serial = 0;  // bumped on every change
  Panel selection_source = Panel::Count;
  Selection hover;           // what the mouse is over in some panel this frame
  Selection hover_next;      // being collected for the next frame

  // A request to the timeline to show [t0, t1] (microseconds).
  double focus_t0 = 0, focus_t1 = 0;
  int focus_serial = 0;

  const Report* report() const { return dump.report ? &*dump.report : nullptr; }
  const Trace* trace() const { return dump.trace ? &*dump.trace : nullptr; }

  // Cached per node id.
  const StepStats& step_stats(int64_t node);
  std::map<int64_t, StepStats> step_cache;

  void select(const Selection& s, Panel from);
  void set_hover(const Selection& s) { hover_next = s; }
  void focus_time(double t0, double t1);
  // Called once per frame by the app: hover collected during the last frame becomes current.
  void end_frame();
  // Every error to show: the dump's and the layouts'.
  std::vector<std::string> errors() const;
};

}  // namespace hf::viewer::ui
