// ONNX convolution, pooling and data-movement ops on run-time data, lowered to the op
// table's Conv, MaxPool, AveragePool, Concat, Slice and Gather (on constants these ops were
// folded already). GlobalAveragePool / GlobalMaxPool become a Reduce, Split a Slice per
// output. Convolution and pooling are 2-D (NCHW); 1-D ones run as 2-D with H = 1 (exact);
// 3-D pooling as two 2-D pools (separable), 3-D convolution as one 2-D Conv per depth tap.
// docs/onnx.md lists the attributes each op takes.
#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

std::vector<int64_t> ints_or(const OnnxNode& n, const char* name, std::vector<int64_t> fallback) {
  auto v = n.attr_ints(name);
  return v ? *v : fallback;
}

WindowSpec resolve_window(const OnnxNode& n, const Shape& x, std::vector<int64_t> kernel,
                          bool dilations) {
  if (x.size() < 3 || x.size() > 5)
    throw Error("input has shape " + to_string(x) +
                ": convolution and pooling need rank 3, 4 or 5 (N, C, spatial...)");
  const int nd = static_cast<int>(x.size()) - 2;
  const size_t und = static_cast<size_t>(nd);
  const auto ones = std::vector<int64_t>(und, 1);
  WindowSpec w;
  w.kernel = std::move(kernel);
  w.strides = ints_or(n, "strides", ones);
  w.dilations = ints_or(n, "dilations", ones);
  w.pads = ints_or(n, "pads", std::vector<int64_t>(2 * und, 0));
  if (w.kernel.size() != und || w.strides.size() != und || w.dilations.size() != und ||
      w.pads.size() != 2 * und)
    throw Error("kernel_shape, strides and dilations need " + std::to_string(nd) +
                " entries and pads " + std::to_string(2 * nd) + " for an input of shape " +
                to_string(x));
  for (int a = 0; a < nd; ++a)
    if (!dilations && w.dilations[a] != 1)
      throw Error("unsupported attribute: dilations other than 1");
  std::string auto_pad = n.attr_str("auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    w.pads.assign(2 * und, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int a = 0; a < nd; ++a) {
      const int64_t s = w.strides[a];
      if (s < 1) throw Error("strides must be >= 1");
      int64_t out = (x[2 + a] + s - 1) / s;
      int64_t total =
          std::max<int64_t>(0, (out - 1) * s + (w.kernel[a] - 1) * w.dilations[a] + 1 - x[2 + a]);
      int64_t small = total / 2;
      w.pads[a] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.pads[a + nd] = total - w.pads[a];
    }
  } else if (auto_pad != "NOTSET") {
    throw Error("unsupported attribute: auto_pad '" + auto_pad + "'");
  }
  return w;
}

WindowSpec WindowSpec::pick(std::initializer_list<int> axes) const {
  const size_t nd = kernel.size();
  WindowSpec r;
  for (int a : axes) {
    r.kernel.push_back(a < 0 ? 1 : kernel[a]);
    r.strides.push_back(a < 0 ? 1 : strides[a]);
    r.dilations.push_back(a < 0 ? 1 : dilations[a]);
  }
  for (int a : axes) r.pads.push_back(a < 0 ? 0 : pads[a]);
  for (int a : axes) r.pads.push_back(a < 0 ? 0 : pads[a + nd]);
  return r;
}

Attrs WindowSpec::attrs(bool with_dilations) const {
  Attrs a{{"strides", strides}, {"pads", pads}};
  if (with_dilations) a["dilations"] = dilations;
  return a;
}

Attrs window_attrs(const OnnxNode& n, const Shape& x, std::vector<int64_t>& kernel,
                   bool dilations) {
  if (x.size() != 3 && x.size() != 4)
    throw Error("input has shape " + to_string(x) +
                ": convolution of rank other than 3 (N, C, W), 4 (N, C, H, W) or 5 (N, C, D, H, "
                "W) is not supported");
  WindowSpec w = resolve_window(n, x, kernel, dilations);
  if (x.size() == 3) w = w.pick({-1, 0});  // [N, C, W] as [N, C, 1, W]
  kernel = w.kernel;
  return w.attrs(dilations);
}

ValueId Importer::separable_3d(ValueId x, const WindowSpec& w, const WindowOp& op) {
  const Shape s = shape_of(x);
  ValueId hw = op(reshape(x, {s[0], s[1] * s[2], s[3], s[4]}), w.pick({1, 2}));
  const Shape t = shape_of(hw);  // [N, C·D, OH, OW]
  ValueId d = op(reshape(hw, {s[0], s[1], s[2], t[2] * t[3]}), w.pick({0, -1}));
  return reshape(d, {s[0], s[1], shape_of(d)[2], t[2], t[3]});
}

// x [N, C, W] as [N, C, 1, W]; a rank-4 x as it is.
ValueId Importer::as_2d(ValueId x) {
  const Shape& s = shape_of(x);
  if (s.size() != 3) return x;
  return reshape(x, {s[0], s[1], 1, s[2]});
}

// The 2-D result y [N, C, 1, W] of a 1-D op back to [N, C, W].
ValueId Importer::from_2d(ValueId y, int spatial) {
  const Shape& s = shape_of(y);
  if (spatial != 1) return y;
  return reshape(y, {s[0], s[1], s[3]});
}

void Importer::lower_conv() {
  std::optional<ValueId> bias;
  if (cur_->has_input(2)) bias = rt(2);
  set_rt(0, conv(rt(0), rt(1), bias));
}

// A Conv node with the current node's window attributes (Conv, ConvInteger, QLinearConv);
// 1-D as 2-D with H = 1.
ValueId Importer::conv(ValueId x, ValueId w, std::optional<ValueId> bias) {
  const Shape xs = shape_of(x), ws = shape_of(w);
  const int nd = static_cast<int>(xs.size()) - 2;
  if (ws.size() != xs.size())
    throw Error("weight has shape " + to_string(ws) + " for an input of shape " + to_string(xs));
  std::vector<int64_t> wk(ws.begin() + 2, ws.end());
  std::vector<int64_t> kernel = ints_or(*cur_, "kernel_shape", wk);
  if (kernel != wk) throw Error("kernel_shape does not match the weight " + to_string(ws));
  if (nd == 3)
    return conv_3d(x, w, bias, resolve_window(*cur_, xs, kernel, true), cur_->attr_int("group", 1));
  Node n;
  n.op = OpType::Conv;
  n.attrs = window_attrs(*cur_, xs, kernel, true);
  n.attrs["group"] = cur_->attr_int("group", 1);
  n.inputs = {as_2d(x), as_2d(w)};
  if (bias) n.inputs.push_back(*bias);
  return from_2d(emit(std::move(n), "conv"), nd);
}

// A 3-D Conv as one 2-D Conv per depth tap kd, summed: y[n, m, od] = Σ_kd conv2d(x[n, :,
// od·sd - pd + kd·dd], w[:, :, kd]) over (H, W), + bias. Each tap's input is a strided Slice
// of x (padded along D with zeros) seen as [N·OD, C, H, W], so each 2-D Conv covers every
// output depth at once; its weight slice is constant when w is (packed once like any
// Conv's). The sum runs over the taps in order, in f32.
ValueId Importer::conv_3d(ValueId x, ValueId w, std::optional<ValueId> bias, const WindowSpec& win,
                          int64_t group) {
  const Shape xs = shape_of(x), ws = shape_of(w);
  const int64_t N = xs[0], C = xs[1], D = xs[2], M = ws[0];
  const int64_t KD = win.kernel[0], sd = win.strides[0], dd = win.dilations[0];
  const int64_t span = (KD - 1) * dd + 1, padded = D + win.pads[0] + win.pads[3];
  if (padded < span)
    throw Error("the depth window (" + std::to_string(span) +
                ") is larger than the padded input (" + std::to_string(padded) + ")");
  const int64_t OD = (padded - span) / sd + 1;
  ValueId xp = x;
  const DType t = dtype_of(x);
  auto zeros = [&](int64_t depth) { return filled(t, 0, {N, C, depth, xs[3], xs[4]}, "pad"); };
  if (win.pads[0] > 0 || win.pads[3] > 0) {
    std::vector<ValueId> parts;
    if (win.pads[0] > 0) parts.push_back(zeros(win.pads[0]));
    parts.push_back(x);
    if (win.pads[3] > 0) parts.push_back(zeros(win.pads[3]));
    xp = concat_axis(parts, 2);
  }
  const WindowSpec hw = win.pick({1, 2});
  std::optional<ValueId> sum;
  for (int64_t kd = 0; kd < KD; ++kd) {
    const int64_t start = kd * dd;
    ValueId taps = slice_axis(xp, 2, start, start + (OD - 1) * sd + 1, sd);  // [N, C, OD, H, W]
    taps = op1(OpType::Dimshuffle, {{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}}, taps);
    taps = reshape(taps, {N * OD, C, xs[3], xs[4]});
    ValueId wk = reshape(slice_axis(w, 2, kd, kd + 1, 1), {M, ws[1], ws[3], ws[4]});
    Node n;
    n.op = OpType::Conv;
    n.attrs = hw.attrs(true);
    n.attrs["group"] = group;
    n.inputs = {taps, wk};
    if (bias && kd == 0) n.inputs.push_back(*bias);
    ValueId y = emit(std::move(n), "conv_d" + std::to_string(kd));
    sum = sum ? ew(Mode::ADD, {*sum, y}) : y;
  }
  const Shape ys = shape_of(*sum);  // [N·OD, M, OH, OW]
  ValueId y = reshape(*sum, {N, OD, M, ys[2], ys[3]});
  return op1(OpType::Dimshuffle, {{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}}, y);
}

void Importer::lower_pool(bool max) {
  ValueId x = rt(0);
  const int64_t storage_order = max ? cur_->attr_int("storage_order", 0) : 0;
  if (storage_order != 0 && storage_order != 1)
    throw Error("storage_order must be 0 or 1, got " + std::to_string(storage_order));
  auto kernel = cur_->attr_ints("kernel_shape");
  if (!kernel) throw Error("missing attribute 'kernel_shape'");
  const Shape& xs = shape_of(x);
  // Each window as 2-D; a 3-D one as two (max and mean over a box are separable, and so
  // are the tap counts that AveragePool divides by, with or without the padding).
  WindowSpec w = resolve_window(*cur_, xs, *kernel, true);
  if (xs.size() == 3) w = w.pick({-1, 0});  // [N, C, W] as [N, C, 1, W]
  const int64_t ceil = cur_->attr_int("ceil_mode", 0);
  const int64_t include_pad = cur_->attr_int("count_include_pad", 0);
  if (!max && cur_->opset < 19 && cur_->has_attr("dilations"))
    throw Error("unsupported attribute: dilations (an AveragePool attribute from opset 19)");
  if (!max && w.dilations != std::vector<int64_t>(w.dilations.size(), 1)) {
    // the op table's AveragePool has no dilations (onnx_lower_window.cpp)
    return set_rt(0, avg_pool_dilated(x, w, include_pad != 0, ceil != 0));
  }
  auto pool = [&](ValueId in, const WindowSpec& w2) {
    Node n;
    n.op = max ? OpType::MaxPool : OpType::AveragePool;
    n.attrs = w2.attrs(max);
    n.attrs["kernel_shape"] = w2.kernel;
    n.attrs["ceil_mode"] = ceil;
    if (!max) n.attrs["count_include_pad"] = include_pad;
    n.inputs = {in};
    return emit(std::move(n), max ? "maxpool" : "avgpool");
  };
  const bool indices = max && cur_->wants_output(1);
  if (xs.size() == 5) {
    if (indices) throw Error("unsupported output: Indices of a 3-D MaxPool");
    return set_rt(0, separable_3d(x, w, pool));
  }
  const int nd = static_cast<int>(xs.size()) - 2;
  ValueId y = pool(as_2d(x), w);
  set_rt(0, from_2d(y, nd));
  // storage_order only orders Indices (onnx_lower_window.cpp).
  if (indices) set_rt(1, from_2d(max_pool_indices(as_2d(x), y, w, storage_order == 1), nd));
}

void Importer::lower_global_pool(bool max) {
  ValueId x = rt(0);
  int rank = static_cast<int>(shape_of(x).size());
  if (rank < 3) throw Error("needs an input of rank >= 3 (N, C, spatial...)");
  std::vector<int64_t> axes;
  for (int a = 2; a < rank; ++a) axes.push_back(a);
  set_rt(0, reduce(x, max ? "MAX" : "MEAN", axes, true));
}

void Importer::lower_slice() {
  ValueId x = rt(0);
  Attrs a;
  if (cur_->opset < 10) {
    auto starts = cur_->attr_ints("starts"), ends = cur_->attr_ints("ends");
    if (!starts || !ends) throw Error("needs the attributes starts and ends");
    a["starts"] = *starts;
    a["ends"] = *ends;
    if (auto axes = cur_->attr_ints("axes")) a["axes"] = *axes;
  } else {
    a["starts"] = const_ints(1, "starts");
    a["ends"] = const_ints(2, "ends");
    if (cur_->has_input(3)) a["axes"] = const_ints(3, "axes");
    if (cur_->has_input(4)) a["steps"] = const_ints(4, "steps");
  }
  set_rt(0, op1(OpType::Slice, std::move(a), x, "slice"));
}

void Importer::lower_split() {
  ValueId x = rt(0);
  const Shape& xs = shape_of(x);
  int axis = norm_axis(cur_->attr_int("axis", 0), static_cast<int>(xs.size()), "axis");
  std::vector<int64_t> sizes;
  if (cur_->opset >= 13 && cur_->has_input(1))
    sizes = const_ints(1, "split");
  else if (auto s = cur_->attr_ints("split"))
    sizes = *s;
  int outputs = cur_->num_outputs();
  if (cur_->opset >= 18 && cur_->has_attr("num_outputs")) {
    if (!sizes.empty()) throw Error("takes either the input split or num_outputs, not both");
    if (cur_->attr_int("num_outputs") != outputs)
      throw Error("num_outputs is " + std::to_string(cur_->attr_int("num_outputs")) + " for " +
                  std::to_string(outputs) + " outputs");
  }
  if (sizes.empty()) {  // equal parts; opset 18's num_outputs is the output count anyway
    if (outputs < 1) throw Error("needs at least one output");
    int64_t part = (xs[axis] + outputs - 1) / outputs;
    if (cur_->opset < 18 && xs[axis] % outputs != 0)
      throw Error("axis of size " + std::to_string(xs[axis]) + " does not split into " +
                  std::to_string(outputs) + " equal parts");
    for (int k = 0; k < outputs; ++k)
      sizes.push_back(std::max<int64_t>(0, std::min(part, xs[axis] - k * part)));
  }
  if (static_cast<int>(sizes.size()) != outputs)
    throw Error("split has " + std::to_string(sizes.size()) + " entries for " +
                std::to_string(outputs) + " outputs");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw Error("split sizes must be >= 0");
    total += s;
  }
  if (total != xs[axis])
    throw Error("split sizes add up to " + std::to_string(total) + ", the axis has " +
                std::to_string(xs[axis]));
  int64_t at = 0;
  for (int k = 0; k < outputs; ++k) {
    Attrs a{{"starts", std::vector<int64_t>{at}},
            {"ends", std::vector<int64_t>{at + sizes[k]}},
            {"axes", std::vector<int64_t>{axis}}};
    if (cur_->wants_output(k))
      set_rt(k, op1(OpType::Slice, std::move(a), x, "split" + std::to_string(k)));
    at += sizes[k];
  }
}

void Importer::lower_concat() {
  Node n;
  n.op = OpType::Concat;
  n.attrs["axis"] = cur_->attr_int("axis");
  for (int k = 0; k < cur_->num_inputs(); ++k) n.inputs.push_back(rt(k));
  if (n.inputs.empty()) throw Error("needs at least one input");
  set_rt(0, emit(std::move(n), "concat"));
}

void Importer::lower_gather() {
  ValueId data = rt(0);
  int32_t t = elem(1);
  if (t != pb::TensorProto::INT64 && t != pb::TensorProto::INT32)
    throw Error("indices must be INT32 or INT64, got " + elem_type_name(t));
  int64_t axis = cur_->attr_int("axis", 0);
  if (is_const(1) && !shape(0).empty()) {  // constant indices: checked here, not at run time
    int a = norm_axis(axis, static_cast<int>(shape(0).size()), "axis");
    int64_t dim = shape(0)[a];
    for (int64_t i : cst(1).ints())
      if (i < -dim || i >= dim)
        throw Error("index " + std::to_string(i) + " is out of range for axis " +
                    std::to_string(a) + " of size " + std::to_string(dim));
  }
  Node n;
  n.op = OpType::Gather;
  n.attrs["axis"] = axis;
  n.inputs = {data, rt(1)};
  set_rt(0, emit(std::move(n), "gather"));
}

bool Importer::lower_nn() {
  const std::string& op = cur_->op();
  if (op == "Conv")
    lower_conv();
  else if (op == "MaxPool")
    lower_pool(true);
  else if (op == "AveragePool")
    lower_pool(false);
  else if (op == "ConvTranspose")
    lower_conv_transpose();  // onnx_lower_window.cpp
  else if (op == "LpPool")
    lower_lppool();
  else if (op == "LRN")
    lower_lrn();
  else if (op == "MaxUnpool")
    lower_max_unpool();  // onnx_lower_window.cpp
  else if (op == "GlobalAveragePool")
    lower_global_pool(false);
  else if (op == "GlobalMaxPool")
    lower_global_pool(true);
  else if (op == "Slice")
    lower_slice();
  else if (op == "Split")
    lower_split();
  else if (op == "Concat")
    lower_concat();
  else if (op == "Gather")
    lower_gather();
  else
    return false;
  return true;
}

}  // namespace hf::onnx_detail
