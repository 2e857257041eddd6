// ONNX convolution, pooling and data-movement ops on run-time data, lowered to the op
// table's Conv, MaxPool, AveragePool, Concat, Slice and Gather (on constants these ops were
// folded already). GlobalAveragePool / GlobalMaxPool become a Reduce, Split a Slice per
// output. Only 2-D (NCHW) convolution and pooling are supported; docs/onnx.md lists the
// attributes each op takes.
#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

namespace {

std::vector<int64_t> ints_or(const OnnxNode& n, const char* name, std::vector<int64_t> fallback) {
  auto v = n.attr_ints(name);
  return v ? *v : fallback;
}

// kernel_shape, strides, dilations and pads of a 2-D window, with auto_pad resolved to
// explicit pads (SAME_UPPER puts the odd padding at the end, SAME_LOWER at the beginning).
Attrs window_attrs(const OnnxNode& n, const Shape& x, std::vector<int64_t> kernel, bool dilations) {
  if (x.size() != 4)
    throw Error("input has shape " + to_string(x) +
                ": convolution and pooling of rank other than 4 (N, C, H, W) are not supported");
  std::vector<int64_t> strides = ints_or(n, "strides", {1, 1});
  std::vector<int64_t> dil = ints_or(n, "dilations", {1, 1});
  std::vector<int64_t> pads = ints_or(n, "pads", {0, 0, 0, 0});
  if (kernel.size() != 2 || strides.size() != 2 || dil.size() != 2 || pads.size() != 4)
    throw Error(
        "kernel_shape, strides and dilations need 2 entries and pads 4 (other ranks are not "
        "supported)");
  if (!dilations && (dil[0] != 1 || dil[1] != 1))
    throw Error("unsupported attribute: dilations other than 1");
  std::string auto_pad = n.attr_str("auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    pads = {0, 0, 0, 0};
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int a = 0; a < 2; ++a) {
      if (strides[a] < 1) throw Error("strides must be >= 1");
      int64_t out = (x[2 + a] + strides[a] - 1) / strides[a];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * strides[a] + (kernel[a] - 1) * dil[a] + 1 - x[2 + a]);
      int64_t small = total / 2;
      pads[a] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[a + 2] = total - pads[a];
    }
  } else if (auto_pad != "NOTSET") {
    throw Error("unsupported attribute: auto_pad '" + auto_pad + "'");
  }
  Attrs a{{"strides", strides}, {"pads", pads}};
  if (dilations) a["dilations"] = dil;
  return a;
}

}  // namespace

void Importer::lower_conv() {
  std::optional<ValueId> bias;
  if (cur_->has_input(2)) bias = rt(2);
  set_rt(0, conv(rt(0), rt(1), bias));
}

// A Conv node with the current node's window attributes (Conv, ConvInteger, QLinearConv).
ValueId Importer::conv(ValueId x, ValueId w, std::optional<ValueId> bias) {
  const Shape ws = shape_of(w);
  if (ws.size() != 4)
    throw Error("weight has shape " + to_string(ws) +
                ": only 2-D convolution is supported (other ranks are not supported)");
  std::vector<int64_t> kernel = ints_or(*cur_, "kernel_shape", {ws[2], ws[3]});
  if (kernel != std::vector<int64_t>{ws[2], ws[3]})
    throw Error("kernel_shape does not match the weight " + to_string(ws));
  Node n;
  n.op = OpType::Conv;
  n.attrs = window_attrs(*cur_, shape_of(x), kernel, true);
  n.attrs["group"] = cur_->attr_int("group", 1);
  n.inputs = {x, w};
  if (bias) n.inputs.push_back(*bias);
  return emit(std::move(n), "conv");
}

void Importer::lower_pool(bool max) {
  ValueId x = rt(0);
  if (max && cur_->attr_int("storage_order", 0) != 0)
    throw Error("unsupported attribute: storage_order=1");
  if (max && cur_->wants_output(1)) throw Error("unsupported output: Indices");
  auto kernel = cur_->attr_ints("kernel_shape");
  if (!kernel) throw Error("missing attribute 'kernel_shape'");
  Node n;
  n.op = max ? OpType::MaxPool : OpType::AveragePool;
  n.attrs = window_attrs(*cur_, shape_of(x), *kernel, max);
  n.attrs["kernel_shape"] = *kernel;
  n.attrs["ceil_mode"] = cur_->attr_int("ceil_mode", 0);
  if (!max) n.attrs["count_include_pad"] = cur_->attr_int("count_include_pad", 0);
  n.inputs = {x};
  set_rt(0, emit(std::move(n), max ? "maxpool" : "avgpool"));
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
