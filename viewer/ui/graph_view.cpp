#include "viewer/ui/graph_view.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "viewer/model/format.h"
#include "viewer/ui/draw_util.h"
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
  if (ImGui::Button("Fit") || (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) &&
                               !ImGui::GetIO().WantTextInput && ImGui::IsKeyPressed('F'))) {
    before_.request_fit();
    after_.request_fit();
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
      if (n.node_id >= 0) st.select(select_node(n.node_id, st.report(), &*target.layout), Panel::Count);
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
        "Wheel: zoom around the cursor. Drag: pan. Double-click or F: fit.\n"
        "Click a node to select it (the timeline and the tables follow); click a region's "
        "box to select the region. Colours: the node's share of the iteration "
        "(yellow < 1% ... dark red >= 75%); green boxes: fused kernels kept; dashed red: "
        "reverted; dotted grey: not worth fusing.");

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (mode == Mode::SideBySide && st.before.present() && st.after.present()) {
    const float w = (avail.x - ImGui::GetStyle().ItemSpacing.x) / 2;
    ImGui::PushID("before");
    before_.draw(st, st.before, false, {w, avail.y});
    ImGui::PopID();
    ImGui::SameLine();
    ImGui::PushID("after");
    after_.draw(st, st.after, true, {avail.x - w - ImGui::GetStyle().ItemSpacing.x, avail.y});
    ImGui::PopID();
  } else if (mode == Mode::Before || !st.after.present()) {
    ImGui::PushID("before");
    before_.draw(st, st.before, false, avail);
    ImGui::PopID();
  } else {
    ImGui::PushID("after");
    after_.draw(st, st.after, true, avail);
    ImGui::PopID();
  }
}

// ---- GraphCanvas ---------------------------------------------------------------------------

void GraphCanvas::prepare(SharedState& st, const GraphLayout& g, bool is_after) {
  prepared_for_ = &g;
  user_moved_ = false;
  fills_.assign(g.nodes.size(), IM_COL32_WHITE);
  texts_.assign(g.nodes.size(), IM_COL32(0x21, 0x21, 0x21, 255));
  // Shares from the report, for nodes the DOT left white.
  std::unordered_map<int64_t, double> share;
  if (const Report* r = st.report()) {
    const std::vector<OpRow>& rows = is_after && !r->ops_after.empty() ? r->ops_after : r->ops;
    double total = 0;
    for (const OpRow& o : rows) total += o.time_ms;
    if (total > 0)
      for (const OpRow& o : rows)
        if (o.node_id >= 0) share[o.node_id] = o.time_ms / total;
  }
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
  title_lines_ = g.title.size();
  fit_requested_ = true;
  seen_serial_ = -1;
}

bool GraphCanvas::legend_shown(ImVec2 size) { return size.y >= 360 && size.x >= 360; }

void GraphCanvas::fit(ImVec2 size) {
  // The free area: below the caption and title lines, above the legend.
  const float top = 22 + 15.0f * std::min<size_t>(title_lines_, 3);
  const float bottom = legend_shown(size) ? 64 : 0;
  const float margin = 12;
  const Vec2 avail{std::max(20.0f, size.x - 2 * margin), std::max(20.0f, size.y - top - bottom - margin)};
  const Vec2 content{std::max(1.0f, content_max_.x - content_min_.x),
                     std::max(1.0f, content_max_.y - content_min_.y)};
  view_.zoom = std::clamp(std::min(avail.x / content.x, avail.y / content.y), 1e-4f, 1.5f);
  view_.pan.x = content_min_.x - (margin + (avail.x - content.x * view_.zoom) / 2) / view_.zoom;
  view_.pan.y = content_min_.y - (top + (avail.y - content.y * view_.zoom) / 2) / view_.zoom;
}

void GraphCanvas::draw(SharedState& st, GraphSlot& slot, bool is_after, ImVec2 size) {
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
    const GraphLayout& g = *slot.layout;
    if (prepared_for_ != &g) prepare(st, g, is_after);
    // Fit when asked, and follow the panel's size until the user zooms or pans.
    if (fit_requested_ || (!user_moved_ && (size.x != last_size_.x || size.y != last_size_.y))) {
      fit(size);
      fit_requested_ = false;
    }
    last_size_ = size;
    handle_input(st, g, origin, size, hovered, is_after);
    draw_graph(st, g, is_after, dl, origin, size);
    draw_legend(g, dl, origin, size);
    // Caption, then the DOT's title (what the dump says about this graph), on top.
    const std::string cap = std::string(which) + ".dot   " + strf("%.0f%%", view_.zoom * 100) +
                            "   " + std::to_string(g.nodes.size()) + " nodes";
    dl->AddText(origin + ImVec2{6, 4}, IM_COL32(0x75, 0x75, 0x75, 255), cap.c_str());
    ImFont* f = ImGui::GetFont();
    const float fs = ImGui::GetFontSize() * 0.9f;
    for (size_t i = 0; i < g.title.size() && i < 3; ++i)
      dl->AddText(f, fs, origin + ImVec2{6, 22 + 15.0f * i}, IM_COL32(0x21, 0x21, 0x21, 255),
                  g.title[i].text.c_str());
  }
  dl->PopClipRect();
}

void GraphCanvas::handle_input(SharedState& st, const GraphLayout& g, ImVec2 origin, ImVec2 size,
                               bool hovered, bool is_after) {
  ImGuiIO& io = ImGui::GetIO();
  const Report* report = st.report();

  // A selection made elsewhere: highlight it and bring it into view.
  if (seen_serial_ != st.selection_serial) {
    seen_serial_ = st.selection_serial;
    highlight_ = highlighted_nodes(g, report, st.selection);
    if (st.selection_source != Panel::Graph && !highlight_.empty()) {
      Vec2 mn{1e30f, 1e30f}, mx{-1e30f, -1e30f};
      for (int i : highlight_) {
        const LayoutNode& n = g.nodes[i];
        mn = {std::min(mn.x, n.center.x - n.size.x / 2), std::min(mn.y, n.center.y - n.size.y / 2)};
        mx = {std::max(mx.x, n.center.x + n.size.x / 2), std::max(mx.y, n.center.y + n.size.y / 2)};
      }
      const Vec2 a = view_.to_screen(mn, {0, 0}), b = view_.to_screen(mx, {0, 0});
      const bool inside = a.x >= 0 && a.y >= 0 && b.x <= size.x && b.y <= size.y;
      if (!inside) view_.center_on({(mn.x + mx.x) / 2, (mn.y + mx.y) / 2}, from_im(size));
    }
  }
  if (!(st.hover == hover_for_)) {
    hover_for_ = st.hover;
    hover_highlight_ = st.hover.empty() ? std::vector<int>{} : highlighted_nodes(g, report, st.hover);
  }

  if (st.headless) return;
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
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    fit(size);
    user_moved_ = false;
    return;
  }
  if (!hovered || panning_) {
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left) && !ImGui::IsMouseDown(ImGuiMouseButton_Right) &&
        !ImGui::IsMouseDown(ImGuiMouseButton_Middle))
      panning_ = false;
    return;
  }

  const Vec2 w = view_.to_world(from_im(io.MousePos), from_im(origin));
  const int node = g.node_at(w, 2 / view_.zoom);
  const int cluster = node < 0 ? g.cluster_at(w) : -1;
  if (node >= 0) {
    const LayoutNode& n = g.nodes[node];
    if (n.node_id >= 0) {
      NodeInfo info = node_info(st, n.node_id, &n);
      tooltip_text(node_tooltip(info, report));
      st.set_hover(select_node(n.node_id, report, &g));
    } else if (!n.html) {
      tooltip_text(other_node_tooltip(n));
    }
  } else if (cluster >= 0) {
    tooltip_text(cluster_tooltip(g.clusters[cluster]));
    st.set_hover(select_region(g.clusters[cluster].region));
  }
  if (ImGui::IsMouseReleased(ImGuiMouseButton_Left)) {
    if (node >= 0 && g.nodes[node].node_id >= 0)
      st.select(select_node(g.nodes[node].node_id, report, &g), Panel::Graph);
    else if (cluster >= 0 && g.clusters[cluster].region >= 0)
      st.select(select_region(g.clusters[cluster].region), Panel::Graph);
    else if (node < 0)
      st.select(Selection{}, Panel::Graph);
  }
  (void)is_after;
}

void GraphCanvas::draw_graph(SharedState& st, const GraphLayout& g, bool is_after, ImDrawList* dl,
                             ImVec2 origin, ImVec2 size) {
  const float z = view_.zoom;
  const Vec2 o = from_im(origin);
  auto S = [&](Vec2 p) { return to_im(view_.to_screen(p, o)); };
  const Vec2 wmin = view_.to_world(o, o);
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
  const bool edge_labels = z * 8 >= 6;
  const bool far = z < 0.15f;
  for (const LayoutEdge& e : g.edges) {
    if (e.points.size() < 4 || !visible(e.min, e.max)) continue;
    const ImU32 c = col(e.color);
    if (far) {
      dl->AddLine(S(e.points.front()), S(e.arrow_end ? e.end_tip : e.points.back()), with_alpha(c, 0.35f), 1);
      continue;
    }
    const float t = std::clamp(z, 0.6f, 2.0f);
    const int segs = z < 0.3f ? 4 : 0;
    for (size_t i = 0; i + 3 < e.points.size(); i += 3)
      dl->AddBezierCubic(S(e.points[i]), S(e.points[i + 1]), S(e.points[i + 2]),
                         S(e.points[i + 3]), c, t, segs);
    if (e.arrow_end) arrowhead(dl, S(e.points.back()), S(e.end_tip), c);
    if (e.arrow_start) arrowhead(dl, S(e.points.front()), S(e.start_tip), c);
    if (edge_labels && e.has_label && e.font_size * z >= 6)
      text_centered(dl, font, e.font_size * z, S(e.label_pos), col(e.text), e.label);
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
    const ImVec2 a = S(mn), b = S(mx), c = S(n.center);
    const ImU32 border = col(n.border);
    const float t = std::clamp(n.penwidth * z, 0.6f, 3.0f);
    if (is_highlight[i]) {
      const ImU32 hc = is_highlight[i] == 2 ? kSelect : kHover;
      const float pad = is_highlight[i] == 2 ? 5 : 3;
      dl->AddRectFilled(a - ImVec2{pad, pad}, b + ImVec2{pad, pad}, with_alpha(hc, 0.25f), 6 * z + pad);
      dl->AddRect(a - ImVec2{pad, pad}, b + ImVec2{pad, pad}, hc, 6 * z + pad, 0,
                  is_highlight[i] == 2 ? 3 : 2);
    }
    if (b.x - a.x < 6 && n.shape != NodeShape::Plain) {
      // A few pixels: the fill only (white ones light grey), so the heat colours show.
      const ImU32 f = fills_[i] == IM_COL32_WHITE ? IM_COL32(0xbd, 0xbd, 0xbd, 255) : fills_[i];
      dl->AddRectFilled(a, {std::max(b.x, a.x + 1), std::max(b.y, a.y + 1)}, f);
      continue;
    }
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
    // Label lines, shrunk to the node's width. Zoomed out, only the name, as large as the
    // box allows; nothing when even that is unreadable.
    if (n.lines.empty()) continue;
    const float px = n.font_size * z;
    const float max_w = std::max(8.0f, b.x - a.x - 6 * z);
    if (px >= 8.5f) {
      const float lh = n.font_size * 1.2f * z;
      const float top = c.y - lh * n.lines.size() / 2;
      for (size_t l = 0; l < n.lines.size(); ++l)
        text_centered(dl, font, px, {c.x, top + lh * (l + 0.5f)}, texts_[i], n.lines[l].text, max_w);
    } else {
      const float name_px = std::min((b.y - a.y) * 0.5f, 12.0f);
      if (name_px >= 5) text_centered(dl, font, name_px, c, texts_[i], n.lines[0].text, max_w);
    }
  }
  (void)is_after;
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
