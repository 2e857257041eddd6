#include "viewer/ui/timeline_view.h"

#include <imgui_internal.h>

#include <algorithm>
#include <cmath>

#include "viewer/model/format.h"
#include "viewer/ui/draw_util.h"

namespace hf::viewer::ui {

namespace {

constexpr float kGutter = 118;  // track names
constexpr float kRuler = 36;
constexpr ImU32 kSelect = IM_COL32(0x0d, 0x47, 0xa1, 255);
constexpr ImU32 kSwap = IM_COL32(0x00, 0x8a, 0x3e, 255);
constexpr ImU32 kRevert = IM_COL32(0xc6, 0x28, 0x28, 255);

ImU32 event_color(const TraceEvent& e) {
  if (e.cat == "iteration") return col(mix(phase_color(e.phase), rgba(255, 255, 255), 0.35f));
  if (e.cat == "compile")
    return e.name.find("(cached)") != std::string::npos ? IM_COL32(0xb3, 0x9d, 0xdb, 255)
                                                          : IM_COL32(0x95, 0x75, 0xcd, 255);
  if (e.cat == "fused") return IM_COL32(0x66, 0xbb, 0x6a, 255);
  return col(color_for_name(e.name));
}

std::string args_text(const nlohmann::json& args) {
  std::string s;
  if (!args.is_object()) return s;
  for (auto it = args.begin(); it != args.end(); ++it) {
    std::string v;
    if (it->is_string())
      v = it->get<std::string>();
    else if (it->is_number_float())
      v = strf("%.6g", it->get<double>());
    else
      v = it->dump();
    if (v.size() > 300) v = v.substr(0, 300) + "...";
    s += "\n" + it.key() + ": " + v;
  }
  return s;
}

std::string time_label(double us_from_start, double step_us) {
  const double ms = us_from_start * 1e-3, step_ms = step_us * 1e-3;
  const int decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step_ms) + 1e-9)), 0, 6);
  return strf("%.*f ms", decimals, ms);
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
  const std::vector<int>& evs = selected_events(st, t);
  if (!evs.empty()) {
    ImGui::SameLine();
    if (ImGui::ArrowButton("prev", ImGuiDir_Left)) {
      occurrence_ = occurrence_ <= 0 ? static_cast<int>(evs.size()) - 1 : occurrence_ - 1;
      show_event(t, evs[occurrence_]);
    }
    ImGui::SameLine();
    if (ImGui::ArrowButton("next", ImGuiDir_Right)) {
      occurrence_ = (occurrence_ + 1) % static_cast<int>(evs.size());
      show_event(t, evs[occurrence_]);
    }
    ImGui::SameLine();
    const TraceEvent& first = t.events[evs.front()];
    std::string what = st.selection.node >= 0 ? first.name
                                              : "region " + std::to_string(st.selection.region);
    if (occurrence_ >= 0)
      ImGui::Text("%s: %d of %d events", what.c_str(), occurrence_ + 1, static_cast<int>(evs.size()));
    else
      ImGui::Text("%s: %d events", what.c_str(), static_cast<int>(evs.size()));
  }
  ImGui::SameLine();
  ImGui::TextDisabled("showing %s", format_us(view_.span()).c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered())
    tooltip_text(
        "Wheel: zoom around the cursor. Drag: pan. Double-click: fit.\n"
        "Click an event to select it and its node. Bands: phases (grey warmup, blue "
        "profiling, pink validating, yellow re-profiling, green steady); the bold green line "
        "is the swap to the fused kernels.");
}

void TimelineView::draw(SharedState& st) {
  const Trace* tp = st.trace();
  if (!tp) {
    ImGui::TextDisabled("%s", st.dump.report ? "This dump has no trace.json (only --fusion adaptive "
                                               "writes one)."
                                             : "No trace.json loaded.");
    return;
  }
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

  ImVec2 size = ImGui::GetContentRegionAvail();
  size.x = std::max(size.x, 200.0f);
  size.y = std::max(size.y, 60.0f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("timeline", size,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  const bool hovered = ImGui::IsItemHovered();
  const bool active = ImGui::IsItemActive();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float x0 = origin.x + kGutter;
  width_ = std::max(1.0f, size.x - kGutter);
  ImGuiIO& io = ImGui::GetIO();

  // Input.
  if (!st.headless) {
    if (hovered && io.MouseWheel != 0 && io.MousePos.x >= x0) {
      const double at = view_.to_t(io.MousePos.x - x0, width_);
      view_.zoom_at(at, std::pow(0.8, io.MouseWheel), 0.05);
    }
    if (active && (ImGui::IsMouseDragging(ImGuiMouseButton_Left, 3) ||
                   ImGui::IsMouseDragging(ImGuiMouseButton_Right, 3)))
      view_.pan_px(io.MouseDelta.x, width_);
    if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) view_.fit(t.start, t.end);
  }

  // Rows: each track gets depths rows; rows shrink to fit the panel.
  int rows = 0;
  for (const Track& tr : t.tracks) rows += tr.depths;
  const float gap = 6;
  const float avail_h = size.y - kRuler - gap * t.tracks.size();
  const float row_h = std::clamp(avail_h / std::max(1, rows), 10.0f, 22.0f);

  dl->PushClipRect(origin, origin + size, true);
  dl->AddRectFilled(origin, origin + size, IM_COL32(255, 255, 255, 255));
  dl->AddRectFilled(origin, {x0, origin.y + size.y}, IM_COL32(0xf2, 0xf3, 0xf5, 255));
  const float top = origin.y + kRuler;
  auto X = [&](double ts) { return x0 + static_cast<float>(view_.to_x(ts, width_)); };

  // Phase bands.
  dl->PushClipRect({x0, origin.y}, origin + size, true);
  for (const PhaseSpan& p : st.session.phases) {
    const float a = X(p.start_us), b = X(p.end_us);
    if (b < x0 || a > origin.x + size.x) continue;
    dl->AddRectFilled({a, top}, {b, origin.y + size.y}, with_alpha(col(phase_color(p.phase)), 0.13f));
  }

  // Ruler.
  const double step = nice_step(view_.span(), std::max(2, static_cast<int>(width_ / 110)));
  const double first = std::ceil((view_.start - t.start) / step) * step + t.start;
  for (double tick = first; tick <= view_.end; tick += step) {
    const float x = X(tick);
    dl->AddLine({x, origin.y + kRuler - 6}, {x, origin.y + size.y}, IM_COL32(0, 0, 0, 22));
    dl->AddText({x + 3, origin.y + 3}, IM_COL32(0x61, 0x61, 0x61, 255),
                time_label(tick - t.start, step).c_str());
  }
  dl->AddLine({x0, top}, {origin.x + size.x, top}, IM_COL32(0, 0, 0, 60));
  dl->PopClipRect();

  // Tracks.
  int hover_event = -1;
  float y = top + 3;
  const std::vector<int>* instant_tracks = nullptr;
  (void)instant_tracks;
  float iterations_row_y = -1;
  for (size_t ti = 0; ti < t.tracks.size(); ++ti) {
    const Track& tr = t.tracks[ti];
    const float h = tr.depths * row_h;
    dl->AddText({origin.x + 6, y + (std::min(h, row_h) - ImGui::GetFontSize()) / 2},
                IM_COL32(0x33, 0x33, 0x33, 255), tr.name.c_str());
    dl->AddLine({origin.x, y + h + gap / 2}, {origin.x + size.x, y + h + gap / 2},
                IM_COL32(0, 0, 0, 25));
    if (tr.name == "iterations" && iterations_row_y < 0) iterations_row_y = y;
    dl->PushClipRect({x0, y}, {origin.x + size.x, y + h}, true);
    auto [lo, hi] = t.visible(tr, view_.start, view_.end);
    std::vector<float> last_x(tr.depths, -1e9f);
    for (size_t k = lo; k < hi; ++k) {
      const int idx = tr.events[k];
      const TraceEvent& e = t.events[idx];
      float a = X(e.ts), b = X(e.end());
      if (b < x0 || a > origin.x + size.x) continue;
      float& last = last_x[e.depth];
      const EventMatch match = event_match(e, idx, st.selection);
      if (b - a < 1) {
        // Sub-pixel events: one pixel, at most one per pixel column (selected ones always).
        if (a < last + 1 && match == EventMatch::None) continue;
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
      if (!st.hover.empty() && event_match(e, idx, st.hover) == EventMatch::Exact &&
          match != EventMatch::Exact)
        dl->AddRect(p0, p1, with_alpha(kSelect, 0.5f), 0, 0, 1.5f);
      if (b - a > 24)
        text_clipped(dl, {std::max(a, x0) + 3, ey}, {b - 2, ey + row_h}, IM_COL32(0x21, 0x21, 0x21, 255),
                     e.name);
      if (hovered && io.MousePos.y >= ey && io.MousePos.y < ey + row_h && io.MousePos.x >= a - 2 &&
          io.MousePos.x <= b + 2)
        hover_event = idx;
    }
    // Instants on this track only.
    for (int idx : tr.instants) {
      const float x = X(t.events[idx].ts);
      if (x < x0 || x > origin.x + size.x) continue;
      dl->AddTriangleFilled({x, y + h - 7}, {x - 4, y + h}, {x + 4, y + h}, IM_COL32(0x42, 0x42, 0x42, 255));
    }
    dl->PopClipRect();
    y += h + gap;
  }

  // Session markers: phase changes on the ruler, swaps and reverts across every track,
  // messages as small flags on the iterations track.
  dl->PushClipRect({x0, origin.y}, origin + size, true);
  int hover_marker = -1;
  for (size_t i = 0; i < st.session.markers.size(); ++i) {
    const SessionMarker& m = st.session.markers[i];
    const float x = X(m.ts_us);
    if (x < x0 - 50 || x > origin.x + size.x + 50) continue;
    switch (m.kind) {
      case MarkerKind::Phase:
        dl->AddLine({x, origin.y + kRuler - 18}, {x, origin.y + size.y}, with_alpha(col(phase_color(m.label)), 0.9f), 1.5f);
        dl->AddText({x + 3, origin.y + kRuler - 17}, col(mix(phase_color(m.label), rgba(0, 0, 0), 0.45f)),
                    m.label.c_str());
        break;
      case MarkerKind::Swap:
      case MarkerKind::Revert: {
        const ImU32 c = m.kind == MarkerKind::Swap ? kSwap : kRevert;
        dl->AddLine({x, origin.y}, {x, origin.y + size.y}, c, 3);
        const std::string label = m.label + " @ iteration " + std::to_string(m.iteration);
        const ImVec2 sz = ImGui::CalcTextSize(label.c_str());
        dl->AddRectFilled({x + 2, top + 2}, {x + 8 + sz.x, top + 4 + sz.y}, c, 3);
        dl->AddText({x + 5, top + 3}, IM_COL32_WHITE, label.c_str());
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
  dl->PopClipRect();
  dl->AddLine({x0, origin.y}, {x0, origin.y + size.y}, IM_COL32(0, 0, 0, 60));
  dl->PopClipRect();

  // Hover and click.
  if (st.headless) return;
  if (hover_marker >= 0) {
    const SessionMarker& m = st.session.markers[hover_marker];
    tooltip_text("iteration " + std::to_string(m.iteration) + ": " + m.label);
  } else if (hover_event >= 0) {
    const TraceEvent& e = t.events[hover_event];
    std::string s = e.name + "\n" + (e.cat.empty() ? "" : e.cat + ", ") + "at " +
                    format_us(e.ts - t.start) + ", lasted " + format_us(e.dur) +
                    args_text(e.args_json());
    tooltip_text(s);
    st.set_hover(select_event(t, hover_event));
  }
  if (hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Left) &&
      !ImGui::IsMouseDragPastThreshold(ImGuiMouseButton_Left, 3)) {
    if (hover_event >= 0)
      st.select(select_event(t, hover_event), Panel::Timeline);
    else if (io.MousePos.x >= x0)
      st.select(Selection{}, Panel::Timeline);
  }
}

}  // namespace hf::viewer::ui
