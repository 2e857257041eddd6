// What generated kernels call besides ModeFn: f16/bf16 storage conversions that vectorise,
// the reduction order of the unfused reduce, and CUDA's warp and block reductions. The
// semantics of conversions, pow_const and the reduce combinators have one home in
// runtime/ops/ (saturate.h, pow_const.h, reduce_combine.h), shared with the unfused
// kernels, so a fused kernel computes the same values as the chain of unfused kernels it
// replaces.
//
// Included by generated C++ and CUDA sources (fusion/codegen_cpp.h, codegen_cuda.h): like
// scalar_math.h it includes no standard header, so NVRTC compiles it from the embedded
// copy, and everything device-visible is HF_HD.
#pragma once
#include "runtime/ops/half.h"
#include "runtime/ops/hd.h"
#include "runtime/ops/pow_const.h"
#include "runtime/ops/reduce_combine.h"
#include "runtime/ops/saturate.h"
#include "runtime/ops/scalar_math.h"

// On the element loops of generated host code: the two kernel flags that keep GCC 12's
// selects vectorisable (docs/math.md), so that a loop vectorises whatever flags compile it.
// When a select such as RELU's x <= 0 ? 0 : x is followed by more math, jump threading copies
// that math into both arms, and with trapping math (the default) if-conversion will not
// speculate it back ("control flow in loop"); PRE splits a select with a constant arm into
// paths whose boolean phis the vectoriser rejects. Neither flag changes a value computed here.
#if !HF_DEVICE_CODE && defined(__GNUC__) && !defined(__clang__)
#define HF_VECTOR_LOOP __attribute__((optimize("no-trapping-math", "no-tree-pre")))
#else
#define HF_VECTOR_LOOP
#endif

namespace hf::fusion::gen {

// ---- f16 / bf16 storage ----------------------------------------------------------------
// The same values as half.h's to_f32/to_f16 (checked over every input), written so that
// loops over them vectorise: on the device one conversion instruction each; on the host
// every candidate result is computed and one is picked with bit masks. GCC 12 does not
// vectorise half.h's ?: versions (it sinks the float op of the subnormal case into a
// branch: "control flow in loop"), which would leave every f16 kernel scalar.

HF_HD float widen(f16 h) {
#if HF_DEVICE_CODE
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
  return f;
#else
  const u32 em = h.bits & 0x7fffu;
  const u32 sign = (u32)(h.bits & 0x8000u) << 16;
  const u32 normal = (em << 13) + ((127u - 15u) << 23);
  const u32 inf_nan = (em << 13) | 0x7f800000u;
  const u32 sub = f32_bits((float)(i32)em * 5.9604644775390625e-8f);  // em * 2^-24, exact
  const u32 m_inf = -(u32)(em >= 0x7c00u);
  const u32 m_sub = -(u32)(em < 0x400u);
  const u32 r = (((normal & ~m_inf) | (inf_nan & m_inf)) & ~m_sub) | (sub & m_sub);
  return f32_from_bits(r | sign);
#endif
}
HF_HD float widen(bf16 h) {
  return to_f32(h);
}

HF_HD f16 narrow_f16(float x) {
#if HF_DEVICE_CODE
  f16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(x));
  return h;
#else
  // half.h's to_f16: round to nearest even, overflow to inf, NaN to 0x7e00 (with sign).
  const u32 b = f32_bits(x);
  const u32 sign = (b >> 16) & 0x8000u;
  const u32 ax = b & 0x7fffffffu;
  const u32 special = 0x7c00u | (-(u32)(ax > 0x7f800000u) & 0x200u);
  const u32 sub = f32_bits(f32_from_bits(ax) + 0.5f) - (126u << 23);
  const u32 norm = (ax + ((u32)(15 - 127) << 23) + 0xfffu + ((ax >> 13) & 1u)) >> 13;
  const u32 m_big = -(u32)(ax >= ((127u + 16u) << 23));
  const u32 m_sub = -(u32)(ax < (113u << 23));
  const u32 h = (norm & ~(m_big | m_sub)) | (special & m_big) | (sub & m_sub);
  return f16{(u16)(sign | h)};
#endif
}
HF_HD bf16 narrow_bf16(float x) {
#if HF_DEVICE_CODE && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  bf16 h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h.bits) : "f"(x));
  return h;
#else
  return to_bf16(x);  // integer code; vectorises as it is
#endif
}

// The value an f32 result has once stored in an f16/bf16 tensor: fused intermediates are
// rounded where the unfused graph would have stored them.
HF_HD float round_f16(float x) {
  return widen(narrow_f16(x));
}
HF_HD float round_bf16(float x) {
  return widen(narrow_bf16(x));
}

// Generated kernels name these ::hf::fusion::gen::X: their sources, and so the kernel
// cache keys, do not depend on where the definitions live.
using ::hf::mean_of, ::hf::powi, ::hf::RMax, ::hf::RMin, ::hf::RProd, ::hf::RSum, ::hf::RSumSqr;

HF_HD u8 sat_u8(float f) {
  return saturate_cast<u8>(f);
}
HF_HD i32 sat_i32(float f) {
  return saturate_cast<i32>(f);
}
HF_HD i64 sat_i64(float f) {
  return saturate_cast<i64>(f);
}

#if !HF_DEVICE_CODE
// The unfused reduce's summation order for a contiguous row (reduce_kernels.h): a pairwise
// tree over the row whose leaves hold at most kReduceLeaf elements, each leaf summed by
// 128 bytes of independent accumulators. Same order, same float result; and the error of a
// row sum grows like log(n), not n.
inline constexpr i64 kReduceLeaf = 2048;

// The end of a leaf: its W lanes combined pairwise (reduce_combine.h). Generated reduce
// passes that accumulate their terms in registers (seg_acc) lay out the lanes as
// leaf_reduce does and end with this, so both sum in the same order.
using ::hf::combine_lanes;

// The lanes' result and the tail's: the n % W elements past the last full set of lanes
// are summed in one scalar accumulator, combined last (a row shorter than W is the tail
// alone; a row without a tail is the lanes alone, so a sum of -0s stays -0).
template <class Op, class A>
inline A lanes_and_tail(A lanes, A tail, i64 n, int w) {
  if (n < w) return tail;
  return n % w ? Op::combine(lanes, tail) : lanes;
}

template <class Op, class A>
HF_VECTOR_LOOP inline A leaf_reduce(const A* __restrict x, i64 n) {
  constexpr int W = 128 / (int)sizeof(A);
  A acc[W];
  for (int j = 0; j < W; ++j) acc[j] = Op::template identity<A>();
  i64 i = 0;
  for (; i + W <= n; i += W)
    for (int j = 0; j < W; ++j) acc[j] = Op::step(acc[j], x[i + j]);
  A tail = Op::template identity<A>();
  for (; i < n; ++i) tail = Op::step(tail, x[i]);
  return lanes_and_tail<Op>(combine_lanes<Op>(acc), tail, n, W);
}

// leaf(r0, n) reduces elements [r0, r0 + n) of the row; n <= kReduceLeaf.
template <class Op, class A, class Leaf>
A reduce_tree(i64 r0, i64 n, const Leaf& leaf) {
  if (n <= kReduceLeaf) return leaf(r0, n);
  const i64 h = ((n + 1) / 2 + kReduceLeaf - 1) / kReduceLeaf * kReduceLeaf;
  const A left = reduce_tree<Op, A>(r0, h, leaf);
  return Op::combine(left, reduce_tree<Op, A>(r0 + h, n - h, leaf));
}
#endif

#if HF_DEVICE_CODE
// Butterfly over the warp: every lane ends with the result.
template <class Op, class A>
__device__ __forceinline__ A warp_reduce(A v) {
  for (int off = 16; off > 0; off >>= 1) v = Op::combine(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

// blockDim.x must be a multiple of 32; scratch holds 32 values. Every thread gets the
// result, and scratch is free again on return.
template <class Op, class A>
__device__ __forceinline__ A block_reduce(A v, A* scratch) {
  v = warp_reduce<Op>(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < (int)(blockDim.x >> 5) ? scratch[lane] : Op::template identity<A>();
  v = warp_reduce<Op>(v);
  __syncthreads();
  return v;
}

// N elements of T moved as one access (N * sizeof(T) <= 16 bytes, a power of two).
template <class T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

__device__ __forceinline__ bool aligned(const void* p, unsigned long long bytes) {
  return ((unsigned long long)p & (bytes - 1)) == 0;
}
#endif

}  // namespace hf::fusion::gen
