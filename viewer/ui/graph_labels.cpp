#include "viewer/ui/graph_labels.h"

#include <algorithm>
#include <cfloat>
#include <string>

#include "viewer/model/name_elide.h"

namespace hf::viewer::ui {

namespace {
// The largest an overview label grows to, whatever the box's size.
constexpr float kMaxOverviewPx = 13.0f;
constexpr float kLineHeight = 1.15f;  // of the font size
// More lines than the name only when they can all be this large.
constexpr float kComfortablePx = 9.5f;
}  // namespace

void draw_node_label(ImDrawList* dl, ImFont* font, const std::vector<TextLine>& lines,
                     float natural_px, ImVec2 min, ImVec2 max, ImU32 color, LabelStats* stats) {
  const float w = max.x - min.x - 6, h = max.y - min.y - 2;
  if (lines.empty() || w < 8 || h < kMinLabelPx) return;
  const size_t n = lines.size();
  size_t k = n;
  float px = natural_px;
  if (natural_px < 8.5f || natural_px * kLineHeight * n > h) {
    // As many lines as read comfortably, the first ones first; at least the name when it
    // can be read at all.
    k = 0;
    for (size_t c = n; c >= 1; --c) {
      const float p = std::min(std::max(kMaxOverviewPx, natural_px), h / (c * kLineHeight));
      if (p >= (c == 1 ? kMinLabelPx : kComfortablePx)) {
        k = c;
        px = p;
        break;
      }
    }
    if (k == 0) return;
    // No larger than the box is wide (it was sized for the text at natural_px), unless that
    // is too small to read: then the names are shortened instead.
    float widest = 0;
    for (size_t l = 0; l < k; ++l)
      widest = std::max(widest, font->CalcTextSizeA(px, FLT_MAX, 0, lines[l].text.c_str()).x);
    if (widest > w) px = std::max(kMinLabelPx, px * w / widest * 0.97f);
  }
  const auto width = [&](std::string_view s) {
    return font->CalcTextSizeA(px, FLT_MAX, 0, s.data(), s.data() + s.size()).x;
  };
  const float lh = px * kLineHeight;
  const float cx = (min.x + max.x) / 2;
  const float top = (min.y + max.y) / 2 - lh * k / 2;
  int drawn = 0;
  for (size_t l = 0; l < k; ++l) {
    const std::string text = elide_middle(lines[l].text, w, width);
    if (text.empty()) continue;
    const float tw = width(text);
    dl->AddText(font, px, {cx - tw / 2, top + lh * l + (lh - px) / 2}, color, text.c_str());
    if (stats) stats->add(px);
    ++drawn;
  }
  if (stats) stats->max_lines = std::max(stats->max_lines, drawn);
}

}  // namespace hf::viewer::ui
