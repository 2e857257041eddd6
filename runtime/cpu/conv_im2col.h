// The im2col + OpenBLAS convolution (and its direct depthwise kernel), f32, dense NCHW: the
// kernel for geometries oneDNN refuses, and the baseline bench/conv_bench measures.
#pragma once
#include "runtime/cpu/thread_pool.h"
#include "runtime/ir/nn_geometry.h"

namespace hf::cpu {

// y = conv(x, w) + bias (bias may be null).
void conv2d_im2col_f32(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                       float* y, ThreadPool& pool);

}  // namespace hf::cpu
