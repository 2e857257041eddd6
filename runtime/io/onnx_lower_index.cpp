// ONNX ops built on an index along one axis, decomposed into op-table nodes so fusion can
// take them (as LayerNormalization is): GatherElements (flat positions and one Gather),
// ArgMax/ArgMin and Hardmax (a MAX reduce, the
// positions equal to it, their first or last index), Trilu (a mask from row and column
// indices), NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (the target class
// picked by a one-hot mask, weights, ignore_index, the three reductions). The index is a
// small constant [1, ..., n, ..., 1] broadcast against the data.
#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

// 0, 1, ..., n - 1 along axis `axis` of a rank-`rank` shape of ones, of ONNX type `type`.
ValueId Importer::iota(int64_t n, int axis, int rank, int32_t type) {
  Shape s(rank, 1);
  s[axis] = n;
  ConstTensor t = make_const(type, s);
  for (int64_t k = 0; k < n; ++k) t.i[k] = k;
  return constant(t, "iota");
}

// The first (or last) index along `axis` where x has its maximum (or minimum), as INT64,
// with the axis kept (size 1).
ValueId Importer::arg_extreme(ValueId x, int axis, bool max, bool last) {
  const Shape xs = shape_of(x);
  int rank = static_cast<int>(xs.size());
  if (xs[axis] == 0) throw Error("cannot take the index of an extreme over an empty axis");
  ValueId best = reduce(x, max ? "MAX" : "MIN", {axis}, true);
  ValueId at = iota(xs[axis], axis, rank, pb::TensorProto::INT64);
  ValueId none = scalar(DType::I64, last ? -1 : xs[axis]);
  ValueId idx = where(ew(Mode::EQ, {x, best}), at, none);  // the data's shape
  return reduce(idx, last ? "MAX" : "MIN", {axis}, true);
}

void Importer::lower_argmax(bool max) {
  ValueId x = rt(0);
  DType t = dtype_of(x);
  if (t == DType::Bool) x = cvt(x, DType::U8);
  int rank = static_cast<int>(shape_of(x).size());
  if (rank == 0) throw Error("needs an input of rank >= 1");
  int axis = norm_axis(cur_->attr_int("axis", 0), rank, "axis");
  bool last = cur_->opset >= 12 && cur_->attr_int("select_last_index", 0) != 0;
  ValueId idx = arg_extreme(x, axis, max, last);
  if (cur_->attr_int("keepdims", 1) == 0) {
    Shape s = shape_of(idx);
    s.erase(s.begin() + axis);
    idx = reshape(idx, s);
  }
  set_rt(0, idx);
}

// 1 at the first maximum along the axis, 0 elsewhere; before opset 13 over the 2-D
// coercion at `axis` (default 1), from 13 over the one axis (default -1).
void Importer::lower_hardmax() {
  ValueId x = rt(0);
  DType t = dtype_of(x);
  if (!is_float(t)) throw Error("needs a float input");
  const Shape xs = shape_of(x);
  int rank = static_cast<int>(xs.size());
  int axis = norm_axis(cur_->attr_int("axis", cur_->opset < 13 ? 1 : -1), rank, "axis");
  if (cur_->opset < 13) {
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < rank; ++d) (d < axis ? outer : inner) *= xs[d];
    x = reshape(x, {outer, inner});
    axis = 1;
  }
  const Shape s = shape_of(x);
  ValueId at = iota(s[axis], axis, static_cast<int>(s.size()), pb::TensorProto::INT64);
  ValueId hot = ew(Mode::EQ, {at, arg_extreme(x, axis, true, false)});
  set_rt(0, reshape(cvt(hot, t), xs));
}

// Upper: keep x[..., i, j] where j - i >= k; lower: where j - i <= k. k (default 0) may be
// a run-time scalar: the mask is computed, not folded.
void Importer::lower_trilu() {
  ValueId x = rt(0);
  const Shape xs = shape_of(x);
  int rank = static_cast<int>(xs.size());
  if (rank < 2) throw Error("needs an input of rank >= 2");
  ValueId k = scalar(DType::I64, 0);
  if (cur_->has_input(1)) {
    k = rt(1);
    if (dtype_of(k) != DType::I64 || !shape_of(k).empty()) throw Error("k must be an INT64 scalar");
  }
  ValueId row = iota(xs[rank - 2], 0, 2, pb::TensorProto::INT64);
  ValueId col = iota(xs[rank - 1], 1, 2, pb::TensorProto::INT64);
  ValueId diag = ew(Mode::SUB, {col, row});
  bool upper = cur_->attr_int("upper", 1) != 0;
  ValueId keep = upper ? ew(Mode::LEQ, {k, diag}) : ew(Mode::LEQ, {diag, k});
  DType t = dtype_of(x);
  ValueId zero = t == DType::Bool ? cvt(scalar(DType::U8, 0), DType::Bool) : scalar(t, 0);
  // where() needs both values in the output's shape to broadcast the mask over the batch.
  set_rt(0, where(keep, x, zero));
}

// GatherElements' and ScatterElements' indices (input 1, along attribute `axis` of data of
// shape `ds`) as flat positions into the data: negative indices wrapped, the other
// coordinates those of the index's own position. An index outside [-dim, dim) gets the
// position -(numel + 1), outside the data, so the kernel refuses it at run time naming the
// node instead of reading or writing another row.
ValueId Importer::element_positions(Shape ds) {  // a copy: emitting nodes moves shapes
  const Shape is = shape(1);
  const int rank = static_cast<int>(ds.size());
  if (static_cast<int>(is.size()) != rank)
    throw Error("indices have rank " + std::to_string(is.size()) + ", the data " +
                std::to_string(rank));
  if (rank == 0) throw Error("needs an input of rank >= 1");
  const int axis = norm_axis(cur_->attr_int("axis", 0), rank, "axis");
  for (int k = 0; k < rank; ++k)
    if (k != axis && is[k] > ds[k])
      throw Error("indices " + to_string(is) + " exceed the data " + to_string(ds) + " on axis " +
                  std::to_string(k));
  int32_t it = elem(1);
  if (it != pb::TensorProto::INT64 && it != pb::TensorProto::INT32)
    throw Error("indices must be INT32 or INT64, got " + elem_type_name(it));
  const int64_t dim = ds[axis], total = checked_numel(ds, "the data");
  if (is_const(1))
    for (int64_t i : cst(1).ints())
      if (i < -dim || i >= dim)
        throw Error("index " + std::to_string(i) + " is out of range for axis " +
                    std::to_string(axis) + " of size " + std::to_string(dim));
  auto i64 = [&](double v) { return scalar(DType::I64, v); };
  ValueId i = cvt(rt(1), DType::I64);
  i = ew(Mode::ADD, {i, ew(Mode::MUL, {cvt(ew(Mode::LT, {i, i64(0)}), DType::I64), i64(dim)})});
  ValueId in_range = ew(Mode::AND, {ew(Mode::LEQ, {i64(0), i}), ew(Mode::LT, {i, i64(dim)})});
  std::vector<int64_t> stride(rank, 1);
  for (int k = rank - 2; k >= 0; --k) stride[k] = stride[k + 1] * ds[k + 1];
  ValueId flat = ew(Mode::MUL, {i, i64(double(stride[axis]))});
  for (int k = 0; k < rank; ++k)
    if (k != axis && is[k] > 1)
      flat = ew(Mode::ADD, {flat, ew(Mode::MUL, {iota(is[k], k, rank, pb::TensorProto::INT64),
                                                 i64(double(stride[k]))})});
  flat = where(in_range, flat, broadcast_to(reshape(i64(double(-total - 1)), Shape(rank, 1)), is));
  return flat;
}

// out[i0, .., ik, ..] = data[i0, .., index[i0, .., ik, ..], ..] (k the axis): one Gather
// from the flattened data at element_positions.
void Importer::lower_gather_elements() {
  ValueId data = rt(0);
  const int64_t total = checked_numel(shape_of(data), "the data");
  ValueId flat = element_positions(shape_of(data));
  Node n;
  n.op = OpType::Gather;
  n.attrs["axis"] = int64_t(0);
  n.inputs = {reshape(data, {total}), flat};
  set_rt(0, emit(std::move(n), "gather"));
}

// -input[n, target[n, d...], d...] * weight[target], over [N, C, d...] scores and [N, d...]
// targets; ignore_index targets count nothing (loss 0, weight 0). reduction: none, sum, or
// mean (the weighted sum over the sum of the weights used).
ValueId Importer::nll_loss(ValueId input, ValueId target, std::optional<ValueId> weight) {
  const Shape is = shape_of(input);
  int rank = static_cast<int>(is.size());
  DType t = dtype_of(input);
  DType tt = dtype_of(target);
  if (rank < 2) throw Error("the scores need rank >= 2 (N, C, ...)");
  if (tt != DType::I64 && tt != DType::I32) throw Error("the target must be INT32 or INT64");
  Shape want = is;
  want.erase(want.begin() + 1);
  if (shape_of(target) != want)
    throw Error("the target has shape " + to_string(shape_of(target)) + ", expected " +
                to_string(want));
  Shape t1 = want;
  t1.insert(t1.begin() + 1, 1);
  ValueId at = iota(is[1], 1, rank, to_elem_type(tt));
  ValueId hot = cvt(ew(Mode::EQ, {reshape(target, t1), at}), t);  // [N, C, d...]
  ValueId picked = reduce(ew(Mode::MUL, {input, hot}), "SUM", {1}, false);
  std::optional<ValueId> w;
  if (weight) {
    if (shape_of(*weight) != Shape{is[1]})
      throw Error("the weight has shape " + to_string(shape_of(*weight)) + ", expected [" +
                  std::to_string(is[1]) + "]");
    Shape ws(rank, 1);
    ws[1] = is[1];
    w = reduce(ew(Mode::MUL, {hot, reshape(cvt(*weight, t), ws)}), "SUM", {1}, false);
  }
  if (cur_->has_attr("ignore_index")) {
    ValueId ignored = ew(Mode::EQ, {target, scalar(tt, double(cur_->attr_int("ignore_index")))});
    ValueId valid = cvt(ew(Mode::NOT, {ignored}), t);
    w = w ? ew(Mode::MUL, {*w, valid}) : valid;
  }
  ValueId loss = ew(Mode::NEGATE, {picked});
  if (w) loss = ew(Mode::MUL, {loss, *w});
  std::string reduction = cur_->attr_str("reduction", "mean");
  if (reduction == "none") return loss;
  ValueId sum = reduce(loss, "SUM", {}, false);
  if (reduction == "sum") return sum;
  if (reduction != "mean")
    throw Error("reduction must be 'none', 'sum' or 'mean', not '" + reduction + "'");
  if (!w) return reduce(loss, "MEAN", {}, false);
  return ew(Mode::TRUE_DIV, {sum, reduce(*w, "SUM", {}, false)});
}

void Importer::lower_nll() {
  ValueId input = rt(0);
  if (!is_float(dtype_of(input))) throw Error("needs float scores");
  std::optional<ValueId> weight;
  if (cur_->has_input(2)) weight = rt(2);
  set_rt(0, nll_loss(input, rt(1), weight));
}

// NegativeLogLikelihoodLoss of LogSoftmax(scores) over axis 1; the log-probabilities are
// the optional second output.
void Importer::lower_softmax_cross_entropy() {
  ValueId x = rt(0);
  DType t = dtype_of(x);
  if (!is_float(t)) throw Error("needs float scores");
  if (shape_of(x).size() < 2) throw Error("the scores need rank >= 2 (N, C, ...)");
  ValueId mx = reduce(x, "MAX", {1}, true);
  ValueId d = ew(Mode::SUB, {x, mx});
  ValueId log_prob =
      ew(Mode::SUB, {d, ew(Mode::LOG, {reduce(ew(Mode::EXP, {d}), "SUM", {1}, true)})});
  std::optional<ValueId> weight;
  if (cur_->has_input(2)) weight = rt(2);
  set_rt(0, nll_loss(log_prob, rt(1), weight));
  if (cur_->wants_output(1)) set_rt(1, log_prob);
}

}  // namespace hf::onnx_detail
