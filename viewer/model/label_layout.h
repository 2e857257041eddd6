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

// A label that starts at x and wants `width` pixels. Higher `priority` labels (the swap,
// a revert) are placed first and never cut or dropped for lower ones (phase names).
struct LabelWant {
  float x = 0, width = 0;
  int priority = 0;
};
// Where it went: a row (0 is the first) and the width it may use; row -1: not drawn.
struct LabelSlot {
  int row = -1;
  float width = 0;
};

// Places labels, highest priority first, then left to right: each in the first of
// `max_rows` rows where it fits whole `gap` past its neighbours. When none has room, the
// label of no higher priority that it runs into is cut to end `gap` before it (elided by
// the caller; dropped when cut below `min_width`), else it takes the widest room left in a
// row (elided), else it is not drawn. Nothing extends past `right`. In any row the labels
// drawn, [x, x + width), are then `gap` apart and never overlap.
std::vector<LabelSlot> place_labels(const std::vector<LabelWant>& wants, int max_rows, float gap,
                                    float min_width, float right);

}  // namespace hf::viewer
