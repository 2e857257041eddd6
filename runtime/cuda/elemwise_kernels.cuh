// Device code of the unfused elementwise kernels, included by the elemwise_part*.cu files
// (each instantiates a range of modes, so nvcc's work splits over translation units).
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/kernels.h"
#include "runtime/ops/half.h"
#include "runtime/ops/scalar_math.h"

namespace hf::cuda {

// Loads element i of storage type `dt` as compute type T (f16/bf16 -> f32).
template <class T>
__device__ __forceinline__ T load_as(const void* p, i64 i, DType dt) {
  if constexpr (std::is_same_v<T, float>) {
    if (dt == DType::F16) return to_f32(static_cast<const f16*>(p)[i]);
    if (dt == DType::BF16) return to_f32(static_cast<const bf16*>(p)[i]);
  }
  return static_cast<const T*>(p)[i];
}

template <class R>
__device__ __forceinline__ void store_as(void* p, i64 i, R v, DType dt) {
  if constexpr (std::is_same_v<R, float>) {
    if (dt == DType::F16) {
      static_cast<f16*>(p)[i] = to_f16(v);
      return;
    }
    if (dt == DType::BF16) {
      static_cast<bf16*>(p)[i] = to_bf16(v);
      return;
    }
  }
  static_cast<R*>(p)[i] = v;
}

template <Mode M, class T>
using Result = std::conditional_t<
    mode_info(M).kind == ModeKind::Compare || mode_info(M).kind == ModeKind::Predicate, bool, T>;

template <Mode M, class T>
__device__ __forceinline__ auto apply_mode(const T* a) {
  constexpr int n = mode_info(M).arity;
  if constexpr (n == 1)
    return ModeFn<M>::apply(a[0]);
  else if constexpr (n == 2)
    return ModeFn<M>::apply(a[0], a[1]);
  else if constexpr (n == 3)
    return ModeFn<M>::apply(a[0], a[1], a[2]);
  else
    return ModeFn<M>::apply(a[0], a[1], a[2], a[3]);
}

// Whether input k of a dense launch is one element read for every output.
__device__ __forceinline__ bool is_scalar(const EwParams& p, int k) {
  return (p.scalar >> k) & 1u;
}

// Element offsets of output index i in every input (strided/broadcast path).
__device__ __forceinline__ void offsets(const EwParams& p, i64 i, i64* off) {
  for (int k = 0; k < kMaxEwInputs; ++k) off[k] = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    i64 idx = i % p.shape[d];
    i = i / p.shape[d];
    for (int k = 0; k < p.nin; ++k) off[k] += idx * p.in_strides[k][d];
  }
}

// Any storage type, any strides: a grid-stride loop, one element per step.
template <Mode M, class T>
__global__ void ew_generic(EwParams p) {
  constexpr int n = mode_info(M).arity;
  using R = Result<M, T>;
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.numel; i += stride) {
    T a[n];
    if (p.dense) {
      for (int k = 0; k < n; ++k) a[k] = load_as<T>(p.in[k], is_scalar(p, k) ? 0 : i, p.in_dtype);
    } else {
      i64 off[kMaxEwInputs];
      offsets(p, i, off);
      for (int k = 0; k < n; ++k) a[k] = load_as<T>(p.in[k], off[k], p.in_dtype);
    }
    store_as<R>(p.out, i, static_cast<R>(apply_mode<M, T>(a)), p.out_dtype);
  }
}

// Elements [first, numel) of a dense launch, one per thread and step: the vector kernels' tail.
template <Mode M>
__device__ __forceinline__ void dense_tail(const EwParams& p, i64 first) {
  constexpr int n = mode_info(M).arity;
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = first + (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.numel; i += stride) {
    float a[n];
    for (int k = 0; k < n; ++k) a[k] = load_as<float>(p.in[k], is_scalar(p, k) ? 0 : i, p.in_dtype);
    store_as<float>(p.out, i, apply_mode<M, float>(a), p.out_dtype);
  }
}

// f32 in and out, dense and 16-byte aligned: float4 loads and stores, then a scalar tail.
template <Mode M>
__global__ void ew_vec4(EwParams p) {
  constexpr int n = mode_info(M).arity;
  const i64 stride = (i64)gridDim.x * blockDim.x;
  const i64 n4 = p.numel / 4;
  float one[n];  // the scalar operands, read once
  for (int k = 0; k < n; ++k)
    one[k] = is_scalar(p, k) ? static_cast<const float*>(p.in[k])[0] : 0.f;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
    float4 v[n];
    for (int k = 0; k < n; ++k)
      v[k] = is_scalar(p, k) ? make_float4(one[k], one[k], one[k], one[k])
                             : static_cast<const float4*>(p.in[k])[i];
    float a[n];
    float4 r;
    for (int k = 0; k < n; ++k) a[k] = v[k].x;
    r.x = apply_mode<M, float>(a);
    for (int k = 0; k < n; ++k) a[k] = v[k].y;
    r.y = apply_mode<M, float>(a);
    for (int k = 0; k < n; ++k) a[k] = v[k].z;
    r.z = apply_mode<M, float>(a);
    for (int k = 0; k < n; ++k) a[k] = v[k].w;
    r.w = apply_mode<M, float>(a);
    static_cast<float4*>(p.out)[i] = r;
  }
  dense_tail<M>(p, n4 * 4);
}

// f16 or bf16 in and out, dense and 16-byte aligned: 8 elements per 16-byte load/store,
// computed in f32 and rounded back like the scalar path, then a scalar tail.
template <Mode M, class H>
__global__ void ew_vec8_half(EwParams p) {
  constexpr int n = mode_info(M).arity;
  const i64 stride = (i64)gridDim.x * blockDim.x;
  const i64 n8 = p.numel / 8;
  const H* in[n];  // a scalar operand is read at element 0 of its own 16 bytes
  for (int k = 0; k < n; ++k) in[k] = static_cast<const H*>(p.in[k]);
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n8; i += stride) {
    uint4 v[n];
    for (int k = 0; k < n; ++k) {
      if (is_scalar(p, k)) {
        H* e = reinterpret_cast<H*>(&v[k]);
        for (int j = 0; j < 8; ++j) e[j] = in[k][0];
      } else {
        v[k] = reinterpret_cast<const uint4*>(in[k])[i];
      }
    }
    uint4 r;
    const H* h[n];
    for (int k = 0; k < n; ++k) h[k] = reinterpret_cast<const H*>(&v[k]);
    H* o = reinterpret_cast<H*>(&r);
    for (int e = 0; e < 8; ++e) {
      float a[n];
      for (int k = 0; k < n; ++k) a[k] = to_f32(h[k][e]);
      float y = apply_mode<M, float>(a);
      if constexpr (std::is_same_v<H, f16>)
        o[e] = to_f16(y);
      else
        o[e] = to_bf16(y);
    }
    static_cast<uint4*>(p.out)[i] = r;
  }
  dense_tail<M>(p, n8 * 8);
}

using EwLaunch = void (*)(const EwParams&, cudaStream_t, int);
using EwTable = EwLaunch[kModeCount][kDTypeCount];

inline bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15) == 0;
}

template <Mode M, class T>
void launch_one(const EwParams& p, cudaStream_t s, int sms) {
  if (p.numel == 0) return;
  bool vec = false;
  if constexpr (std::is_same_v<T, float> && std::is_same_v<Result<M, T>, float>) {
    vec = p.dense && p.out_dtype == p.in_dtype && aligned16(p.out);
    for (int k = 0; k < p.nin; ++k) vec = vec && (((p.scalar >> k) & 1u) || aligned16(p.in[k]));
    if (vec && p.in_dtype == DType::F32) {
      ew_vec4<M><<<grid_for((p.numel + 3) / 4, sms), kBlock, 0, s>>>(p);
      check_launch(std::string("elemwise ") + mode_info(M).name + " (float4)");
      return;
    }
    if (vec && p.in_dtype == DType::F16) {
      ew_vec8_half<M, f16><<<grid_for((p.numel + 7) / 8, sms), kBlock, 0, s>>>(p);
      check_launch(std::string("elemwise ") + mode_info(M).name + " (8 x f16)");
      return;
    }
    if (vec && p.in_dtype == DType::BF16) {
      ew_vec8_half<M, bf16><<<grid_for((p.numel + 7) / 8, sms), kBlock, 0, s>>>(p);
      check_launch(std::string("elemwise ") + mode_info(M).name + " (8 x bf16)");
      return;
    }
  }
  ew_generic<M, T><<<grid_for(p.numel, sms), kBlock, 0, s>>>(p);
  check_launch(std::string("elemwise ") + mode_info(M).name);
}

template <Mode M>
void fill_mode(EwTable& t) {
  EwLaunch* row = t[static_cast<int>(M)];
  constexpr ModeKind kind = mode_info(M).kind;
  auto set = [&](DType d, EwLaunch f) { row[static_cast<int>(d)] = f; };
  if constexpr (kind == ModeKind::Float || kind == ModeKind::Predicate) {
    set(DType::F32, &launch_one<M, float>);
  } else if constexpr (kind == ModeKind::Numeric || kind == ModeKind::Compare) {
    set(DType::F32, &launch_one<M, float>);
    set(DType::I32, &launch_one<M, i32>);
    set(DType::I64, &launch_one<M, i64>);
    set(DType::U8, &launch_one<M, u8>);
  } else if constexpr (kind == ModeKind::Int) {
    set(DType::I32, &launch_one<M, i32>);
    set(DType::I64, &launch_one<M, i64>);
    set(DType::U8, &launch_one<M, u8>);
  } else {
    static_assert(kind == ModeKind::Logic);
    set(DType::Bool, &launch_one<M, bool>);
    set(DType::I32, &launch_one<M, i32>);
    set(DType::I64, &launch_one<M, i64>);
    set(DType::U8, &launch_one<M, u8>);
  }
}

// Modes numbered [Lo, Hi); the others are not instantiated in this translation unit.
template <int Lo, int Hi>
void fill_mode_range(EwTable& t) {
#define X(NAME, ARITY, KIND, FLOPS)                                                      \
  if constexpr (Lo <= static_cast<int>(Mode::NAME) && static_cast<int>(Mode::NAME) < Hi) \
    fill_mode<Mode::NAME>(t);
#include "runtime/ops/elemwise_modes.def"
#undef X
}

void fill_part0(EwTable& t);
void fill_part1(EwTable& t);
void fill_part2(EwTable& t);
void fill_part3(EwTable& t);

}  // namespace hf::cuda
