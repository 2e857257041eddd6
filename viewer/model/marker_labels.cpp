#include "viewer/model/marker_labels.h"

#include <algorithm>

namespace hf::viewer {

std::vector<MarkerLabelPlace> place_marker_labels(const std::vector<MarkerLabelWant>& wants,
                                                  float left, float right, int max_rows,
                                                  const MeasureText& measure, float pad,
                                                  float gap) {
  std::vector<LabelWant> want(wants.size());
  for (size_t i = 0; i < wants.size(); ++i) {
    const float w = measure(wants[i].text);
    float x = wants[i].line_x + pad;
    if (x + w > right) x = wants[i].line_x - pad - w;  // left of its line near the edge
    want[i] = {std::max(left, std::min(x, right - w)), w, wants[i].priority};
  }
  const float min_width = measure("a...");
  const std::vector<LabelSlot> slots = place_labels(want, max_rows, gap, min_width, right);
  std::vector<MarkerLabelPlace> out(wants.size());
  for (size_t i = 0; i < wants.size(); ++i) {
    if (slots[i].row < 0) continue;
    const std::string text = elide_to_width(wants[i].text, slots[i].width, measure);
    if (text.empty()) continue;
    out[i] = {slots[i].row, want[i].x, measure(text), text};
  }
  return out;
}

}  // namespace hf::viewer
