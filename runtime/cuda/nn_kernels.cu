// Pooling and Gather kernels (nn_kernels.h): one thread per output element, grid-strided.
// Pooling mirrors runtime/cpu/pool.cpp tap for tap (same clipping, same summation order),
// so the two backends agree to the last bit in f32.
#include <string>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/kernels.h"
#include "runtime/cuda/nn_kernels.h"
#include "runtime/ops/half.h"

namespace hf::cuda {

namespace {

__device__ __forceinline__ float load_f32(const void* p, i64 i, DType dt) {
  switch (dt) {
    case DType::F16:
      return to_f32(static_cast<const f16*>(p)[i]);
    case DType::BF16:
      return to_f32(static_cast<const bf16*>(p)[i]);
    case DType::U8:
      return static_cast<float>(static_cast<const u8*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

__device__ __forceinline__ void store_f32(void* p, i64 i, float v, DType dt) {
  switch (dt) {
    case DType::F16:
      static_cast<f16*>(p)[i] = to_f16(v);
      return;
    case DType::BF16:
      static_cast<bf16*>(p)[i] = to_bf16(v);
      return;
    case DType::U8:  // MaxPool only: the maximum of u8 values is one of them, exact in f32
      static_cast<u8*>(p)[i] = static_cast<u8>(v);
      return;
    default:
      static_cast<float*>(p)[i] = v;
  }
}

// The taps of one output position's window that fall inside the input along an axis
// (first input index, count) and the window's extent inside the padded input.
struct Span {
  i64 first, taps, padded;
};

__device__ __forceinline__ Span window(const PoolParams& p, int a, i64 o) {
  const i64 begin = o * p.stride[a] - p.pad_begin[a], d = p.dilation[a];
  i64 first = 0, last = p.k[a];
  while (first < last && begin + first * d < 0) ++first;
  while (last > first && begin + (last - 1) * d >= p.in_size[a]) --last;
  i64 end = begin + (p.k[a] - 1) * d + 1;
  if (end > p.in_size[a] + p.pad_end[a]) end = p.in_size[a] + p.pad_end[a];
  return {begin + first * d, last - first, end - begin};
}

__global__ void pool_kernel(PoolParams p) {
  const i64 per_plane = p.out_size[0] * p.out_size[1], n = p.planes * per_plane;
  const i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 idx = (i64)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += stride) {
    // NCHW: idx walks planes of pixels; NHWC: pixels of `channels` elements, the pixels
    // `channels` elements apart in the input too.
    i64 oh, ow, base, px;
    if (p.nhwc) {
      const i64 pixel = idx / p.channels;
      oh = pixel % per_plane / p.out_size[1];
      ow = pixel % p.out_size[1];
      base = pixel / per_plane * p.in_size[0] * p.in_size[1] * p.channels + idx % p.channels;
      px = p.channels;
    } else {
      oh = idx % per_plane / p.out_size[1];
      ow = idx % p.out_size[1];
      base = idx / per_plane * p.in_size[0] * p.in_size[1];
      px = 1;
    }
    const Span r = window(p, 0, oh), c = window(p, 1, ow);
    float acc = p.max ? -__int_as_float(0x7f800000) : 0.0f;
    for (i64 i = 0; i < r.taps; ++i) {
      const i64 row = base + ((r.first + i * p.dilation[0]) * p.in_size[1] + c.first) * px;
      bool nan = false;
      for (i64 j = 0; j < c.taps; ++j) {
        float v = load_f32(p.in, row + j * p.dilation[1] * px, p.dtype);
        if (p.max) {
          acc = (v > acc || v != v) ? v : acc;  // NaN wins and stays
          if (acc != acc) {
            nan = true;
            break;
          }
        } else {
          acc += v;
        }
      }
      if (nan) break;
    }
    if (!p.max)
      acc /= static_cast<float>(p.count_include_pad ? r.padded * c.padded : r.taps * c.taps);
    store_f32(p.out, idx, acc, p.dtype);
  }
}

template <class E>
__global__ void gather_kernel(GatherParams p) {
  const i64 n = p.outer * p.count * p.inner, stride = (i64)gridDim.x * blockDim.x;
  for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += stride) {
    const i64 row = t / p.inner, e = t % p.inner, o = row / p.count, k = row % p.count;
    i64 i = p.indices_i64 ? static_cast<const i64*>(p.indices)[k]
                          : static_cast<const i32*>(p.indices)[k];
    if (i < -p.dim || i >= p.dim) {
      if (atomicCAS(&p.bad[0], 0ull, 1ull) == 0ull) p.bad[1] = static_cast<unsigned long long>(i);
      static_cast<E*>(p.out)[t] = E(0);
      continue;
    }
    if (i < 0) i += p.dim;
    static_cast<E*>(p.out)[t] = static_cast<const E*>(p.data)[(o * p.dim + i) * p.inner + e];
  }
}

}  // namespace

void launch_pool2d(const PoolParams& p, cudaStream_t s, int sms) {
  const i64 n = p.planes * p.out_size[0] * p.out_size[1];
  if (n == 0) return;
  pool_kernel<<<grid_for(n, sms), kBlock, 0, s>>>(p);
  check_launch(p.max ? "MaxPool" : "AveragePool");
}

void launch_gather(const GatherParams& p, cudaStream_t s, int sms) {
  const i64 n = p.outer * p.count * p.inner;
  if (n == 0) return;
  const unsigned g = grid_for(n, sms);
  switch (p.elem_bytes) {
    case 1:
      gather_kernel<u8><<<g, kBlock, 0, s>>>(p);
      break;
    case 2:
      gather_kernel<u16><<<g, kBlock, 0, s>>>(p);
      break;
    case 4:
      gather_kernel<u32><<<g, kBlock, 0, s>>>(p);
      break;
    default:
      gather_kernel<u64><<<g, kBlock, 0, s>>>(p);
      break;
  }
  check_launch("Gather");
}

}  // namespace hf::cuda
