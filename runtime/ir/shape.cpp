#include "runtime/ir/shape.h"

namespace hf {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::optional<int64_t> numel_within(const Shape& s, int64_t max) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0 || (d != 0 && n > max / d)) return std::nullopt;
    n *= d;
  }
  // A zero dimension after a huge one: the product is 0, but each dimension must still fit.
  for (int64_t d : s)
    if (d > max) return std::nullopt;
  return n;
}

Strides contiguous_strides(const Shape& s) {
  Strides st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  size_t off = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != to[off + i] && from[i] != 1) return false;
  return true;
}

Strides broadcast_strides(const Shape& from, const Shape& to) {
  Strides src = contiguous_strides(from);
  Strides out(to.size(), 0);
  size_t off = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    out[off + i] = (from[i] == 1 && to[off + i] != 1) ? 0 : src[i];
  return out;
}

std::optional<int> normalize_axis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

std::string to_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

}  // namespace hf
