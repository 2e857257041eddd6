#include "runtime/ir/resize_geometry.h"

#include <algorithm>
#include <cmath>

#include "runtime/ir/error.h"

namespace hf {

namespace {

[[noreturn]] void fail(const Node& n, const std::string& msg) {
  throw Error(describe(n) + ": " + msg);
}

template <class E>
E pick(const Node& n, const char* attr, const std::string& fallback,
       std::initializer_list<std::pair<const char*, E>> names) {
  const std::string v = n.attrs.count(attr) ? n.attr_str(attr) : fallback;
  for (const auto& [name, e] : names)
    if (v == name) return e;
  fail(n, std::string(attr) + " '" + v + "' is not supported");
}

bool close(double a, double b) {  // math.isclose's default tolerance, as the reference
  return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

}  // namespace

ResizeGeometry resize_geometry(const Node& n, const Shape& in) {
  ResizeGeometry g;
  g.mode = pick<ResizeMode>(n, "mode", "nearest",
                            {{"nearest", ResizeMode::Nearest},
                             {"linear", ResizeMode::Linear},
                             {"cubic", ResizeMode::Cubic}});
  g.coord = pick<ResizeCoord>(n, "coordinate_transformation_mode", "half_pixel",
                              {{"half_pixel", ResizeCoord::HalfPixel},
                               {"half_pixel_symmetric", ResizeCoord::HalfPixelSymmetric},
                               {"pytorch_half_pixel", ResizeCoord::PytorchHalfPixel},
                               {"align_corners", ResizeCoord::AlignCorners},
                               {"asymmetric", ResizeCoord::Asymmetric},
                               {"tf_crop_and_resize", ResizeCoord::TfCropAndResize},
                               {"tf_half_pixel_for_nn", ResizeCoord::TfHalfPixelForNn}});
  g.rounding = pick<ResizeRounding>(n, "nearest_mode", "round_prefer_floor",
                                    {{"round_prefer_floor", ResizeRounding::RoundPreferFloor},
                                     {"round_prefer_ceil", ResizeRounding::RoundPreferCeil},
                                     {"floor", ResizeRounding::Floor},
                                     {"ceil", ResizeRounding::Ceil},
                                     {"simple", ResizeRounding::Simple}});
  g.cubic_a = n.attr_float("cubic_coeff_a", -0.75);
  g.exclude_outside = n.attr_int("exclude_outside", 0) != 0;
  g.antialias = n.attr_int("antialias", 0) != 0;
  g.extrapolation = n.attr_float("extrapolation_value", 0.0);
  if (g.antialias && g.mode == ResizeMode::Nearest)
    fail(n, "antialias is not defined for mode nearest");
  const size_t rank = in.size();
  if (rank == 0) fail(n, "cannot resize a scalar");
  std::vector<int64_t> sizes = n.attr_ints("sizes");
  // Without `scales` (a hand-written graph), the coordinates use out / in.
  std::vector<double> scales;
  if (n.attrs.count("scales"))
    scales = n.attr_floats("scales");
  else
    for (size_t d = 0; d < rank && sizes.size() == rank; ++d)
      scales.push_back(in[d] ? double(sizes[d]) / double(in[d]) : 1.0);
  if (sizes.size() != rank || scales.size() != rank)
    fail(n, "sizes and scales need one entry per axis (" + std::to_string(rank) + ")");
  g.in.assign(in.begin(), in.end());
  g.out = sizes;
  g.scale = scales;
  g.roi_start.assign(rank, 0.0);
  g.roi_end.assign(rank, 1.0);
  if (g.coord == ResizeCoord::TfCropAndResize) {
    std::vector<double> roi = n.attr_floats("roi");
    if (roi.size() != 2 * rank)
      fail(n, "roi needs " + std::to_string(2 * rank) + " entries (starts, then ends)");
    for (size_t d = 0; d < rank; ++d) {
      g.roi_start[d] = roi[d];
      g.roi_end[d] = roi[rank + d];
    }
  }
  for (size_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0) fail(n, "sizes must be >= 0");
    if (!(scales[d] > 0) || !std::isfinite(scales[d])) fail(n, "scales must be > 0");
    if (g.in[d] == 0 && g.out[d] > 0) fail(n, "cannot resize an empty axis to a non-empty one");
  }
  return g;
}

bool resize_axis_identity(const ResizeGeometry& g, int d) {
  return g.in[d] == g.out[d] && close(g.scale[d], 1.0) &&
         (g.coord != ResizeCoord::TfCropAndResize ||
          (std::fabs(g.roi_start[d]) <= 1e-9 && close(g.roi_end[d], 1.0)));
}

namespace {

// The source coordinate of output position y (the ONNX reference's _compute_x_ori).
double source_coord(const ResizeGeometry& g, int d, double y, bool* extrapolate) {
  const double n = static_cast<double>(g.in[d]), s = g.scale[d];
  const double width = s * n;  // the reference's output_width: not rounded
  *extrapolate = false;
  switch (g.coord) {
    case ResizeCoord::AlignCorners:
      return width == 1 ? 0.0 : y * (n - 1) / (width - 1);
    case ResizeCoord::Asymmetric:
      return y / s;
    case ResizeCoord::TfCropAndResize: {
      const double r0 = g.roi_start[d], r1 = g.roi_end[d];
      double x = width == 1 ? (r1 - r0) * (n - 1) / 2 : y * (r1 - r0) * (n - 1) / (width - 1);
      x += r0 * (n - 1);
      *extrapolate = x < 0 || x > n - 1;
      return x;
    }
    case ResizeCoord::PytorchHalfPixel:
      return width == 1 ? -0.5 : (y + 0.5) / s - 0.5;
    case ResizeCoord::HalfPixel:
      return (y + 0.5) / s - 0.5;
    case ResizeCoord::TfHalfPixelForNn:
      return (y + 0.5) / s;
    case ResizeCoord::HalfPixelSymmetric: {
      const double adjustment = static_cast<double>(g.out[d]) / width;
      const double offset = n / 2 * (1 - adjustment);
      return offset + (y + 0.5) / s - 0.5;
    }
  }
  return 0;
}

double cubic(double x, double a) {  // the Keys kernel, for antialias
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

}  // namespace

ResizeTaps resize_taps(const ResizeGeometry& g, int d) {
  ResizeTaps t;
  const int64_t n = g.in[d], m = g.out[d];
  t.extrapolate.assign(m, 0);
  // Antialias widens the kernel by 1 / scale when shrinking (the reference's
  // _linear_coeffs_antialias / _cubic_coeffs_antialias).
  const double aa = g.antialias ? std::min(g.scale[d], 1.0) : 1.0;
  int64_t first = 0;  // the first tap's offset from `base` (below)
  if (g.mode == ResizeMode::Nearest) {
    t.taps = 1;
  } else if (g.mode == ResizeMode::Linear) {
    first = g.antialias ? static_cast<int64_t>(std::floor(-1 / aa)) + 1 : 0;
    t.taps = static_cast<int>(2 - 2 * first);
  } else {
    first = g.antialias ? static_cast<int64_t>(std::floor(-2 / aa)) + 1 : -1;
    t.taps = static_cast<int>(2 - 2 * first);
  }
  t.index.resize(m * t.taps);
  t.weight.resize(m * t.taps);
  for (int64_t j = 0; j < m; ++j) {
    bool extrapolate = false;
    const double x = source_coord(g, d, static_cast<double>(j), &extrapolate);
    t.extrapolate[j] = extrapolate;
    t.any_extrapolate |= extrapolate;
    int64_t* idx = &t.index[j * t.taps];
    double* w = &t.weight[j * t.taps];
    auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, std::max<int64_t>(n - 1, 0)); };
    if (g.mode == ResizeMode::Nearest) {
      const double f = std::floor(x), r = x - f;
      int64_t i = static_cast<int64_t>(f);
      if (r != 0) {
        switch (g.rounding) {
          case ResizeRounding::RoundPreferFloor:
            i += r > 0.5;
            break;
          case ResizeRounding::RoundPreferCeil:
            i += r >= 0.5;
            break;
          case ResizeRounding::Floor:
            break;
          case ResizeRounding::Ceil:
            i += 1;
            break;
          case ResizeRounding::Simple:
            i += g.scale[d] < 1;
            break;
        }
      }
      idx[0] = clamp(i);
      w[0] = g.exclude_outside && (i < 0 || i >= n) ? 0 : 1;  // the reference's zeroed tap
      continue;
    }
    // `base` is the input index left of x, and ratio in (0, 1] its distance from x: an
    // integer x is ratio 1 from base = x - 1, as the reference takes it.
    const double f = std::floor(x);
    const double ratio = x == f ? 1.0 : x - f;
    const int64_t base = static_cast<int64_t>(f) - (x == f ? 1 : 0);
    double sum = 0;
    for (int k = 0; k < t.taps; ++k) {
      const int64_t off = first + k;  // tap at base + off, at distance off - ratio from x
      const double dist = static_cast<double>(off) - ratio;
      double c;
      if (g.mode == ResizeMode::Linear)
        c = g.antialias ? std::clamp(1 - std::fabs(dist * aa), 0.0, 1.0) : 1 - std::fabs(dist);
      else
        c = cubic(dist * aa, g.cubic_a);
      const int64_t i = base + off;
      if (g.exclude_outside && (i < 0 || i >= n)) c = 0;
      idx[k] = clamp(i);
      w[k] = c;
      sum += c;
    }
    // Antialias normalises always, exclude_outside after dropping taps (a sum of 0 is
    // left alone, as the reference's guard).
    if ((g.antialias || g.exclude_outside) && sum != 0)
      for (int k = 0; k < t.taps; ++k) w[k] /= sum;
  }
  return t;
}

}  // namespace hf
