// ONNX normalisations lowered to reductions and element-wise nodes: LayerNormalization,
// BatchNormalization (inference), InstanceNormalization, GroupNormalization (opsets 18 and
// 21), RMSNormalization (opset 23), MeanVarianceNormalization and LpNormalization. Each follows the
// function body the ONNX spec gives it, in the stash type (f32 for f16/bf16 inputs) where the op
// has one.
#include <cmath>

#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

namespace {

// LayerNormalization's and RMSNormalization's attributes: the axes from `axis` (default -1)
// to the last, the type stash_type asks to compute in (1, the default: f32) and epsilon.
struct TrailingAxes {
  std::vector<int64_t> axes;
  DType compute;
  double eps;
};

TrailingAxes trailing_axes(const OnnxNode& n, int rank, DType t) {
  TrailingAxes r;
  for (int a = norm_axis(n.attr_int("axis", -1), rank, "axis"); a < rank; ++a) r.axes.push_back(a);
  r.compute = n.attr_int("stash_type", 1) == 1 ? DType::F32 : t;
  r.eps = n.attr_float("epsilon", 1e-5);
  return r;
}

}  // namespace

ValueId Importer::inv_sqrt(ValueId x, const std::string& tag) {
  const DType t = dtype_of(x);
  if (t == DType::F64) return ew(Mode::TRUE_DIV, {scalar(t, 1), ew(Mode::SQRT, {x})}, tag);
  return op1(OpType::PowC, {{"exponent", -0.5}}, x, tag);
}

// Inputs 1, 2, ... (named `names` in messages) must each be a vector of n elements.
void Importer::expect_vectors(std::initializer_list<const char*> names, int64_t n) {
  int k = 1;
  for (const char* name : names) {
    if (shape(k) != Shape{n})
      throw Error(std::string(name) + " has shape " + to_string(shape(k)) + ", expected [" +
                  std::to_string(n) + "]");
    ++k;
  }
}

// (x - mean) / sqrt(var + eps) over `axes`, the mean and variance of x's own type.
Importer::Standardized Importer::standardize(ValueId x, const std::vector<int64_t>& axes,
                                             double eps) {
  DType c = dtype_of(x);
  ValueId mean = reduce(x, "MEAN", axes, true);
  ValueId d = ew(Mode::SUB, {x, mean});
  ValueId var = reduce(ew(Mode::SQUARE, {d}), "MEAN", axes, true);
  ValueId inv = inv_sqrt(ew(Mode::ADD, {var, scalar(c, eps)}), "inv_std");
  return {ew(Mode::MUL, {d, inv}), mean, inv};
}

// ONNX's own function body: Mean = ReduceMean(X), D = X - Mean, Var = ReduceMean(D * D),
// InvStdDev = 1 / Sqrt(Var + epsilon), Y = D * InvStdDev * Scale + B, over the axes from
// `axis` on, computed in f32 for f16/bf16 inputs (stash_type 1).
void Importer::lower_layernorm() {
  ValueId X = rt(0);
  DType t = dtype_of(X);
  if (!is_float(t)) throw Error("needs a float input");
  auto [axes, c, eps] = trailing_axes(*cur_, static_cast<int>(shape_of(X).size()), t);
  Standardized z = standardize(cvt(X, c), axes, eps);
  ValueId y = ew(Mode::MUL, {z.y, cvt(rt(1), c)}, "scale");
  if (cur_->has_input(2)) y = ew(Mode::ADD, {y, cvt(rt(2), c)}, "bias");
  set_rt(0, cvt(y, t));
  set_rt(1, z.mean);
  set_rt(2, z.inv_std);
}

// Inference: Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel (axis 1). With
// constant parameters that is one FUSE_MUL_ADD3 with a = scale / sqrt(var + eps) and
// b = B - mean * a, computed here in double.
void Importer::lower_batchnorm() {
  ValueId X = rt(0);
  DType t = dtype_of(X);
  if (!is_float(t)) throw Error("needs a float input");
  const Shape xs = shape_of(X);
  if (xs.size() < 2) throw Error("needs an input of rank >= 2 (N, C, ...)");
  if (cur_->opset < 9 && cur_->attr_int("spatial", 1) == 0) unsupported("spatial=0");
  if (cur_->attr_int("training_mode", 0) != 0) unsupported("training_mode=1");
  for (int k = 1; k < cur_->num_outputs(); ++k)
    if (cur_->wants_output(k)) unsupported("the training outputs (running mean and variance)");
  int64_t channels = xs[1];
  Shape ps{channels};
  for (size_t k = 2; k < xs.size(); ++k) ps.push_back(1);
  expect_vectors({"scale", "B", "mean", "var"}, channels);
  double eps = cur_->attr_float("epsilon", 1e-5);
  if (is_const(1) && is_const(2) && is_const(3) && is_const(4)) {
    ConstTensor a = make_const(to_elem_type(t), ps), b = make_const(to_elem_type(t), ps);
    for (int64_t ch = 0; ch < channels; ++ch) {
      double s = cst(1).as_double(ch) / std::sqrt(cst(4).as_double(ch) + eps);
      a.f[ch] = round_to(a.type, s);
      b.f[ch] = round_to(b.type, cst(2).as_double(ch) - cst(3).as_double(ch) * s);
    }
    return set_rt(0, ew(Mode::FUSE_MUL_ADD3, {X, constant(a, "a"), constant(b, "b")}, "bn"));
  }
  auto param = [&](int k) { return reshape(cvt(rt(k), t), ps); };
  ValueId inv = inv_sqrt(ew(Mode::ADD, {param(4), scalar(t, eps)}), "inv_std");
  ValueId a = ew(Mode::MUL, {param(1), inv});
  set_rt(0, ew(Mode::ADD, {ew(Mode::MUL, {ew(Mode::SUB, {X, param(3)}), a}), param(2)}, "bn"));
}

// X (N, C, ...) standardised per sample and channel over the spatial axes, then scale and B
// per channel.
void Importer::lower_instancenorm() {
  ValueId X = rt(0);
  DType t = dtype_of(X);
  if (!is_float(t)) throw Error("needs a float input");
  const Shape xs = shape_of(X);
  if (xs.size() < 3) throw Error("needs an input of rank >= 3 (N, C, spatial...)");
  expect_vectors({"scale", "B"}, xs[1]);
  std::vector<int64_t> axes;
  Shape ps{1, xs[1]};
  for (size_t a = 2; a < xs.size(); ++a) {
    axes.push_back(static_cast<int64_t>(a));
    ps.push_back(1);
  }
  ValueId z = standardize(X, axes, cur_->attr_float("epsilon", 1e-5)).y;
  set_rt(0, ew(Mode::FUSE_MUL_ADD3, {z, reshape(cvt(rt(1), t), ps), reshape(cvt(rt(2), t), ps)},
               "affine"));
}

// X / sqrt(ReduceMean(X^2) + epsilon) * scale over the axes from `axis` on (opset 23).
void Importer::lower_rmsnorm() {
  ValueId X = rt(0);
  DType t = dtype_of(X);
  if (!is_float(t)) throw Error("needs a float input");
  auto [axes, c, eps] = trailing_axes(*cur_, static_cast<int>(shape_of(X).size()), t);
  ValueId x = cvt(X, c);
  ValueId ms = reduce(ew(Mode::SQUARE, {x}), "MEAN", axes, true);
  ValueId inv = inv_sqrt(ew(Mode::ADD, {ms, scalar(c, eps)}), "inv_rms");
  ValueId y = ew(Mode::MUL, {ew(Mode::MUL, {x, inv}), cvt(rt(1), c)}, "scale");
  set_rt(0, cvt(y, t));
}

// X (N, C, ...) standardised per (sample, group of C / num_groups channels), then scaled and
// shifted: per group at opset 18 (scale and bias of shape [num_groups]), per channel from
// opset 21 (shape [C]; the change that deprecated version 18).
void Importer::lower_groupnorm() {
  ValueId X = rt(0);
  DType t = dtype_of(X);
  if (!is_float(t)) throw Error("needs a float input");
  const Shape xs = shape_of(X);
  if (xs.size() < 3) throw Error("needs an input of rank >= 3 (N, C, spatial...)");
  int64_t groups = cur_->attr_int("num_groups");
  int64_t channels = xs[1];
  if (groups < 1 || channels % groups != 0)
    throw Error("num_groups " + std::to_string(groups) + " does not divide the " +
                std::to_string(channels) + " channels");
  bool per_channel = cur_->opset >= 21;
  int64_t params = per_channel ? channels : groups;
  expect_vectors({"scale", "bias"}, params);
  // Opset 18 has no stash_type: it computes in the input's type.
  DType c = per_channel && cur_->attr_int("stash_type", 1) == 1 ? DType::F32 : t;
  int64_t rest = checked_numel(xs, "the input") / (xs[0] * groups);
  ValueId z =
      standardize(reshape(cvt(X, c), {xs[0], groups, rest}), {2}, cur_->attr_float("epsilon", 1e-5))
          .y;
  Shape ps{1, params};
  if (per_channel) {
    z = reshape(z, xs);
    for (size_t k = 2; k < xs.size(); ++k) ps.push_back(1);
  } else {
    ps.push_back(1);
  }
  ValueId y = ew(Mode::FUSE_MUL_ADD3, {z, reshape(cvt(rt(1), c), ps), reshape(cvt(rt(2), c), ps)},
                 "affine");
  set_rt(0, cvt(reshape(y, xs), t));
}

// (X - mean) / (sqrt(mean(X^2) - mean^2) + 1e-9) over `axes` (default 0, 2, 3), as the
// spec's function body computes it.
void Importer::lower_mvn() {
  ValueId X = rt(0);
  DType t = dtype_of(X);
  if (!is_float(t)) throw Error("needs a float input");
  const int rank = static_cast<int>(shape_of(X).size());
  std::vector<int64_t> axes = cur_->attr_ints("axes").value_or(std::vector<int64_t>{0, 2, 3});
  for (int64_t& a : axes) a = norm_axis(a, rank, "axes entry");
  ValueId mean = reduce(X, "MEAN", axes, true);
  ValueId sq_mean = reduce(ew(Mode::SQUARE, {X}), "MEAN", axes, true);
  ValueId sd = ew(Mode::SQRT, {ew(Mode::SUB, {sq_mean, ew(Mode::SQUARE, {mean})})});
  set_rt(0, ew(Mode::TRUE_DIV, {ew(Mode::SUB, {X, mean}), ew(Mode::ADD, {sd, scalar(t, 1e-9)})}));
}

// X / ||X||_p along `axis` (p 1 or 2, default 2; default axis -1): SUM(ABS(X)) or
// SQRT(SUM(SQUARE(X))); 0 where the norm is 0, as the reference.
void Importer::lower_lp_normalization() {
  ValueId X = rt(0);
  DType t = dtype_of(X);
  if (!is_float(t)) throw Error("needs a float input");
  const int rank = static_cast<int>(shape_of(X).size());
  if (rank == 0) throw Error("needs an input of rank >= 1");
  const int axis = norm_axis(cur_->attr_int("axis", -1), rank, "axis");
  const int64_t p = cur_->attr_int("p", 2);
  if (p != 1 && p != 2) throw Error("p must be 1 or 2, got " + std::to_string(p));
  ValueId norm = p == 1 ? reduce(ew(Mode::ABS, {X}), "SUM", {axis}, true)
                        : ew(Mode::SQRT, {reduce(ew(Mode::SQUARE, {X}), "SUM", {axis}, true)});
  ValueId zero = ew(Mode::EQ, {norm, scalar(t, 0)});
  ValueId y = ew(Mode::TRUE_DIV, {X, norm});
  const Shape ys = shape_of(y);  // a copy: adding nodes moves the graph's values
  set_rt(0, where(zero, broadcast_to(reshape(scalar(t, 0), Shape(rank, 1)), ys), y));
}

}  // namespace hf::onnx_detail
