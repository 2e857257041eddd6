// CPU kernels of the convolution, pooling and data-movement ops (docs/ops.md). Same
// contracts as kernels.h; Conv, the pools and Gather need contiguous inputs and outputs
// (what the executor's buffers are) and throw std::invalid_argument otherwise.
#pragma once
#include <span>

#include "runtime/cpu/thread_pool.h"
#include "runtime/ir/tensor.h"
#include "runtime/ops/nn_geometry.h"

namespace hf::cpu {

// out = conv(x, w) + bias (bias may be null). f32 through im2col and OpenBLAS sgemm (a 1x1
// convolution with stride 1 and no padding reads x in place); depthwise convolutions (one
// input channel per group) run a direct kernel. f16/bf16 are converted to f32 and back.
void conv2d(const ConvGeometry& g, const TensorView& x, const TensorView& w, const TensorView* bias,
            const TensorView& out, ThreadPool& pool);

// MaxPool (NaN propagates) or AveragePool (divided by the window's elements inside the
// input, or inside the padded input with count_include_pad).
void pool2d(bool max, const PoolGeometry& g, const TensorView& x, const TensorView& out,
            ThreadPool& pool);

// out = data[..., indices, ...] along `axis`; an index outside [-dim, dim) throws
// std::out_of_range naming it.
void gather(int axis, const TensorView& data, const TensorView& indices, const TensorView& out,
            ThreadPool& pool);

// out = in[start::step] per axis (any strides, negative steps included).
void slice(const SliceGeometry& g, const TensorView& in, const TensorView& out, ThreadPool& pool);

// The inputs placed one after another along `axis` of out.
void concat(int axis, std::span<const TensorView> inputs, const TensorView& out, ThreadPool& pool);

}  // namespace hf::cpu
