// Labels of moments drawn as vertical lines (the Summary plot's swap and reverts): each
// wants to sit just right of its line, or just left of it when that would run past the
// plot's right edge; crowded ones are stacked into rows, then elided ("revert r..."), then
// dropped, so that no two drawn labels overlap and none leaves [left, right].
#pragma once
#include <string>
#include <vector>

#include "viewer/model/label_layout.h"

namespace hf::viewer {

struct MarkerLabelWant {
  float line_x = 0;  // where the moment's line is drawn
  std::string text;
  int priority = 0;  // higher first, never cut for a lower one (the swap before reverts)
};

struct MarkerLabelPlace {
  int row = -1;      // 0 is the top row; -1: not drawn
  float x = 0;       // left edge of the text
  float width = 0;   // what the drawn text takes (measure(text))
  std::string text;  // the label, elided to fit; empty when not drawn
};

// `pad` pixels between a line and its label, `gap` between labels in a row. Labels that
// are no wider than `min_width` when elided are dropped.
std::vector<MarkerLabelPlace> place_marker_labels(const std::vector<MarkerLabelWant>& wants,
                                                  float left, float right, int max_rows,
                                                  const MeasureText& measure, float pad = 4,
                                                  float gap = 6);

}  // namespace hf::viewer
