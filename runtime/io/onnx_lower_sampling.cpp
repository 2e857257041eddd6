// GridSample (opsets 16-22) and RoiAlign (10-22) as the op table's GridSample and RoiAlign
// nodes; AffineGrid (20) as a MatMul of a constant base grid by theta; CenterCropPad (18)
// as a Slice (crop) and a Concat with zeros (pad) per axis.
#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

void Importer::lower_grid_sample() {
  const Shape xs = shape(0);
  if (cur_->opset < 20 && xs.size() != 4)
    throw Error("GridSample before opset 20 takes a 4-D input, got " + to_string(xs));
  std::string mode = cur_->attr_str("mode", cur_->opset < 20 ? "bilinear" : "linear");
  // Opset 16 names: bilinear and bicubic; 20 on: linear and cubic.
  if (cur_->opset < 20 && (mode == "bilinear" || mode == "bicubic"))
    mode = mode == "bilinear" ? "linear" : "cubic";
  else if (mode != "nearest" && (cur_->opset < 20 || (mode != "linear" && mode != "cubic")))
    throw Error("mode '" + mode + "' is not supported");
  Node n;
  n.op = OpType::GridSample;
  n.attrs["mode"] = mode;
  const std::string padding = cur_->attr_str("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    throw Error("padding_mode '" + padding + "' is not supported");
  n.attrs["padding_mode"] = padding;
  n.attrs["align_corners"] = cur_->attr_int("align_corners", 0);
  n.inputs = {rt(0), rt(1)};
  set_rt(0, emit(std::move(n), "grid_sample"));
}

void Importer::lower_roi_align() {
  Node n;
  n.op = OpType::RoiAlign;
  const std::string mode = cur_->attr_str("mode", "avg");
  if (mode != "avg" && mode != "max") throw Error("mode '" + mode + "' is not supported");
  n.attrs["mode"] = mode;
  n.attrs["output_height"] = cur_->attr_int("output_height", 1);
  n.attrs["output_width"] = cur_->attr_int("output_width", 1);
  n.attrs["sampling_ratio"] = cur_->attr_int("sampling_ratio", 0);
  n.attrs["spatial_scale"] = cur_->attr_float("spatial_scale", 1.0);
  // Opset 10 has no attribute and shifts by nothing: output_half_pixel.
  const std::string coord = cur_->opset >= 16
                                ? cur_->attr_str("coordinate_transformation_mode", "half_pixel")
                                : "output_half_pixel";
  if (coord != "half_pixel" && coord != "output_half_pixel")
    throw Error("coordinate_transformation_mode '" + coord + "' is not supported");
  n.attrs["half_pixel"] = int64_t(coord == "half_pixel");
  n.inputs = {rt(0), rt(1), rt(2)};
  set_rt(0, emit(std::move(n), "roi_align"));
}

// grid[n, ..., :] = theta[n] (x, y[, z], 1): the base grid [P, r + 1] (x the innermost
// axis's coordinate) is a constant, times theta transposed, [N, r + 1, r].
void Importer::lower_affine_grid() {
  const Shape ts = shape(0);
  std::vector<int64_t> size = const_ints(1, "size");
  if (size.size() != 4 && size.size() != 5)
    throw Error("size must be [N, C, H, W] or [N, C, D, H, W]");
  const int r = static_cast<int>(size.size()) - 2;
  if (ts != Shape{size[0], r, r + 1})
    throw Error("theta must be [" + std::to_string(size[0]) + ", " + std::to_string(r) + ", " +
                std::to_string(r + 1) + "], got " + to_string(ts));
  if (!is_float(dtype(0))) throw Error("theta must be a float tensor");
  const bool align = cur_->attr_int("align_corners", 0) != 0;
  std::vector<int64_t> dims(size.begin() + 2, size.end());
  for (int64_t d : dims)
    if (d < 1) throw Error("size must be >= 1 along the spatial axes");
  Shape base_shape{1, 1, r + 1};
  for (int64_t d : dims) base_shape[1] *= d;
  checked_numel(base_shape, "the base grid");
  ConstTensor base = make_const(elem(0), base_shape);
  // Coordinate k of axis a (the reference's arange): -1 + 2k / (d - 1) with align_corners
  // (a single position is -1), else -1 + (2k + 1) / d.
  auto coord = [&](int a, int64_t k) {
    const double d = static_cast<double>(dims[a]);
    if (align) return dims[a] == 1 ? -1.0 : -1.0 + static_cast<double>(k) * (2.0 / (d - 1));
    return -1.0 + 1.0 / d + static_cast<double>(k) * (2.0 / d);
  };
  for (int64_t p = 0; p < base_shape[1]; ++p) {
    int64_t rest = p;
    double* row = &base.f[p * (r + 1)];
    for (int a = r - 1; a >= 0; --a) {  // row holds (x, y[, z]): the innermost axis first
      row[r - 1 - a] = round_to(elem(0), coord(a, rest % dims[a]));
      rest /= dims[a];
    }
    row[r] = 1;
  }
  ValueId theta_t = op1(OpType::Dimshuffle, {{"perm", std::vector<int64_t>{0, 2, 1}}}, rt(0));
  Node mm;
  mm.op = OpType::MatMul;
  mm.inputs = {constant(base, "base_grid"), theta_t};
  ValueId grid = emit(std::move(mm), "matmul");
  Shape out{size[0]};
  out.insert(out.end(), dims.begin(), dims.end());
  out.push_back(r);
  set_rt(0, reshape(grid, out));
}

// Per listed axis: a centred Slice where the target is smaller (the extra element, if the
// difference is odd, taken from the end), zeros on both sides where it is larger (the
// extra one at the end).
void Importer::lower_center_crop_pad() {
  ValueId x = rt(0);
  const int rank = static_cast<int>(shape_of(x).size());
  std::vector<int64_t> target = const_ints(1, "shape");
  std::vector<int64_t> axes;
  if (auto given = cur_->attr_ints("axes")) {
    for (int64_t a : *given) axes.push_back(norm_axis(a, rank, "axes entry"));
  } else {
    for (int a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (target.size() != axes.size())
    throw Error("shape needs one entry per axis (" + std::to_string(axes.size()) + ")");
  for (size_t k = 0; k < axes.size(); ++k) {
    const int a = static_cast<int>(axes[k]);
    const int64_t dim = shape_of(x)[a], t = target[k];
    if (t < 0) throw Error("shape must be >= 0");
    if (t < dim) {
      const int64_t begin = (dim - t) / 2;
      x = slice_axis(x, a, begin, begin + t);
    } else if (t > dim) {
      const int64_t before = (t - dim) / 2, after = t - dim - before;
      Shape s = shape_of(x);
      s[a] = before;
      ValueId lo = broadcast_to(scalar(dtype_of(x), 0), s);
      s[a] = after;
      ValueId hi = broadcast_to(scalar(dtype_of(x), 0), s);
      x = concat_axis({lo, x, hi}, a);
    }
  }
  if (x == rt(0)) return alias(0, 0);
  set_rt(0, x);
}

}  // namespace hf::onnx_detail
