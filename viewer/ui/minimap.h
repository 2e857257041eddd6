// The Graph panel's minimap: the whole graph small in the canvas's bottom-right corner, the
// part the canvas shows as a rectangle on it; a click or a drag on it moves the view there.
// Shown only while the view does not show the whole graph (zoomed in or panned).
#pragma once
#include <imgui.h>

#include <vector>

#include "viewer/model/graph_layout.h"
#include "viewer/model/view_transform.h"

namespace hf::viewer::ui {

class Minimap {
 public:
  // Draws it for a canvas at `origin` of `size` whose content spans [cmin, cmax] (world).
  // `fills`: per node of g. False (and nothing drawn) when it is not needed or not room.
  bool draw(ImDrawList* dl, const GraphLayout& g, const std::vector<ImU32>& fills, Vec2 cmin,
            Vec2 cmax, const View2D& view, ImVec2 origin, ImVec2 size);
  // Whether the last drawn minimap contains a screen point.
  bool contains(ImVec2 p) const;
  // The world point under a screen point of the minimap.
  Vec2 to_world(ImVec2 p) const;

 private:
  bool shown_ = false;
  ImVec2 min_{0, 0}, max_{0, 0};
  Vec2 cmin_;
  float scale_ = 1;
};

}  // namespace hf::viewer::ui
