// The unfused CUDA kernels (compiled ahead of time by nvcc from runtime/ops/scalar_math.h,
// like the CPU kernels), as host functions that launch on a stream. Internal to runtime/cuda/.
//
// Shared contract: views are described by pointer, dtype, shape and element strides
// (stride 0 = broadcast); outputs are contiguous; every launch is asynchronous and its
// configuration error is reported as hf::Error (cuda_check.h). `sms` is the device's
// multiprocessor count: grids are capped at a few waves and the loops are grid-strided.
#pragma once
#include <cuda_runtime.h>

#include "runtime/ir/dtype.h"
#include "runtime/ops/hd.h"
#include "runtime/ops/mode.h"
#include "runtime/ops/reduce_mode.h"

namespace hf::cuda {

inline constexpr int kMaxRank = 8;
inline constexpr int kMaxEwInputs = 4;
inline constexpr int kBlock = 256;

// An elementwise launch: all inputs share `in_dtype`; out is contiguous in `shape`.
struct EwParams {
  int nin = 0;
  int rank = 0;
  i64 numel = 0;
  i64 shape[kMaxRank] = {};
  const void* in[kMaxEwInputs] = {};
  i64 in_strides[kMaxEwInputs][kMaxRank] = {};  // elements, 0 on broadcast axes
  DType in_dtype = DType::F32;                  // storage; f16/bf16 compute in f32
  void* out = nullptr;
  DType out_dtype = DType::F32;
  // Every input contiguous in `shape` or a single element (flat indexing, maybe vectorised).
  bool dense = false;
  unsigned scalar = 0;  // bit k: input k is one element, read for every output (a constant)
};

// Grid for n elements: enough blocks of kBlock threads, at most 8 waves of `sms`.
unsigned grid_for(i64 n, int sms);

// Whether launch_elemwise has a kernel for `mode` on inputs of storage type `in`.
bool elemwise_supported(Mode mode, DType in);
// out = mode(in...). hf::Error when the (mode, dtype) pair has no kernel.
void launch_elemwise(Mode mode, const EwParams& p, cudaStream_t s, int sms);

// Same-shape conversions and copies; `p.nin == 1`. type_convert: out_dtype may differ
// (float -> int truncates and saturates, NaN -> 0; -> bool is != 0); copy: same dtype.
void launch_type_convert(const EwParams& p, cudaStream_t s, int sms);
// out = in ^ e for float storage (integer |e| <= 16 by multiplication, 0.5 sqrt, -0.5 rsqrt).
void launch_pow_const(const EwParams& p, float e, cudaStream_t s, int sms);

// A reduction: one output element per kept index, each the reduction of `len` input
// elements. Input offsets are decomposed over the kept axes (for the output index) and the
// reduced axes (for the position in the reduction), both with the input's strides, so any
// set of axes works. Floats accumulate in f32 (compensated sums), integers in i64 (wrapping).
struct ReduceParams {
  const void* in = nullptr;
  void* out = nullptr;  // contiguous, `outputs` elements
  DType dtype = DType::F32;
  int kept_rank = 0, red_rank = 0;
  i64 kept_shape[kMaxRank] = {}, kept_strides[kMaxRank] = {};
  i64 red_shape[kMaxRank] = {}, red_strides[kMaxRank] = {};
  i64 outputs = 0, len = 0;
  // The innermost input axis is reduced: a warp per output reads it coalesced. Otherwise a
  // thread per output, and neighbouring threads read neighbouring elements.
  bool warp_per_output = false;
};
void launch_reduce(ReduceMode mode, const ReduceParams& p, cudaStream_t s, int sms);

}  // namespace hf::cuda
