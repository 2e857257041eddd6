#include "viewer/ui/graph_view.h"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>
#include <set>
#include <nlohmann/json.hpp>

#include "viewer/model/format.h"
#include "viewer/model/graph_title.h"
#include "viewer/model/scope_graph.h"
#include "viewer/ui/draw_util.h"
#include "viewer/ui/frame_facts.h"
#include "viewer/ui/node_info.h"

namespace hf::viewer::ui {

namespace {

constexpr ImU32 kSelect = IM_COL32(0x19, 0x76, 0xd2, 255);
constexpr ImU32 kHover = IM_COL32(0x19, 0x76, 0xd2, 130);
constexpr ImU32 kCanvasBg = IM_COL32(255, 255, 255, 255);


std::string cluster_tooltip(const LayoutCluster& c) {
  std::string s;
  for (const TextLine& l : c.label) s += (s.empty() ? "" : "\n") + l.text;
  if (!c.tooltip.empty()) s += (s.empty() ? "" : "\n\n") + c.tooltip;
  return s + "\n(click to select the region)";
}

void arrowhead(ImDrawList* dl, ImVec2 from, ImVec2 tip, ImU32 color) {
  const ImVec2 d = tip - from;
  const float len = std::sqrt(d.x * d.x + d.y * d.y);
  if (len < 0.5f) return;
  const ImVec2 n{-d.y / len, d.x / len};
  const float w = len * 0.35f;
  dl->AddTriangleFilled(tip, from + n * w, from - n * w, color);
}

}  // namespace

const char* graph_mode_name(GraphView::Mode m) {
  switch (m) {
    case GraphView::Mode::Before: return "before";
    case GraphView::Mode::After: return "after";
    default: return "side by side";
  }
}

// ---- GraphView -----------------------------------------------------------------------------

void GraphView::draw(SharedState& st) {
  // Toolbar.
  int m = static_cast<int>(mode);
  ImGui::RadioButton("before", &m, 0);
  ImGui::SameLine();
  ImGui::RadioButton("after", &m, 1);
  ImGui::SameLine();
  ImGui::RadioButton("side by side", &m, 2);
  mode = static_cast<Mode>(m);
  ImGui::SameLine();
  // Keys act on the panel that has the focus or the mouse (as the Timeline's do).
  const bool keys = (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) ||
                     ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows)) &&
                    !ImGui::GetIO().WantTextInput;
  if (ImGui::Button("Fit") || (keys && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home)))) {
    before_.request_fit();
    after_.request_fit();
  }
  ImGui::SameLine();
  if (ImGui::Button("Zoom to selection") || (keys && ImGui::IsKeyPressed('F'))) zoom_to_selection();
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  int d = static_cast<int>(direction);
  ImGui::Combo("##direction", &d, "auto layout\0top-down\0left-right\0");
  direction = static_cast<DirectionChoice>(d);
  if (ImGui::IsItemHovered())
    tooltip_text("Layout direction. Auto: top-down, or left-to-right when that fits the panel "
                 "clearly better (long chains in a wide panel).");
  ImGui::SameLine();
  if (ImGui::Button("Group")) {
    before_.regroup();
    after_.regroup();
  }
  if (ImGui::IsItemHovered())
    tooltip_text("Collapse the name scopes again as far as the graph stays readable when fitted.");
  ImGui::SameLine();
  if (ImGui::Button("Expand all")) {
    before_.expand_all();
    after_.expand_all();
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(160);
  const bool enter = ImGui::InputTextWithHint("##find", "find node...", search_, sizeof search_,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  // Searching: the graph shown (after in side-by-side mode when it has the node).
  GraphSlot& target = mode == Mode::Before || !st.after.layout ? st.before : st.after;
  if (enter && target.layout) {
    matches_ = target.layout->search(search_);
    if (!matches_.empty()) {
      match_ = (match_ + 1) % static_cast<int>(matches_.size());
      const LayoutNode& n = target.layout->nodes[matches_[match_]];
      if (n.node_id >= 0)
        st.select(select_node(n.node_id, st.report(), &*target.layout), Panel::Count);
    }
    ImGui::SetKeyboardFocusHere(-1);
  }
  if (search_[0] && target.layout) {
    ImGui::SameLine();
    if (matches_.empty() && enter)
      ImGui::TextDisabled("no match");
    else if (!matches_.empty())
      ImGui::TextDisabled("%d/%d", match_ + 1, static_cast<int>(matches_.size()));
  }
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered())
    tooltip_text(
        "Wheel: zoom around the cursor. Drag: pan. Double-click the background, Home or Fit: "
        "fit. F: zoom both graphs to the selection.\n"
        "Grey-bordered boxes are name scopes (\"/layer4/layer4.1\") collapsed into one: a "
        "click expands one, a double-click on a node collapses its scope. The minimap (bottom "
        "right, when zoomed in) jumps where you click.\n"
        "Click a node to select it (the timeline and the tables follow); click a region's "
        "box to select the region. Colours: the node's share of the iteration "
        "(yellow < 1% ... dark red >= 75%); green boxes: fused kernels kept; dashed red: "
        "reverted; dotted grey: not worth fusing.");

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (mode == Mode::SideBySide && st.before.present() && st.after.present()) {
    // Side by side, the after graph groups as the before graph does, so that they compare.
    if (before_.layout_serial() != synced_serial_ && !before_.busy() &&
        after_.adopt_expansion(before_.expanded_paths(), st.headless || sync_layouts))
      synced_serial_ = before_.layout_serial();
    const float w = (avail.x - ImGui::GetStyle().ItemSpacing.x) / 2;
    ImGui::PushID("before");
    before_.draw(st, st.before, false, {w, avail.y}, direction, sync_layouts);
    ImGui::PopID();
    ImGui::SameLine();
    ImGui::PushID("after");
    after_.draw(st, st.after, true, {avail.x - w - ImGui::GetStyle().ItemSpacing.x, avail.y},
                direction, sync_layouts);
    ImGui::PopID();
  } else if (mode == Mode::Before || !st.after.present()) {
    ImGui::PushID("before");
    before_.draw(st, st.before, false, avail, direction, sync_layouts);
    ImGui::PopID();
  } else {
    ImGui::PushID("after");
    after_.draw(st, st.after, true, avail, direction, sync_layouts);
    ImGui::PopID();
  }
}

std::vector<std::string> GraphCanvas::expanded_paths() const {
  std::vector<std::string> out;
  if (!shown_) return out;
  for (const Scope& s : shown_->graph.tree.scopes())
    if (s.parent >= 0 && s.expanded && s.item_count > 1) out.push_back(s.path);
  return out;
}

bool GraphCanvas::adopt_expansion(const std::vector<std::string>& paths, bool wait) {
  if (!shown_ || pending_.valid() || !full_for_) return false;
  ScopeGraph graph = shown_->graph;
  graph.tree.collapse_all();
  const std::set<std::string> want(paths.begin(), paths.end());
  for (size_t i = 1; i < graph.tree.scopes().size(); ++i)
    if (want.count(graph.tree.scopes()[i].path)) graph.tree.set_expanded(static_cast<int>(i), true);
  if (graph.tree.expansion() == shown_->graph.tree.expansion()) return true;
  const bool was_auto = auto_grouped_;
  start_layout(*full_for_, std::move(graph), false, wait);
  auto_grouped_ = was_auto;  // still the automatic grouping, only the other graph's
  return true;
}

nlohmann::json GraphView::facts() const {
  nlohmann::json j;
  auto one = [](const CanvasFacts& f) {
    nlohmann::json c;
    c["drawn"] = f.drawn;
    c["zoom"] = f.zoom;
    c["rankdir"] = f.rankdir;
    c["graph_nodes"] = f.graph_nodes;
    c["shown_nodes"] = f.shown_nodes;
    c["boxes"] = f.boxes;
    c["boxes_drawn"] = f.boxes_drawn;
    c["nodes_drawn"] = f.nodes_drawn;
    c["edge_labels"] = f.edge_labels;
    c["labels"] = f.labels.labels;
    c["min_label_px"] = f.labels.labels ? f.labels.min_px : 0.0f;
    c["clip_top"] = f.clip_top;
    c["title_bottom"] = f.title_bottom;
    c["zooms_to_selection"] = f.zooms_to_selection;
    c["selection_drawn"] = f.selection_rects.size();
    c["max_label_lines"] = f.labels.max_lines;
    c["minimap"] = f.minimap;
    c["outlines_drawn"] = f.outline_rects.size();
    c["selection_rects"] = nlohmann::json::array();
    for (const CanvasFacts::BoxOnScreen& b : f.selection_rects)
      c["selection_rects"].push_back({{"path", b.path}, {"rect", {b.x0, b.y0, b.x1, b.y1}}});
    c["box_rects"] = nlohmann::json::array();
    for (const CanvasFacts::BoxOnScreen& b : f.box_rects)
      c["box_rects"].push_back({{"path", b.path}, {"rect", {b.x0, b.y0, b.x1, b.y1}}});
    c["outline_rects"] = nlohmann::json::array();
    for (const CanvasFacts::BoxOnScreen& b : f.outline_rects)
      c["outline_rects"].push_back({{"path", b.path}, {"rect", {b.x0, b.y0, b.x1, b.y1}}});
    return c;
  };
  j["mode"] = graph_mode_name(mode);
  j["before"] = one(before_.facts());
  j["after"] = one(after_.facts());
  return j;
}

// ---- GraphCanvas ---------------------------------------------------------------------------

void GraphCanvas::start_layout(const GraphLayout& full, ScopeGraph graph, bool auto_expand,
                               bool wait) {
  ScopeLayoutRequest req;
  req.graph = std::move(graph);
  req.panel = from_im(free_area(last_size_));
  req.direction = direction_;
  req.auto_expand = auto_expand;
  if (auto_expand) grouped_for_ = last_size_;
  auto_grouped_ = auto_expand;
  // A copy: a reload may replace the dump's layout while this runs.
  pending_ = std::async(std::launch::async, [full, req = std::move(req)]() mutable {
    return layout_scopes(full, std::move(req));
  });
  if (wait) poll_layout();
}

void GraphCanvas::poll_layout() {
  if (!pending_.valid()) return;
  pending_.wait();
  shown_ = pending_.get();
  ++layout_serial_;
  initial_.reset();
  prepared_for_ = nullptr;  // prepare the new layout, and fit it
  fit_requested_ = true;
}

ImVec2 GraphCanvas::free_area(ImVec2 size) const {
  const float bottom = legend_shown(size) ? 64 : 0;
  return {std::max(20.0f, size.x - 24), std::max(20.0f, size.y - title_band() - bottom - 12)};
}

void GraphCanvas::prepare(SharedState& st, const GraphLayout& g, bool is_after) {
  prepared_for_ = &g;
  user_moved_ = false;
  fills_.assign(g.nodes.size(), IM_COL32_WHITE);
  texts_.assign(g.nodes.size(), IM_COL32(0x21, 0x21, 0x21, 255));
  // Shares from the report, for nodes the DOT left white.
  const std::unordered_map<int64_t, double> share = node_shares(st.report(), is_after);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const LayoutNode& n = g.nodes[i];
    Rgba fill = n.fill;
    if (!n.explicit_fill && n.kind == NodeKind::Op) {
      auto it = share.find(n.node_id);
      if (it != share.end()) fill = heat_color(heat_step(it->second));
    }
    fills_[i] = col(fill);
    texts_[i] = n.explicit_fill || n.text != rgba(0, 0, 0) ? col(n.text) : col(text_on(fill));
  }
  // What is drawn in the graph's space: nodes (not the HTML legend), clusters, edges. The
  // title and the legend are overlays.
  Vec2 mn{1e30f, 1e30f}, mx{-1e30f, -1e30f};
  auto grow = [&](Vec2 a, Vec2 b) {
    mn = {std::min(mn.x, a.x), std::min(mn.y, a.y)};
    mx = {std::max(mx.x, b.x), std::max(mx.y, b.y)};
  };
  for (const LayoutNode& n : g.nodes)
    if (!n.html)
      grow({n.center.x - n.size.x / 2, n.center.y - n.size.y / 2},
           {n.center.x + n.size.x / 2, n.center.y + n.size.y / 2});
  for (const LayoutCluster& c : g.clusters) grow(c.min, c.max);
  for (const LayoutEdge& e : g.edges)
    if (!e.points.empty()) grow(e.min, e.max);
  if (mn.x > mx.x) mn = {0, 0}, mx = g.size;
  content_min_ = mn;
  content_max_ = mx;
  fit_requested_ = true;
  seen_serial_ = -1;
  hover_for_ = Selection{};
  hover_highlight_.clear();
}

bool GraphCanvas::legend_shown(ImVec2 size) { return size.y >= 360 && size.x >= 360; }

void GraphCanvas::fit(ImVec2 size, const Vec2* sel_min, const Vec2* sel_max) {
  // The free area: below the caption and title lines, above the legend.
  const float top = title_band();
  const float margin = 12;
  const ImVec2 avail = free_area(size);
  const Vec2 mn = sel_min ? *sel_min : content_min_, mx = sel_max ? *sel_max : content_max_;
  const Vec2 content{std::max(1.0f, mx.x - mn.x), std::max(1.0f, mx.y - mn.y)};
  const float zx = avail.x / content.x, zy = avail.y / content.y;
  float zoom = box_zoom(mn, mx, from_im(avail));
  // A whole graph too large to read in the panel: as large as it is readable, fitting the
  // narrow side, from its start; the minimap shows the rest.
  if (!sel_min && zoom < kReadableZoom) zoom = std::min(kReadableZoom, std::max(zx, zy));
  view_.show_box(mn, mx, std::clamp(zoom, 1e-4f, 1.5f), from_im(avail), {margin, top});
}

std::vector<int> GraphCanvas::to_shown(const GraphLayout& full, const GraphLayout& g,
                                       const std::vector<int>& full_nodes) const {
  if (&g == &full) return full_nodes;
  std::vector<int> out;
  for (int i : full_nodes) {
    if (i < 0 || i >= static_cast<int>(full.nodes.size())) continue;
    const Visible v = shown_ ? shown_->graph.tree.visible_of(i) : Visible{false, i};
    const int s = g.find_name(v.box ? strf("scope%d", v.index) : full.nodes[i].name);
    if (s >= 0 && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

void GraphCanvas::draw(SharedState& st, GraphSlot& slot, bool is_after, ImVec2 size,
                       DirectionChoice direction, bool sync) {
  sync_ = sync || st.headless;
  size.x = std::max(size.x, 50.0f);
  size.y = std::max(size.y, 50.0f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("canvas", size,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, origin + size, true);
  dl->AddRectFilled(origin, origin + size, kCanvasBg);
  dl->AddRect(origin, origin + size, IM_COL32(0, 0, 0, 40));
  facts_ = CanvasFacts{};

  auto message = [&](const std::string& text, ImU32 color) {
    ImGui::PushTextWrapPos(0);
    const ImVec2 sz = ImGui::CalcTextSize(text.c_str(), nullptr, false, size.x - 40);
    dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(),
                origin + ImVec2{std::max(20.0f, (size.x - sz.x) / 2), (size.y - sz.y) / 2}, color,
                text.c_str(), nullptr, size.x - 40);
    ImGui::PopTextWrapPos();
  };
  const char* which = is_after ? "after" : "before";
  if (!slot.present()) {
    message(std::string("No ") + which + ".dot in this dump" +
                (is_after ? " (--fusion off draws no 'after' graph)." : "."),
            IM_COL32(0x61, 0x61, 0x61, 255));
  } else if (!slot.error.empty()) {
    message(slot.error, IM_COL32(0xc6, 0x28, 0x28, 255));
  } else if (!slot.layout) {
    message(std::string("Laying out ") + which + ".dot with Graphviz...",
            IM_COL32(0x61, 0x61, 0x61, 255));
  } else {
    const GraphLayout& full = *slot.layout;
    title_lines_ = full.title.size();
    if (last_size_.x <= 0) last_size_ = size;
    // A new dump graph: group it, and lay out the groups for this panel.
    if (full_for_ != &full) {
      full_for_ = &full;
      shown_.reset();
      if (pending_.valid()) pending_.wait();
      pending_ = {};
      direction_ = direction;
      initial_ = ScopeGraph::of(full, node_shares(st.report(), is_after));
      start_layout(full, *initial_, true, sync_);
    }
    // The user asked for another direction, or to group or expand again; or the panel's
    // size changed much since the grouping was chosen for it.
    const bool idle = !pending_.valid();
    const auto changed = [](float a, float b) { return std::abs(a - b) > 0.15f * std::max(b, 1.0f); };
    if (idle && auto_grouped_ && shown_ &&
        (changed(size.x, grouped_for_.x) || changed(size.y, grouped_for_.y))) {
      last_size_ = size;
      regroup_ = true;
    }
    if (idle && (direction != direction_ || regroup_ || expand_all_)) {
      direction_ = direction;
      ScopeGraph graph = shown_ ? shown_->graph : initial_.value_or(ScopeGraph{});
      if (expand_all_) graph.tree.expand_all();
      // Another direction: the grouping is chosen again too, unless the user chose it.
      const bool automatic = regroup_ || (!expand_all_ && auto_grouped_);
      start_layout(full, std::move(graph), automatic, sync_);
      regroup_ = expand_all_ = false;
    }
    if (pending_.valid() &&
        pending_.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      poll_layout();

    const GraphLayout& g = shown(full);
    if (prepared_for_ != &g) prepare(st, g, is_after);
    // Fit when asked, and follow the panel's size until the user zooms or pans.
    if (fit_requested_ || (!user_moved_ && (size.x != last_size_.x || size.y != last_size_.y))) {
      fit(size);
      fit_requested_ = false;
    }
    last_size_ = size;
    handle_input(st, full, g, origin, size, hovered);
    // The graph below the title band: zoomed or panned, it never covers the title.
    dl->PushClipRect(origin + ImVec2{0, title_band()}, origin + size, true);
    facts_.clip_top = dl->GetClipRectMin().y;
    draw_graph(st, g, dl, origin, size);
    dl->PopClipRect();
    draw_legend(full, dl, origin, size);
    facts_.minimap = minimap_.draw(dl, g, fills_, content_min_, content_max_, view_, origin, size);
    draw_title(st, full, is_after, dl, origin, size);
    facts_.drawn = true;
    facts_.zoom = view_.zoom;
    facts_.zooms_to_selection = zooms_to_selection_;
    facts_.rankdir = rankdir_name(shown_ ? shown_->dir : RankDir::TopBottom);
    facts_.graph_nodes = static_cast<int>(full.nodes.size());
    facts_.shown_nodes = static_cast<int>(g.nodes.size());
    for (const LayoutNode& n : g.nodes) facts_.boxes += scope_of_dot_name(n.name) >= 0;
  }
  dl->PopClipRect();
}

void GraphCanvas::draw_title(const SharedState& st, const GraphLayout& full, bool is_after,
                             ImDrawList* dl, ImVec2 origin, ImVec2 size) {
  const float band = title_band();
  dl->AddRectFilled(origin + ImVec2{1, 1}, origin + ImVec2{size.x - 1, band - 2},
                    IM_COL32(255, 255, 255, 255));
  dl->AddLine(origin + ImVec2{0, band - 2}, origin + ImVec2{size.x, band - 2},
              IM_COL32(0, 0, 0, 30));
  // Caption, then the DOT's title (what the dump says about this graph).
  const GraphLayout& g = shown(full);
  int boxes = 0;
  for (const LayoutNode& n : g.nodes) boxes += scope_of_dot_name(n.name) >= 0;
  std::string cap = std::string(is_after ? "after" : "before") + ".dot   " +
                    strf("%.0f%%", view_.zoom * 100) + "   " +
                    std::to_string(full.nodes.size()) + " nodes";
  if (boxes > 0) cap += strf(", %d scopes collapsed", boxes);
  if (pending_.valid()) cap += "   laying out...";
  // Graphviz could not lay out the groups: the dump's own layout is drawn instead.
  if (shown_ && !shown_->error.empty()) cap += "   (not grouped: " + shown_->error + ")";
  dl->AddText(origin + ImVec2{6, 4}, IM_COL32(0x75, 0x75, 0x75, 255), cap.c_str());
  ImFont* f = ImGui::GetFont();
  const float fs = ImGui::GetFontSize() * 0.9f;
  const ImU32 ink = IM_COL32(0x21, 0x21, 0x21, 255);
  facts_.title_bottom = origin.y + 4 + ImGui::GetFontSize();
  for (size_t i = 0; i < full.title.size() && i < 3; ++i) {
    const ImVec2 p = origin + ImVec2{6, 22 + 15.0f * i};
    facts_.title_bottom = std::max(facts_.title_bottom, p.y + fs);
    const ImVec4 clip(origin.x, origin.y, origin.x + size.x - 4, origin.y + band);
    if (i > 0 || !is_after) {
      dl->AddText(f, fs, p, ink, full.title[i].text.c_str(), nullptr, 0, &clip);
      continue;
    }
    // The after graph's headline says what the Summary says.
    const TitleLine t = after_title(full.title[0].text, st.report());
    dl->AddText(f, fs, p, ink, t.text.c_str(), nullptr, 0, &clip);
    if (t.badge.empty()) continue;
    const float w = f->CalcTextSizeA(fs, FLT_MAX, 0, t.text.c_str()).x;
    const ImU32 c = t.speedup ? col(speedup_color(*t.speedup)) : IM_COL32(0x75, 0x75, 0x75, 255);
    dl->AddText(f, fs, p + ImVec2{w + 6, 0}, c, ("(" + t.badge + ")").c_str(), nullptr, 0, &clip);
    frame_facts().set("graph.after_badge", t.badge);
    frame_facts().set("graph.after_badge_color",
                      strf("#%02x%02x%02x", c & 0xff, (c >> 8) & 0xff, (c >> 16) & 0xff));
  }
}

void GraphCanvas::handle_input(SharedState& st, const GraphLayout& full, const GraphLayout& g,
                               ImVec2 origin, ImVec2 size, bool hovered) {
  ImGuiIO& io = ImGui::GetIO();
  const Report* report = st.report();

  // A selection made elsewhere: highlight it and bring it into view.
  if (seen_serial_ != st.selection_serial) {
    seen_serial_ = st.selection_serial;
    highlight_ = to_shown(full, g, highlighted_nodes(full, report, st.selection));
    if (st.selection_source != Panel::Graph && !highlight_.empty()) {
      Vec2 mn{1e30f, 1e30f}, mx{-1e30f, -1e30f};
      for (int i : highlight_) {
        const LayoutNode& n = g.nodes[i];
        mn = {std::min(mn.x, n.center.x - n.size.x / 2), std::min(mn.y, n.center.y - n.size.y / 2)};
        mx = {std::max(mx.x, n.center.x + n.size.x / 2), std::max(mx.y, n.center.y + n.size.y / 2)};
      }
      const Vec2 a = view_.to_screen(mn, {0, 0}), b = view_.to_screen(mx, {0, 0});
      const bool inside = a.x >= 0 && a.y >= title_band() && b.x <= size.x && b.y <= size.y;
      if (!inside) view_.center_on({(mn.x + mx.x) / 2, (mn.y + mx.y) / 2}, from_im(size));
    }
  }
  if (!(st.hover == hover_for_)) {
    hover_for_ = st.hover;
    hover_highlight_ = st.hover.empty()
                           ? std::vector<int>{}
                           : to_shown(full, g, highlighted_nodes(full, report, st.hover));
  }
  if (zoom_to_selection_) {
    zoom_to_selection_ = false;
    if (highlight_.empty()) {
      fit(size);
      user_moved_ = false;
    } else {
      Vec2 mn, mx;  // with some room around it: its neighbours say where it is
      if (selection_box(g, highlight_, &mn, &mx)) fit(size, &mn, &mx);
      user_moved_ = true;
      ++zooms_to_selection_;
    }
  }

  if (st.headless) return;
  const bool on_minimap = minimap_.contains(io.MousePos);
  if (hovered && on_minimap) {
    if (ImGui::IsMouseDown(ImGuiMouseButton_Left) && !panning_) {
      view_.center_on(minimap_.to_world(io.MousePos), from_im(size));
      user_moved_ = true;
    }
    return;
  }
  if (hovered && io.MouseWheel != 0) {
    user_moved_ = true;
    view_.zoom_at(from_im(io.MousePos), from_im(origin), std::pow(1.2f, io.MouseWheel), 0.005f,
                  12.0f);
  }
  if (ImGui::IsItemActive() && (ImGui::IsMouseDragging(ImGuiMouseButton_Left, 3) ||
                                ImGui::IsMouseDragging(ImGuiMouseButton_Right, 3) ||
                                ImGui::IsMouseDragging(ImGuiMouseButton_Middle, 3))) {
    panning_ = true;
    user_moved_ = true;
    view_.drag(from_im(io.MouseDelta));
  }
  if (!hovered || panning_) {
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left) && !ImGui::IsMouseDown(ImGuiMouseButton_Right) &&
        !ImGui::IsMouseDown(ImGuiMouseButton_Middle))
      panning_ = false;
    return;
  }
  if (io.MousePos.y < origin.y + title_band()) return;  // the title band is not the graph

  const Vec2 w = view_.to_world(from_im(io.MousePos), from_im(origin));
  const int node = g.node_at(w, 2 / view_.zoom);
  const int cluster = node < 0 ? g.cluster_at(w) : -1;
  const int box = node >= 0 ? scope_of_dot_name(g.nodes[node].name) : -1;
  const int full_node = node >= 0 && box < 0 ? full.find_name(g.nodes[node].name) : -1;

  if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    // On a node: collapse its scope. On the background: fit.
    if (full_node >= 0 && shown_ && !pending_.valid()) {
      ScopeGraph graph = shown_->graph;
      int s = graph.tree.item_scope(full_node);
      while (s > 0 && graph.tree.scopes()[s].item_count <= 1) s = graph.tree.scopes()[s].parent;
      if (s > 0) {
        graph.tree.set_expanded(s, false);
        start_layout(full, std::move(graph), false, sync_);
      }
    } else if (node < 0) {
      fit(size);
      user_moved_ = false;
    }
    return;
  }
  if (node >= 0) {
    const LayoutNode& n = g.nodes[node];
    if (box >= 0) {
      if (shown_ && box < static_cast<int>(shown_->graph.tree.scopes().size()))
        tooltip_text(box_tooltip(shown_->graph.tree.scopes()[box]));
    } else if (n.node_id >= 0) {
      NodeInfo info = node_info(st, n.node_id, full_node >= 0 ? &full.nodes[full_node] : &n);
      tooltip_text(node_tooltip(info, report));
      st.set_hover(select_node(n.node_id, report, &full));
    } else if (!n.html) {
      tooltip_text(other_node_tooltip(n));
    }
  } else if (cluster >= 0) {
    tooltip_text(cluster_tooltip(g.clusters[cluster]));
    st.set_hover(select_region(g.clusters[cluster].region));
  }
  if (ImGui::IsMouseReleased(ImGuiMouseButton_Left)) {
    if (box >= 0) {
      if (shown_ && !pending_.valid()) {
        ScopeGraph graph = shown_->graph;
        graph.tree.toggle(box);
        start_layout(full, std::move(graph), false, sync_);
      }
    } else if (node >= 0 && g.nodes[node].node_id >= 0) {
      st.select(select_node(g.nodes[node].node_id, report, &full), Panel::Graph);
    } else if (cluster >= 0 && g.clusters[cluster].region >= 0) {
      st.select(select_region(g.clusters[cluster].region), Panel::Graph);
    } else if (node < 0) {
      st.select(Selection{}, Panel::Graph);
    }
  }
}

void GraphCanvas::draw_graph(SharedState& st, const GraphLayout& g, ImDrawList* dl,
                             ImVec2 origin, ImVec2 size) {
  const float z = view_.zoom;
  const Vec2 o = from_im(origin);
  auto S = [&](Vec2 p) { return to_im(view_.to_screen(p, o)); };
  const Vec2 wmin = view_.to_world({o.x, o.y + title_band()}, o);
  const Vec2 wmax = view_.to_world({o.x + size.x, o.y + size.y}, o);
  auto visible = [&](Vec2 mn, Vec2 mx) {
    return mx.x >= wmin.x && mx.y >= wmin.y && mn.x <= wmax.x && mn.y <= wmax.y;
  };
  ImFont* font = st.fonts.graph;
  const int selected_cluster = st.selection.node < 0 && st.selection.region >= 0
                                   ? g.cluster_of_region(st.selection.region)
                                   : -1;

  // Clusters (outermost first: they were read in pre-order).
  for (size_t ci = 0; ci < g.clusters.size(); ++ci) {
    const LayoutCluster& c = g.clusters[ci];
    if (!visible(c.min, c.max)) continue;
    const ImVec2 a = S(c.min), b = S(c.max);
    const float r = c.rounded ? 8 * z : 0;
    if (c.scope >= 0) {
      // An expanded name scope (scope_graph.h): its outline, at least a pixel wide whatever
      // the zoom, and its name when it is readable.
      const std::vector<Scope>* scopes = shown_ ? &shown_->graph.tree.scopes() : nullptr;
      rect_outline(dl, a, b, col(c.border), std::clamp(1.5f * z, 1.0f, 2.0f), std::max(r, 3.0f),
                   0, 0);
      if (scopes && c.scope < static_cast<int>(scopes->size()))
        facts_.outline_rects.push_back({(*scopes)[c.scope].path, a.x, a.y, b.x, b.y});
      if (c.font_size * z >= 6.5f && !c.label.empty()) {
        const ImVec4 clip(a.x, a.y, b.x, b.y);
        const ImVec2 p = S({c.min.x, c.label_pos.y - c.label_size.y / 2}) + ImVec2{6 * z, 0};
        dl->AddText(font, c.font_size * z, p, col(c.text), c.label[0].text.c_str(), nullptr, 0,
                    &clip);
      }
      continue;
    }
    if (c.filled) dl->AddRectFilled(a, b, col(c.fill), r);
    const float t = (c.bold ? 2.0f : 1.0f) * std::max(0.6f, std::min(z, 2.0f));
    const float dash = c.dashed ? 6 * z : c.dotted ? 2 * z : 0;
    rect_outline(dl, a, b, col(c.border), t, r, std::max(dash, c.dashed || c.dotted ? 2.0f : 0.0f),
                 std::max(c.dashed ? 4 * z : 3 * z, 2.0f));
    if (static_cast<int>(ci) == selected_cluster)
      dl->AddRect(a - ImVec2{3, 3}, b + ImVec2{3, 3}, kSelect, r, 0, 3);
    if (c.font_size * z >= 6.5f && !c.label.empty()) {
      const float lh = c.font_size * 1.2f;
      const Vec2 top{c.label_pos.x - c.label_size.x / 2, c.label_pos.y - c.label_size.y / 2};
      for (size_t i = 0; i < c.label.size(); ++i) {
        const std::string& text = c.label[i].text;
        const ImVec2 sz = font->CalcTextSizeA(c.font_size * z, FLT_MAX, 0, text.c_str());
        ImVec2 p = S({c.label_pos.x, top.y + lh * i + lh / 2});
        p = p - ImVec2{sz.x / 2, sz.y / 2};
        // Keep it inside the cluster box.
        p.x = std::max(p.x, a.x + 4 * z);
        ImVec4 clip(a.x, a.y, b.x, b.y);
        dl->AddText(font, c.font_size * z, p, col(c.text), text.c_str(), nullptr, 0, &clip);
      }
    }
  }

  // Edges. Far out (whole graphs of thousands of nodes), straight and light.
  const bool far = z < 0.15f;
  for (const LayoutEdge& e : g.edges) {
    if (e.points.size() < 4 || !visible(e.min, e.max)) continue;
    const ImU32 c = col(e.color);
    if (far) {
      dl->AddLine(S(e.points.front()), S(e.arrow_end ? e.end_tip : e.points.back()),
                  with_alpha(c, 0.35f), 1);
      continue;
    }
    const float t = std::clamp(z, 0.6f, 2.0f);
    const int segs = z < 0.3f ? 4 : 0;
    for (size_t i = 0; i + 3 < e.points.size(); i += 3)
      dl->AddBezierCubic(S(e.points[i]), S(e.points[i + 1]), S(e.points[i + 2]),
                         S(e.points[i + 3]), c, t, segs);
    if (e.arrow_end) arrowhead(dl, S(e.points.back()), S(e.end_tip), c);
    if (e.arrow_start) arrowhead(dl, S(e.points.front()), S(e.start_tip), c);
    // Edge labels (shapes, "3 edges") at a readable size once there is room for them.
    if (e.has_label && e.font_size * z >= 6.5f) {
      const float px = std::max(e.font_size * z, kMinLabelPx + 0.5f);
      text_centered(dl, font, px, S(e.label_pos), col(e.text), e.label);
      ++facts_.edge_labels;
    }
  }

  // Nodes.
  std::vector<char> is_highlight(g.nodes.size(), 0);
  for (int i : hover_highlight_) is_highlight[i] = 1;
  for (int i : highlight_) is_highlight[i] = 2;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const LayoutNode& n = g.nodes[i];
    if (n.html) continue;  // the legend: drawn as an overlay instead
    const Vec2 mn{n.center.x - n.size.x / 2, n.center.y - n.size.y / 2};
    const Vec2 mx{n.center.x + n.size.x / 2, n.center.y + n.size.y / 2};
    if (!visible(mn, mx)) continue;
    const bool box = scope_of_dot_name(n.name) >= 0;
    ++facts_.nodes_drawn;
    facts_.boxes_drawn += box;
    if (box && shown_) {
      const int si = scope_of_dot_name(n.name);
      const auto& scopes = shown_->graph.tree.scopes();
      const ImVec2 sa = S(mn), sb = S(mx);
      if (si < static_cast<int>(scopes.size()))
        facts_.box_rects.push_back({scopes[si].path, sa.x, sa.y, sb.x, sb.y});
    }
    const ImVec2 a = S(mn), b = S(mx), c = S(n.center);
    if (is_highlight[i] == 2)
      facts_.selection_rects.push_back({n.lines.empty() ? n.name : n.lines[0].text, a.x, a.y, b.x, b.y});
    const ImU32 border = col(n.border);
    const float t = std::clamp(n.penwidth * z, 0.6f, 3.0f);
    if (is_highlight[i]) {
      const ImU32 hc = is_highlight[i] == 2 ? kSelect : kHover;
      const float pad = is_highlight[i] == 2 ? 5 : 3;
      dl->AddRectFilled(a - ImVec2{pad, pad}, b + ImVec2{pad, pad}, with_alpha(hc, 0.25f),
                        6 * z + pad);
      dl->AddRect(a - ImVec2{pad, pad}, b + ImVec2{pad, pad}, hc, 6 * z + pad, 0,
                  is_highlight[i] == 2 ? 3 : 2);
    }
    if (b.x - a.x < 6 && n.shape != NodeShape::Plain) {
      // A few pixels: the fill only (white ones light grey), so the heat colours show.
      const ImU32 f = fills_[i] == IM_COL32_WHITE ? IM_COL32(0xbd, 0xbd, 0xbd, 255) : fills_[i];
      dl->AddRectFilled(a, {std::max(b.x, a.x + 1), std::max(b.y, a.y + 1)}, f);
      continue;
    }
    if (box) {
      // A collapsed scope: a stack of cards, so that it reads as a group, not an op.
      const ImVec2 d{std::clamp(4 * z, 2.0f, 5.0f), std::clamp(4 * z, 2.0f, 5.0f)};
      dl->AddRectFilled(a + d, b + d, IM_COL32(0x9e, 0x9e, 0x9e, 255), 3);
      dl->AddRectFilled(a, b, fills_[i], 3);
      rect_outline(dl, a, b, border, t, 3);
    } else {
      switch (n.shape) {
        case NodeShape::Ellipse:
          ellipse(dl, c, (b - a) * 0.5f, fills_[i], border, t, z < 0.3f ? 12 : 32);
          break;
        case NodeShape::Plain:
          break;
        case NodeShape::Box: {
          const float r = n.rounded ? std::min(6 * z, (b.y - a.y) / 2) : 0;
          if (n.filled) dl->AddRectFilled(a, b, fills_[i], r);
          for (int p = 0; p < n.peripheries; ++p) {
            const ImVec2 d{4.0f * z * p, 4.0f * z * p};
            rect_outline(dl, a - d, b + d, border, t, r, n.dashed ? 5 * z : 0, 3 * z);
          }
          break;
        }
      }
    }
    draw_node_label(dl, font, n.lines, n.font_size * z, a, b, texts_[i], &facts_.labels);
  }
}

void GraphCanvas::draw_legend(const GraphLayout& g, ImDrawList* dl, ImVec2 origin, ImVec2 size) {
  // The heat scale and the cluster kinds present, bottom-left.
  static const char* const kRange[9] = {"<1%",    "1-2.5", "2.5-5", "5-10",  "10-20",
                                        "20-35",  "35-50", "50-75", ">=75%"};
  const float sw = 34, sh = 14;
  ImVec2 p = origin + ImVec2{8, size.y - 8 - sh - 16};
  std::vector<std::pair<std::string, std::pair<ImU32, int>>> kinds;  // label, colour, style
  // In a fixed order, whatever order the DOT lists its clusters in.
  std::vector<const LayoutCluster*> ordered;
  for (const char* kind : {"kept", "reverted", "failed", "rejected", "queued"})
    for (const LayoutCluster& c : g.clusters)
      if (c.kind == kind) ordered.push_back(&c);
  for (const LayoutCluster& c : g.clusters)
    if (std::find(ordered.begin(), ordered.end(), &c) == ordered.end()) ordered.push_back(&c);
  for (const LayoutCluster* cp : ordered) {
    const LayoutCluster& c = *cp;
    std::string label = c.kind == "kept"       ? "fused kernel kept"
                        : c.kind == "reverted" ? "reverted"
                        : c.kind == "failed"   ? "compile failed"
                        : c.kind == "rejected" ? "not worth fusing"
                        : c.kind == "queued"   ? "still compiling"
                                               : c.kind;
    bool seen = false;
    for (auto& k : kinds) seen |= k.first == label;
    if (!seen) kinds.push_back({label, {col(c.border), c.filled ? 0 : c.dashed ? 1 : 2}});
  }
  if (!legend_shown(size)) return;
  const float h = sh + 16 + (kinds.empty() ? 0 : 18);
  p.y -= kinds.empty() ? 0 : 18;
  dl->AddRectFilled(p - ImVec2{4, 4}, p + ImVec2{9 * sw + 4, h + 2}, IM_COL32(255, 255, 255, 220), 4);
  dl->AddText(p, IM_COL32(0x42, 0x42, 0x42, 255), "share of the iteration");
  p.y += 15;
  for (int i = 0; i < 9; ++i) {
    const ImVec2 a = p + ImVec2{sw * i, 0};
    dl->AddRectFilled(a, a + ImVec2{sw, sh}, col(heat_color(i)));
    ImFont* f = ImGui::GetFont();
    const float fs = ImGui::GetFontSize() * 0.72f;
    const ImVec2 ts = f->CalcTextSizeA(fs, FLT_MAX, 0, kRange[i]);
    dl->AddText(f, fs, a + ImVec2{(sw - ts.x) / 2, (sh - ts.y) / 2},
                col(text_on(heat_color(i))), kRange[i]);
  }
  p.y += sh + 4;
  float x = p.x;
  for (auto& [label, cs] : kinds) {
    const ImVec2 a{x, p.y + 2}, b{x + 18, p.y + 12};
    if (cs.second == 0) dl->AddRectFilled(a, b, with_alpha(cs.first, 0.25f), 3);
    rect_outline(dl, a, b, cs.first, 1.5f, 3, cs.second == 0 ? 0 : cs.second == 1 ? 4 : 1.5f, 2);
    dl->AddText({x + 22, p.y}, IM_COL32(0x42, 0x42, 0x42, 255), label.c_str());
    x += 30 + ImGui::CalcTextSize(label.c_str()).x;
  }
}

}  // namespace hf::viewer::ui
