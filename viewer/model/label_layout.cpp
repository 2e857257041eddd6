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
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (wants[a].priority != wants[b].priority) return wants[a].priority > wants[b].priority;
    return wants[a].x < wants[b].x;
  });
  std::vector<std::vector<size_t>> rows(static_cast<size_t>(max_rows));  // labels placed
  auto end_of = [&](size_t j) { return wants[j].x + slots[j].width; };
  for (size_t i : order) {
    const LabelWant& w = wants[i];
    const float width = std::min(w.width, right - w.x);
    if (width < min_width) continue;
    int full = -1, cut = -1, partial = -1;
    size_t cut_label = 0;
    float cut_width = 0, partial_width = 0;
    for (size_t r = 0; r < rows.size() && full < 0; ++r) {
      // The label this one would start inside of (the one reaching furthest from its left),
      // and where the next one to its right begins.
      int blocker = -1;
      float next_start = right + gap;
      for (size_t j : rows[r]) {
        if (wants[j].x <= w.x) {
          if (end_of(j) + gap > w.x &&
              (blocker < 0 || end_of(j) > end_of(static_cast<size_t>(blocker))))
            blocker = static_cast<int>(j);
        } else {
          next_start = std::min(next_start, wants[j].x);
        }
      }
      const float room = std::min(width, next_start - gap - w.x);
      if (blocker < 0) {
        if (room >= width) {
          full = static_cast<int>(r);
        } else if (room >= min_width && room > partial_width) {
          partial = static_cast<int>(r);
          partial_width = room;
        }
        continue;
      }
      // Cut the label it runs into (dropped when that leaves it too short), if that one is
      // no more important and the only one in the way.
      const size_t b = static_cast<size_t>(blocker);
      bool only_blocker = true;
      for (size_t j : rows[r])
        if (j != b && wants[j].x <= w.x && end_of(j) + gap > w.x) only_blocker = false;
      if (cut < 0 && only_blocker && wants[b].priority <= w.priority && room >= min_width) {
        cut = static_cast<int>(r);
        cut_label = b;
        cut_width = room;
      }
    }
    if (full >= 0) {
      slots[i] = {full, width};
    } else if (cut >= 0) {
      LabelSlot& b = slots[cut_label];
      b.width = w.x - gap - wants[cut_label].x;
      if (b.width < min_width) {
        b = LabelSlot{};
        auto& row = rows[static_cast<size_t>(cut)];
        row.erase(std::find(row.begin(), row.end(), cut_label));
      }
      slots[i] = {cut, cut_width};
    } else if (partial >= 0) {
      slots[i] = {partial, partial_width};
    } else {
      continue;
    }
    rows[static_cast<size_t>(slots[i].row)].push_back(i);
  }
  return slots;
}

}  // namespace hf::viewer
