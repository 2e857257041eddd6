// Shapes, strides and NumPy broadcasting.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hf {

// Kernels take shapes in fixed-size arrays; graphs deeper than this are rejected on import.
inline constexpr int kMaxRank = 8;

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;  // in elements, not bytes

// The most elements one tensor may have: 2^40. Every value the IR creates is checked
// against it (Graph::add_input, infer_outputs), so numel() and byte counts (x 8 bytes) of
// any shape in a graph cannot overflow int64_t, and neither can the kernels' index math.
inline constexpr int64_t kMaxElements = int64_t{1} << 40;

// The element count of a shape already in a graph (bounded by kMaxElements).
int64_t numel(const Shape& s);
// The element count when it is at most `max` and so is every dimension (none negative),
// else nullopt; never overflows. The one check of a shape that is not in a graph yet.
std::optional<int64_t> numel_within(const Shape& s, int64_t max = kMaxElements);
Strides contiguous_strides(const Shape& s);

// NumPy broadcasting of two or more shapes; nullopt if they are incompatible.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// True if `from` broadcasts to `to` (right-aligned, each dim equal or 1).
bool broadcasts_to(const Shape& from, const Shape& to);

// Strides that read a contiguous tensor of shape `from` as shape `to`: stride 0 on
// broadcast dimensions. Requires broadcasts_to(from, to).
Strides broadcast_strides(const Shape& from, const Shape& to);

// Normalises a possibly negative axis for a tensor of `rank`; nullopt if out of range.
std::optional<int> normalize_axis(int64_t axis, int rank);

std::string to_string(const Shape& s);  // "[2,3,4]"; "[]" for a scalar

}  // namespace hf
