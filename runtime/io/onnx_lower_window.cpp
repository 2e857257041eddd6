// ONNX ConvTranspose, LpPool and LRN on run-time data, each lowered to the op table's Conv
// with the data movement and element-wise ops around it (exact up to the summation order),
// so the Conv keeps its library kernel and fusion takes the element-wise parts:
//   ConvTranspose: a Conv with stride 1 of the input upsampled with zeros (stride - 1
//     between neighbours), the weights [C, M/group, k...] turned into [M, C/group, k...]
//     and flipped, and pads (k - 1)·d - pad_begin, (k - 1)·d - pad_end + output_padding
//     (a negative one crops the upsampled input instead).
//   LpPool: (Σ |x|^p)^(1/p) over each window, the sum a depthwise Conv with weights 1.
//   LRN: x / (bias + alpha/size · Σ x²)^beta, the sum over channels a Conv of x² seen as
//     [N, 1, C, rest] with a [1, 1, size, 1] window of ones.
//   MaxUnpool: zeros with the values scattered (ScatterRows) at the positions given.
// 1-D ops run as 2-D with H = 1; 3-D LpPool as two 2-D sums; 3-D ConvTranspose ends in a
// 3-D Conv (onnx_lower_nn.cpp: one 2-D Conv per depth tap).
#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

namespace {

// Window attributes beyond 2^40 are refused before any arithmetic on them (as
// nn_geometry does for the op table's windows), so no product below can overflow.
constexpr int64_t kMaxWindow = int64_t(1) << 40;
void check_range(const std::vector<int64_t>& v, int64_t lo, const char* what) {
  for (int64_t e : v)
    if (e < lo || e > kMaxWindow)
      throw Error(std::string(what) + " entries must be >= " + std::to_string(lo) + " and <= 2^40");
}
void check_window(const WindowSpec& w) {
  check_range(w.kernel, 1, "kernel_shape");
  check_range(w.strides, 1, "strides");
  check_range(w.dilations, 1, "dilations");
  check_range(w.pads, 0, "pads");
}

int64_t floor_div2(int64_t v) {
  return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

Attrs slice_attrs(int axis, int64_t start, int64_t end, int64_t step) {
  return {{"starts", std::vector<int64_t>{start}},
          {"ends", std::vector<int64_t>{end}},
          {"axes", std::vector<int64_t>{axis}},
          {"steps", std::vector<int64_t>{step}}};
}

}  // namespace

// A tensor of `shape` filled with v, as a Constant node (weights the Conv packs once).
ValueId Importer::filled(DType t, double v, const Shape& shape, const std::string& tag) {
  ConstTensor one = make_const(to_elem_type(t), {});
  if (one.floating())
    one.f[0] = v;
  else
    one.i[0] = static_cast<int64_t>(v);
  return splat(one, shape, tag);
}

void Importer::lower_conv_transpose() {
  ValueId x = rt(0), w = rt(1);
  const Shape xs = shape_of(x), ws = shape_of(w);
  if (xs.size() < 3 || xs.size() > 5)
    throw Error("input has shape " + to_string(xs) +
                ": ConvTranspose of rank other than 3 (N, C, W), 4 (N, C, H, W) or 5 (N, C, D, "
                "H, W) is not supported");
  const int nd = static_cast<int>(xs.size()) - 2;
  const size_t und = static_cast<size_t>(nd);
  if (ws.size() != xs.size())
    throw Error("weight has shape " + to_string(ws) + " for an input of shape " + to_string(xs));
  const int64_t group = cur_->attr_int("group", 1);
  if (group < 1 || xs[1] % group != 0)
    throw Error("group " + std::to_string(group) + " does not divide the " + std::to_string(xs[1]) +
                " input channels");
  if (ws[0] != xs[1])
    throw Error("weight has shape " + to_string(ws) + ", its first axis must be the " +
                std::to_string(xs[1]) + " input channels");
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (ints_or(*cur_, "kernel_shape", kernel) != kernel)
    throw Error("kernel_shape does not match the weight " + to_string(ws));
  const std::vector<int64_t> strides = ints_or(*cur_, "strides", std::vector<int64_t>(und, 1));
  const std::vector<int64_t> dil = ints_or(*cur_, "dilations", std::vector<int64_t>(und, 1));
  const std::vector<int64_t> out_pad =
      ints_or(*cur_, "output_padding", std::vector<int64_t>(und, 0));
  auto pads = cur_->attr_ints("pads");
  auto out_shape = cur_->attr_ints("output_shape");
  if (out_shape && out_shape->size() == und + 2)  // a full shape: its spatial tail
    out_shape = std::vector<int64_t>(out_shape->begin() + 2, out_shape->end());
  if (strides.size() != und || dil.size() != und || out_pad.size() != und ||
      (pads && pads->size() != 2 * und) || (out_shape && out_shape->size() != und))
    throw Error("strides, dilations, output_padding and output_shape need " + std::to_string(nd) +
                " entries and pads " + std::to_string(2 * nd) + " for an input of shape " +
                to_string(xs));
  check_range(kernel, 1, "kernel_shape");
  check_range(strides, 1, "strides");
  check_range(dil, 1, "dilations");
  check_range(out_pad, 0, "output_padding");
  if (pads) check_range(*pads, 0, "pads");
  if (out_shape) check_range(*out_shape, 1, "output_shape");
  const std::string auto_pad = cur_->attr_str("auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID")
    throw Error("unsupported attribute: auto_pad '" + auto_pad + "'");
  if (auto_pad == "VALID") pads.reset();

  // Per spatial axis of the Conv it becomes (2-D, axis 0 H, a 1-D op's H a window of 1
  // over 1; or 3-D): the Conv's begin/end pads and the crop of the upsampled input.
  const int64_t m_per_group = ws[1], c_per_group = xs[1] / group;
  const int sp = std::max(nd, 2);  // the Conv's spatial axes
  std::vector<int64_t> conv_pad(2 * sp, 0), crop_b(sp, 0), crop_e(sp, 0), up(sp, 1), dil2(sp, 1),
      k2(sp, 1);
  for (int a = 0; a < nd; ++a) {
    const int b = a + sp - nd;  // the Conv's axis
    const int64_t in = xs[2 + a], k = kernel[a], s = strides[a], d = dil[a];
    if (s < 1 || d < 1 || k < 1 || out_pad[a] < 0)
      throw Error("strides, dilations and kernel sizes must be >= 1 and output_padding >= 0");
    if (in < 1) throw Error("input has shape " + to_string(xs) + ": an empty spatial axis");
    const int64_t span = (k - 1) * d;
    const int64_t natural = s * (in - 1) + out_pad[a] + span + 1;
    int64_t pb = 0, out = 0;
    if (pads || !same) {  // explicit (or no) pads; output_shape, if given, wins
      pb = pads ? (*pads)[a] : 0;
      const int64_t pe = pads ? (*pads)[a + nd] : 0;
      out = out_shape ? (*out_shape)[a] : natural - pb - pe;
    } else {  // SAME_*: the output is output_shape or in·stride, the odd pad as the reference
      out = out_shape ? (*out_shape)[a] : in * s;
      const int64_t total = natural - out;
      pb = auto_pad == "SAME_UPPER" ? floor_div2(total) : total - floor_div2(total);
    }
    if (out < 1)
      throw Error("output size " + std::to_string(out) + " along spatial axis " +
                  std::to_string(a) + " is less than 1");
    const int64_t upsampled = (in - 1) * s + 1;
    int64_t begin = span - pb;                     // Conv pad before the upsampled input
    int64_t end = out - upsampled - begin + span;  // and after it
    crop_b[b] = std::max<int64_t>(0, -begin);
    crop_e[b] = std::max<int64_t>(0, -end);
    if (crop_b[b] + crop_e[b] >= upsampled)
      throw Error("pads crop the whole input along spatial axis " + std::to_string(a) +
                  " (not supported)");
    conv_pad[b] = std::max<int64_t>(0, begin);
    conv_pad[b + sp] = std::max<int64_t>(0, end);
    up[b] = s;
    dil2[b] = d;
    k2[b] = k;
  }

  // x upsampled: after each element stride - 1 zeros (an axis [in] becomes [in, s] and
  // then [in·s]), trimmed to (in - 1)·s + 1 less the crops.
  x = as_2d(x);
  const DType t = dtype_of(x);
  for (int b = 0; b < sp; ++b) {
    const int axis = 2 + b;
    const int64_t in = shape_of(x)[axis];
    if (up[b] > 1 && in > 1) {
      Shape s = shape_of(x);
      Shape split = s;
      split.insert(split.begin() + axis + 1, 1);
      Shape zeros = split;
      zeros[axis + 1] = up[b] - 1;
      ValueId z = filled(t, 0, zeros, "zeros");
      x = concat_axis({reshape(x, split), z}, axis + 1);
      s[axis] = in * up[b];
      x = reshape(x, s);
    }
    const int64_t len = (in - 1) * up[b] + 1;
    if (crop_b[b] > 0 || len - crop_e[b] != shape_of(x)[axis])
      x = op1(OpType::Slice, slice_attrs(axis, crop_b[b], len - crop_e[b], 1), x, "crop");
  }

  // w [C, M/g, k...] -> [g, C/g, M/g, k...] -> [g, M/g, C/g, k...] -> [M, C/g, k...],
  // each kernel flipped.
  w = as_2d(w);
  Shape grouped{group, c_per_group, m_per_group}, regrouped{group * m_per_group, c_per_group};
  std::vector<int64_t> perm{0, 2, 1};
  for (int b = 0; b < sp; ++b) {
    grouped.push_back(k2[b]);
    regrouped.push_back(k2[b]);
    perm.push_back(3 + b);
  }
  w = reshape(w, grouped);
  w = op1(OpType::Dimshuffle, {{"perm", perm}}, w, "wT");
  w = reshape(w, regrouped);
  for (int b = 0; b < sp; ++b)
    if (k2[b] > 1)
      w = op1(OpType::Slice, slice_attrs(2 + b, k2[b] - 1, -(k2[b] + 1), -1), w, "flip");

  std::optional<ValueId> bias;
  if (cur_->has_input(2)) bias = rt(2);
  if (sp == 3)
    return set_rt(
        0, conv_3d(x, w, bias, WindowSpec{k2, std::vector<int64_t>(3, 1), dil2, conv_pad}, group));
  Node n;
  n.op = OpType::Conv;
  n.attrs["strides"] = std::vector<int64_t>{1, 1};
  n.attrs["dilations"] = dil2;
  n.attrs["pads"] = conv_pad;
  n.attrs["group"] = group;
  n.inputs = {x, w};
  if (bias) n.inputs.push_back(*bias);
  set_rt(0, from_2d(emit(std::move(n), "convtranspose"), nd));
}

// The sum over each window as a depthwise Conv with weights 1 (zero padding adds nothing);
// a 3-D one as two, the sum over a box being separable. w as resolve_window gives it, a
// 1-D one picked to 2-D.
ValueId Importer::window_sum(ValueId x, const WindowSpec& w) {
  check_window(w);
  const int nd = static_cast<int>(shape_of(x).size()) - 2;
  const DType t = dtype_of(x);
  auto sum = [&](ValueId in, const WindowSpec& w2) {
    const int64_t c = shape_of(in)[1];
    Node n;
    n.op = OpType::Conv;
    n.attrs = w2.attrs(true);
    n.attrs["group"] = c;
    n.inputs = {in, filled(t, 1, {c, 1, w2.kernel[0], w2.kernel[1]}, "ones")};
    return emit(std::move(n), "window_sum");
  };
  return nd == 3 ? separable_3d(x, w, sum) : from_2d(sum(as_2d(x), w), nd);
}

// AveragePool with dilations (opset 19): the window sum (as LpPool's) divided by each
// window's tap count, computed here. With ceil_mode, ONNX's reference pads the input by
// the extra extent the last window needs, half of it (rounded down) before the input, and
// still ends the padded input where pads end it: windows start that much earlier and taps
// past the end count for nothing. The same rule without ceil_mode moves nothing.
ValueId Importer::avg_pool_dilated(ValueId x, WindowSpec w, bool include_pad, bool ceil) {
  check_window(w);
  const int nd0 = static_cast<int>(shape_of(x).size()) - 2;
  x = as_2d(x);  // w is 2-D for a 1-D x already
  const Shape xs = shape_of(x);
  const DType t = dtype_of(x);
  const int nd = static_cast<int>(w.kernel.size());
  std::vector<std::vector<double>> counts(nd);
  Shape count_shape = {1, 1};
  for (int a = 0; a < nd; ++a) {
    const int64_t in = xs[2 + a], k = w.kernel[a], s = w.strides[a], d = w.dilations[a];
    const int64_t pb = w.pads[a], pe = w.pads[a + nd], span = (k - 1) * d + 1;
    const int64_t room = in + pb + pe - span;
    if (room < 0) throw Error("the window is larger than the padded input");
    int64_t out = (ceil ? (room + s - 1) / s : room / s) + 1;
    if (ceil && (out - 1) * s >= in + pb) --out;  // the last window starts inside
    const int64_t extra = std::max<int64_t>(0, (out - 1) * s + span - in - pb - pe);
    const int64_t begin = pb + extra / 2, hi = in + pe - extra / 2;  // [-begin, hi)
    for (int64_t o = 0; o < out; ++o) {
      int64_t n = 0;
      for (int64_t tap = 0; tap < k; ++tap) {
        const int64_t at = o * s - begin + tap * d;
        n += at < hi && (include_pad || (at >= 0 && at < in));
      }
      if (n == 0) throw Error("a window holds no taps (not supported)");
      counts[a].push_back(static_cast<double>(n));
    }
    // The sum: taps at or past min(in, hi) add nothing, nor do those past the last window.
    const int64_t use = std::min({in, hi, (out - 1) * s + span - begin});
    if (use < 1) throw Error("a window lies wholly outside the input (not supported)");
    if (use < in) x = slice_axis(x, 2 + a, 0, use);
    w.pads[a] = begin;
    w.pads[a + nd] = (out - 1) * s + span - begin - use;
    count_shape.push_back(out);
  }
  ConstTensor c = make_const(to_elem_type(t), count_shape);
  for (int64_t e = 0; e < c.size(); ++e) {
    double v = 1;
    int64_t r = e;
    for (int a = nd - 1; a >= 0; --a) {
      const int64_t n = static_cast<int64_t>(counts[a].size());
      v *= counts[a][r % n];
      r /= n;
    }
    c.f[e] = v;
  }
  ValueId y = ew(Mode::TRUE_DIV, {window_sum(x, w), constant(c, "tap_count")});
  return from_2d(y, nd0);
}

void Importer::lower_lppool() {
  ValueId x = rt(0);
  const Shape xs = shape_of(x);
  auto kernel = cur_->attr_ints("kernel_shape");
  if (!kernel) throw Error("missing attribute 'kernel_shape'");
  if (cur_->attr_int("ceil_mode", 0) != 0) throw Error("unsupported attribute: ceil_mode=1");
  const double p =
      cur_->opset < 2 ? cur_->attr_float("p", 2.0) : static_cast<double>(cur_->attr_int("p", 2));
  if (!(p > 0)) throw Error("p must be > 0");
  const int nd = static_cast<int>(xs.size()) - 2;
  WindowSpec w = resolve_window(*cur_, xs, *kernel, true);
  if (nd == 1) w = w.pick({-1, 0});  // [N, C, W] as [N, C, 1, W]
  ValueId pw = p == 1   ? ew(Mode::ABS, {x})
               : p == 2 ? ew(Mode::SQUARE, {x})
                        : op1(OpType::PowC, {{"exponent", p}}, ew(Mode::ABS, {x}));
  ValueId s = window_sum(pw, w);
  ValueId y = p == 1   ? s
              : p == 2 ? ew(Mode::SQRT, {s})
                       : op1(OpType::PowC, {{"exponent", 1.0 / p}}, s);
  set_rt(0, y);  // window_sum keeps x's rank
}

// MaxPool's Indices: for each window, the flat index (over [N, C, H, W], H-major, or
// W-major with storage_order 1) of its first maximum in scan order, as ONNX's reference
// counts it. Each tap of the window is a strided Slice of x and of the index tensor I,
// both padded (the index with a sentinel above every real index); a tap whose value
// equals the pooled maximum y offers its index, and the smallest offer wins: H-major order
// is the scan order, so that is the first maximum.
ValueId Importer::max_pool_indices(ValueId x, ValueId y, const WindowSpec& w, bool w_major) {
  const Shape xs = shape_of(x), ys = shape_of(y);
  const int64_t H = xs[2], W = xs[3], big = checked_numel(xs, "the input");
  const int rank = 4;
  ValueId idx =
      ew(Mode::ADD, {ew(Mode::MUL, {reshape(iota(xs[0] * xs[1], 0, 1, pb::TensorProto::INT64),
                                            {xs[0], xs[1], 1, 1}),
                                    scalar(DType::I64, static_cast<double>(H * W))}),
                     ew(Mode::ADD, {ew(Mode::MUL, {iota(H, 2, rank, pb::TensorProto::INT64),
                                                   scalar(DType::I64, static_cast<double>(W))}),
                                    iota(W, 3, rank, pb::TensorProto::INT64)})});
  // Pad both so that every tap of every window is inside: pad_begin before, and after as
  // far as the last window reaches (ceil_mode may reach past pad_end).
  for (int a = 0; a < 2; ++a) {
    const int axis = 2 + a;
    const int64_t in = xs[axis], before = w.pads[a];
    const int64_t reach = (ys[axis] - 1) * w.strides[a] + (w.kernel[a] - 1) * w.dilations[a] + 1;
    const int64_t after = std::max<int64_t>(0, reach - in - before);
    auto pad = [&](ValueId v, double fill) {
      Shape b = shape_of(v), e = shape_of(v);
      b[axis] = before;
      e[axis] = after;
      std::vector<ValueId> parts;
      if (before > 0) parts.push_back(filled(dtype_of(v), fill, b, "pad"));
      parts.push_back(v);
      if (after > 0) parts.push_back(filled(dtype_of(v), fill, e, "pad"));
      return concat_axis(parts, axis);
    };
    x = pad(x, 0);
    idx = pad(idx, static_cast<double>(big));
  }
  std::optional<ValueId> best;
  for (int64_t i = 0; i < w.kernel[0]; ++i)
    for (int64_t j = 0; j < w.kernel[1]; ++j) {
      const int64_t h0 = i * w.dilations[0], w0 = j * w.dilations[1];
      Attrs tap{{"starts", std::vector<int64_t>{h0, w0}},
                {"ends", std::vector<int64_t>{h0 + (ys[2] - 1) * w.strides[0] + 1,
                                              w0 + (ys[3] - 1) * w.strides[1] + 1}},
                {"axes", std::vector<int64_t>{2, 3}},
                {"steps", std::vector<int64_t>{w.strides[0], w.strides[1]}}};
      ValueId offer = where(ew(Mode::EQ, {op1(OpType::Slice, tap, x, "tap"), y}),
                            op1(OpType::Slice, tap, idx, "tap_index"),
                            scalar(DType::I64, static_cast<double>(big)));
      best = best ? ew(Mode::MIN, {*best, offer}) : offer;
    }
  if (!w_major) return *best;
  // H-major c·HW + h·W + w to W-major c·HW + h + w·H.
  auto s = [&](int64_t v) { return scalar(DType::I64, static_cast<double>(v)); };
  ValueId c = ew(Mode::FLOOR_DIV, {*best, s(H * W)});
  ValueId r = ew(Mode::MOD, {*best, s(H * W)});
  ValueId h = ew(Mode::FLOOR_DIV, {r, s(W)}), col = ew(Mode::MOD, {r, s(W)});
  return ew(Mode::ADD,
            {ew(Mode::MUL, {c, s(H * W)}), ew(Mode::ADD, {h, ew(Mode::MUL, {col, s(H)})})});
}

void Importer::lower_lrn() {
  ValueId x = rt(0);
  const Shape xs = shape_of(x);
  if (xs.size() < 2) throw Error("input has shape " + to_string(xs) + ": needs rank >= 2");
  const int64_t size = cur_->attr_int("size");
  if (size < 1 || size > kMaxWindow) throw Error("size must be >= 1 and <= 2^40");
  const double alpha = cur_->attr_float("alpha", 1e-4), beta = cur_->attr_float("beta", 0.75);
  const double bias = cur_->attr_float("bias", 1.0);
  const DType t = dtype_of(x);
  int64_t rest = 1;
  for (size_t a = 2; a < xs.size(); ++a) rest *= xs[a];
  // Σ x² over channels c - ⌊(size-1)/2⌋ .. c + ⌈(size-1)/2⌉ (inside 0..C-1).
  Node n;
  n.op = OpType::Conv;
  n.attrs["strides"] = std::vector<int64_t>{1, 1};
  n.attrs["pads"] = std::vector<int64_t>{(size - 1) / 2, 0, size / 2, 0};
  n.attrs["group"] = int64_t(1);
  n.inputs = {reshape(ew(Mode::SQUARE, {x}), {xs[0], 1, xs[1], rest}),
              filled(t, 1, {1, 1, size, 1}, "ones")};
  ValueId sum = reshape(emit(std::move(n), "lrn_sum"), xs);
  ValueId base = ew(Mode::FUSE_MUL_ADD3, {sum, scalar(t, alpha / size), scalar(t, bias)});
  set_rt(0, ew(Mode::TRUE_DIV, {x, op1(OpType::PowC, {{"exponent", beta}}, base)}));
}

// MaxUnpool (opsets 9, 11, 22): zeros of the unpooled shape, (in - 1) * stride - pad_begin -
// pad_end + kernel per spatial axis, but at the flat positions I holds (over the whole
// tensor, [N, C, spatial...] row-major, as MaxPool's Indices count them), where X's values
// go: one ScatterRows of single elements over it seen flat. A larger output_shape pads that
// with zeros at the end of each spatial axis, as ONNX's reference does (the indices keep
// counting over the unpooled shape). An index outside it is a run-time error (ScatterRows);
// a negative one counts from the end, as NumPy's assignment in the reference does.
void Importer::lower_max_unpool() {
  ValueId x = rt(0);
  const Shape xs = shape_of(x);
  if (xs.size() < 3)
    throw Error("X has shape " + to_string(xs) + ": needs rank >= 3 (N, C, spatial...)");
  if (shape(1) != xs)
    throw Error("I has shape " + to_string(shape(1)) + ", X " + to_string(xs) +
                ": they must be the same");
  if (!is_int(dtype_of(rt(1)))) throw Error("I must be an integer tensor");
  const size_t nd = xs.size() - 2;
  auto ints = [&](const char* name, int64_t fill, size_t n) {
    std::vector<int64_t> v = ints_or(*cur_, name, std::vector<int64_t>(n, fill));
    if (v.size() != n)
      throw Error(std::string("attribute '") + name + "' has " + std::to_string(v.size()) +
                  " values, expected " + std::to_string(n));
    return v;
  };
  if (!cur_->attr_ints("kernel_shape")) throw Error("missing attribute 'kernel_shape'");
  const std::vector<int64_t> kernel = ints("kernel_shape", 1, nd), strides = ints("strides", 1, nd),
                             pads = ints("pads", 0, 2 * nd);
  Shape out{xs[0], xs[1]};
  for (size_t d = 0; d < nd; ++d) {
    if (kernel[d] < 1 || strides[d] < 1 || pads[d] < 0 || pads[nd + d] < 0)
      throw Error("kernel_shape and strides must be >= 1, pads >= 0");
    out.push_back((xs[2 + d] - 1) * strides[d] - pads[d] - pads[nd + d] + kernel[d]);
    if (out.back() < 1) throw Error("the unpooled axis " + std::to_string(2 + d) + " is empty");
  }
  Shape want = out;
  if (cur_->has_input(2)) {
    const std::vector<int64_t> given = const_ints(2, "output_shape");
    want.assign(given.begin(), given.end());
    if (want.size() != xs.size() || want[0] != xs[0] || want[1] != xs[1])
      throw Error("output_shape " + to_string(want) + " does not fit X " + to_string(xs) +
                  " (same rank, N and C)");
    for (size_t d = 2; d < want.size(); ++d)
      if (want[d] < out[d])
        throw Error("output_shape " + to_string(want) + " is smaller than the unpooled " +
                    to_string(out));
  }
  const int64_t n = checked_numel(xs, "X"), total = checked_numel(out, "the output");
  checked_numel(want, "output_shape");
  ValueId zeros = filled(dtype_of(x), 0, {total}, "zeros");
  ValueId rows = reshape(cvt(rt(1), DType::I64), {n});
  ValueId y = reshape(scatter_rows(zeros, rows, reshape(x, {n}), 1, "none"), out);
  for (size_t d = 2; d < want.size(); ++d)
    if (want[d] > out[d]) {
      Shape tail = shape_of(y);
      tail[d] = want[d] - out[d];
      y = concat_axis({y, filled(dtype_of(x), 0, tail, "pad")}, static_cast<int>(d));
    }
  set_rt(0, y);
}

}  // namespace hf::onnx_detail
