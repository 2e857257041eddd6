#include "viewer/ui/details_view.h"

#include <imgui.h>

#include "viewer/model/format.h"
#include "viewer/ui/draw_util.h"
#include "viewer/ui/node_info.h"

namespace hf::viewer::ui {

namespace {

const ImVec4 kRed(0.78f, 0.16f, 0.16f, 1);

bool begin_kv(const char* id) {
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_SizingStretchProp)) return false;
  ImGui::TableSetupColumn("k", ImGuiTableColumnFlags_WidthFixed, 96);
  ImGui::TableSetupColumn("v", ImGuiTableColumnFlags_WidthStretch);
  return true;
}

void op_row(const char* id, const OpRow& o) {
  if (!begin_kv(id)) return;
  key_value("time", format_ms(o.time_ms) + " median");
  if (o.bytes > 0) key_value("bytes", format_bytes(o.bytes));
  if (o.gbps > 0)
    key_value("bandwidth", format_gbps(o.gbps) +
                               (o.peak_share ? strf(" (%.0f%% of peak)", *o.peak_share * 100) : ""));
  if (o.flops) key_value("flops", strf("%.3g", *o.flops));
  if (!o.cls.empty()) key_value("class", o.cls);
  ImGui::EndTable();
}

}  // namespace

void DetailsView::draw(SharedState& st) {
  const Selection& s = st.selection;
  if (s.empty()) {
    dump_info(st);
    return;
  }
  if (ImGui::SmallButton("clear selection")) {
    st.select(Selection{}, Panel::Details);
    return;
  }
  if (s.event >= 0 && st.trace()) event_details(st, s.event);
  if (s.node >= 0)
    node_details(st, s.node);
  else if (s.region >= 0)
    region_details(st, s.region);
}

void DetailsView::dump_info(SharedState& st) {
  const Dump& d = st.dump;
  ImGui::TextWrapped("%s", d.path.string().c_str());
  for (const std::string& e : st.errors()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kRed);
    ImGui::TextWrapped("%s", e.c_str());
    ImGui::PopStyleColor();
  }
  if (begin_kv("files")) {
    auto state = [](bool loaded, const std::string& what) { return loaded ? what : std::string("-"); };
    key_value("report.json", state(d.report.has_value(), d.report ? std::to_string(d.report->ops.size()) + " ops, " +
                                                                        std::to_string(d.report->regions.size()) + " regions"
                                                                  : ""));
    key_value("trace.json", state(d.trace.has_value(), d.trace ? std::to_string(d.trace->events.size()) + " events on " +
                                                                     std::to_string(d.trace->tracks.size()) + " tracks"
                                                               : ""));
    auto graph = [&](const GraphSlot& g) {
      if (!g.present()) return std::string("-");
      if (g.layout) return std::to_string(g.layout->nodes.size()) + " nodes, laid out in " +
                           format_ms(g.layout->layout_seconds * 1e3);
      return g.error.empty() ? std::string("laying out...") : std::string("error");
    };
    key_value("before.dot", graph(st.before));
    key_value("after.dot", graph(st.after));
    key_value("kernels/", d.kernels.empty() ? std::string("-")
                          : std::to_string(d.kernels.size()) +
                                (d.kernels.size() == 1 ? " kernel source" : " kernel sources"));
    ImGui::EndTable();
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  for (const std::string& n : d.notes) ImGui::TextWrapped("%s", n.c_str());
  ImGui::PopStyleColor();
  ImGui::Spacing();
  ImGui::TextWrapped(
      "Click a node in the graph, an event in the timeline or a row in the hotspots to see "
      "its details here, and the fused kernel's generated source.");
}

void DetailsView::event_details(SharedState& st, int event) {
  const Trace& t = *st.trace();
  if (event >= static_cast<int>(t.events.size())) return;
  const TraceEvent& e = t.events[event];
  ImGui::TextWrapped("%s", e.name.c_str());
  if (begin_kv("event")) {
    key_value("track", t.tracks[e.track].name + (e.cat.empty() ? "" : ", " + e.cat));
    key_value("start", format_us(e.ts - t.start) + " into the trace");
    if (e.ph == 'X') key_value("duration", format_us(e.dur));
    const nlohmann::json args = e.args_json();
    if (args.is_object())
      for (auto it = args.begin(); it != args.end(); ++it) {
        key_value(it.key().c_str(), format_arg(it.key(), *it));
      }
    ImGui::EndTable();
  }
  ImGui::Separator();
}

void DetailsView::node_details(SharedState& st, int64_t node) {
  const LayoutNode* drawn = nullptr;
  for (GraphSlot* g : {&st.after, &st.before})
    if (g->layout)
      if (int i = g->layout->find_node_id(node); i >= 0) drawn = &g->layout->nodes[i];
  NodeInfo n = node_info(st, node, drawn);
  ImGui::Text("%s", n.name.c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("node %lld", static_cast<long long>(node));
  ImGui::TextWrapped("%s%s%s", n.op.c_str(), n.type.empty() ? "" : " -> ", n.type.c_str());
  if (n.before) {
    ImGui::Spacing();
    ImGui::TextDisabled("unfused profile");
    op_row("before", *n.before);
  }
  if (n.after) {
    ImGui::Spacing();
    ImGui::TextDisabled("fused plan (last re-profile)");
    op_row("after", *n.after);
  }
  if (n.steps.count > 0) {
    ImGui::Spacing();
    ImGui::TextDisabled("trace");
    if (begin_kv("steps")) {
      key_value("steps", std::to_string(n.steps.count) + ", median " + format_us(n.steps.median_us));
      if (n.steps.steady) key_value("steady", std::to_string(n.steps.steady) + ", median " +
                                                  format_us(n.steps.steady_median_us));
      ImGui::EndTable();
    }
  }
  if (drawn && !drawn->tooltip.empty() && ImGui::CollapsingHeader("as the dump's DOT describes it")) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(drawn->tooltip.c_str());
    ImGui::PopTextWrapPos();
  }
  if (n.region) {
    ImGui::Separator();
    region_details(st, n.region->id);
  }
}

void DetailsView::region_details(SharedState& st, int64_t region) {
  const Report* r = st.report();
  const Region* reg = r ? r->region(region) : nullptr;
  if (!reg) {
    ImGui::Text("region %lld", static_cast<long long>(region));
    ImGui::TextDisabled("(not in report.json)");
    return;
  }
  ImGui::Text("region %lld", static_cast<long long>(reg->id));
  ImGui::SameLine();
  badge(reg->state, state_color(reg->state));
  ImGui::SameLine();
  ImGui::TextUnformatted(reg->kernel.c_str());
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(reg->reason.c_str());
  ImGui::PopTextWrapPos();
  if (begin_kv("region")) {
    key_value("unfused", or_dash(reg->unfused_ms, format_ms) + " (its ops, summed)");
    key_value("predicted", or_dash(reg->predicted_ms, format_ms) + ", saving " +
                               or_dash(reg->predicted_saving_ms, format_ms));
    key_value("fused", or_dash(reg->fused_ms, format_ms) + " measured");
    if (reg->unfused_ms && reg->fused_ms && *reg->fused_ms > 0) {
      const double speedup = *reg->unfused_ms / *reg->fused_ms;
      key_value("speedup", format_speedup(speedup) + (is_slowdown(speedup) ? " (slower)" : ""),
                col(speedup_color(speedup)));
    }
    if (reg->share) key_value("share", format_share(*reg->share) + " of the iteration");
    if (reg->io_bytes) key_value("io", format_bytes(*reg->io_bytes));
    key_value("compile", or_dash(reg->compile_ms, format_ms) + (reg->cache_hit ? " (cache hit)" : ""));
    if (!reg->tier_reason.empty()) key_value("kernel", reg->tier_reason);
    if (!reg->validation.empty()) key_value("validation", reg->validation);
    if (reg->swapped_at) key_value("swapped", "at iteration " + std::to_string(*reg->swapped_at));
    if (reg->reverted_at) key_value("reverted", "at iteration " + std::to_string(*reg->reverted_at));
    if (!reg->detection.empty()) key_value("detector", reg->detection);
    ImGui::EndTable();
  }
  if (ImGui::CollapsingHeader(("nodes (" + std::to_string(reg->nodes.size()) + ")").c_str())) {
    for (size_t i = 0; i < reg->nodes.size(); ++i) {
      const int64_t id = i < reg->node_ids.size() ? reg->node_ids[i] : -1;
      ImGui::PushID(static_cast<int>(i));
      if (ImGui::Selectable(reg->nodes[i].c_str(), st.selection.node == id) && id >= 0)
        st.select(select_node(id, r), Panel::Details);
      ImGui::PopID();
    }
  }
  kernel_source(st, reg->kernel);
}

void DetailsView::kernel_source(SharedState& st, const std::string& kernel) {
  if (kernel.empty()) return;
  if (kernel != source_kernel_) {
    source_kernel_ = kernel;
    source_error_.clear();
    auto text = viewer::kernel_source(st.dump, kernel, &source_error_);
    source_text_ = text.value_or("");
  }
  if (!ImGui::CollapsingHeader(("generated source: kernels/" + kernel + ".cpp").c_str(),
                               ImGuiTreeNodeFlags_DefaultOpen))
    return;
  if (!source_error_.empty()) {
    ImGui::TextDisabled("%s", source_error_.c_str());
    return;
  }
  if (ImGui::SmallButton("copy")) ImGui::SetClipboardText(source_text_.c_str());
  ImGui::PushFont(st.fonts.mono);
  const float h = std::max(120.0f, ImGui::GetContentRegionAvail().y);
  ImGui::InputTextMultiline("##source", source_text_.data(), source_text_.size() + 1, {-1, h},
                            ImGuiInputTextFlags_ReadOnly);
  ImGui::PopFont();
}

}  // namespace hf::viewer::ui
