// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear as element-wise ops and
// reductions (so fusion takes them), in the order ONNX's reference computes them:
//   quantize:   clip(int32(round_half_even(x / scale)) + zero_point, type range)
//   dequantize: (f32(x) - f32(zero_point)) * scale, in f32, then the output type
// Scale and zero point are per tensor (a scalar or one element), per axis (1-D along
// `axis`, opset 13) or blocked (opset 21: the input's rank, `block_size` elements of the
// axis per entry). The quantized types are INT8, UINT8, INT16 and UINT16 (and INT32 as a
// DequantizeLinear input); the 2-, 4- and 8-bit float and integer types are refused where
// their tensors are read (onnx_tensor.cpp), and by name here for output_dtype.
#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

namespace {

bool quantized_type(int32_t t) {
  return t == pb::TensorProto::INT8 || t == pb::TensorProto::UINT8 || t == pb::TensorProto::INT16 ||
         t == pb::TensorProto::UINT16;
}

}  // namespace

// A scale or zero point made to broadcast against x's shape xs.
ValueId Importer::quant_param(ValueId p, const Shape& xs, const char* what) {
  const Shape ps = shape_of(p);
  const int rank = static_cast<int>(xs.size());
  const int64_t block = cur_->opset >= 21 ? cur_->attr_int("block_size", 0) : 0;
  if (block < 0) throw Error("block_size must be >= 0, got " + std::to_string(block));
  if (ps.empty() || (ps.size() == 1 && ps[0] == 1)) return reshape(p, {});
  if (rank == 0) throw Error(std::string(what) + " " + to_string(ps) + " for a scalar input");
  const int axis = norm_axis(cur_->opset >= 13 ? cur_->attr_int("axis", 1) : 1, rank, "axis");
  if (block == 0) {
    if (ps.size() != 1 || ps[0] != xs[axis])
      throw Error(std::string(what) + " has shape " + to_string(ps) + "; per axis it needs [" +
                  std::to_string(xs[axis]) + "] (axis " + std::to_string(axis) + " of " +
                  to_string(xs) + ")");
    Shape s(rank, 1);
    s[axis] = xs[axis];
    return reshape(p, s);
  }
  Shape want = xs;
  want[axis] = (xs[axis] + block - 1) / block;
  if (ps != want)
    throw Error(std::string(what) + " has shape " + to_string(ps) + "; blocks of " +
                std::to_string(block) + " along axis " + std::to_string(axis) + " need " +
                to_string(want));
  // Each entry repeated block_size times along the axis, the last block cut to the input.
  Shape split = ps, wide = ps;
  split.insert(split.begin() + axis + 1, 1);
  wide.insert(wide.begin() + axis + 1, block);
  Shape joined = ps;
  joined[axis] *= block;
  ValueId v = reshape(broadcast_to(reshape(p, split), wide), joined);
  return joined[axis] == xs[axis] ? v : slice_axis(v, axis, 0, xs[axis]);
}

void Importer::lower_quantize() {
  ValueId x = rt(0);
  const Shape xs = shape_of(x);
  if (!is_float(dtype_of(x))) unsupported("QuantizeLinear of a non-float input");
  int32_t out = pb::TensorProto::UINT8;
  if (cur_->opset >= 21 && cur_->attr_int("output_dtype", 0) != 0)
    out = static_cast<int32_t>(cur_->attr_int("output_dtype"));
  if (cur_->has_input(2)) {
    if (cur_->opset >= 21 && cur_->attr_int("output_dtype", 0) != 0 && elem(2) != out)
      throw Error("output_dtype " + elem_type_name(out) + " differs from the zero point's " +
                  elem_type_name(elem(2)));
    out = elem(2);
  }
  if (!quantized_type(out))
    unsupported("QuantizeLinear to " + elem_type_name(out) +
                "; hotfuse quantizes to INT8, UINT8, INT16 and UINT16");
  if (cur_->opset >= 23 && cur_->attr_int("precision", 0) != 0)
    unsupported("QuantizeLinear with the precision attribute");
  ValueId scale = quant_param(rt(1), xs, "the scale");
  if (!is_float(dtype_of(scale))) throw Error("the scale must be a float type");
  // x / scale in numpy's promoted type: f32 unless both are the same type.
  DType div_t = dtype_of(x) == dtype_of(scale) ? dtype_of(x) : DType::F32;
  if (dtype_of(x) == DType::F64 || dtype_of(scale) == DType::F64) div_t = DType::F64;
  ValueId q = round_even(ew(Mode::TRUE_DIV, {cvt(x, div_t), cvt(scale, div_t)}));
  q = cvt(q, DType::I32);
  if (cur_->has_input(2))
    q = ew(Mode::ADD, {q, cvt(quant_param(rt(2), xs, "the zero point"), DType::I32)});
  DType ot = *to_dtype(out);
  const bool sign = ot == DType::I8 || ot == DType::I16;
  const double hi = ot == DType::I8    ? 127
                    : ot == DType::U8  ? 255
                    : ot == DType::I16 ? 32767
                                       : 65535;
  q = ew(Mode::CLIP, {q, scalar(DType::I32, sign ? -hi - 1 : 0), scalar(DType::I32, hi)});
  set_rt(0, cvt(q, ot));
}

void Importer::lower_dequantize() {
  ValueId x = rt(0);
  const Shape xs = shape_of(x);
  int32_t it = elem(0);
  if (!quantized_type(it) && it != pb::TensorProto::INT32)
    unsupported("DequantizeLinear of " + elem_type_name(it) +
                "; hotfuse dequantizes INT8, UINT8, INT16, UINT16 and INT32");
  ValueId scale = quant_param(rt(1), xs, "the scale");
  DType st = dtype_of(scale);
  if (!is_float(st)) throw Error("the scale must be a float type");
  DType ot = st;
  if (cur_->opset >= 23 && cur_->attr_int("output_dtype", 0) != 0) {
    auto t = to_dtype(static_cast<int32_t>(cur_->attr_int("output_dtype")));
    if (!t || !is_float(*t))
      throw Error("output_dtype must be a float type, got " +
                  elem_type_name(static_cast<int32_t>(cur_->attr_int("output_dtype"))));
    ot = *t;
  }
  ValueId dx = cvt(x, DType::F32);
  if (cur_->has_input(2)) {
    if (elem(2) != it)
      throw Error("the zero point is " + elem_type_name(elem(2)) + ", the input " +
                  elem_type_name(it));
    dx = ew(Mode::SUB, {dx, cvt(quant_param(rt(2), xs, "the zero point"), DType::F32)});
  }
  DType mt = st == DType::F64 ? DType::F64 : DType::F32;  // numpy: f32 * f16 is f32
  set_rt(0, cvt(ew(Mode::MUL, {cvt(dx, mt), cvt(scale, mt)}), ot));
}

// UINT8 quantization over the range of x and 0: scale = (max - min) / 255 (1/255 when the
// range is empty), zero point = round(clip(-min / scale, 0, 255)); all in f32.
void Importer::lower_dynamic_quantize() {
  ValueId x = rt(0);
  if (dtype_of(x) != DType::F32) throw Error("the input must be FLOAT");
  if (numel(shape_of(x)) == 0) throw Error("needs a non-empty input");
  auto f = [&](double v) { return scalar(DType::F32, v); };
  ValueId mx = ew(Mode::MAX, {reduce(x, "MAX", {}, false), f(0)});
  ValueId mn = ew(Mode::MIN, {reduce(x, "MIN", {}, false), f(0)});
  ValueId range = where(ew(Mode::EQ, {mx, mn}), f(1), ew(Mode::SUB, {mx, mn}));
  ValueId scale = ew(Mode::TRUE_DIV, {range, f(255)});
  ValueId zp = ew(Mode::SUB, {f(0), ew(Mode::TRUE_DIV, {mn, scale})});
  zp = round_even(ew(Mode::CLIP, {zp, f(0), f(255)}));
  ValueId y = ew(Mode::ADD, {round_even(ew(Mode::TRUE_DIV, {x, scale})), zp});
  y = ew(Mode::CLIP, {y, f(0), f(255)});
  set_rt(0, cvt(y, DType::U8));
  if (cur_->wants_output(1)) set_rt(1, scale);
  if (cur_->wants_output(2)) set_rt(2, cvt(zp, DType::U8));
}

}  // namespace hf::onnx_detail
