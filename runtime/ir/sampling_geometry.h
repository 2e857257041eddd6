// Geometry of GridSample and RoiAlign (the graph ops), resolved from a node's attributes
// and input shapes. Shape inference (op_table.cpp) and the kernels read the same
// definitions; each function throws hf::Error naming the node when an attribute is bad.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/ir/graph.h"

namespace hf {

enum class GridMode { Nearest, Linear, Cubic };
enum class GridPadding { Zeros, Border, Reflection };

// GridSample: x [N, C, D1..Dr], grid [N, O1..Or, r] whose last axis holds (x, y[, z]),
// the innermost spatial axis first, in [-1, 1]. Attributes: mode (nearest | linear |
// cubic), padding_mode (zeros | border | reflection), align_corners (0|1).
struct GridSampleGeometry {
  GridMode mode = GridMode::Linear;
  GridPadding padding = GridPadding::Zeros;
  bool align_corners = false;
  int64_t n = 0, c = 0;
  std::vector<int64_t> in;   // D1..Dr
  std::vector<int64_t> out;  // O1..Or
};
GridSampleGeometry grid_sample_geometry(const Node& node, const Shape& x, const Shape& grid);

// RoiAlign: x [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch_indices [R]; the output
// [R, C, output_height, output_width]. Attributes: mode (avg | max), output_height,
// output_width, sampling_ratio (0: adaptive), spatial_scale, half_pixel (0|1: the
// coordinate_transformation_mode).
struct RoiAlignGeometry {
  bool max = false, half_pixel = true;
  int64_t n = 0, c = 0, h = 0, w = 0, rois = 0, out_h = 1, out_w = 1, sampling_ratio = 0;
  double spatial_scale = 1;
};
RoiAlignGeometry roi_align_geometry(const Node& node, const Shape& x, const Shape& rois,
                                    const Shape& batch_indices);

}  // namespace hf
