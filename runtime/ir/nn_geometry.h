// Geometry of the convolution, pooling and data-movement ops (Conv, MaxPool, AveragePool,
// Concat, Slice, Gather), resolved from a node's attributes and input shapes. One
// definition serves shape inference (op_table.cpp) and the kernels, so both agree on every
// output size. Each function throws hf::Error naming the node when the attributes are bad.
#pragma once
#include <vector>

#include "runtime/ir/graph.h"
#include "runtime/ir/op_table.h"

namespace hf {

// A 2-D window over NCHW: kernel, stride, dilation and padding (begin/end) per spatial axis.
struct Window2d {
  int64_t k[2] = {1, 1}, stride[2] = {1, 1}, dilation[2] = {1, 1};
  int64_t pad_begin[2] = {0, 0}, pad_end[2] = {0, 0};
  int64_t in[2] = {0, 0}, out[2] = {0, 0};
};

// Conv: x [N, C, H, W], w [M, C/group, kh, kw], optional bias [M]. With the attribute
// layout "NHWC" (the backends' rewrite of Conv chains, nhwc_layout.h), x and the output
// are [N, H, W, C] instead; the weights stay [M, C/group, kh, kw].
struct ConvGeometry {
  int64_t n = 0, c = 0, m = 0, group = 1;
  bool nhwc = false;
  Window2d win;
};
ConvGeometry conv_geometry(const Node& node, const Shape& x, const Shape& w);

// MaxPool / AveragePool: x [N, C, H, W], or [N, H, W, C] with layout "NHWC" (inside the
// backends' Conv chains, nhwc_layout.h), the output likewise.
struct PoolGeometry {
  int64_t n = 0, c = 0;
  bool nhwc = false;
  Window2d win;
  bool count_include_pad = false;  // AveragePool
};
PoolGeometry pool_geometry(const Node& node, const Shape& x);

// The `layout` attribute of a Conv or pooling node: true for "NHWC", false when absent or
// "NCHW"; anything else is an error naming the node.
bool nhwc_layout(const Node& node);

// Slice: for every axis of the input, the first index, the step and the element count.
struct SliceGeometry {
  std::vector<int64_t> start, step, count;
};
SliceGeometry slice_geometry(const Node& node, const Shape& in);

// Shape and dtype inference of these ops (infer_outputs in op_table.h delegates here).
std::vector<ValueType> infer_nn_outputs(const Node& node, const std::vector<ValueType>& inputs);

// Concat / Gather: the `axis` attribute, normalised against `rank`.
int axis_attr(const Node& node, int rank);

// Refuses f64 inputs of the ops whose kernels (CPU and CUDA) compute in f32 only (MatMul,
// Conv, the pools, PowC): a clear "not supported" rather than a silent f32 computation.
void refuse_f64(const Node& node, DType t);

}  // namespace hf
