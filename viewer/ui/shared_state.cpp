#include "viewer/ui/shared_state.h"

#include <algorithm>
#include <cctype>

#include "viewer/layout/dot_layout.h"

namespace hf::viewer::ui {

const char* panel_name(Panel p) {
  switch (p) {
    case Panel::Graph: return "Graph";
    case Panel::Timeline: return "Timeline";
    case Panel::Hotspots: return "Hotspots";
    case Panel::Summary: return "Summary";
    case Panel::Details: return "Details";
    default: return "?";
  }
}

Panel panel_from_name(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (int i = 0; i < static_cast<int>(Panel::Count); ++i) {
    std::string p = panel_name(static_cast<Panel>(i));
    std::transform(p.begin(), p.end(), p.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (p == n) return static_cast<Panel>(i);
  }
  return Panel::Count;
}

void GraphSlot::start() {
  if (dot.empty()) return;
  pending = std::async(std::launch::async, [text = dot] { return layout_dot(text); });
}

bool GraphSlot::poll(bool wait) {
  if (!pending.valid()) return false;
  if (!wait && pending.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
  try {
    layout = pending.get();
  } catch (const std::exception& e) {
    error = file + ": " + e.what();
  }
  return true;
}

const StepStats& SharedState::step_stats(int64_t node) {
  auto it = step_cache.find(node);
  if (it != step_cache.end()) return it->second;
  StepStats st;
  if (const Trace* t = trace()) {
    std::vector<double> all, steady;
    for (int e : t->events_of_node(node)) {
      const TraceEvent& ev = t->events[e];
      all.push_back(ev.dur);
      if (ev.phase == "steady") steady.push_back(ev.dur);
    }
    auto median = [](std::vector<double>& v) {
      if (v.empty()) return 0.0;
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      return v[v.size() / 2];
    };
    st.count = static_cast<int>(all.size());
    st.steady = static_cast<int>(steady.size());
    st.median_us = median(all);
    st.steady_median_us = median(steady);
  }
  return step_cache.emplace(node, st).first->second;
}

void SharedState::select(const Selection& s, Panel from) {
  if (s == selection) return;
  selection = s;
  ++selection_serial;
  selection_source = from;
}

void SharedState::focus_time(double t0, double t1) {
  focus_t0 = t0;
  focus_t1 = t1;
  ++focus_serial;
}

void SharedState::end_frame() {
  hover = hover_next;
  hover_next = Selection{};
}

std::vector<std::string> SharedState::errors() const {
  std::vector<std::string> out = dump.errors;
  if (!before.error.empty()) out.push_back(before.error);
  if (!after.error.empty()) out.push_back(after.error);
  return out;
}

}  // namespace hf::viewer::ui
