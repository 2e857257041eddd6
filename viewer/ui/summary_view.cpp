#include "viewer/ui/summary_view.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "viewer/model/format.h"
#include "viewer/model/marker_labels.h"
#include "viewer/model/view_transform.h"
#include "viewer/ui/draw_util.h"
#include "viewer/ui/frame_facts.h"

namespace hf::viewer::ui {

namespace {

std::string opt_ms(const std::optional<double>& v) { return v ? format_ms(*v) : "-"; }

}  // namespace

void SummaryView::draw(SharedState& st) {
  if (!st.report() && st.session.iterations.empty()) {
    ImGui::TextDisabled("No report.json loaded.");
    return;
  }
  headline(st);
  // The plot first (the drop at the swap is the point), then the numbers; the panel scrolls
  // when they do not fit.
  if (!st.session.iterations.empty()) {
    const float avail = ImGui::GetContentRegionAvail().y;
    plot(st, std::clamp(avail * 0.5f, 110.0f, 280.0f));
  }
  numbers(st);
}

void SummaryView::headline(SharedState& st) {
  const Report* r = st.report();
  if (!r) return;
  const Summary& s = r->summary;
  std::string head = s.graph.empty() ? "graph" : s.graph;
  if (s.unfused_ms) {
    head += ": " + format_ms(*s.unfused_ms);
    if (s.fused_ms) head += " -> " + format_ms(*s.fused_ms);
    head += " per iteration";
  }
  ImGui::TextUnformatted(head.c_str());
  if (s.speedup) {
    ImGui::SameLine();
    const Rgba c = speedup_color(*s.speedup);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(col(c)), "%s%s",
                       format_speedup(*s.speedup).c_str(),
                       is_slowdown(*s.speedup) ? " (slower than unfused)" : "");
    frame_facts().set("summary.speedup", format_speedup(*s.speedup));
    frame_facts().set("summary.speedup_color", strf("#%02x%02x%02x", red(c), green(c), blue(c)));
  } else if (s.unfused_ms) {
    ImGui::SameLine();
    ImGui::TextDisabled("(nothing fused)");
  }
}

void SummaryView::numbers(SharedState& st) {
  const Report* r = st.report();
  if (!r) return;
  const Summary& s = r->summary;
  // Two key / value pairs per row when there is room, else one.
  const int pairs = ImGui::GetContentRegionAvail().x > 560 ? 2 : 1;
  if (!ImGui::BeginTable("summary", 2 * pairs, ImGuiTableFlags_SizingStretchProp)) return;
  const float key_w = ImGui::CalcTextSize("peak memory").x + 4;
  for (int i = 0; i < pairs; ++i) {
    ImGui::TableSetupColumn(nullptr, ImGuiTableColumnFlags_WidthFixed, key_w);
    ImGui::TableSetupColumn(nullptr, ImGuiTableColumnFlags_WidthStretch, 1);
  }
  auto kv = [](const char* k, const std::string& v) {
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", k);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(v.c_str());
  };
  auto count = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("-"); };
  kv("kernels", count(s.kernels_before) + " -> " + count(s.kernels_after));
  kv("mode", s.fusion.empty() ? "-" : s.fusion + (s.phase.empty() ? "" : ", " + s.phase));
  kv("compile", opt_ms(s.compile_ms_total) + (s.cache_hits ? ", " + std::to_string(*s.cache_hits) +
                                                                 " cache hit" + (*s.cache_hits == 1 ? "" : "s")
                                                           : ""));
  kv("peak memory", s.peak_bytes_before ? format_mib(*s.peak_bytes_before) + " -> " +
                                              (s.peak_bytes_after ? format_mib(*s.peak_bytes_after) : "-")
                                        : "-");
  if (s.regions_detected) {
    std::string regions = count(s.regions_detected) + " found, " + count(s.regions_selected) +
                          " selected, " + count(s.regions_kept) + " kept";
    if (s.regions_reverted && *s.regions_reverted) regions += ", " + count(s.regions_reverted) + " reverted";
    if (s.regions_failed && *s.regions_failed) regions += ", " + count(s.regions_failed) + " failed";
    kv("regions", regions);
  }
  if (!st.session.iterations.empty())
    kv("iterations", std::to_string(st.session.iterations.size()) +
                         (st.session.first_swap >= 0 ? ", swap at " + std::to_string(st.session.first_swap) : ""));
  if (r->machine.present) {
    const Machine& m = r->machine;
    kv("machine", m.cpu + ", " + std::to_string(m.threads) + " threads");
    kv("peaks", format_gbps(m.bandwidth_gbps) + ", " + strf("%.0f GFLOP/s", m.gflops));
  }
  ImGui::EndTable();
  if (!r->failures.empty())
    for (const std::string& f : r->failures)
      ImGui::TextColored(ImVec4(0.78f, 0.16f, 0.16f, 1), "%s", f.c_str());
}

void SummaryView::plot(SharedState& st, float height) {
  const auto& its = st.session.iterations;
  ImGui::Checkbox("clip outliers", &clip_warmup_);
  if (ImGui::IsItemHovered())
    tooltip_text("Scale the plot without the warm-up and validating iterations (the validating "
                 "one runs the graph twice); bars beyond the top are marked with a triangle.");
  ImGui::SameLine();
  ImGui::TextDisabled("iteration time; bars coloured by phase");
  ImVec2 size = ImGui::GetContentRegionAvail();
  size.y = std::max(height - ImGui::GetFrameHeightWithSpacing(), 60.0f);
  if (size.x < 80) return;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("plot", size);
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float left = 56, bottom = 18;
  const ImVec2 a = origin + ImVec2{left, 4}, b = origin + size - ImVec2{6, bottom};
  dl->AddRectFilled(origin, origin + size, IM_COL32(255, 255, 255, 255));

  // The y range: everything, or everything but the warm-up (its first iterations can be
  // 10x slower and flatten the rest).
  double ymax = 0;
  for (const IterationPoint& p : its)
    if (!(clip_warmup_ && (p.phase == "warmup" || p.phase == "validating"))) ymax = std::max(ymax, p.ms);
  if (ymax <= 0)
    for (const IterationPoint& p : its) ymax = std::max(ymax, p.ms);
  ymax = ymax <= 0 ? 1 : ymax * 1.08;
  const double step = nice_step(ymax, std::max(2, static_cast<int>((b.y - a.y) / 28)));
  for (double v = 0; v <= ymax + 1e-12; v += step) {
    const float y = b.y - static_cast<float>(v / ymax) * (b.y - a.y);
    dl->AddLine({a.x, y}, {b.x, y}, IM_COL32(0, 0, 0, 25));
    const std::string label = format_ms(v);
    dl->AddText({origin.x + 4, y - ImGui::GetFontSize() / 2}, IM_COL32(0x61, 0x61, 0x61, 255), label.c_str());
  }

  // Phase bands, bars.
  const size_t n = its.size();
  const float w = (b.x - a.x) / static_cast<float>(n);
  for (const PhaseSpan& p : st.session.phases) {
    size_t i0 = 0, i1 = 0;
    for (size_t i = 0; i < n; ++i) {
      if (its[i].index == p.first) i0 = i;
      if (its[i].index == p.last) i1 = i;
    }
    dl->AddRectFilled({a.x + w * i0, a.y}, {a.x + w * (i1 + 1), b.y}, with_alpha(col(phase_color(p.phase)), 0.12f));
  }
  // When there are more iterations than pixels, one bar per pixel column (the column's max).
  const int columns = static_cast<int>(std::max(1.0f, b.x - a.x));
  const bool aggregate = static_cast<int>(n) > columns;
  auto bar = [&](float x0, float x1, double ms, const std::string& phase) {
    const bool clipped = ms > ymax;
    const float y = b.y - static_cast<float>(std::min(ms, ymax) / ymax) * (b.y - a.y);
    dl->AddRectFilled({x0, y}, {std::max(x0 + 1, x1), b.y}, col(phase_color(phase)));
    if (clipped) dl->AddTriangleFilled({(x0 + x1) / 2, a.y - 3}, {x0, a.y + 4}, {x1, a.y + 4}, IM_COL32(0x61, 0x61, 0x61, 255));
  };
  if (!aggregate) {
    const float gap = w > 4 ? 1 : 0;
    for (size_t i = 0; i < n; ++i) bar(a.x + w * i, a.x + w * (i + 1) - gap, its[i].ms, its[i].phase);
  } else {
    for (int c = 0; c < columns; ++c) {
      const size_t i0 = static_cast<size_t>(static_cast<double>(c) / columns * n);
      const size_t i1 = std::max(i0 + 1, static_cast<size_t>(static_cast<double>(c + 1) / columns * n));
      size_t best = i0;
      for (size_t i = i0; i < i1 && i < n; ++i)
        if (its[i].ms > its[best].ms) best = i;
      bar(a.x + c, a.x + c + 1, its[best].ms, its[best].phase);
    }
  }
  // Medians before and after, and the swap.
  // The medians: unfused (profiling) labelled on the left, steady on the right.
  for (const char* phase : {"profiling", "steady"}) {
    const double m = st.session.median_ms(phase);
    if (std::isnan(m) || m > ymax) continue;
    const float y = b.y - static_cast<float>(m / ymax) * (b.y - a.y);
    const bool steady = phase == std::string("steady");
    dashed_line(dl, {a.x, y}, {b.x, y}, col(mix(phase_color(phase), rgba(0, 0, 0), 0.35f)), 1.5f, 5, 3);
    const std::string label = std::string(steady ? "steady " : "unfused ") + format_ms(m);
    const ImVec2 sz = ImGui::CalcTextSize(label.c_str());
    const float x = steady ? b.x - sz.x - 3 : a.x + 3;
    dl->AddRectFilled({x - 3, y - sz.y - 2}, {x + sz.x + 3, y - 1}, IM_COL32(255, 255, 255, 210));
    dl->AddText({x, y - sz.y - 2}, IM_COL32(0x33, 0x33, 0x33, 255), label.c_str());
  }
  // The swap and reverts: lines, then their labels stacked in rows at the top, elided or
  // dropped when crowded (marker_labels.h), each on a light backing so bars stay readable.
  std::vector<MarkerLabelWant> label_wants;
  std::vector<ImU32> label_colors;
  for (const SessionMarker& m : st.session.markers) {
    if (m.kind != MarkerKind::Swap && m.kind != MarkerKind::Revert) continue;
    for (size_t i = 0; i < n; ++i)
      if (its[i].index == m.iteration) {
        const float x = a.x + w * i;
        const ImU32 c = m.kind == MarkerKind::Swap ? IM_COL32(0x00, 0x8a, 0x3e, 255) : IM_COL32(0xc6, 0x28, 0x28, 255);
        dl->AddLine({x, a.y}, {x, b.y}, c, 2.5f);
        // The first swap (the drop) first, then reverts, then later swaps.
        const int priority = m.kind == MarkerKind::Revert          ? 1
                             : m.iteration == st.session.first_swap ? 2
                                                                    : 0;
        label_wants.push_back({x, m.label, priority});
        label_colors.push_back(c);
        break;
      }
  }
  const MeasureText measure = [](std::string_view t) {
    return ImGui::CalcTextSize(t.data(), t.data() + t.size()).x;
  };
  const float row_h = ImGui::GetTextLineHeight() + 1;
  // Up to three rows, and no more than 40% of the plot's height.
  const int label_rows = std::clamp(static_cast<int>((b.y - a.y) * 0.4f / row_h), 1, 3);
  const std::vector<MarkerLabelPlace> placed = place_marker_labels(label_wants, a.x + 1, b.x - 1, label_rows, measure);
  nlohmann::json drawn = nlohmann::json::array();
  for (size_t i = 0; i < placed.size(); ++i) {
    const MarkerLabelPlace& p = placed[i];
    if (p.row < 0) continue;
    const float y = a.y + 2 + p.row * row_h;
    dl->AddRectFilled({p.x - 2, y}, {p.x + p.width + 2, y + row_h - 1}, IM_COL32(255, 255, 255, 220), 2);
    dl->AddText({p.x, y}, label_colors[i], p.text.c_str());
    drawn.push_back({{"text", p.text}, {"x", p.x}, {"width", p.width}, {"row", p.row}});
  }
  frame_facts().set("summary.marker_labels", drawn);
  frame_facts().set("summary.markers", label_wants.size());
  dl->AddLine({a.x, b.y}, {b.x, b.y}, IM_COL32(0, 0, 0, 90));
  // x labels: first and last index.
  dl->AddText({a.x, b.y + 2}, IM_COL32(0x61, 0x61, 0x61, 255), std::to_string(its.front().index).c_str());
  const std::string last = std::to_string(its.back().index);
  dl->AddText({b.x - ImGui::CalcTextSize(last.c_str()).x, b.y + 2}, IM_COL32(0x61, 0x61, 0x61, 255), last.c_str());
  const char* xl = "iteration";
  dl->AddText({(a.x + b.x - ImGui::CalcTextSize(xl).x) / 2, b.y + 2}, IM_COL32(0x61, 0x61, 0x61, 255), xl);

  if (st.headless || !hovered) return;
  const float mx = ImGui::GetIO().MousePos.x;
  if (mx < a.x || mx > b.x) return;
  const size_t i = std::min(n - 1, static_cast<size_t>((mx - a.x) / (b.x - a.x) * n));
  const IterationPoint& p = its[i];
  dl->AddLine({a.x + w * i + w / 2, a.y}, {a.x + w * i + w / 2, b.y}, IM_COL32(0, 0, 0, 80));
  tooltip_text("iteration " + std::to_string(p.index) + " (" + p.phase + ")\n" + format_ms(p.ms) +
               ", " + std::to_string(p.kernels) + " kernels\n(click: show it in the timeline)");
  if (ImGui::IsMouseReleased(ImGuiMouseButton_Left)) st.focus_time(p.start_us, p.start_us + p.ms * 1e3);
}

}  // namespace hf::viewer::ui
