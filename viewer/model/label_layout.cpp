#include "viewer/model/label_layout.h"

#include <algorithm>
#include <numeric>

namespace hf::viewer {

std::string elide_to_width(const std::string& text, float width, const MeasureText& measure) {
  if (measure(text) <= width) return text;
  // Binary search the longest prefix that fits with "...".
  size_t lo = 0, hi = text.size();
  while (lo < hi) {
    const size_t mid = (lo + hi + 1) / 2;
    if (measure(std::string_view(text).substr(0, mid)) + measure("...") <= width)
      lo = mid;
    else
      hi = mid - 1;
  }
  // Do not cut inside a UTF-8 sequence.
  while (lo > 0 && lo < text.size() && (static_cast<unsigned char>(text[lo]) & 0xc0) == 0x80) --lo;
  if (lo == 0) return {};
  return text.substr(0, lo) + "...";
}

std::vector<LabelSlot> place_labels(const std::vector<LabelWant>& wants, int max_rows, float gap,
                                    float min_width, float right) {
  std::vector<LabelSlot> slots(wants.size());
  if (max_rows <= 0) return slots;
  std::vector<size_t> order(wants.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return wants[a].x < wants[b].x; });
  // Per row, the labels placed in it (indices), the last one at the back.
  std::vector<std::vector<size_t>> rows(static_cast<size_t>(max_rows));
  auto end_of_row = [&](size_t r) {
    const auto& row = rows[r];
    return row.empty() ? -1e30f : wants[row.back()].x + slots[row.back()].width;
  };
  for (size_t i : order) {
    const LabelWant& w = wants[i];
    const float width = std::min(w.width, right - w.x);
    if (width < min_width) continue;
    size_t row = rows.size();
    for (size_t r = 0; r < rows.size() && row == rows.size(); ++r)
      if (end_of_row(r) + gap <= w.x) row = r;
    if (row == rows.size()) {
      // No room: cut the label that ends first, dropping those cut too short.
      row = 0;
      for (size_t r = 1; r < rows.size(); ++r)
        if (end_of_row(r) < end_of_row(row)) row = r;
      auto& prev = rows[row];
      while (!prev.empty() && end_of_row(row) + gap > w.x) {
        LabelSlot& p = slots[prev.back()];
        p.width = w.x - gap - wants[prev.back()].x;
        if (p.width >= min_width) break;
        p = LabelSlot{};
        prev.pop_back();
      }
    }
    slots[i] = {static_cast<int>(row), width};
    rows[row].push_back(i);
  }
  return slots;
}

}  // namespace hf::viewer
