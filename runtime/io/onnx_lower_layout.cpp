// ONNX layout ops on run-time data built from the op table's Slice, Concat, Broadcast,
// Reshape and Dimshuffle: Pad (constant, edge, reflect and wrap modes, negative pads crop),
// DepthToSpace / SpaceToDepth, Tile; and OneHot and EyeLike from an index comparison. On
// constants, Tile was folded already (onnx_fold.cpp). Resize is onnx_lower_resize.cpp.
#include <cmath>
#include <limits>

#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

namespace {

Attrs slice_attrs(int axis, int64_t start, int64_t end, int64_t step = 1) {
  return {{"starts", std::vector<int64_t>{start}},
          {"ends", std::vector<int64_t>{end}},
          {"axes", std::vector<int64_t>{axis}},
          {"steps", std::vector<int64_t>{step}}};
}

}  // namespace

ValueId Importer::slice_axis(ValueId v, int axis, int64_t start, int64_t end, int64_t step) {
  return op1(OpType::Slice, slice_attrs(axis, start, end, step), v, "slice");
}

ValueId Importer::concat_axis(std::vector<ValueId> parts, int axis) {
  std::erase_if(parts, [&](ValueId p) { return shape_of(p)[axis] == 0; });
  if (parts.size() == 1) return parts[0];
  Node n;
  n.op = OpType::Concat;
  n.attrs["axis"] = int64_t(axis);
  n.inputs = std::move(parts);
  return emit(std::move(n), "concat");
}

ValueId Importer::broadcast_to(ValueId v, const Shape& s) {
  if (shape_of(v) == s) return v;
  return op1(OpType::Broadcast, {{"shape", std::vector<int64_t>(s.begin(), s.end())}}, v);
}

// pads: [x1_begin, x2_begin, ..., x1_end, x2_end, ...] for the axes (all, or opset 18's
// `axes` input); the constant value an attribute before opset 11, then an optional input.
void Importer::lower_pad() {
  ValueId x = rt(0);
  const int rank = static_cast<int>(shape_of(x).size());
  DType t = dtype_of(x);
  std::vector<int64_t> pads;
  std::optional<ValueId> value;
  if (cur_->opset < 11) {
    auto p = cur_->attr_ints(cur_->opset < 2 ? "paddings" : "pads");
    if (!p) throw Error("needs the attribute pads");
    pads = *p;
    value = scalar(t, cur_->attr_float("value", 0.0));
  } else {
    pads = const_ints(1, "pads");
    if (cur_->has_input(2)) {
      if (checked_numel(shape(2), "constant_value") != 1)
        throw Error("constant_value must have one element");
      value = reshape(rt(2), {});
    }
  }
  if (!value) value = scalar(t, 0);
  std::vector<int64_t> axes;
  if (cur_->opset >= 18 && cur_->has_input(3)) {
    for (int64_t a : const_ints(3, "axes")) axes.push_back(norm_axis(a, rank, "axes entry"));
  } else {
    for (int a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (pads.size() != 2 * axes.size())
    throw Error("pads has " + std::to_string(pads.size()) + " entries for " +
                std::to_string(axes.size()) + " axes (two per axis)");
  const std::string mode = cur_->attr_str("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      !(mode == "wrap" && cur_->opset >= 19))
    throw Error("mode '" + mode + "' is not supported (constant, edge, reflect, wrap)");
  const int64_t big = std::numeric_limits<int32_t>::max();
  for (size_t k = 0; k < axes.size(); ++k) {
    const int a = static_cast<int>(axes[k]);
    int64_t b = pads[k], e = pads[k + axes.size()];
    if (b < -big || b > big || e < -big || e > big) throw Error("pads out of range");
    int64_t n = shape_of(x)[a];
    if (b < 0 || e < 0) {  // negative pads crop
      if (-std::min<int64_t>(b, 0) - std::min<int64_t>(e, 0) > n)
        throw Error("negative pads remove more than axis " + std::to_string(a) + " holds");
      x = slice_axis(x, a, std::max<int64_t>(-b, 0), n + std::min<int64_t>(e, 0));
      b = std::max<int64_t>(b, 0);
      e = std::max<int64_t>(e, 0);
      n = shape_of(x)[a];
    }
    if (b == 0 && e == 0) continue;
    auto block = [&](int64_t size) {
      Shape s = shape_of(x);
      s[a] = size;
      return s;
    };
    ValueId before = x, after = x;
    if (mode == "constant") {
      ValueId v = reshape(*value, Shape(rank, 1));
      before = broadcast_to(v, block(b));
      after = broadcast_to(v, block(e));
    } else if (n == 0) {
      throw Error("mode '" + mode + "' cannot pad an empty axis " + std::to_string(a));
    } else if (mode == "edge") {
      before = broadcast_to(slice_axis(x, a, 0, 1), block(b));
      after = broadcast_to(slice_axis(x, a, n - 1, n), block(e));
    } else if (mode == "reflect") {
      if (b > n - 1 || e > n - 1)
        throw Error("reflect pads of axis " + std::to_string(a) +
                    " must be smaller than its size " + std::to_string(n));
      // x[b], ..., x[1] and x[n-2], ..., x[n-1-e]; an end of -(n+1) reaches past index 0.
      before = slice_axis(x, a, b, 0, -1);
      after = slice_axis(x, a, n - 2, n - 2 - e >= 0 ? n - 2 - e : -(n + 1), -1);
    } else {  // wrap
      if (b > n || e > n)
        throw Error("wrap pads of axis " + std::to_string(a) + " must be at most its size " +
                    std::to_string(n));
      before = slice_axis(x, a, n - b, n);
      after = slice_axis(x, a, 0, e);
    }
    std::vector<ValueId> parts;
    if (b > 0) parts.push_back(before);
    parts.push_back(x);
    if (e > 0) parts.push_back(after);
    x = concat_axis(parts, a);
  }
  if (x == rt(0)) return alias(0, 0);  // nothing padded
  set_rt(0, x);
}

// DCR (default): channels split as (block, block, C'); CRD: as (C', block, block).
// SpaceToDepth (to_space false) is the inverse, with `mode` from opset 28 on.
void Importer::lower_depth_space(bool to_space) {
  ValueId x = rt(0);
  const Shape s = shape_of(x);
  if (s.size() != 4) throw Error("needs an input of rank 4 (N, C, H, W)");
  const int64_t b = cur_->attr_int("blocksize");
  if (b < 1 || b > (int64_t(1) << 20)) throw Error("blocksize must be >= 1");
  const std::string mode =
      to_space || cur_->opset >= 28 ? cur_->attr_str("mode", "DCR") : std::string("DCR");
  if (mode != "DCR" && mode != "CRD") throw Error("mode must be DCR or CRD, not '" + mode + "'");
  const bool crd = mode == "CRD";
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
  Shape mid, out;
  std::vector<int64_t> perm;
  if (to_space) {
    if (C % (b * b) != 0) throw Error(std::to_string(C) + " channels do not divide by blocksize^2");
    mid = crd ? Shape{N, C / (b * b), b, b, H, W} : Shape{N, b, b, C / (b * b), H, W};
    perm = crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
    out = {N, C / (b * b), H * b, W * b};
  } else {
    if (H % b != 0 || W % b != 0)
      throw Error("height and width must divide by blocksize " + std::to_string(b));
    mid = {N, C, H / b, b, W / b, b};
    perm = crd ? std::vector<int64_t>{0, 1, 3, 5, 2, 4} : std::vector<int64_t>{0, 3, 5, 1, 2, 4};
    out = {N, C * b * b, H / b, W / b};
  }
  ValueId y = op1(OpType::Dimshuffle, {{"perm", perm}}, reshape(x, mid));
  set_rt(0, reshape(y, out));
}

// x tiled repeats[k] times along axis k: x viewed as [1, d0, 1, d1, ...], broadcast to
// [r0, d0, r1, d1, ...] and merged.
void Importer::lower_tile() {
  ValueId x = rt(0);
  const Shape s = shape_of(x);
  std::vector<int64_t> reps = const_ints(1, "repeats");
  if (reps.size() != s.size()) throw Error("repeats must have one entry per axis");
  Shape spread, wide, out;
  for (size_t k = 0; k < s.size(); ++k) {
    if (reps[k] < 0) throw Error("repeats must be >= 0");
    spread.insert(spread.end(), {1, s[k]});
    wide.insert(wide.end(), {reps[k], s[k]});
    out.push_back(reps[k] * s[k]);
  }
  checked_numel(wide, "the tiled tensor");
  set_rt(0, reshape(broadcast_to(reshape(x, spread), wide), out));
}

// values[1] where the (wrapped) index equals the position along the new axis, else
// values[0]; indices outside [-depth, depth) give values[0] everywhere.
void Importer::lower_onehot() {
  ValueId idx = rt(0);
  // Any numeric type; a graph input's value only where the data gives it (--check).
  const ConstTensor d = known(1, "depth");
  if (d.size() != 1) throw Error("depth must have one element");
  const int64_t depth = static_cast<int64_t>(d.as_double(0));
  if (depth < 1 || depth > (int64_t(1) << 31)) throw Error("depth must be >= 1");
  if (checked_numel(shape(2), "values") != 2) throw Error("values must have two elements");
  const int rank = static_cast<int>(shape_of(idx).size()) + 1;
  const int axis = norm_axis(cur_->attr_int("axis", -1), rank, "axis");
  ValueId i = cvt(idx, DType::I64);
  ValueId wrapped =
      ew(Mode::ADD, {i, ew(Mode::MUL, {cvt(ew(Mode::LT, {i, scalar(DType::I64, 0)}), DType::I64),
                                       scalar(DType::I64, double(depth))})});
  Shape with_axis = shape_of(i);
  with_axis.insert(with_axis.begin() + axis, 1);
  ValueId hot =
      ew(Mode::EQ, {reshape(wrapped, with_axis), iota(depth, axis, rank, pb::TensorProto::INT64)});
  ValueId values = rt(2);
  ValueId off = reshape(slice_axis(reshape(values, {2}), 0, 0, 1), {});
  ValueId on = reshape(slice_axis(reshape(values, {2}), 0, 1, 2), {});
  Shape out = shape_of(hot);
  set_rt(0, where(hot, broadcast_to(reshape(on, Shape(rank, 1)), out),
                  broadcast_to(reshape(off, Shape(rank, 1)), out)));
}

// Ones on the k-th diagonal of a 2-D shape, of the input's type or `dtype`.
void Importer::lower_eyelike() {
  const Shape s = shape(0);
  if (s.size() != 2) throw Error("needs an input of rank 2");
  int32_t type = cur_->has_attr("dtype") ? static_cast<int32_t>(cur_->attr_int("dtype")) : elem(0);
  auto t = to_dtype(type);
  if (!t) throw Error("element type " + elem_type_name(type) + " is not supported");
  ValueId row = iota(s[0], 0, 2, pb::TensorProto::INT64);
  ValueId col = iota(s[1], 1, 2, pb::TensorProto::INT64);
  ValueId diag =
      ew(Mode::EQ, {ew(Mode::SUB, {col, row}), scalar(DType::I64, double(cur_->attr_int("k", 0)))});
  set_rt(0, cvt(broadcast_to(diag, s), *t));
}

}  // namespace hf::onnx_detail
