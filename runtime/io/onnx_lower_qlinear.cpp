// MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv on the f32 MatMul and Conv:
// the INT8/UINT8 operands minus their zero points are integers of magnitude <= 255, so
// every partial sum of K products is an integer below 255 * 255 * K, exact in f32 while
// that stays below 2^24 (K <= 258). A longer MatMul inner dimension is cut into slices of
// 258 whose exact results are summed in INT32; a Conv with more than 258 products per
// output is refused rather than rounded. The QLinear
// ops then scale the exact integer result in f64, as ONNX's reference does (int32 times
// the f32 factor a_scale * b_scale / y_scale is f64 in numpy), add the output zero point,
// round half to even and clip to the output type.
#include <algorithm>

#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

namespace {

constexpr int64_t kExactK = 258;  // 255 * 255 * 258 < 2^24

bool int8_type(int32_t t) {
  return t == pb::TensorProto::INT8 || t == pb::TensorProto::UINT8;
}

// A scale or zero point: a scalar (or one element), or 1-D along `axis` of a rank-`rank`
// operand whose size there is `n`.
Shape param_shape(const Shape& ps, int axis, int rank, int64_t n, const std::string& what) {
  if (ps.empty() || (ps.size() == 1 && ps[0] == 1)) return {};
  if (ps.size() != 1 || ps[0] != n || axis < 0)
    throw Error(what + " has shape " + to_string(ps) + "; it must be a scalar" +
                (axis < 0 ? std::string() : " or [" + std::to_string(n) + "]"));
  Shape s(rank, 1);
  s[axis] = n;
  return s;
}

}  // namespace

// f32(input k) - f32(zero point k_zp), the zero point a scalar or 1-D along `axis` (-1: a
// scalar only).
ValueId Importer::shifted(int k, int k_zp, int axis, int rank) {
  if (!int8_type(elem(k)))
    unsupported(cur_->op() + " of " + elem_type_name(elem(k)) + " (INT8 and UINT8 only)");
  ValueId v = cvt(rt(k), DType::F32);
  if (!cur_->has_input(k_zp)) return v;
  if (elem(k_zp) != elem(k))
    throw Error("the zero point of input " + std::to_string(k) + " is " +
                elem_type_name(elem(k_zp)) + ", the input " + elem_type_name(elem(k)));
  const Shape s = shape(k);
  Shape ps = param_shape(shape(k_zp), axis, rank, axis < 0 ? 0 : s[axis],
                         "the zero point of input " + std::to_string(k));
  return ew(Mode::SUB, {v, reshape(cvt(rt(k_zp), DType::F32), ps)});
}

// round_half_even(acc * factor + zero point) clipped to the output type (the zero point's,
// else `fallback`), from the exact integer result acc (f32, f64 or INT32).
ValueId Importer::requantize(ValueId acc, ValueId factor, int k_zp, int32_t fallback) {
  ValueId r = ew(Mode::MUL, {cvt(acc, DType::F64), cvt(factor, DType::F64)});
  int32_t out = fallback;
  if (cur_->has_input(k_zp)) {
    out = elem(k_zp);
    if (shape(k_zp).size() > 1 || numel(shape(k_zp)) != 1)
      throw Error("the output zero point must be a scalar");
    r = ew(Mode::ADD, {r, reshape(cvt(rt(k_zp), DType::F64), {})});
  }
  if (!int8_type(out)) unsupported(cur_->op() + " to " + elem_type_name(out));
  const bool sign = out == pb::TensorProto::INT8;
  // Clipping and rounding commute here: the bounds are integers.
  r = ew(Mode::CLIP, {round_even(r), scalar(DType::F64, sign ? -128 : 0),
                      scalar(DType::F64, sign ? 127 : 255)});
  return cvt(r, *to_dtype(out));
}

// MatMulInteger: A (a_zero_point per row or scalar), B (b_zero_point per column or scalar)
// -> INT32. QLinearMatMul: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp.
void Importer::lower_int_matmul(bool qlinear) {
  const int ka = 0, kb = qlinear ? 3 : 1;
  const Shape as = shape(ka), bs = shape(kb);
  if (as.empty() || bs.empty()) throw Error("needs inputs of rank >= 1");
  const int ra = static_cast<int>(as.size()), rb = static_cast<int>(bs.size());
  const int64_t k = as.back();
  ValueId a = shifted(ka, 2, ra >= 2 ? ra - 2 : -1, ra);
  ValueId b = shifted(kb, qlinear ? 5 : 3, rb >= 2 ? rb - 1 : -1, rb);
  // A longer inner dimension in slices of at most kExactK, each exact, summed in INT32.
  std::optional<ValueId> acc;
  for (int64_t s0 = 0; s0 < k || !acc; s0 += kExactK) {
    const int64_t s1 = std::min(k, s0 + kExactK);
    ValueId as0 = k > kExactK ? slice_axis(a, ra - 1, s0, s1) : a;
    ValueId bs0 = k > kExactK ? slice_axis(b, rb >= 2 ? rb - 2 : 0, s0, s1) : b;
    ValueId part = cvt(matmul(as0, bs0), DType::I32);
    acc = acc ? ew(Mode::ADD, {*acc, part}) : part;
  }
  if (!qlinear) return set_rt(0, *acc);
  // a_scale per row, b_scale per column, in f32 as the reference multiplies them.
  const Shape ys = shape_of(*acc);
  const int ry = static_cast<int>(ys.size());
  auto scale = [&](int kk, int axis, int64_t n) {
    if (!is_float(dtype(kk))) throw Error("the scales must be float");
    return reshape(cvt(rt(kk), DType::F32),
                   param_shape(shape(kk), axis, ry, n, "scale input " + std::to_string(kk)));
  };
  ValueId sa = scale(1, ra >= 2 && ry >= 2 ? ry - 2 : -1, ra >= 2 ? as[ra - 2] : 0);
  ValueId sb = scale(4, rb >= 2 ? ry - 1 : -1, rb >= 2 ? bs[rb - 1] : 0);
  ValueId factor = ew(Mode::TRUE_DIV, {ew(Mode::MUL, {sa, sb}), scale(6, -1, 0)});
  set_rt(0, requantize(*acc, factor, 7, elem(0)));
}

// ConvInteger: x, w, x_zero_point (scalar), w_zero_point (scalar or per output channel)
// -> INT32. QLinearConv: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, B (INT32)].
void Importer::lower_int_conv(bool qlinear) {
  const int kx = 0, kw = qlinear ? 3 : 1;
  const Shape ws = shape(kw);
  if (ws.size() != 4)
    throw Error("weight has shape " + to_string(ws) +
                ": only 2-D convolution is supported (other ranks are not supported)");
  const int64_t k = ws[1] * ws[2] * ws[3];
  if (k > kExactK)
    unsupported(cur_->op() + " with " + std::to_string(k) +
                " products per output: its f32 accumulation is exact only up to " +
                std::to_string(kExactK));
  ValueId x = shifted(kx, 2, -1, 4);
  ValueId w = shifted(kw, qlinear ? 5 : 3, 0, 4);
  ValueId acc = conv(x, w, std::nullopt);
  if (!qlinear) return set_rt(0, cvt(acc, DType::I32));
  if (cur_->has_input(8)) {  // the INT32 bias, added exactly in f64
    if (elem(8) != pb::TensorProto::INT32) throw Error("the bias must be INT32");
    if (shape(8) != Shape{ws[0]})
      throw Error("the bias has shape " + to_string(shape(8)) + ", expected [" +
                  std::to_string(ws[0]) + "]");
    acc = ew(Mode::ADD, {cvt(acc, DType::F64), reshape(cvt(rt(8), DType::F64), {1, ws[0], 1, 1})});
  }
  auto scale = [&](int kk, int axis) {
    if (!is_float(dtype(kk))) throw Error("the scales must be float");
    return reshape(cvt(rt(kk), DType::F32),
                   param_shape(shape(kk), axis, 4, ws[0], "scale input " + std::to_string(kk)));
  };
  ValueId factor = ew(Mode::TRUE_DIV, {ew(Mode::MUL, {scale(1, -1), scale(4, 1)}), scale(6, -1)});
  set_rt(0, requantize(acc, factor, 7, elem(0)));
}

}  // namespace hf::onnx_detail
