// The unfused kernels other than Elemwise: copies and dtype conversions, pow by a
// constant, reductions; and the Elemwise dispatch table.
#include <cstdint>
#include <string>
#include <type_traits>

#include "runtime/cuda/elemwise_kernels.cuh"
#include "runtime/ops/pow_const.h"
#include "runtime/ops/reduce_combine.h"
#include "runtime/ops/saturate.h"

namespace hf::cuda {

unsigned grid_for(i64 n, int sms) {
  i64 blocks = (n + kBlock - 1) / kBlock;
  i64 cap = 8LL * (sms > 0 ? sms : 1) * (2048 / kBlock);  // 8 waves at full occupancy
  if (blocks > cap) blocks = cap;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

namespace {
EwLaunch find_elemwise(Mode mode, DType in) {
  static const EwTable& table = []() -> const EwTable& {
    static EwTable t = {};
    fill_part0(t);
    fill_part1(t);
    fill_part2(t);
    fill_part3(t);
    return t;
  }();
  return table[static_cast<int>(mode)][static_cast<int>(compute_dtype(in))];
}
}  // namespace

bool elemwise_supported(Mode mode, DType in) {
  return find_elemwise(mode, in) != nullptr;
}

void launch_elemwise(Mode mode, const EwParams& p, cudaStream_t s, int sms) {
  EwLaunch f = find_elemwise(mode, p.in_dtype);
  if (!f)
    throw Error(std::string("elemwise ") + mode_info(mode).name + " does not support dtype " +
                std::string(dtype_name(p.in_dtype)) + " on CUDA");
  f(p, s, sms);
}

namespace {

// ---- conversions ------------------------------------------------------------------------

// An element read as the widest type of its family: floats as f32, the rest as i64.
struct Scalar {
  float f;
  i64 i;
  bool is_float;
};

__device__ __forceinline__ Scalar load_scalar(const void* p, i64 i, DType dt) {
  switch (dt) {
    case DType::F32:
      return {static_cast<const float*>(p)[i], 0, true};
    case DType::F16:
      return {to_f32(static_cast<const f16*>(p)[i]), 0, true};
    case DType::BF16:
      return {to_f32(static_cast<const bf16*>(p)[i]), 0, true};
    case DType::I32:
      return {0, static_cast<const i32*>(p)[i], false};
    case DType::I64:
      return {0, static_cast<const i64*>(p)[i], false};
    case DType::Bool:
      return {0, static_cast<const bool*>(p)[i] ? 1 : 0, false};
    case DType::U8:
      return {0, static_cast<const u8*>(p)[i], false};
  }
  return {0, 0, false};
}

__device__ __forceinline__ void store_scalar(void* p, i64 i, Scalar v, DType dt) {
  float f = v.is_float ? v.f : static_cast<float>(v.i);
  switch (dt) {
    case DType::F32:
      static_cast<float*>(p)[i] = f;
      return;
    case DType::F16:
      static_cast<f16*>(p)[i] = to_f16(f);
      return;
    case DType::BF16:
      static_cast<bf16*>(p)[i] = to_bf16(f);
      return;
    case DType::Bool:
      static_cast<bool*>(p)[i] = v.is_float ? v.f != 0.0f : v.i != 0;
      return;
    case DType::I32:
      static_cast<i32*>(p)[i] =
          v.is_float ? saturate_cast<i32>(v.f) : static_cast<i32>(static_cast<u32>(v.i));
      return;
    case DType::I64:
      static_cast<i64*>(p)[i] = v.is_float ? saturate_cast<i64>(v.f) : v.i;
      return;
    case DType::U8:
      static_cast<u8*>(p)[i] = v.is_float ? saturate_cast<u8>(v.f) : static_cast<u8>(v.i);
      return;
  }
}

// The offset in the (one) input of output element i.
__device__ __forceinline__ i64 input_offset(const EwParams& p, i64 i) {
  if (p.dense) return i;
  i64 off[kMaxEwInputs];
  offsets(p, i, off);
  return off[0];
}

__global__ void convert_kernel(EwParams p) {
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.numel; i += stride)
    store_scalar(p.out, i, load_scalar(p.in[0], input_offset(p, i), p.in_dtype), p.out_dtype);
}

// Same dtype: moves elements of `Bytes` bytes (Dimshuffle, Broadcast, Reshape).
template <class E>
__global__ void copy_kernel(EwParams p) {
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.numel; i += stride)
    static_cast<E*>(p.out)[i] = static_cast<const E*>(p.in[0])[input_offset(p, i)];
}

// ---- pow by a constant ------------------------------------------------------------------

__global__ void pow_kernel(EwParams p, float e, PowCase c) {
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.numel; i += stride)
    store_as<float>(p.out, i, powc(load_as<float>(p.in[0], i, p.in_dtype), e, c), p.out_dtype);
}

// ---- reductions -------------------------------------------------------------------------

// The combinator of a run-time mode: one kernel serves every mode, branching uniformly.
template <class Acc>
struct Reducer {
  ReduceMode mode;
  __device__ Acc identity() const {
    return visit_reduce_op(mode, [](auto op) { return decltype(op)::template identity<Acc>(); });
  }
  __device__ Acc term(Acc x) const {
    return visit_reduce_op(mode, [x](auto op) { return decltype(op)::term(x); });
  }
  __device__ Acc combine(Acc a, Acc b) const {
    return visit_reduce_op(mode, [a, b](auto op) { return decltype(op)::combine(a, b); });
  }
};

__device__ __forceinline__ i64 decompose(i64 idx, int rank, const i64* shape, const i64* strides) {
  i64 off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    off += (idx % shape[d]) * strides[d];
    idx /= shape[d];
  }
  return off;
}

// Partial reduction of positions [first, len) step `step` of output `o`. Float sums are
// compensated (Kahan), so long rows stay within a few ulps of the exact sum.
template <class Acc>
__device__ Acc reduce_part(const ReduceParams& p, const Reducer<Acc>& r, i64 base, i64 first,
                           i64 step) {
  Acc acc = r.identity(), comp = Acc(0);
  const bool sum =
      r.mode == ReduceMode::SUM || r.mode == ReduceMode::SUM_SQR || r.mode == ReduceMode::MEAN;
  for (i64 k = first; k < p.len; k += step) {
    i64 off = base + decompose(k, p.red_rank, p.red_shape, p.red_strides);
    Acc x;
    if constexpr (std::is_same_v<Acc, float>)
      x = r.term(load_as<float>(p.in, off, p.dtype));
    else
      x = r.term(load_scalar(p.in, off, p.dtype).i);
    if constexpr (std::is_same_v<Acc, float>) {
      if (sum) {
        float y = x - comp, t = acc + y;
        comp = (t - acc) - y;
        acc = t;
        continue;
      }
    }
    acc = r.combine(acc, x);
  }
  return acc;
}

template <class Acc>
__device__ void store_reduced(const ReduceParams& p, const Reducer<Acc>& r, i64 o, Acc acc) {
  if (r.mode == ReduceMode::MEAN) acc = mean_of(acc, p.len);
  if constexpr (std::is_same_v<Acc, float>)
    store_as<float>(p.out, o, acc, p.dtype);
  else
    store_scalar(p.out, o, Scalar{0, acc, false}, p.dtype);
}

template <class Acc>
__global__ void reduce_thread_kernel(ReduceParams p, ReduceMode mode) {
  Reducer<Acc> r{mode};
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 o = (i64)blockIdx.x * blockDim.x + threadIdx.x; o < p.outputs; o += stride) {
    i64 base = decompose(o, p.kept_rank, p.kept_shape, p.kept_strides);
    store_reduced(p, r, o, reduce_part(p, r, base, 0, 1));
  }
}

template <class Acc>
__global__ void reduce_warp_kernel(ReduceParams p, ReduceMode mode) {
  Reducer<Acc> r{mode};
  const int lane = threadIdx.x % 32;
  const i64 warps = (i64)gridDim.x * blockDim.x / 32;
  for (i64 o = ((i64)blockIdx.x * blockDim.x + threadIdx.x) / 32; o < p.outputs; o += warps) {
    i64 base = decompose(o, p.kept_rank, p.kept_shape, p.kept_strides);
    Acc acc = reduce_part(p, r, base, lane, 32);
    for (int d = 16; d > 0; d /= 2) acc = r.combine(acc, __shfl_down_sync(0xffffffffu, acc, d));
    if (lane == 0) store_reduced(p, r, o, acc);
  }
}

EwParams one_input(const EwParams& p) {
  if (p.nin != 1) throw Error("CUDA copy kernels take one input");
  return p;
}

}  // namespace

void launch_type_convert(const EwParams& p, cudaStream_t s, int sms) {
  one_input(p);
  if (p.numel == 0) return;
  unsigned g = grid_for(p.numel, sms);
  if (p.in_dtype == p.out_dtype) {
    switch (dtype_size(p.in_dtype)) {
      case 1:
        copy_kernel<u8><<<g, kBlock, 0, s>>>(p);
        break;
      case 2:
        copy_kernel<u16><<<g, kBlock, 0, s>>>(p);
        break;
      case 4:
        copy_kernel<u32><<<g, kBlock, 0, s>>>(p);
        break;
      default:
        copy_kernel<u64><<<g, kBlock, 0, s>>>(p);
        break;
    }
    check_launch("copy");
    return;
  }
  convert_kernel<<<g, kBlock, 0, s>>>(p);
  check_launch("type_convert");
}

void launch_pow_const(const EwParams& p, float e, cudaStream_t s, int sms) {
  one_input(p);
  if (!is_float(p.in_dtype) || p.out_dtype != p.in_dtype)
    throw Error("pow_const on CUDA needs the same float dtype in and out, got " +
                std::string(dtype_name(p.in_dtype)));
  if (p.numel == 0) return;
  EwParams q = p;
  q.dense = true;
  pow_kernel<<<grid_for(p.numel, sms), kBlock, 0, s>>>(q, e, pow_case(e));
  check_launch("pow_const");
}

void launch_reduce(ReduceMode mode, const ReduceParams& p, cudaStream_t s, int sms) {
  if (p.outputs == 0) return;
  const bool f = is_float(p.dtype);
  if (p.warp_per_output) {
    unsigned g = grid_for(p.outputs * 32, sms);
    if (f)
      reduce_warp_kernel<float><<<g, kBlock, 0, s>>>(p, mode);
    else
      reduce_warp_kernel<i64><<<g, kBlock, 0, s>>>(p, mode);
  } else {
    unsigned g = grid_for(p.outputs, sms);
    if (f)
      reduce_thread_kernel<float><<<g, kBlock, 0, s>>>(p, mode);
    else
      reduce_thread_kernel<i64><<<g, kBlock, 0, s>>>(p, mode);
  }
  check_launch(std::string("reduce ") + std::string(reduce_mode_name(mode)));
}

}  // namespace hf::cuda
