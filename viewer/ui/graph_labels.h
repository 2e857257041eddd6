// A graph node's label drawn to suit its size on screen. Close up, every line of the DOT
// label at the graph's scale; further out, the first lines only (name, op), drawn as large
// as the node's box allows rather than at the shrinking scale, so that an overview still
// names its nodes; nothing when not even the name can be read. Names too long for the box
// are shortened in the middle (viewer/model/name_elide.h): the end tells ONNX names apart.
#pragma once
#include <imgui.h>

#include <limits>
#include <vector>

#include "viewer/model/graph_layout.h"

namespace hf::viewer::ui {

// The smallest text drawn, in pixels: below this a label is left out.
constexpr float kMinLabelPx = 7.0f;

// What the labels of one frame came to (for --screenshot-facts).
struct LabelStats {
  int labels = 0;  // label lines drawn
  int max_lines = 0;  // the most lines drawn for one node (1 far out: the name only)
  float min_px = std::numeric_limits<float>::infinity();
  void add(float px) {
    ++labels;
    if (px < min_px) min_px = px;
  }
};

// Draws `lines` inside the box [min, max] (screen pixels); `natural_px` is the DOT font size
// times the zoom.
void draw_node_label(ImDrawList* dl, ImFont* font, const std::vector<TextLine>& lines,
                     float natural_px, ImVec2 min, ImVec2 max, ImU32 color, LabelStats* stats);

}  // namespace hf::viewer::ui
