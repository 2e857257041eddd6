#include "viewer/ui/minimap.h"

#include <algorithm>

#include "viewer/ui/draw_util.h"

namespace hf::viewer::ui {

bool Minimap::draw(ImDrawList* dl, const GraphLayout& g, const std::vector<ImU32>& fills, Vec2 cmin,
                   Vec2 cmax, const View2D& view, ImVec2 origin, ImVec2 size) {
  shown_ = false;
  const Vec2 o = from_im(origin);
  const Vec2 vmin = view.to_world(o, o), vmax = view.to_world({o.x + size.x, o.y + size.y}, o);
  const bool all_shown =
      vmin.x <= cmin.x && vmin.y <= cmin.y && vmax.x >= cmax.x && vmax.y >= cmax.y;
  if (all_shown || size.x < 320 || size.y < 240) return false;
  const Vec2 content{std::max(1.0f, cmax.x - cmin.x), std::max(1.0f, cmax.y - cmin.y)};
  const float box_w = std::min(180.0f, size.x * 0.25f), box_h = std::min(130.0f, size.y * 0.3f);
  scale_ = std::min(box_w / content.x, box_h / content.y);
  const ImVec2 extent{content.x * scale_, content.y * scale_};
  max_ = origin + size - ImVec2{10, 10};
  min_ = max_ - extent;
  cmin_ = cmin;
  dl->AddRectFilled(min_ - ImVec2{4, 4}, max_ + ImVec2{4, 4}, IM_COL32(255, 255, 255, 235), 4);
  dl->AddRect(min_ - ImVec2{4, 4}, max_ + ImVec2{4, 4}, IM_COL32(0, 0, 0, 90), 4);
  auto M = [&](Vec2 w) { return min_ + ImVec2{(w.x - cmin.x) * scale_, (w.y - cmin.y) * scale_}; };
  for (const LayoutCluster& c : g.clusters)
    dl->AddRect(M(c.min), M(c.max), with_alpha(col(c.border), 0.6f));
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const LayoutNode& n = g.nodes[i];
    if (n.html) continue;
    const ImVec2 a = M({n.center.x - n.size.x / 2, n.center.y - n.size.y / 2});
    const ImVec2 b = M({n.center.x + n.size.x / 2, n.center.y + n.size.y / 2});
    const ImU32 f =
        i < fills.size() && fills[i] != IM_COL32_WHITE ? fills[i] : IM_COL32(0xbd, 0xbd, 0xbd, 255);
    dl->AddRectFilled(a, {std::max(b.x, a.x + 1), std::max(b.y, a.y + 1)}, f);
  }
  // The part the canvas shows, clipped to the minimap.
  ImVec2 a = M(vmin), b = M(vmax);
  a = {std::clamp(a.x, min_.x, max_.x), std::clamp(a.y, min_.y, max_.y)};
  b = {std::clamp(b.x, min_.x, max_.x), std::clamp(b.y, min_.y, max_.y)};
  dl->AddRectFilled(a, b, IM_COL32(0x19, 0x76, 0xd2, 40));
  dl->AddRect(a, b, IM_COL32(0x19, 0x76, 0xd2, 255), 0, 0, 1.5f);
  shown_ = true;
  return true;
}

bool Minimap::contains(ImVec2 p) const {
  return shown_ && p.x >= min_.x - 4 && p.y >= min_.y - 4 && p.x <= max_.x + 4 && p.y <= max_.y + 4;
}

Vec2 Minimap::to_world(ImVec2 p) const {
  return {cmin_.x + (p.x - min_.x) / scale_, cmin_.y + (p.y - min_.y) / scale_};
}

}  // namespace hf::viewer::ui
