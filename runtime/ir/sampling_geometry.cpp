#include "runtime/ir/sampling_geometry.h"

#include "runtime/ir/error.h"

namespace hf {

namespace {

[[noreturn]] void fail(const Node& n, const std::string& msg) {
  throw Error(describe(n) + ": " + msg);
}

std::string attr_or(const Node& n, const char* key, const char* fallback) {
  return n.attrs.count(key) ? n.attr_str(key) : std::string(fallback);
}

}  // namespace

GridSampleGeometry grid_sample_geometry(const Node& n, const Shape& x, const Shape& grid) {
  GridSampleGeometry g;
  const std::string mode = attr_or(n, "mode", "linear");
  if (mode == "nearest")
    g.mode = GridMode::Nearest;
  else if (mode == "linear")
    g.mode = GridMode::Linear;
  else if (mode == "cubic")
    g.mode = GridMode::Cubic;
  else
    fail(n, "mode '" + mode + "' is not supported (nearest, linear or cubic)");
  const std::string pad = attr_or(n, "padding_mode", "zeros");
  if (pad == "zeros")
    g.padding = GridPadding::Zeros;
  else if (pad == "border")
    g.padding = GridPadding::Border;
  else if (pad == "reflection")
    g.padding = GridPadding::Reflection;
  else
    fail(n, "padding_mode '" + pad + "' is not supported (zeros, border or reflection)");
  g.align_corners = n.attr_int("align_corners", 0) != 0;
  if (x.size() < 3) fail(n, "x must have rank >= 3 ([N, C, D...]), got " + to_string(x));
  const size_t r = x.size() - 2;
  if (grid.size() != r + 2 || grid[0] != x[0] || grid.back() != static_cast<int64_t>(r))
    fail(n, "grid must be [" + std::to_string(x[0]) + ", ...(" + std::to_string(r) + " axes), " +
                std::to_string(r) + "] for x " + to_string(x) + ", got " + to_string(grid));
  if (g.mode == GridMode::Cubic && r != 2) fail(n, "cubic mode needs 2 spatial axes");
  g.n = x[0];
  g.c = x[1];
  g.in.assign(x.begin() + 2, x.end());
  g.out.assign(grid.begin() + 1, grid.end() - 1);
  for (int64_t d : g.in)
    if (d == 0 && numel(grid) > 0) fail(n, "cannot sample an empty spatial axis");
  return g;
}

RoiAlignGeometry roi_align_geometry(const Node& n, const Shape& x, const Shape& rois,
                                    const Shape& bi) {
  RoiAlignGeometry g;
  const std::string mode = attr_or(n, "mode", "avg");
  if (mode != "avg" && mode != "max") fail(n, "mode '" + mode + "' is not supported (avg or max)");
  g.max = mode == "max";
  g.half_pixel = n.attr_int("half_pixel", 1) != 0;
  g.out_h = n.attr_int("output_height", 1);
  g.out_w = n.attr_int("output_width", 1);
  g.sampling_ratio = n.attr_int("sampling_ratio", 0);
  g.spatial_scale = n.attr_float("spatial_scale", 1.0);
  if (g.out_h < 1 || g.out_w < 1) fail(n, "output_height and output_width must be >= 1");
  if (g.sampling_ratio < 0) fail(n, "sampling_ratio must be >= 0");
  if (x.size() != 4) fail(n, "x must be [N, C, H, W], got " + to_string(x));
  if (rois.size() != 2 || rois[1] != 4) fail(n, "rois must be [R, 4], got " + to_string(rois));
  if (bi.size() != 1 || bi[0] != rois[0])
    fail(n, "batch_indices must be [" + std::to_string(rois[0]) + "], got " + to_string(bi));
  g.n = x[0];
  g.c = x[1];
  g.h = x[2];
  g.w = x[3];
  g.rois = rois[0];
  return g;
}

}  // namespace hf
