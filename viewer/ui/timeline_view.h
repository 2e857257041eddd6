// The Timeline panel: trace.json's events on their tracks (iterations, executor, compile
// worker, or whatever threads the trace has), nested events on rows below their parents,
// counter tracks (memory, GB/s) under them, flow arrows between linked events.
//
// Habits from Perfetto and Tracy: W / S (or Up / Down) zoom, A / D (or Left / Right) pan,
// the wheel zooms around the cursor, right- or middle-drag pans, left-drag selects a time
// range and lists count / total / mean per event name in it, Ctrl+F searches event names
// (Enter / Shift+Enter: next / previous), double-click fits. Phases are shaded behind the
// tracks and named on the ruler, where the swap and revert are labelled too (stacked or
// elided, never overlapping); their lines cross every track. A click selects an event, and
// with it its node in the graph and its row in the tables; its flows (op -> compile -> swap
// -> fused kernel) are drawn as arrows. A line of colour swatches at the bottom is the
// legend; `?` lists every shortcut (viewer/ui/help_overlay.h).
#pragma once
#include <imgui.h>

#include <string>
#include <vector>

#include "viewer/model/view_transform.h"
#include "viewer/ui/shared_state.h"

namespace hf::viewer::ui {

class TimelineView {
 public:
  void draw(SharedState& st);

 private:
  void toolbar(SharedState& st, const Trace& t);
  void search_bar(SharedState& st, const Trace& t);
  void keys(const Trace& t, bool hovered, float mouse_x, float x0);
  void follow_selection(SharedState& st, const Trace& t);
  void show_event(const Trace& t, int event);
  void range_table(const Trace& t, float height);
  // The events that belong to the selection, by time.
  const std::vector<int>& selected_events(const SharedState& st, const Trace& t) const;

  TimeView view_;
  bool fitted_ = false;
  int seen_serial_ = -1, seen_focus_ = 0;
  int occurrence_ = -1;
  float width_ = 1;  // of the time area, pixels

  // Ctrl+F.
  char query_[128] = {};
  std::string searched_;
  std::vector<int> matches_;
  int match_ = -1;
  bool focus_search_ = false;

  // A time range selected with a left drag (microseconds); none when range_t0_ == range_t1_.
  double range_t0_ = 0, range_t1_ = 0;
  bool selecting_ = false;
  bool show_all_flows_ = false;
  bool legend_in_toolbar_ = false;  // the panel is too short for the legend line
};

}  // namespace hf::viewer::ui
