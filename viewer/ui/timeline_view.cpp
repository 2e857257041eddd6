#include "viewer/ui/timeline_view.h"

#include <imgui_internal.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "viewer/model/format.h"
#include "viewer/model/label_layout.h"
#include "viewer/model/timeline_query.h"
#include "viewer/ui/draw_util.h"
#include "viewer/ui/frame_facts.h"

namespace hf::viewer::ui {

namespace {

constexpr float kGutter = 118;  // track names
constexpr ImU32 kSelect = IM_COL32(0x0d, 0x47, 0xa1, 255);
// A swap is a speedup, a revert undoes a slowdown or a wrong kernel: the speedup colours.
constexpr ImU32 kSwap = kSpeedupGreen;
constexpr ImU32 kRevert = kSlowdownRed;
constexpr ImU32 kFused = IM_COL32(0x66, 0xbb, 0x6a, 255);
constexpr ImU32 kCompile = IM_COL32(0x95, 0x75, 0xcd, 255);
constexpr ImU32 kCompileCached = IM_COL32(0xb3, 0x9d, 0xdb, 255);
constexpr ImU32 kFlow = IM_COL32(0xe6, 0x51, 0x00, 235);
constexpr ImU32 kRange = IM_COL32(0x19, 0x76, 0xd2, 40);
constexpr ImU32 kMatch = IM_COL32(0xff, 0xb3, 0x00, 255);
constexpr ImU32 kCounter = IM_COL32(0x00, 0x79, 0x6b, 255);
constexpr ImU32 kText = IM_COL32(0x21, 0x21, 0x21, 255);
constexpr ImU32 kGreyText = IM_COL32(0x61, 0x61, 0x61, 255);

ImU32 event_color(const TraceEvent& e) {
  if (e.cat == "iteration") return col(mix(phase_color(e.phase), rgba(255, 255, 255), 0.35f));
  if (e.cat == "compile") return e.name.find("(cached)") != std::string::npos ? kCompileCached : kCompile;
  if (e.cat == "fused") return kFused;
  return col(color_for_name(e.name));
}

std::string args_text(const nlohmann::json& args) {
  std::string s;
  if (!args.is_object()) return s;
  for (auto it = args.begin(); it != args.end(); ++it) s += "\n" + it.key() + ": " + format_arg(it.key(), *it);
  return s;
}

std::string time_label(double us_from_start, double step_us) {
  const double ms = us_from_start * 1e-3, step_ms = step_us * 1e-3;
  if (std::fabs(ms) >= 1e7) return format_ms(ms);  // no 300-digit labels for broken traces
  const int decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step_ms) + 1e-9)), 0, 6);
  return strf("%.*f ms", decimals, ms);
}

float measure(std::string_view s) { return ImGui::CalcTextSize(s.data(), s.data() + s.size()).x; }

// An arrow from a to b: a curve leaving and entering horizontally, with a head at b.
void arrow(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 c) {
  const float dx = std::max(12.0f, std::fabs(b.x - a.x) * 0.4f);
  dl->AddBezierCubic(a, {a.x + dx, a.y}, {b.x - dx, b.y}, b, c, 1.8f);
  dl->AddTriangleFilled(b, {b.x - 7, b.y - 4}, {b.x - 7, b.y + 4}, c);
  dl->AddCircleFilled(a, 2.5f, c);
}

struct LegendItem {
  const char* name;
  ImU32 color;
  bool line;  // drawn as a vertical line (swap, revert) or an arrow (flow) rather than a box
};

const LegendItem kLegend[] = {
    {"op (colour by name)", IM_COL32(0x4f, 0xc3, 0xf7, 255), false},
    {"fused kernel", kFused, false},
    {"compile", kCompile, false},
    {"compile (cached)", kCompileCached, false},
    {"warmup", col(phase_color("warmup")), false},
    {"profiling", col(phase_color("profiling")), false},
    {"compiling", col(phase_color("compiling")), false},
    {"validating", col(phase_color("validating")), false},
    {"reprofiling", col(phase_color("reprofiling")), false},
    {"steady", col(phase_color("steady")), false},
    {"swap", kSwap, true},
    {"revert", kRevert, true},
    {"flow", kFlow, true},
    {"counter", kCounter, true},
    {"search match", kMatch, true},
};

// The legend as a list, for a tooltip.
void legend_list() {
  for (const LegendItem& li : kLegend) {
    ImGui::ColorButton(li.name, ImGui::ColorConvertU32ToFloat4(li.color),
                       ImGuiColorEditFlags_NoTooltip | ImGuiColorEditFlags_NoPicker |
                           ImGuiColorEditFlags_NoDragDrop,
                       {ImGui::GetFontSize(), ImGui::GetFontSize()});
    ImGui::SameLine();
    ImGui::TextUnformatted(li.name);
  }
}

}  // namespace

const std::vector<int>& TimelineView::selected_events(const SharedState& st, const Trace& t) const {
  static const std::vector<int> none;
  if (st.selection.node >= 0) return t.events_of_node(st.selection.node);
  if (st.selection.region >= 0) return t.events_of_region(st.selection.region);
  return none;
}

void TimelineView::show_event(const Trace& t, int event) {
  const TraceEvent& e = t.events[event];
  if (e.dur > view_.span() * 0.8)
    view_.fit(e.ts, e.end(), 0.1);
  else
    view_.center_on(e.ts + e.dur / 2);
}

void TimelineView::follow_selection(SharedState& st, const Trace& t) {
  if (seen_serial_ == st.selection_serial) return;
  seen_serial_ = st.selection_serial;
  occurrence_ = -1;
  if (st.selection_source == Panel::Timeline) return;
  if (st.selection.event >= 0) {
    show_event(t, st.selection.event);
    return;
  }
  const std::vector<int>& evs = selected_events(st, t);
  if (evs.empty()) return;
  // Already one in view: leave the view alone. Else the one closest to the view's centre.
  const double mid = (view_.start + view_.end) / 2;
  int best = -1;
  double best_d = 1e300;
  for (size_t i = 0; i < evs.size(); ++i) {
    const TraceEvent& e = t.events[evs[i]];
    if (e.end() >= view_.start && e.ts <= view_.end) return;
    const double d = std::fabs(e.ts - mid);
    if (d < best_d) best_d = d, best = static_cast<int>(i);
  }
  occurrence_ = best;
  show_event(t, evs[best]);
}

void TimelineView::search_bar(SharedState& st, const Trace& t) {
  ImGui::SetNextItemWidth(std::clamp(ImGui::GetContentRegionAvail().x * 0.25f, 90.0f, 200.0f));
  if (focus_search_) {
    ImGui::SetKeyboardFocusHere();
    focus_search_ = false;
  }
  const bool enter = ImGui::InputTextWithHint("##search", "search (Ctrl+F)", query_, sizeof query_,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  if (searched_ != query_) {
    searched_ = query_;
    matches_ = search_events(t, searched_);
    match_ = -1;
  }
  auto go = [&](bool forward) {
    match_ = step_match(t, matches_, match_, forward, view_.start);
    if (match_ < 0) return;
    show_event(t, matches_[match_]);
    st.select(select_event(t, matches_[match_]), Panel::Count);
  };
  if (enter) {
    go(!ImGui::GetIO().KeyShift);
    ImGui::SetKeyboardFocusHere(-1);  // stay in the field for the next Enter
  }
  if (searched_.empty()) return;
  ImGui::SameLine(0, 2);
  if (ImGui::ArrowButton("search_prev", ImGuiDir_Left)) go(false);
  if (ImGui::IsItemHovered()) tooltip_text("previous match (Shift+Enter)");
  ImGui::SameLine(0, 2);
  if (ImGui::ArrowButton("search_next", ImGuiDir_Right)) go(true);
  if (ImGui::IsItemHovered()) tooltip_text("next match (Enter)");
  ImGui::SameLine();
  if (matches_.empty())
    ImGui::TextColored(ImVec4(0.78f, 0.16f, 0.16f, 1), "no match");
  else if (match_ >= 0)
    ImGui::TextDisabled("%d of %zu", match_ + 1, matches_.size());
  else
    ImGui::TextDisabled("%zu matches", matches_.size());
}

void TimelineView::toolbar(SharedState& st, const Trace& t) {
  if (ImGui::Button("Fit")) view_.fit(t.start, t.end);
  if (st.session.first_swap >= 0) {
    ImGui::SameLine();
    if (ImGui::Button("Swap")) {
      // Show the iterations around the swap.
      for (const SessionMarker& m : st.session.markers)
        if (m.kind == MarkerKind::Swap) {
          double a = m.ts_us, b = m.ts_us;
          for (const IterationPoint& p : st.session.iterations)
            if (p.index >= m.iteration - 2 && p.index <= m.iteration + 3) {
              a = std::min(a, p.start_us);
              b = std::max(b, p.start_us + p.ms * 1e3);
            }
          view_.fit(a, b, 0.05);
          break;
        }
    }
  }
  ImGui::SameLine();
  search_bar(st, t);
  const std::vector<int>& evs = selected_events(st, t);
  if (!evs.empty()) {
    ImGui::SameLine();
    if (ImGui::ArrowButton("prev", ImGuiDir_Left)) {
      occurrence_ = occurrence_ <= 0 ? static_cast<int>(evs.size()) - 1 : occurrence_ - 1;
      show_event(t, evs[occurrence_]);
    }
    ImGui::SameLine(0, 2);
    if (ImGui::ArrowButton("next", ImGuiDir_Right)) {
      occurrence_ = (occurrence_ + 1) % static_cast<int>(evs.size());
      show_event(t, evs[occurrence_]);
    }
    ImGui::SameLine();
    const TraceEvent& first = t.events[evs.front()];
    std::string what = st.selection.node >= 0 ? first.name : "region " + std::to_string(st.selection.region);
    if (occurrence_ >= 0)
      ImGui::Text("%s: %d of %d", what.c_str(), occurrence_ + 1, static_cast<int>(evs.size()));
    else
      ImGui::Text("%s: %d events", what.c_str(), static_cast<int>(evs.size()));
  }
  if (!t.flows.empty()) {
    ImGui::SameLine();
    ImGui::Checkbox("all flows", &show_all_flows_);
    if (ImGui::IsItemHovered())
      tooltip_text("Draw every flow arrow in view (op -> compile -> swap -> fused kernel), not only "
                   "the selected event's.");
  }
  if (legend_in_toolbar_) {
    ImGui::SameLine();
    ImGui::TextDisabled("[legend]");
    if (ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      legend_list();
      ImGui::EndTooltip();
    }
  }
  ImGui::SameLine();
  ImGui::TextDisabled("showing %s  (?)", format_us(view_.span()).c_str());
  if (ImGui::IsItemHovered())
    tooltip_text("W/S or Up/Down: zoom. A/D or Left/Right: pan. Wheel: zoom at the cursor. "
                 "Right- or middle-drag: pan. Left-drag: select a time range (Esc clears it). "
                 "Ctrl+F: search; Enter / Shift+Enter: next / previous. Double-click: fit. "
                 "Press ? for every shortcut.");
}

void TimelineView::keys(const Trace& t, bool hovered, float mouse_x, float x0) {
  ImGuiIO& io = ImGui::GetIO();
  const bool here = ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) ||
                    ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows);
  if (!here) return;
  if (io.KeyCtrl && ImGui::IsKeyPressed('F')) focus_search_ = true;
  if (io.WantTextInput || io.KeyCtrl) return;
  auto down = [](int glfw_key, ImGuiKey key) {
    return ImGui::IsKeyDown(glfw_key) || ImGui::IsKeyDown(ImGui::GetKeyIndex(key));
  };
  // Held keys move smoothly: a step per frame scaled by the frame time.
  const float dt = std::clamp(io.DeltaTime, 0.001f, 0.1f);
  const double at = hovered && mouse_x >= x0 ? view_.to_t(mouse_x - x0, width_) : (view_.start + view_.end) / 2;
  TimeKeys k;
  k.zoom_in = down('W', ImGuiKey_UpArrow);
  k.zoom_out = down('S', ImGuiKey_DownArrow);
  k.left = down('A', ImGuiKey_LeftArrow);
  k.right = down('D', ImGuiKey_RightArrow);
  apply_time_keys(view_, k, at, dt);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) range_t0_ = range_t1_ = 0;
  (void)t;
}

void TimelineView::range_table(const Trace& t, float height) {
  const double a = std::min(range_t0_, range_t1_), b = std::max(range_t0_, range_t1_);
  const std::vector<NameStats> stats = range_stats(t, a, b);
  int total = 0;
  for (const NameStats& s : stats) total += s.count;
  ImGui::Text("Selected %s: %d events, %zu names", format_us(b - a).c_str(), total, stats.size());
  ImGui::SameLine();
  if (ImGui::SmallButton("zoom to range")) view_.fit(a, b, 0.02);
  ImGui::SameLine();
  if (ImGui::SmallButton("clear")) range_t0_ = range_t1_ = 0;
  const ImGuiTableFlags flags = ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("range", 4, flags, {0, std::max(40.0f, height - ImGui::GetFrameHeightWithSpacing())}))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch, 3);
  ImGui::TableSetupColumn("count", ImGuiTableColumnFlags_WidthStretch, 1);
  ImGui::TableSetupColumn("total", ImGuiTableColumnFlags_WidthStretch, 1);
  ImGui::TableSetupColumn("mean", ImGuiTableColumnFlags_WidthStretch, 1);
  ImGui::TableHeadersRow();
  ImGuiListClipper clip;
  clip.Begin(static_cast<int>(stats.size()));
  while (clip.Step())
    for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
      const NameStats& s = stats[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(s.name.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%d", s.count);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_us(s.total_us).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_us(s.mean_us()).c_str());
    }
  ImGui::EndTable();
}

void TimelineView::draw(SharedState& st) {
  FrameFacts& facts = frame_facts();
  const Trace* tp = st.trace();
  if (!tp) {
    // Say what is actually wrong: a trace.json that is there but unreadable is not missing.
    const std::string error = st.dump.error_of("trace.json");
    std::string msg;
    if (!error.empty())
      msg = "trace.json could not be read: " + error;
    else if (st.dump.report && st.dump.report->summary.fusion == "adaptive")
      msg = "This dump has no trace.json, though its report says --fusion adaptive (which writes one).";
    else if (st.dump.report)
      msg = "This dump has no trace.json (only --fusion adaptive writes one).";
    else
      msg = "No trace.json loaded.";
    ImGui::PushTextWrapPos(0);
    if (!error.empty())
      ImGui::TextColored(ImVec4(0.78f, 0.16f, 0.16f, 1), "%s", msg.c_str());
    else
      ImGui::TextDisabled("%s", msg.c_str());
    ImGui::PopTextWrapPos();
    facts.set("timeline.message", msg);
    return;
  }
  facts.set("timeline.message", "");
  const Trace& t = *tp;
  if (!fitted_) {
    view_.fit(t.start, t.end);
    fitted_ = true;
  }
  if (seen_focus_ != st.focus_serial) {
    seen_focus_ = st.focus_serial;
    view_.fit(st.focus_t0, st.focus_t1, 0.05);
  }
  follow_selection(st, t);
  toolbar(st, t);

  const float font = ImGui::GetFontSize();
  const bool has_range = range_t1_ != range_t0_ && !selecting_;
  ImVec2 size = ImGui::GetContentRegionAvail();
  const float table_h = has_range ? std::clamp(size.y * 0.3f, 70.0f, 180.0f) : 0.0f;
  size.x = std::max(size.x, 200.0f);
  size.y = std::max(size.y - table_h, 60.0f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("timeline", size,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  const bool hovered = ImGui::IsItemHovered();
  const bool active = ImGui::IsItemActive();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float x0 = origin.x + kGutter;
  const float right = origin.x + size.x;
  width_ = std::max(1.0f, size.x - kGutter);
  ImGuiIO& io = ImGui::GetIO();

  // Input.
  if (!st.headless) {
    keys(t, hovered, io.MousePos.x, x0);
    if (hovered && io.MouseWheel != 0 && io.MousePos.x >= x0) {
      const double at = view_.to_t(io.MousePos.x - x0, width_);
      view_.zoom_at(at, std::pow(0.8, io.MouseWheel), 0.05);
    }
    if (active && (ImGui::IsMouseDragging(ImGuiMouseButton_Right, 3) ||
                   ImGui::IsMouseDragging(ImGuiMouseButton_Middle, 3)))
      view_.pan_px(io.MouseDelta.x, width_);
    if (active && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 3)) {
      if (!selecting_) {
        selecting_ = true;
        range_t0_ = view_.to_t(std::max(io.MouseClickedPos[0].x, x0) - x0, width_);
      }
      range_t1_ = view_.to_t(std::clamp(io.MousePos.x, x0, right) - x0, width_);
    }
    if (selecting_ && !ImGui::IsMouseDown(ImGuiMouseButton_Left)) selecting_ = false;
    if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) view_.fit(t.start, t.end);
  }

  // Vertical space: the ruler (ticks, then rows of phase / swap labels), the tracks, the
  // counters (two rows each, one when short of room), the legend line. Rows shrink to fit
  // the panel; when even the smallest rows do not fit, the legend moves to the toolbar and
  // the labels to one row, so that no track is cut off.
  const float tick_h = font + 4, label_row_h = font + 2;
  int track_rows = 0;
  for (const Track& tr : t.tracks) track_rows += tr.depths;
  const int counters = static_cast<int>(t.counters.size());
  const size_t lanes = t.tracks.size() + t.counters.size();
  const float gap = 4, min_row = 8;
  int counter_rows = 2;
  auto rows = [&] { return track_rows + counter_rows * counters; };
  auto fits = [&](float ruler_h, float legend, float row) {
    return size.y - ruler_h - legend - gap * lanes - 4 >= rows() * row;
  };
  int label_rows = 2;
  float legend_h = font + 6;
  if (!fits(tick_h + 2 * label_row_h, legend_h, font)) counter_rows = 1;
  // A second label row only when the tracks stay readable with it (labels elide instead).
  if (!fits(tick_h + 2 * label_row_h, legend_h, font * 0.8f)) label_rows = 1;
  if (!fits(tick_h + label_row_h, legend_h, min_row)) legend_h = 0;
  legend_in_toolbar_ = legend_h == 0;
  const float ruler = tick_h + label_rows * label_row_h + 2;
  const float avail_h = size.y - ruler - legend_h - gap * lanes - 4;
  const float row_h = std::clamp(avail_h / std::max(1, rows()), 6.0f, 22.0f);
  // Names in the gutter shrink with their rows rather than vanish.
  const float name_px = std::clamp(row_h, std::min(font, 9.0f), font);
  ImFont* ui_font = ImGui::GetFont();

  dl->PushClipRect(origin, origin + size, true);
  dl->AddRectFilled(origin, origin + size, IM_COL32(255, 255, 255, 255));
  dl->AddRectFilled(origin, {x0, origin.y + size.y}, IM_COL32(0xf2, 0xf3, 0xf5, 255));
  const float top = origin.y + ruler;
  const float bottom = origin.y + size.y - legend_h;
  auto X = [&](double ts) { return x0 + static_cast<float>(view_.to_x(ts, width_)); };

  // Phase bands.
  dl->PushClipRect({x0, origin.y}, {right, bottom}, true);
  for (const PhaseSpan& p : st.session.phases) {
    const float a = X(p.start_us), b = X(p.end_us);
    if (b < x0 || a > right) continue;
    dl->AddRectFilled({a, top}, {b, bottom}, with_alpha(col(phase_color(p.phase)), 0.13f));
  }

  // Ruler ticks.
  const double step = nice_step(view_.span(), std::max(2, static_cast<int>(width_ / 110)));
  const double first = std::ceil((view_.start - t.start) / step) * step + t.start;
  for (double tick = first; tick <= view_.end; tick += step) {
    const float x = X(tick);
    dl->AddLine({x, origin.y + tick_h - 4}, {x, bottom}, IM_COL32(0, 0, 0, 22));
    dl->AddText({x + 3, origin.y + 2}, kGreyText, time_label(tick - t.start, step).c_str());
  }
  dl->AddLine({x0, top}, {right, top}, IM_COL32(0, 0, 0, 60));
  dl->PopClipRect();

  // Tracks.
  int hover_event = -1;
  float y = top + 3;
  float iterations_row_y = -1;
  std::vector<float> track_y(t.tracks.size(), -1);
  nlohmann::json cut = nlohmann::json::array();
  const std::set<int> match_set(matches_.begin(), matches_.end());
  for (size_t ti = 0; ti < t.tracks.size(); ++ti) {
    const Track& tr = t.tracks[ti];
    const float h = tr.depths * row_h;
    track_y[ti] = y;
    if (y + h > bottom + 0.5f) cut.push_back(tr.name);
    const std::string name = elide_to_width(tr.name, (kGutter - 10) * font / name_px, measure);
    dl->AddText(ui_font, name_px, {origin.x + 6, y + (std::min(h, std::max(row_h, name_px)) - name_px) / 2},
                IM_COL32(0x33, 0x33, 0x33, 255), name.c_str());
    dl->AddLine({origin.x, y + h + gap / 2}, {right, y + h + gap / 2}, IM_COL32(0, 0, 0, 25));
    if (tr.name == "iterations" && iterations_row_y < 0) iterations_row_y = y;
    dl->PushClipRect({x0, y}, {right, std::min(y + h, bottom)}, true);
    auto [lo, hi] = t.visible(tr, view_.start, view_.end);
    std::vector<float> last_x(tr.depths, -1e9f);
    for (size_t k = lo; k < hi; ++k) {
      const int idx = tr.events[k];
      const TraceEvent& e = t.events[idx];
      float a = X(e.ts), b = X(e.end());
      if (b < x0 || a > right) continue;
      float& last = last_x[e.depth];
      const EventMatch match = event_match(e, idx, st.selection);
      const bool found = !match_set.empty() && match_set.count(idx);
      if (b - a < 1) {
        // Sub-pixel events: one pixel, at most one per pixel column (selected ones always).
        if (a < last + 1 && match == EventMatch::None && !found) continue;
        b = a + 1;
      }
      last = b;
      const float ey = y + e.depth * row_h;
      const ImVec2 p0{a, ey + 1}, p1{b, ey + row_h - 1};
      dl->AddRectFilled(p0, p1, event_color(e));
      if (match == EventMatch::Exact) {
        dl->AddRect(p0 - ImVec2{1, 1}, p1 + ImVec2{1, 1}, kSelect, 0, 0, 2.5f);
      } else if (match == EventMatch::Region) {
        dl->AddRect(p0, p1, with_alpha(kSelect, 0.3f), 0, 0, 1.0f);
      } else if (b - a > 4) {
        dl->AddRect(p0, p1, IM_COL32(0, 0, 0, 40));
      }
      if (found) dl->AddRect(p0 - ImVec2{1, 1}, p1 + ImVec2{1, 1}, kMatch, 0, 0, 2.0f);
      if (!st.hover.empty() && event_match(e, idx, st.hover) == EventMatch::Exact && match != EventMatch::Exact)
        dl->AddRect(p0, p1, with_alpha(kSelect, 0.5f), 0, 0, 1.5f);
      // The name inside the bar, elided to its visible width; none when too narrow.
      const float la = std::max(a, x0) + 3, lb = std::min(b, right) - 2;
      if (lb - la > 12 && row_h >= font * 0.8f) {
        const std::string label = elide_to_width(e.name, lb - la, measure);
        if (!label.empty()) dl->AddText({la, ey + (row_h - font) / 2}, kText, label.c_str());
      }
      if (hovered && io.MousePos.y >= ey && io.MousePos.y < ey + row_h && io.MousePos.x >= a - 2 &&
          io.MousePos.x <= b + 2)
        hover_event = idx;
    }
    // Instants on this track only.
    for (int idx : tr.instants) {
      const float x = X(t.events[idx].ts);
      if (x < x0 || x > right) continue;
      dl->AddTriangleFilled({x, y + h - 7}, {x - 4, y + h}, {x + 4, y + h}, IM_COL32(0x42, 0x42, 0x42, 255));
    }
    dl->PopClipRect();
    y += h + gap;
  }

  // Counter tracks: a step line of each series, its range in the gutter.
  std::string hover_counter;
  nlohmann::json counter_names = nlohmann::json::array();
  for (const CounterSeries& c : t.counters) {
    const float h = counter_rows * row_h;
    if (y + h > bottom + 0.5f) cut.push_back(c.name);
    counter_names.push_back(c.name);
    // Its name, and under it the maximum when there is room for two lines.
    const bool two_lines = h >= 2 * font;
    dl->AddText(ui_font, name_px, {origin.x + 6, two_lines ? y : y + (std::min(h, std::max(row_h, name_px)) - name_px) / 2},
                IM_COL32(0x33, 0x33, 0x33, 255), elide_to_width(c.name, (kGutter - 10) * font / name_px, measure).c_str());
    if (two_lines)
      dl->AddText({origin.x + 6, y + font}, kGreyText,
                  elide_to_width("max " + format_arg(c.key, c.max), kGutter - 10, measure).c_str());
    dl->PushClipRect({x0, y}, {right, std::min(y + h, bottom)}, true);
    const double lo = std::min(0.0, c.min), span = std::max(c.max - lo, 1e-12);
    auto Y = [&](double v) { return y + h - 1 - static_cast<float>((v - lo) / span) * (h - 3); };
    float px = x0, py = Y(c.points.front().second);
    bool started = false;
    for (const auto& [ts, v] : c.points) {
      const float x = X(ts), vy = Y(v);
      if (started) {
        dl->AddRectFilled({px, py}, {x, y + h - 1}, with_alpha(kCounter, 0.18f));
        dl->AddLine({px, py}, {x, py}, kCounter, 1.5f);
        dl->AddLine({x, py}, {x, vy}, kCounter, 1.5f);
      }
      px = x, py = vy, started = true;
      if (x > right) break;
    }
    if (started && px < right) {
      dl->AddRectFilled({px, py}, {right, y + h - 1}, with_alpha(kCounter, 0.18f));
      dl->AddLine({px, py}, {right, py}, kCounter, 1.5f);
    }
    dl->PopClipRect();
    if (hovered && io.MousePos.y >= y && io.MousePos.y < y + h && io.MousePos.x >= x0) {
      const double at = view_.to_t(io.MousePos.x - x0, width_);
      auto it = std::upper_bound(c.points.begin(), c.points.end(), at,
                                 [](double v, const auto& p) { return v < p.first; });
      if (it != c.points.begin())
        hover_counter = c.name + ": " + format_arg(c.key, std::prev(it)->second) + " from " +
                        format_us(std::prev(it)->first - t.start);
    }
    dl->AddLine({origin.x, y + h + gap / 2}, {right, y + h + gap / 2}, IM_COL32(0, 0, 0, 25));
    y += h + gap;
  }
  facts.set("timeline.tracks_cut_off", cut);
  facts.set("timeline.view_us", nlohmann::json::array({view_.start, view_.end}));
  facts.set("timeline.counters", counter_names);

  // Flow arrows: the selected event's chain (or its node's / region's), or every one in view.
  auto event_mid_y = [&](int idx) {
    const TraceEvent& e = t.events[idx];
    return track_y[e.track] + e.depth * row_h + row_h / 2;
  };
  std::vector<int> flows;
  if (show_all_flows_) {
    for (size_t i = 0; i < t.flows.size() && flows.size() < 500; ++i) {
      const TraceEvent &a = t.events[t.flows[i].from], &b = t.events[t.flows[i].to];
      if (std::max(a.end(), b.end()) >= view_.start && std::min(a.ts, b.ts) <= view_.end)
        flows.push_back(static_cast<int>(i));
    }
  } else if (!t.flows.empty() && !st.selection.empty()) {
    std::set<int> linked;
    if (st.selection.event >= 0) linked.insert(st.selection.event);
    for (int e : selected_events(st, t)) linked.insert(e);
    std::set<int> chosen;
    // Follow the chain both ways (a few links deep: a region's chain has three).
    for (int depth = 0, grew = 1; grew && depth < 8; ++depth) {
      grew = 0;
      for (size_t i = 0; i < t.flows.size(); ++i)
        if (!chosen.count(static_cast<int>(i)) && (linked.count(t.flows[i].from) || linked.count(t.flows[i].to))) {
          chosen.insert(static_cast<int>(i));
          grew |= static_cast<int>(linked.insert(t.flows[i].from).second) |
                  static_cast<int>(linked.insert(t.flows[i].to).second);
        }
    }
    flows.assign(chosen.begin(), chosen.end());
  }
  dl->PushClipRect({x0, top}, {right, bottom}, true);
  for (int fi : flows) {
    const Flow& f = t.flows[fi];
    const TraceEvent &a = t.events[f.from], &b = t.events[f.to];
    const double from_t = b.ts >= a.end() ? a.end() : std::clamp(b.ts, a.ts, a.end());
    arrow(dl, {X(from_t), event_mid_y(f.from)}, {X(b.ts), event_mid_y(f.to)}, kFlow);
  }
  dl->PopClipRect();
  facts.set("timeline.flows_drawn", flows.size());

  // Session markers: phase names, the swap and reverts labelled on the ruler (stacked in two
  // rows, elided when crowded); their lines cross every track; messages as small flags on
  // the iterations track.
  struct RulerLabel {
    std::string text;
    ImU32 fg, bg;
  };
  std::vector<RulerLabel> labels;
  std::vector<LabelWant> wants;
  int hover_marker = -1;
  dl->PushClipRect({x0, origin.y}, {right, bottom}, true);
  for (size_t i = 0; i < st.session.markers.size(); ++i) {
    const SessionMarker& m = st.session.markers[i];
    const float x = X(m.ts_us);
    if (x < x0 - 400 || x > right) continue;
    switch (m.kind) {
      case MarkerKind::Phase:
        dl->AddLine({x, origin.y + tick_h}, {x, bottom}, with_alpha(col(phase_color(m.label)), 0.9f), 1.5f);
        labels.push_back({m.label, col(mix(phase_color(m.label), rgba(0, 0, 0), 0.45f)), 0});
        wants.push_back({x + 3, measure(m.label)});
        break;
      case MarkerKind::Swap:
      case MarkerKind::Revert: {
        const ImU32 c = m.kind == MarkerKind::Swap ? kSwap : kRevert;
        dl->AddLine({x, origin.y + tick_h}, {x, bottom}, c, 3);
        const std::string label = m.label + " @ iteration " + std::to_string(m.iteration);
        labels.push_back({label, IM_COL32_WHITE, c});
        // Before phase names; a moment, so near the right edge it may sit left of its line.
        const float w = measure(label) + 6;
        wants.push_back({std::min(x + 2, right - 2 - w), w, 1});
        break;
      }
      case MarkerKind::Message: {
        const float fy = iterations_row_y >= 0 ? iterations_row_y : top;
        dl->AddTriangleFilled({x, fy + 8}, {x - 5, fy}, {x + 5, fy}, IM_COL32(0x37, 0x47, 0x4f, 230));
        if (hovered && std::fabs(io.MousePos.x - x) < 5 && io.MousePos.y >= fy - 2 && io.MousePos.y <= fy + 10)
          hover_marker = static_cast<int>(i);
        break;
      }
    }
  }
  // Labels left of the view are pinned to its left edge.
  for (LabelWant& w : wants) w.x = std::max(w.x, x0 + 2);
  const std::vector<LabelSlot> slots = place_labels(wants, label_rows, 6, measure("ab..."), right - 2);
  nlohmann::json drawn = nlohmann::json::array();
  for (size_t i = 0; i < labels.size(); ++i) {
    if (slots[i].row < 0) continue;
    const float ly = origin.y + tick_h + slots[i].row * label_row_h;
    const float pad = labels[i].bg ? 3.0f : 0.0f;
    const std::string text = elide_to_width(labels[i].text, slots[i].width - 2 * pad, measure);
    if (text.empty()) continue;
    if (labels[i].bg)
      dl->AddRectFilled({wants[i].x, ly}, {wants[i].x + measure(text) + 2 * pad, ly + label_row_h - 1}, labels[i].bg, 3);
    dl->AddText({wants[i].x + pad, ly}, labels[i].fg, text.c_str());
    drawn.push_back({{"text", text}, {"x", wants[i].x}, {"width", measure(text) + 2 * pad}, {"row", slots[i].row}});
  }
  facts.set("timeline.ruler_labels", drawn);

  // The selected time range.
  if (range_t1_ != range_t0_) {
    const float a = X(std::min(range_t0_, range_t1_)), b = X(std::max(range_t0_, range_t1_));
    dl->AddRectFilled({a, top}, {b, bottom}, kRange);
    dl->AddLine({a, top}, {a, bottom}, with_alpha(kSelect, 0.7f));
    dl->AddLine({b, top}, {b, bottom}, with_alpha(kSelect, 0.7f));
    const std::string w = format_us(std::fabs(range_t1_ - range_t0_));
    dl->AddText({a + 3, bottom - font - 2}, kSelect, w.c_str());
  }
  dl->PopClipRect();

  // The legend: what each colour means, as far as the line goes (else in the toolbar).
  int legend_shown = 0;
  if (legend_h > 0) {
    float lx = origin.x + 6;
    const float ly = bottom + 3;
    dl->AddLine({origin.x, bottom}, {right, bottom}, IM_COL32(0, 0, 0, 40));
    for (const LegendItem& li : kLegend) {
      const float w = font + 4 + measure(li.name) + 12;
      if (lx + w > right) break;
      if (li.line)
        dl->AddRectFilled({lx + font / 2 - 1.5f, ly}, {lx + font / 2 + 1.5f, ly + font}, li.color);
      else
        dl->AddRectFilled({lx, ly + 1}, {lx + font, ly + font - 1}, li.color, 2);
      dl->AddText({lx + font + 4, ly}, kGreyText, li.name);
      lx += w;
      ++legend_shown;
    }
  }
  facts.set("timeline.legend_items", legend_shown);
  facts.set("timeline.legend", legend_h > 0 ? "line" : "toolbar");
  dl->AddLine({x0, origin.y}, {x0, bottom}, IM_COL32(0, 0, 0, 60));
  dl->PopClipRect();

  if (has_range) range_table(t, table_h);

  // Hover and click.
  if (st.headless) return;
  if (hover_marker >= 0) {
    const SessionMarker& m = st.session.markers[hover_marker];
    tooltip_text("iteration " + std::to_string(m.iteration) + ": " + m.label);
  } else if (hover_event >= 0) {
    const TraceEvent& e = t.events[hover_event];
    std::string s = e.name + "\n" + (e.cat.empty() ? "" : e.cat + ", ") + "at " + format_us(e.ts - t.start) +
                    ", lasted " + format_us(e.dur) + args_text(e.args_json());
    const std::vector<int> fl = t.flows_of(hover_event);
    for (int fi : fl)
      s += "\nflow: " + t.flows[fi].name + (t.flows[fi].from == hover_event ? " (from here)" : " (to here)");
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(520);
    ImGui::TextUnformatted(s.c_str());
    // The region's measured speedup, coloured as everywhere (red below 1x).
    const Region* reg = st.report() && e.region >= 0 ? st.report()->region(e.region) : nullptr;
    if (reg && reg->unfused_ms && reg->fused_ms && *reg->fused_ms > 0) {
      const double speedup = *reg->unfused_ms / *reg->fused_ms;
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(col(speedup_color(speedup))), "region %lld: %s%s",
                         static_cast<long long>(e.region), format_speedup(speedup).c_str(),
                         is_slowdown(speedup) ? " (slower than unfused)" : "");
    }
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
    st.set_hover(select_event(t, hover_event));
  } else if (!hover_counter.empty()) {
    tooltip_text(hover_counter);
  }
  if (hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Left) &&
      !ImGui::IsMouseDragPastThreshold(ImGuiMouseButton_Left, 3)) {
    if (hover_event >= 0) {
      st.select(select_event(t, hover_event), Panel::Timeline);
    } else if (io.MousePos.x >= x0) {
      st.select(Selection{}, Panel::Timeline);
      range_t0_ = range_t1_ = 0;
    }
  }
}

}  // namespace hf::viewer::ui
