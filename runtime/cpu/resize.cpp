// Resize: one 1-D pass per resized axis (the op is separable). Nearest copies elements
// through one index table per axis, so it is exact for every dtype; linear and cubic
// accumulate in f32 (f64 for f64), one pass at a time into scratch buffers, and round to
// the output type once at the end.
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/resample_kernels.h"

namespace hf::cpu {

ResizeKernel::ResizeKernel(const ResizeGeometry& g) : g_(g) {
  for (int d = 0; d < static_cast<int>(g.in.size()); ++d) {
    if (resize_axis_identity(g, d)) continue;
    axes_.push_back(d);
    taps_.push_back(resize_taps(g, d));
  }
}

namespace {

// out[o, j, i] = sum_t w[j, t] * in[o, index[j, t], i], or `extra` where j extrapolates.
template <class A>
void pass(const A* in, A* out, int64_t outer, int64_t n, int64_t m, int64_t inner,
          const ResizeTaps& t, A extra, ThreadPool& pool) {
  const int taps = t.taps;
  std::vector<A> w(t.weight.begin(), t.weight.end());
  if (inner == 1) {  // the last axis: one output row per task, the taps read in cache
    pool.parallel_for(outer, std::max<int64_t>(1, 4096 / std::max<int64_t>(m * taps, 1)),
                      [&](int64_t s, int64_t e) {
                        for (int64_t o = s; o < e; ++o) {
                          const A* src = in + o * n;
                          A* dst = out + o * m;
                          for (int64_t j = 0; j < m; ++j) {
                            const int64_t* idx = &t.index[j * taps];
                            const A* wj = &w[j * taps];
                            A acc = wj[0] * src[idx[0]];
                            for (int k = 1; k < taps; ++k) acc += wj[k] * src[idx[k]];
                            dst[j] = t.extrapolate[j] ? extra : acc;
                          }
                        }
                      });
    return;
  }
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(inner * taps, 1));
  pool.parallel_for(outer * m, grain, [&](int64_t s, int64_t e) {
    for (int64_t r = s; r < e; ++r) {
      const int64_t o = r / m, j = r % m;
      A* dst = out + r * inner;
      if (t.extrapolate[j]) {
        std::fill(dst, dst + inner, extra);
        continue;
      }
      const A* src = in + o * n * inner;
      const int64_t* idx = &t.index[j * taps];
      const A* wj = &w[j * taps];
      {
        const A* row = src + idx[0] * inner;
        const A c = wj[0];
        for (int64_t i = 0; i < inner; ++i) dst[i] = c * row[i];
      }
      for (int k = 1; k < taps; ++k) {
        const A* row = src + idx[k] * inner;
        const A c = wj[k];
        for (int64_t i = 0; i < inner; ++i) dst[i] += c * row[i];
      }
    }
  });
}

template <class T, class A>
void interpolate(const ResizeGeometry& g, const std::vector<int>& axes,
                 const std::vector<ResizeTaps>& taps, const TensorView& x, const TensorView& y,
                 ThreadPool& pool) {
  // Where the storage type is the accumulator (f32, f64), the first pass reads x and the
  // last writes y in place; scratch holds what lies between (two buffers, ping-pong).
  constexpr bool direct = std::is_same_v<T, A>;
  std::vector<int64_t> shape = g.in;
  std::vector<A> buf[2];
  const A* src;
  if constexpr (direct) {
    src = x.as<const A>();
  } else {
    buf[1].resize(x.numel());
    convert_n(x.as<const T>(), buf[1].data(), x.numel());
    src = buf[1].data();
  }
  for (size_t k = 0; k < axes.size(); ++k) {
    const int d = axes[k];
    int64_t outer = 1, inner = 1;
    for (int a = 0; a < d; ++a) outer *= shape[a];
    for (size_t a = d + 1; a < shape.size(); ++a) inner *= shape[a];
    A* dst;
    if (direct && k + 1 == axes.size()) {
      dst = reinterpret_cast<A*>(y.data);
    } else {
      std::vector<A>& b = buf[k % 2];  // never the one src points into (buf[(k + 1) % 2])
      b.resize(outer * g.out[d] * inner);
      dst = b.data();
    }
    pass<A>(src, dst, outer, shape[d], g.out[d], inner, taps[k], static_cast<A>(g.extrapolation),
            pool);
    shape[d] = g.out[d];
    src = dst;
  }
  if (!direct || axes.empty()) convert_n(src, y.as<T>(), y.numel());
}

// Nearest: each output element copies one input element (or is the extrapolation value).
template <class U>
void nearest(const ResizeGeometry& g, const std::vector<int>& axes,
             const std::vector<ResizeTaps>& taps, const TensorView& x, const TensorView& y,
             const void* extra, ThreadPool& pool) {
  const int rank = static_cast<int>(g.in.size());
  std::vector<const ResizeTaps*> per_axis(rank, nullptr);
  for (size_t k = 0; k < axes.size(); ++k) per_axis[axes[k]] = &taps[k];
  std::vector<int64_t> in_stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * g.in[d + 1];
  const int64_t last = g.out[rank - 1];
  const int64_t rows = last ? y.numel() / last : 0;
  const U* src = x.as<const U>();
  U* dst = y.as<U>();
  const U fill = *static_cast<const U*>(extra);
  const ResizeTaps* lt = per_axis[rank - 1];
  pool.parallel_for(
      rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(last, 1)), [&](int64_t s, int64_t e) {
        for (int64_t r = s; r < e; ++r) {
          // The row's offset in the input, or none where an axis extrapolates.
          int64_t off = 0, rest = r;
          bool outside = false, zeroed = false;
          for (int d = rank - 2; d >= 0; --d) {
            const int64_t j = rest % g.out[d];
            rest /= g.out[d];
            const ResizeTaps* t = per_axis[d];
            if (!t) {
              off += j * in_stride[d];
            } else {
              outside |= t->extrapolate[j] != 0;
              zeroed |= t->weight[j] == 0;
              off += t->index[j] * in_stride[d];
            }
          }
          U* o = dst + r * last;
          if (outside || zeroed) {
            std::fill(o, o + last, outside ? fill : U(0));
            continue;
          }
          const U* row = src + off;
          if (!lt) {
            std::copy(row, row + last, o);
            continue;
          }
          for (int64_t j = 0; j < last; ++j)
            o[j] = lt->extrapolate[j] ? fill : lt->weight[j] == 0 ? U(0) : row[lt->index[j]];
        }
      });
}

}  // namespace

void ResizeKernel::run(const TensorView& x, const TensorView& y, ThreadPool& pool) const {
  if (!x.is_contiguous() || !y.is_contiguous())
    throw std::invalid_argument("resize: needs contiguous tensors");
  if (y.numel() == 0) return;
  if (g_.mode == ResizeMode::Nearest) {
    // The extrapolation value (tf_crop_and_resize) in the output's type. A tap that
    // exclude_outside zeroed gives 0 (all bits clear in every type), the reference's sum.
    alignas(8) unsigned char extra[8] = {};
    visit_dtype(x.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      *reinterpret_cast<T*>(extra) = convert<T>(g_.extrapolation);
    });
    visit_size(dtype_size(x.dtype), [&](auto tag) {
      using U = typename decltype(tag)::type;
      nearest<U>(g_, axes_, taps_, x, y, extra, pool);
    });
    return;
  }
  switch (x.dtype) {
    case DType::F32:
      return interpolate<float, float>(g_, axes_, taps_, x, y, pool);
    case DType::F16:
      return interpolate<f16, float>(g_, axes_, taps_, x, y, pool);
    case DType::BF16:
      return interpolate<bf16, float>(g_, axes_, taps_, x, y, pool);
    case DType::F64:
      return interpolate<double, double>(g_, axes_, taps_, x, y, pool);
    default:
      throw std::invalid_argument("resize: linear and cubic modes need a float type");
  }
}

}  // namespace hf::cpu
