// Where text labels go so that they never overlap: a label too long for its place is elided
// ("compi..."), and labels anchored at points (phase names, the swap and revert on the
// Timeline's ruler) are stacked into rows. Widths come from a caller's measure function
// (ImGui::CalcTextSize in the UI, a fixed width per character in the tests).
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace hf::viewer {

using MeasureText = std::function<float(std::string_view)>;

// `text` if it fits in `width`; else its longest prefix followed by "..." that fits; else ""
// (nothing is better than a fragment).
std::string elide_to_width(const std::string& text, float width, const MeasureText& measure);

// A label that starts at x and wants `width` pixels.
struct LabelWant {
  float x = 0, width = 0;
};
// Where it went: a row (0 is the first) and the width it may use; row -1: not drawn.
struct LabelSlot {
  int row = -1;
  float width = 0;
};

// Places labels left to right: each in the first of `max_rows` rows where it starts `gap`
// past the previous label's end. When no row has room, the row whose last label ends first
// is used and that label is cut to end `gap` before this one (elided by the caller); cut
// below `min_width` it is dropped. Nothing extends past `right`. In any row the labels
// drawn, [x, x + width), are then `gap` apart and never overlap.
std::vector<LabelSlot> place_labels(const std::vector<LabelWant>& wants, int max_rows, float gap,
                                    float min_width, float right);

}  // namespace hf::viewer
