#include "viewer/ui/hotspots_view.h"

#include <imgui.h>

#include <cmath>

#include "viewer/model/format.h"
#include "viewer/ui/draw_util.h"

namespace hf::viewer::ui {

namespace {

struct Col {
  HotspotColumn id;
  const char* name;
  float width;  // 0: stretch
  ImGuiTableColumnFlags flags;
};

std::vector<Col> columns(HotspotTable which) {
  const auto num = ImGuiTableColumnFlags_PreferSortDescending;
  if (which == HotspotTable::Regions)
    return {{HotspotColumn::Region, "region", 48, 0},
            {HotspotColumn::Name, "kernel", 140, 0},
            {HotspotColumn::State, "decision", 70, 0},
            {HotspotColumn::Time, "unfused", 70, num | ImGuiTableColumnFlags_DefaultSort},
            {HotspotColumn::FusedTime, "fused (speedup)", 118, num},
            {HotspotColumn::Saving, "pred. saving", 80, num},
            {HotspotColumn::Share, "share", 56, num},
            {HotspotColumn::Bytes, "io bytes", 70, num},
            {HotspotColumn::Gbps, "GB/s", 66, num},
            {HotspotColumn::PeakShare, "% peak", 56, num},
            {HotspotColumn::Compile, "compile", 66, num},
            {HotspotColumn::Op, "ops", 100, 0},
            {HotspotColumn::Reason, "reason", 0, 0}};
  return {{HotspotColumn::Name, "node", 120, 0},
          {HotspotColumn::Op, "op", 110, 0},
          {HotspotColumn::Output, "output", 90, 0},
          {HotspotColumn::Time, "time", 66, num | ImGuiTableColumnFlags_DefaultSort},
          {HotspotColumn::Share, "share", 90, num},
          {HotspotColumn::Bytes, "bytes", 66, num},
          {HotspotColumn::Gbps, "GB/s", 66, num},
          {HotspotColumn::PeakShare, "% peak", 56, num},
          {HotspotColumn::Class, "class", 96, 0},
          {HotspotColumn::Region, "region", 48, num},
          {HotspotColumn::State, "decision", 70, 0},
          {HotspotColumn::Reason, "reason", 0, 0}};
}

std::string num_or_dash(double v, std::string (*f)(double)) {
  return std::isnan(v) ? std::string("-") : f(v);
}

std::string pct(double v) { return strf("%.0f%%", v * 100); }

void cell_text(const std::string& s) { ImGui::TextUnformatted(s.c_str()); }

void share_cell(double share) {
  if (std::isnan(share)) {
    ImGui::TextDisabled("-");
    return;
  }
  // A bar behind the number.
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x, h = ImGui::GetTextLineHeight();
  ImGui::GetWindowDrawList()->AddRectFilled(
      p, {p.x + w * static_cast<float>(std::min(1.0, share)), p.y + h},
      col(heat_color(heat_step(share))));
  ImGui::TextUnformatted(format_share(share).c_str());
}

}  // namespace

void HotspotsView::draw(SharedState& st) {
  const Report* r = st.report();
  if (!r) {
    ImGui::TextDisabled("No report.json loaded: no per-op numbers.");
    return;
  }
  if (ImGui::BeginTabBar("hotspot tabs")) {
    // Adaptive: ops[] is the unfused profile; other modes: the graph that ran last.
    const std::string before = std::string(r->adaptive() ? "Ops, unfused (" : "Ops (") +
                               std::to_string(r->ops.size()) + ")";
    if (ImGui::BeginTabItem(before.c_str())) {
      table(st, HotspotTable::OpsBefore);
      ImGui::EndTabItem();
    }
    if (!r->ops_after.empty()) {
      const std::string after = "Ops, fused plan (" + std::to_string(r->ops_after.size()) + ")";
      if (ImGui::BeginTabItem(after.c_str())) {
        table(st, HotspotTable::OpsAfter);
        ImGui::EndTabItem();
      }
    }
    if (!r->regions.empty()) {
      const std::string regions = "Regions (" + std::to_string(r->regions.size()) + ")";
      if (ImGui::BeginTabItem(regions.c_str())) {
        table(st, HotspotTable::Regions);
        ImGui::EndTabItem();
      }
    }
    ImGui::EndTabBar();
  }
}

void HotspotsView::table(SharedState& st, HotspotTable which) {
  const int w = static_cast<int>(which);
  Cache& cache = cache_[w];
  if (!cache.built) {
    cache.rows = hotspot_rows(*st.report(), which);
    cache.built = true;
  }
  const std::vector<Col> cols = columns(which);
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_Reorderable | ImGuiTableFlags_Hideable |
                                ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("hotspots", static_cast<int>(cols.size()), flags)) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  for (size_t i = 0; i < cols.size(); ++i)
    ImGui::TableSetupColumn(cols[i].name,
                            cols[i].flags | (cols[i].width == 0 ? ImGuiTableColumnFlags_WidthStretch
                                                                : ImGuiTableColumnFlags_WidthFixed),
                            cols[i].width == 0 ? 300 : cols[i].width, static_cast<ImGuiID>(cols[i].id));
  ImGui::TableHeadersRow();

  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsDirty) {
    if (specs->SpecsCount > 0) {
      const ImGuiTableColumnSortSpecs& s = specs->Specs[0];
      sort_hotspots(cache.rows, static_cast<HotspotColumn>(s.ColumnUserID),
                    s.SortDirection == ImGuiSortDirection_Ascending);
    }
    specs->SpecsDirty = false;
  }

  const Selection& sel = st.selection;
  auto selected = [&](const HotspotRow& row) {
    if (which == HotspotTable::Regions)
      return sel.region >= 0 && row.region == sel.region && sel.node < 0;
    return sel.node >= 0 && row.node_id == sel.node;
  };
  const bool scroll = seen_serial_[w] != st.selection_serial && st.selection_source != Panel::Hotspots;
  seen_serial_[w] = st.selection_serial;
  int scroll_to = -1;
  if (scroll)
    for (size_t i = 0; i < cache.rows.size(); ++i)
      if (selected(cache.rows[i])) scroll_to = static_cast<int>(i);

  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(cache.rows.size()));
  if (scroll_to >= 0) clipper.ForceDisplayRangeByIndices(scroll_to, scroll_to + 1);
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const HotspotRow& row = cache.rows[i];
      ImGui::TableNextRow();
      ImGui::PushID(i);
      for (size_t c = 0; c < cols.size(); ++c) {
        if (!ImGui::TableSetColumnIndex(static_cast<int>(c))) continue;
        if (c == 0) {
          // The first cell spans the row for selection.
          std::string label = which == HotspotTable::Regions ? std::to_string(row.region) : row.name;
          if (ImGui::Selectable(label.c_str(), selected(row),
                                ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap)) {
            if (which == HotspotTable::Regions)
              st.select(select_region(row.region), Panel::Hotspots);
            else if (row.node_id >= 0)
              st.select(select_node(row.node_id, st.report()), Panel::Hotspots);
          }
          if (ImGui::IsItemHovered()) {
            st.set_hover(which == HotspotTable::Regions ? select_region(row.region)
                                                        : select_node(row.node_id, st.report()));
            if (!row.reason.empty()) tooltip_text(row.reason);
          }
          if (i == scroll_to) ImGui::SetScrollHereY(0.5f);
          continue;
        }
        switch (cols[c].id) {
          case HotspotColumn::Name: cell_text(row.name); break;
          case HotspotColumn::Op: cell_text(row.op); break;
          case HotspotColumn::Output: cell_text(row.output); break;
          case HotspotColumn::Time: cell_text(num_or_dash(row.time_ms, format_ms)); break;
          case HotspotColumn::FusedTime:
            // A region's measured fused time with its speedup, red when slower than unfused.
            if (which == HotspotTable::Regions && std::isfinite(row.time_ms) && std::isfinite(row.fused_ms) &&
                row.fused_ms > 0) {
              const double speedup = row.time_ms / row.fused_ms;
              ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(col(speedup_color(speedup))), "%s (%s)",
                                 format_ms(row.fused_ms).c_str(), format_speedup(speedup).c_str());
            } else {
              cell_text(num_or_dash(row.fused_ms, format_ms));
            }
            break;
          case HotspotColumn::Saving: cell_text(num_or_dash(row.saving_ms, format_ms)); break;
          case HotspotColumn::Compile: cell_text(num_or_dash(row.compile_ms, format_ms)); break;
          case HotspotColumn::Share: share_cell(row.share); break;
          case HotspotColumn::Bytes: cell_text(num_or_dash(row.bytes, format_bytes)); break;
          case HotspotColumn::Gbps: cell_text(num_or_dash(row.gbps, format_gbps)); break;
          case HotspotColumn::PeakShare: cell_text(num_or_dash(row.peak_share, pct)); break;
          case HotspotColumn::Class: cell_text(row.cls.empty() ? "-" : row.cls); break;
          case HotspotColumn::Region:
            cell_text(row.region >= 0 ? std::to_string(row.region) : std::string("-"));
            break;
          case HotspotColumn::State:
            if (row.state.empty())
              ImGui::TextDisabled("-");
            else
              ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(state_color(row.state)), "%s",
                                 row.state.c_str());
            break;
          case HotspotColumn::Reason: cell_text(row.reason); break;
        }
      }
      ImGui::PopID();
    }
  }
  ImGui::EndTable();
}

}  // namespace hf::viewer::ui
