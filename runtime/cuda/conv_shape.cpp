#include "runtime/cuda/conv_shape.h"

#include <climits>

#include "runtime/ir/error.h"

namespace hf::cuda {

namespace {

int as_int(int64_t v, const std::string& node, const char* what) {
  if (v < 0 || v > INT_MAX)
    throw Error(node + ": " + what + " " + std::to_string(v) + " is too large for cuDNN");
  return static_cast<int>(v);
}

}  // namespace

CudnnConvShape cudnn_conv_shape(const ConvGeometry& g, const std::string& node) {
  const Window2d& w = g.win;
  CudnnConvShape s{};
  s.nhwc = g.nhwc;
  s.n = as_int(g.n, node, "batch");
  s.c = as_int(g.c, node, "input channels");
  s.h = as_int(w.in[0], node, "input height");
  s.w = as_int(w.in[1], node, "input width");
  s.m = as_int(g.m, node, "output channels");
  s.cg = as_int(g.c / g.group, node, "channels per group");
  s.kh = as_int(w.k[0], node, "kernel height");
  s.kw = as_int(w.k[1], node, "kernel width");
  s.oh = as_int(w.out[0], node, "output height");
  s.ow = as_int(w.out[1], node, "output width");
  s.group = as_int(g.group, node, "group");
  s.in_h = s.h;
  s.in_w = s.w;
  s.prepad = false;
  for (int a = 0; a < 2; ++a) {
    s.stride[a] = as_int(w.stride[a], node, "stride");
    s.dilation[a] = as_int(w.dilation[a], node, "dilation");
    // What cuDNN computes with the begin padding on both sides; the same size means the
    // same windows, whatever the end padding says.
    const int64_t span = (w.k[a] - 1) * w.dilation[a] + 1;
    const int64_t room = w.in[a] + 2 * w.pad_begin[a] - span;
    s.prepad = s.prepad || room < 0 || room / w.stride[a] + 1 != w.out[a];
  }
  s.pad_top = as_int(w.pad_begin[0], node, "padding");
  s.pad_left = as_int(w.pad_begin[1], node, "padding");
  if (s.prepad) {
    s.h = as_int(w.in[0] + w.pad_begin[0] + w.pad_end[0], node, "padded input height");
    s.w = as_int(w.in[1] + w.pad_begin[1] + w.pad_end[1], node, "padded input width");
    s.pad[0] = s.pad[1] = 0;
  } else {
    s.pad[0] = s.pad_top;
    s.pad[1] = s.pad_left;
  }
  return s;
}

}  // namespace hf::cuda
