// The Timeline panel: trace.json's events on their tracks (iterations, executor, compile
// worker, or whatever threads the trace has), nested events on rows below their parents.
//
// Phases are shaded behind the tracks and marked on the ruler; the swap (and any revert) is
// a bold line across every track. Wheel zooms in time around the cursor, drag pans,
// double-click fits. Hover shows an event's args; a click selects the event, and with it its
// node in the graph and its row in the tables. A selection made elsewhere highlights the
// node's steps (its region's fused kernel and compile more lightly); prev / next walk them.
#pragma once
#include <imgui.h>

#include "viewer/model/view_transform.h"
#include "viewer/ui/shared_state.h"

namespace hf::viewer::ui {

class TimelineView {
 public:
  void draw(SharedState& st);

 private:
  void toolbar(SharedState& st, const Trace& t);
  void follow_selection(SharedState& st, const Trace& t);
  void show_event(const Trace& t, int event);
  // The events that belong to the selection, by time.
  const std::vector<int>& selected_events(const SharedState& st, const Trace& t) const;

  TimeView view_;
  bool fitted_ = false;
  int seen_serial_ = -1, seen_focus_ = 0;
  int occurrence_ = -1;
  float width_ = 1;  // of the time area, pixels
};

}  // namespace hf::viewer::ui
