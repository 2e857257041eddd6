#include "runtime/ir/nn_geometry.h"

#include <algorithm>

#include "runtime/ir/error.h"

namespace hf {

namespace {

[[noreturn]] void fail(const Node& n, const std::string& msg) {
  throw Error(describe(n) + ": " + msg);
}

// Window attributes (kernel, strides, dilations, pads) are at most kMaxElements, like any
// dimension, so the window arithmetic below (sums of a few of them) cannot overflow.
void check_range(const Node& n, const char* key, const std::vector<int64_t>& v, int64_t min) {
  for (int64_t x : v)
    if (x < min || x > kMaxElements)
      fail(n, std::string(key) + " entries must be >= " + std::to_string(min) +
                  " and <= 2^40, got " + std::to_string(x));
}

std::vector<int64_t> pair_attr(const Node& n, const char* key, int64_t fallback, int64_t min) {
  std::vector<int64_t> v = n.attr_ints(key, std::vector<int64_t>{fallback, fallback});
  if (v.size() != 2)
    fail(n, std::string(key) + " needs 2 entries (H, W), got " + std::to_string(v.size()));
  check_range(n, key, v, min);
  return v;
}

// Fills everything but `k` and the output size; `ceil` picks ceil_mode's rounding.
void read_window(const Node& n, Window2d& w, const Shape& x, bool dilations, bool ceil) {
  std::vector<int64_t> s = pair_attr(n, "strides", 1, 1);
  std::vector<int64_t> d = dilations ? pair_attr(n, "dilations", 1, 1) : std::vector<int64_t>{1, 1};
  std::vector<int64_t> p = n.attr_ints("pads", std::vector<int64_t>{0, 0, 0, 0});
  if (p.size() != 4)
    fail(n, "pads needs 4 entries (top, left, bottom, right), got " + std::to_string(p.size()));
  check_range(n, "pads", p, 0);
  for (int a = 0; a < 2; ++a) {
    w.stride[a] = s[a];
    w.dilation[a] = d[a];
    w.pad_begin[a] = p[a];
    w.pad_end[a] = p[a + 2];
    w.in[a] = x[2 + a];
    // in, pads, kernel, dilation <= 2^40: the padded input fits easily; only the span, a
    // product of two of them, can overflow, and then it is larger than the padded input.
    const int64_t padded = w.in[a] + w.pad_begin[a] + w.pad_end[a];
    int64_t span = 0;
    if (__builtin_mul_overflow(w.k[a] - 1, w.dilation[a], &span) || span + 1 > padded)
      fail(n, "the window (" + std::to_string(w.k[a]) + " taps, dilation " +
                  std::to_string(w.dilation[a]) + ") is larger than the padded input " +
                  to_string(x));
    ++span;
    int64_t room = padded - span;
    w.out[a] = (ceil ? (room + w.stride[a] - 1) / w.stride[a] : room / w.stride[a]) + 1;
    // ceil_mode (as PyTorch and onnxruntime): the last window must start inside the input
    // or its begin padding, never wholly in the end padding.
    if (ceil && (w.out[a] - 1) * w.stride[a] >= w.in[a] + w.pad_begin[a]) --w.out[a];
  }
}

void need_nchw(const Node& n, const Shape& x, const char* what) {
  if (x.size() != 4)
    fail(n, std::string(what) + " must be 4-D (N, C, H, W), got " + to_string(x) +
                " (only 2-D convolution and pooling are supported)");
}

}  // namespace

bool nhwc_layout(const Node& n) {
  auto it = n.attrs.find("layout");
  if (it == n.attrs.end()) return false;
  const std::string& layout = n.attr_str("layout");
  if (layout != "NCHW" && layout != "NHWC")
    fail(n, "layout must be \"NCHW\" or \"NHWC\", got \"" + layout + "\"");
  return layout == "NHWC";
}

ConvGeometry conv_geometry(const Node& n, const Shape& x_in, const Shape& w) {
  need_nchw(n, x_in, "input");
  need_nchw(n, w, "weight");
  ConvGeometry g;
  g.nhwc = nhwc_layout(n);
  // The window arithmetic reads NCHW: an NHWC input's axes in that order.
  const Shape x = g.nhwc ? Shape{x_in[0], x_in[3], x_in[1], x_in[2]} : x_in;
  g.n = x[0];
  g.c = x[1];
  g.m = w[0];
  g.group = n.attr_int("group", 1);
  if (g.group < 1 || g.c % g.group != 0 || g.m % g.group != 0)
    fail(n, "group " + std::to_string(g.group) + " must divide the input channels (" +
                std::to_string(g.c) + ") and the output channels (" + std::to_string(g.m) + ")");
  if (w[1] != g.c / g.group)  // not w[1] * group: group is unbounded when c is 0
    fail(n, "weight " + to_string(w) + " needs " + std::to_string(g.c / g.group) +
                " input channels per group for input " + to_string(x));
  g.win.k[0] = w[2];
  g.win.k[1] = w[3];
  if (w[2] < 1 || w[3] < 1) fail(n, "weight " + to_string(w) + " has an empty kernel");
  read_window(n, g.win, x, true, false);
  return g;
}

PoolGeometry pool_geometry(const Node& n, const Shape& x_in) {
  need_nchw(n, x_in, "input");
  PoolGeometry g;
  g.nhwc = nhwc_layout(n);
  // The window arithmetic reads NCHW: an NHWC input's axes in that order.
  const Shape x = g.nhwc ? Shape{x_in[0], x_in[3], x_in[1], x_in[2]} : x_in;
  g.n = x[0];
  g.c = x[1];
  std::vector<int64_t> k = n.attr_ints("kernel_shape");
  if (k.size() != 2) fail(n, "kernel_shape needs 2 positive entries (kh, kw)");
  check_range(n, "kernel_shape", k, 1);
  g.win.k[0] = k[0];
  g.win.k[1] = k[1];
  bool avg = n.op == OpType::AveragePool;
  g.count_include_pad = avg && n.attr_int("count_include_pad", 0) != 0;
  read_window(n, g.win, x, !avg, n.attr_int("ceil_mode", 0) != 0);
  for (int a = 0; a < 2; ++a)
    if (g.win.pad_begin[a] >= (g.win.k[a] - 1) * g.win.dilation[a] + 1 ||
        g.win.pad_end[a] >= (g.win.k[a] - 1) * g.win.dilation[a] + 1)
      fail(n, "pads must be smaller than the window (a window could lie wholly in the padding)");
  return g;
}

SliceGeometry slice_geometry(const Node& n, const Shape& in) {
  const int rank = static_cast<int>(in.size());
  std::vector<int64_t> starts = n.attr_ints("starts"), ends = n.attr_ints("ends");
  std::vector<int64_t> axes = n.attr_ints("axes", std::vector<int64_t>{});
  std::vector<int64_t> steps = n.attr_ints("steps", std::vector<int64_t>{});
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    fail(n, "starts, ends, axes and steps must have the same length");
  SliceGeometry g;
  g.start.assign(rank, 0);
  g.step.assign(rank, 1);
  g.count = in;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    auto ax = normalize_axis(axes[i], rank);
    if (!ax)
      fail(n,
           "axis " + std::to_string(axes[i]) + " is out of range for rank " + std::to_string(rank));
    if (seen[*ax]) fail(n, "axes repeat");
    seen[*ax] = true;
    const int64_t dim = in[*ax], step = steps[i];
    if (step == 0) fail(n, "steps must not be 0");
    // ONNX: negative starts/ends count from the end, then clamp to [0, dim] for a positive
    // step and [-1, dim - 1] for a negative one.
    auto resolve = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v += dim;  // cannot overflow: dim >= 0
      return std::clamp(v, lo, hi);
    };
    int64_t s, e;
    if (step > 0) {
      s = resolve(starts[i], 0, dim);
      e = resolve(ends[i], 0, dim);
    } else {
      s = resolve(starts[i], -1, dim - 1);
      e = resolve(ends[i], -1, dim - 1);
    }
    // ceil(distance / |step|), in unsigned arithmetic: a step near +-2^63 (-step of
    // INT64_MIN) must not overflow. s and e are clamped, so the distance is within a dim.
    const int64_t distance = step > 0 ? e - s : s - e;
    const uint64_t stride = step > 0 ? uint64_t(step) : 0 - uint64_t(step);
    const int64_t count =
        distance <= 0 ? 0 : static_cast<int64_t>((uint64_t(distance) - 1) / stride + 1);
    g.start[*ax] = count == 0 ? 0 : s;
    // A step only matters between two elements; when there are fewer it is 1, so the
    // kernels never multiply a huge step (with two or more, |step| < dim <= 2^40).
    g.step[*ax] = count > 1 ? step : 1;
    g.count[*ax] = count;
  }
  return g;
}

std::vector<ValueType> infer_nn_outputs(const Node& n, const std::vector<ValueType>& in) {
  switch (n.op) {
    case OpType::Conv: {
      if (in.size() != 2 && in.size() != 3) fail(n, "takes 2 or 3 inputs (x, w[, bias])");
      for (const ValueType& v : in)
        if (v.dtype != in[0].dtype || !is_float(v.dtype)) fail(n, "needs inputs of one float type");
      refuse_f64(n, in[0].dtype);
      ConvGeometry c = conv_geometry(n, in[0].shape, in[1].shape);
      if (in.size() == 3 && in[2].shape != Shape{c.m})
        fail(n, "bias has shape " + to_string(in[2].shape) + ", expected [" + std::to_string(c.m) +
                    "]");
      if (c.nhwc) return {{in[0].dtype, {c.n, c.win.out[0], c.win.out[1], c.m}}};
      return {{in[0].dtype, {c.n, c.m, c.win.out[0], c.win.out[1]}}};
    }
    case OpType::MaxPool:
    case OpType::AveragePool: {
      bool u8_max = n.op == OpType::MaxPool && in[0].dtype == DType::U8;  // exact in f32
      if (!is_float(in[0].dtype) && !u8_max)
        fail(n, n.op == OpType::MaxPool ? "needs a float or u8 input" : "needs a float input");
      refuse_f64(n, in[0].dtype);
      PoolGeometry p = pool_geometry(n, in[0].shape);
      if (p.nhwc) return {{in[0].dtype, {p.n, p.win.out[0], p.win.out[1], p.c}}};
      return {{in[0].dtype, {p.n, p.c, p.win.out[0], p.win.out[1]}}};
    }
    case OpType::Concat: {
      if (in.empty()) fail(n, "needs at least one input");
      int rank = static_cast<int>(in[0].shape.size());
      if (rank == 0) fail(n, "cannot concatenate scalars");
      int axis = axis_attr(n, rank);
      Shape out = in[0].shape;
      for (size_t i = 1; i < in.size(); ++i) {
        Shape s = in[i].shape;
        if (in[i].dtype != in[0].dtype) fail(n, "inputs differ in dtype");
        bool ok = s.size() == out.size();
        for (int d = 0; ok && d < rank; ++d) ok = d == axis || s[d] == out[d];
        if (!ok)
          fail(n, "input " + std::to_string(i) + " " + to_string(s) + " does not match " +
                      to_string(in[0].shape) + " outside axis " + std::to_string(axis));
        out[axis] += s[axis];
      }
      return {{in[0].dtype, out}};
    }
    case OpType::Slice:
      return {{in[0].dtype, slice_geometry(n, in[0].shape).count}};
    case OpType::Gather: {
      if (in[1].dtype != DType::I32 && in[1].dtype != DType::I64)
        fail(n, "indices must be i32 or i64, got " + std::string(dtype_name(in[1].dtype)));
      int rank = static_cast<int>(in[0].shape.size());
      if (rank == 0) fail(n, "cannot gather from a scalar");
      int axis = axis_attr(n, rank);
      Shape out(in[0].shape.begin(), in[0].shape.begin() + axis);
      out.insert(out.end(), in[1].shape.begin(), in[1].shape.end());
      out.insert(out.end(), in[0].shape.begin() + axis + 1, in[0].shape.end());
      if (out.size() > static_cast<size_t>(kMaxRank)) fail(n, "the result's rank is too large");
      return {{in[0].dtype, out}};
    }
    default:
      fail(n, "not a convolution, pooling or data-movement op");
  }
}

int axis_attr(const Node& n, int rank) {
  int64_t a = n.attr_int("axis", 0);
  auto ax = normalize_axis(a, rank);
  if (!ax)
    fail(n, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
  return *ax;
}

void refuse_f64(const Node& n, DType t) {
  if (t == DType::F64) fail(n, "f64 is not supported (its kernels compute in f32 only)");
}

}  // namespace hf
