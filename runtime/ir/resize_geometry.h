// Resize (the graph op): its attributes resolved against the input shape, and the taps
// (input indices and weights) of each output position along one axis. ONNX Resize is
// separable, as the ONNX reference computes it: the result is a 1-D resampling along each
// axis in turn, so one table per axis defines the op. Shape inference (op_table.cpp) and
// every backend's kernel read the same definitions.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ir/graph.h"

namespace hf {

enum class ResizeMode { Nearest, Linear, Cubic };
enum class ResizeCoord {
  HalfPixel,
  HalfPixelSymmetric,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfCropAndResize,
  TfHalfPixelForNn  // opsets 11-12
};
// `Simple` is Resize-10's and Upsample's rounding (as onnxruntime): floor when enlarging,
// ceil when shrinking.
enum class ResizeRounding { RoundPreferFloor, RoundPreferCeil, Floor, Ceil, Simple };

struct ResizeGeometry {
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoord coord = ResizeCoord::HalfPixel;
  ResizeRounding rounding = ResizeRounding::RoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0;
  // Per axis of the input: sizes in and out, the scale the coordinates use (the given
  // scale, or out / in where sizes were given), and the roi (tf_crop_and_resize only).
  std::vector<int64_t> in, out;
  std::vector<double> scale, roi_start, roi_end;
};

// Attributes: sizes (ints, the output shape), scales (floats, one per axis; default
// sizes / input sizes), roi (floats,
// starts then ends, only with tf_crop_and_resize), mode, coordinate_transformation_mode,
// nearest_mode (strings), cubic_coeff_a, extrapolation_value (floats), exclude_outside,
// antialias (0|1). Throws hf::Error naming the node when one is bad.
ResizeGeometry resize_geometry(const Node& node, const Shape& in);

// The taps of one axis: output position j reads index[j * taps + t] (clamped into the
// input) with weight[j * taps + t], or is `extrapolation` where extrapolate[j] is set.
struct ResizeTaps {
  int taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> extrapolate;
  bool any_extrapolate = false;
};

// Whether the axis is left as it is (the ONNX reference skips it): same size, a scale of
// 1 and, for tf_crop_and_resize, the roi [0, 1].
bool resize_axis_identity(const ResizeGeometry& g, int axis);
ResizeTaps resize_taps(const ResizeGeometry& g, int axis);

}  // namespace hf
