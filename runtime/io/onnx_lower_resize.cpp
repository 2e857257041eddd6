// Resize (opsets 10-19) and Upsample (7-9): the attributes and the scales, sizes and roi
// inputs resolved into one op-table Resize node (resize_geometry.h), every mode and
// coordinate transformation. Where every resized axis turns out a repeat of each element
// (whole factors up) or a pick of every d-th (whole factors down), as the taps themselves
// say, the node is a Reshape, Broadcast and Reshape or a strided Slice instead: views
// that fusion can take.
#include <cmath>

#include "runtime/io/onnx_internal.h"
#include "runtime/ir/resize_geometry.h"

namespace hf::onnx_detail {

namespace {

// The whole factor f where the nearest taps repeat each element f times (index[j] = j / f),
// else 0.
int64_t repeat_factor(const ResizeTaps& t, int64_t n, int64_t m) {
  if (n == 0 || m <= n || m % n != 0) return 0;
  const int64_t f = m / n;
  for (int64_t j = 0; j < m; ++j)
    if (t.index[j] != j / f) return 0;
  return f;
}

// The start where the nearest taps pick every d-th element (index[j] = start + j d), or -1.
int64_t pick_start(const ResizeTaps& t, int64_t n, int64_t m) {
  if (m == 0 || m >= n || n % m != 0) return -1;
  const int64_t d = n / m, start = t.index[0];
  for (int64_t j = 0; j < m; ++j)
    if (t.index[j] != start + j * d) return -1;
  return start;
}

}  // namespace

void Importer::lower_resize() {
  ValueId x = rt(0);
  const Shape xs = shape_of(x);
  const int rank = static_cast<int>(xs.size());
  const bool upsample = cur_->op() == "Upsample";
  const int opset = cur_->opset;
  const bool v11 = !upsample && opset >= 11, v18 = !upsample && opset >= 18;
  // Scales or sizes, one per entry of `axes`.
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  const int scales_input = upsample ? 1 : opset >= 11 ? 2 : 1;
  if (upsample && opset < 9) {
    scales = cur_->attr_floats("scales");
  } else if (cur_->has_input(scales_input) && numel(shape(scales_input)) > 0) {
    const ConstTensor given = known(scales_input, "scales");
    for (int64_t k = 0; k < given.size(); ++k) scales.push_back(given.as_double(k));
  } else if (v11 && cur_->has_input(3)) {
    sizes = const_ints(3, "sizes");
  } else {
    throw Error("needs scales or sizes");
  }
  std::vector<int64_t> axes;
  if (v18 && cur_->has_attr("axes")) {
    const std::vector<int64_t> given = *cur_->attr_ints("axes");
    for (int64_t a : given) {
      axes.push_back(norm_axis(a, rank, "axes entry"));
      for (size_t k = 0; k + 1 < axes.size(); ++k)
        if (axes[k] == axes.back()) throw Error("axes has a repeated entry");
    }
  } else {
    for (int a = 0; a < rank; ++a) axes.push_back(a);
  }
  if ((scales.empty() ? sizes.size() : scales.size()) != axes.size())
    throw Error("scales or sizes need one entry per axis (" + std::to_string(axes.size()) + ")");
  const std::string mode = cur_->attr_str("mode", "nearest");
  const std::string coord =
      v11 ? cur_->attr_str("coordinate_transformation_mode", "half_pixel") : "asymmetric";
  if (coord == "half_pixel_symmetric" && opset < 19)
    throw Error("coordinate_transformation_mode 'half_pixel_symmetric' needs opset 19");
  if (coord == "tf_half_pixel_for_nn" && opset >= 13)
    throw Error("coordinate_transformation_mode 'tf_half_pixel_for_nn' was removed in opset 13");
  // Opset 10 and Upsample round as onnxruntime does ("simple": floor, ceil when shrinking).
  const std::string rounding =
      v11 ? cur_->attr_str("nearest_mode", "round_prefer_floor") : "simple";
  if (mode != "nearest" && mode != "linear" && !(v11 && mode == "cubic"))
    throw Error("mode '" + mode + "' is not supported");
  auto one_of = [](const std::string& v, std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (v == n) return true;
    return false;
  };
  if (!one_of(coord, {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                      "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn"}))
    throw Error("coordinate_transformation_mode '" + coord + "' is not supported");
  if (!one_of(rounding, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"}) ||
      (v11 && rounding == "simple"))
    throw Error("nearest_mode '" + rounding + "' is not supported");
  if (v18 && mode == "nearest" && cur_->attr_int("antialias", 0) != 0)
    throw Error("antialias is not defined for mode nearest");

  // Output size and the coordinates' scale of every axis.
  std::vector<int64_t> out(xs.begin(), xs.end());
  std::vector<double> scale(rank, 1.0);
  const std::string policy =
      v18 ? cur_->attr_str("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    throw Error("keep_aspect_ratio_policy '" + policy + "' is not supported");
  if (!sizes.empty() && policy != "stretch") {
    // One scale for every listed axis: the smallest (not_larger) or largest (not_smaller)
    // of the asked ratios, the sizes rounded half up from it.
    double s = 0;
    for (size_t k = 0; k < axes.size(); ++k) {
      if (xs[axes[k]] == 0) throw Error("cannot keep the aspect ratio of an empty axis");
      const double r = double(sizes[k]) / double(xs[axes[k]]);
      s = k == 0 ? r : policy == "not_larger" ? std::min(s, r) : std::max(s, r);
    }
    for (int64_t a : axes) {
      out[a] = static_cast<int64_t>(s * double(xs[a]) + 0.5);
      scale[a] = s;
    }
  } else {
    for (size_t k = 0; k < axes.size(); ++k) {
      const int a = static_cast<int>(axes[k]);
      if (!sizes.empty()) {
        if (sizes[k] < 0) throw Error("sizes must be >= 0");
        out[a] = sizes[k];
        scale[a] = xs[a] ? double(sizes[k]) / double(xs[a]) : 1.0;
      } else {
        if (!(scales[k] > 0) || scales[k] > 1e6) throw Error("scales must be > 0");
        out[a] = static_cast<int64_t>(std::floor(double(xs[a]) * scales[k]));
        scale[a] = scales[k];
      }
    }
  }
  checked_numel(Shape(out.begin(), out.end()), "the resized tensor");

  Node n;
  n.op = OpType::Resize;
  n.attrs["sizes"] = out;
  n.attrs["scales"] = scale;
  n.attrs["mode"] = mode;
  n.attrs["coordinate_transformation_mode"] = coord;
  n.attrs["nearest_mode"] = rounding;
  if (v11) {
    n.attrs["cubic_coeff_a"] = cur_->attr_float("cubic_coeff_a", -0.75);
    n.attrs["exclude_outside"] = cur_->attr_int("exclude_outside", 0);
    n.attrs["extrapolation_value"] = cur_->attr_float("extrapolation_value", 0.0);
  }
  if (v18) n.attrs["antialias"] = cur_->attr_int("antialias", 0);
  if (coord == "tf_crop_and_resize") {
    // The roi (starts, then ends) of the listed axes; the others take [0, 1].
    if (!cur_->has_input(1) || numel(shape(1)) == 0)
      throw Error("tf_crop_and_resize needs the roi input");
    const ConstTensor r = known(1, "roi");
    if (r.size() != static_cast<int64_t>(2 * axes.size()))
      throw Error("roi needs " + std::to_string(2 * axes.size()) + " entries");
    std::vector<double> roi(2 * rank, 0.0);
    for (int a = 0; a < rank; ++a) roi[rank + a] = 1.0;
    for (size_t k = 0; k < axes.size(); ++k) {
      roi[axes[k]] = r.as_double(static_cast<int64_t>(k));
      roi[rank + axes[k]] = r.as_double(static_cast<int64_t>(axes.size() + k));
    }
    n.attrs["roi"] = roi;
  }
  const ResizeGeometry g = resize_geometry(n, xs);
  if (g.mode != ResizeMode::Nearest && !is_float(dtype_of(x)))
    throw Error("mode '" + mode + "' needs a float input");

  // Whole factors in nearest mode: views (and a strided Slice) in place of the kernel; no
  // axis resized at all (any mode): the input itself.
  bool identity = true;
  for (int a = 0; a < rank; ++a) identity = identity && resize_axis_identity(g, a);
  if (identity) return alias(0, 0);
  bool views = g.mode == ResizeMode::Nearest;
  std::vector<int64_t> factor(rank, 0), start(rank, -1);
  for (int a = 0; views && a < rank; ++a) {
    if (resize_axis_identity(g, a)) continue;
    const ResizeTaps t = resize_taps(g, a);
    views = !t.any_extrapolate && !g.exclude_outside;
    factor[a] = repeat_factor(t, xs[a], out[a]);
    start[a] = pick_start(t, xs[a], out[a]);
    views = views && (factor[a] > 0 || start[a] >= 0);
  }
  if (!views) return set_rt(0, op1(OpType::Resize, std::move(n.attrs), x, "resize"));
  for (int a = 0; a < rank; ++a) {
    if (factor[a] > 0) {
      Shape one = shape_of(x), wide, to = shape_of(x);
      one.insert(one.begin() + a + 1, 1);
      wide = one;
      wide[a + 1] = factor[a];
      to[a] = out[a];
      x = reshape(broadcast_to(reshape(x, one), wide), to);
    } else if (start[a] >= 0) {
      const int64_t d = xs[a] / out[a];
      x = slice_axis(x, a, start[a], start[a] + (out[a] - 1) * d + 1, d);
    }
  }
  if (x == rt(0)) return alias(0, 0);
  set_rt(0, x);
}

}  // namespace hf::onnx_detail
