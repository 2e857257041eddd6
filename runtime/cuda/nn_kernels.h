// The AOT kernels of the pooling and data-movement ops (MaxPool, AveragePool, Gather) as
// host functions that launch on a stream; Conv is cuDNN's (conv_cudnn.h), Slice and Concat
// are strided copies (nn_ops.cpp). Same contract as kernels.h. Internal to runtime/cuda/.
#pragma once
#include <cuda_runtime.h>

#include "runtime/ir/dtype.h"
#include "runtime/ops/hd.h"

namespace hf::cuda {

// NCHW or NHWC pooling with the CPU kernel's semantics (runtime/cpu/pool.cpp): windows clipped to
// the input; MaxPool propagates NaN; AveragePool divides by the taps inside the input, or
// with count_include_pad by the window's extent inside the padded input (which ceil_mode
// can leave smaller than the window). f32/f16/bf16 computed in f32; u8 for MaxPool.
struct PoolParams {
  const void* in = nullptr;
  void* out = nullptr;
  DType dtype = DType::F32;
  bool max = true, count_include_pad = false;
  i64 planes = 0;  // N * C
  bool nhwc = false;
  i64 channels = 1;  // C: NHWC's pixel stride
  i64 in_size[2] = {}, out_size[2] = {}, k[2] = {}, stride[2] = {}, dilation[2] = {};
  i64 pad_begin[2] = {}, pad_end[2] = {};
};
void launch_pool2d(const PoolParams& p, cudaStream_t s, int sms);

// out[o, k, i] = data[o, indices[k], i] over `outer` x `count` rows of `inner` elements of
// `elem_bytes` (1, 2, 4 or 8). An index outside [-dim, dim) writes zeros to its row and
// one of them is recorded in bad[0..1] (two u64 the caller zeroed and reads back: a flag
// and the index): a kernel cannot throw, so the caller reports it naming the node.
struct GatherParams {
  const void* data = nullptr;
  const void* indices = nullptr;
  bool indices_i64 = true;
  void* out = nullptr;
  i64 outer = 0, dim = 0, count = 0, inner = 0;
  int elem_bytes = 4;
  unsigned long long* bad = nullptr;
};
void launch_gather(const GatherParams& p, cudaStream_t s, int sms);

}  // namespace hf::cuda
