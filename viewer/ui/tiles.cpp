#include "viewer/ui/tiles.h"

#include <algorithm>

#include "viewer/ui/draw_util.h"

namespace hf::viewer::ui {

namespace {
constexpr float kSplitter = 6;
}

Tiles::Tiles() {
  auto leaf = [&](Panel p) {
    Node n;
    n.leaf = true;
    n.panel = p;
    nodes_.push_back(n);
    return static_cast<int>(nodes_.size()) - 1;
  };
  auto split = [&](const char* key, bool horizontal, float ratio, int a, int b) {
    Node n;
    n.key = key;
    n.horizontal = horizontal;
    n.ratio = n.default_ratio = ratio;
    n.a = a;
    n.b = b;
    nodes_.push_back(n);
    return static_cast<int>(nodes_.size()) - 1;
  };
  const int bottom = split("hotspots", true, 0.58f, leaf(Panel::Hotspots), leaf(Panel::Summary));
  const int lower = split("timeline", false, 0.42f, leaf(Panel::Timeline), bottom);
  const int left = split("graph", false, 0.48f, leaf(Panel::Graph), lower);
  split("details", true, 0.75f, left, leaf(Panel::Details));  // the root: last
}

void Tiles::reset() {
  for (Node& n : nodes_) n.ratio = n.default_ratio;
}

ImVec2 Tiles::size(Panel p) const {
  const Rect& r = rects_[static_cast<int>(p)];
  return r.max - r.min;
}

bool Tiles::any_shown(int node, const bool* shown) const {
  const Node& n = nodes_[node];
  if (n.leaf) return shown[static_cast<int>(n.panel)];
  return any_shown(n.a, shown) || any_shown(n.b, shown);
}

bool Tiles::layout(ImVec2 min, ImVec2 max, const bool* shown, bool interactive) {
  for (Rect& r : rects_) r.visible = false;
  return place(static_cast<int>(nodes_.size()) - 1, min, max, shown, interactive);
}

bool Tiles::place(int node, ImVec2 min, ImVec2 max, const bool* shown, bool interactive) {
  Node& n = nodes_[node];
  if (n.leaf) {
    Rect& r = rects_[static_cast<int>(n.panel)];
    r.visible = shown[static_cast<int>(n.panel)];
    r.min = min;
    r.max = max;
    return false;
  }
  const bool a = any_shown(n.a, shown), b = any_shown(n.b, shown);
  if (!a && !b) return false;
  if (!a) return place(n.b, min, max, shown, interactive);
  if (!b) return place(n.a, min, max, shown, interactive);
  const float extent = n.horizontal ? max.x - min.x : max.y - min.y;
  const float at = (n.horizontal ? min.x : min.y) + extent * n.ratio;
  ImVec2 a_max = max, b_min = min, s_min, s_max;
  if (n.horizontal) {
    a_max.x = at - kSplitter / 2;
    b_min.x = at + kSplitter / 2;
    s_min = {a_max.x, min.y};
    s_max = {b_min.x, max.y};
  } else {
    a_max.y = at - kSplitter / 2;
    b_min.y = at + kSplitter / 2;
    s_min = {min.x, a_max.y};
    s_max = {max.x, b_min.y};
  }
  bool changed = false;
  if (interactive) {
    ImGui::SetCursorScreenPos(s_min);
    ImGui::PushID(n.key.c_str());
    ImGui::InvisibleButton("splitter", {std::max(1.0f, s_max.x - s_min.x), std::max(1.0f, s_max.y - s_min.y)});
    ImGui::PopID();
    const bool hot = ImGui::IsItemHovered() || ImGui::IsItemActive();
    if (hot) ImGui::SetMouseCursor(n.horizontal ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
    if (ImGui::IsItemActive()) {
      const ImVec2 d = ImGui::GetIO().MouseDelta;
      const float delta = n.horizontal ? d.x : d.y;
      if (delta != 0 && extent > 0) {
        n.ratio = std::clamp(n.ratio + delta / extent, 0.08f, 0.92f);
        changed = true;
      }
    }
    if (hot)
      ImGui::GetWindowDrawList()->AddRectFilled(s_min, s_max, ImGui::GetColorU32(ImGuiCol_SeparatorHovered));
  }
  changed |= place(n.a, min, a_max, shown, interactive);
  changed |= place(n.b, b_min, max, shown, interactive);
  return changed;
}

void Tiles::for_each_ratio(const std::function<void(const std::string&, float)>& f) const {
  for (const Node& n : nodes_)
    if (!n.leaf) f(n.key, n.ratio);
}

bool Tiles::set_ratio(const std::string& key, float value) {
  for (Node& n : nodes_)
    if (!n.leaf && n.key == key) {
      n.ratio = std::clamp(value, 0.08f, 0.92f);
      return true;
    }
  return false;
}

}  // namespace hf::viewer::ui
