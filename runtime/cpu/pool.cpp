// MaxPool and AveragePool over NCHW planes, one (n, c) plane per task (NHWC: one output row
// per task, nhwc_row). Window bounds are clipped to the input once per output row and
// column, so the inner loops have no tests, and each output row's windows reduce down their
// rows first (plane() says why).
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/nn_kernels.h"

namespace hf::cpu {
namespace {

// The input range [lo, hi) one output position's window covers along an axis (before
// dilation: taps lo, lo + d, ...), and its extent inside the padded input.
struct Span {
  int64_t first, taps, padded;
};

Span window(const Window2d& w, int a, int64_t o) {
  const int64_t begin = o * w.stride[a] - w.pad_begin[a];
  const int64_t d = w.dilation[a];
  int64_t first = 0, last = w.k[a];  // taps [first, last) fall inside the input
  while (first < last && begin + first * d < 0) ++first;
  while (last > first && begin + (last - 1) * d >= w.in[a]) --last;
  const int64_t end = std::min(begin + (w.k[a] - 1) * d + 1, w.in[a] + w.pad_end[a]);
  return {begin + first * d, last - first, end - begin};
}

// NaN wins and stays: once acc is NaN, v > acc is false and acc stays NaN. Branch-free, so
// the compiler vectorizes the loops that use it.
inline float max_nan(float acc, float v) {
  return (v > acc || v != v) ? v : acc;
}

// One output row's windows reduced in two passes: first down the window's input rows into
// `row` (one input row wide; contiguous, so it vectorizes), then along each window's columns
// of `row`. The same taps as one pass over each window, max or sum, with the sums in rows-
// then-columns order.
template <class T>
void plane(bool max, const PoolGeometry& g, const T* in, T* out, const std::vector<Span>& rows,
           const std::vector<Span>& cols, float* row) {
  const Window2d& w = g.win;
  const int64_t W = w.in[1], dh = w.dilation[0], dw = w.dilation[1];
  const float init = max ? -std::numeric_limits<float>::infinity() : 0.0f;
  for (int64_t oh = 0; oh < w.out[0]; ++oh) {
    const Span& r = rows[oh];
    std::fill(row, row + W, init);
    for (int64_t i = 0; i < r.taps; ++i) {
      const T* p = in + (r.first + i * dh) * W;
      if (max)
        for (int64_t x = 0; x < W; ++x) row[x] = max_nan(row[x], to_float(p[x]));
      else
        for (int64_t x = 0; x < W; ++x) row[x] += to_float(p[x]);
    }
    T* o = out + oh * w.out[1];
    for (int64_t ow = 0; ow < w.out[1]; ++ow) {
      const Span& c = cols[ow];
      const float* q = row + c.first;
      float acc = init;
      if (max) {
        // One window's few taps, not a loop the compiler vectorizes: max_nan's two tests
        // became two branches here, which random data mispredicts (10x slower). A plain
        // max (maxss) and a NaN flag on the side are branch-free.
        bool nan = false;
        for (int64_t j = 0; j < c.taps; ++j) {
          const float v = q[j * dw];
          acc = acc > v ? acc : v;
          nan |= v != v;
        }
        if (nan) acc = std::numeric_limits<float>::quiet_NaN();
      } else {
        for (int64_t j = 0; j < c.taps; ++j) acc += q[j * dw];
        const int64_t n = g.count_include_pad ? r.padded * c.padded : r.taps * c.taps;
        acc /= static_cast<float>(n);
      }
      o[ow] = convert<T>(acc);
    }
  }
}

// One output position's maxima over B channels, held in registers across the window's taps:
// several vectors in flight, where one vector's taps are a chain of dependent maxima. Taps
// in plane()'s order (columns, then down each one), so a NaN's payload is the NCHW one's.
template <int64_t B, class T>
inline void max_block(const T* p, int64_t col_step, int64_t row_step, int64_t col_taps,
                      int64_t row_taps, T* o) {
  float acc[B];
  for (int64_t k = 0; k < B; ++k) acc[k] = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < col_taps; ++j)
    for (int64_t i = 0; i < row_taps; ++i) {
      const T* q = p + j * col_step + i * row_step;
      for (int64_t k = 0; k < B; ++k) acc[k] = max_nan(acc[k], to_float(q[k]));
    }
  for (int64_t k = 0; k < B; ++k) o[k] = convert<T>(acc[k]);
}

// NHWC (inside Conv chains): one output row, each position's window read as C-contiguous
// pixels, so the loops over C vectorise: a max by blocks of channels in registers
// (max_block), an average with the taps in plane()'s order (each window column summed down
// its rows, then the columns added), so that it is bitwise the NCHW one.
template <class T>
void nhwc_row(bool max, const PoolGeometry& g, const T* in, T* out, const Span& r,
              const std::vector<Span>& cols, float* acc, float* col) {
  const Window2d& w = g.win;
  const int64_t C = g.c, W = w.in[1], dh = w.dilation[0], dw = w.dilation[1];
  for (int64_t ow = 0; ow < w.out[1]; ++ow) {
    const Span& c = cols[ow];
    T* o = out + ow * C;
    if (max) {
      const T* p0 = in + (r.first * W + c.first) * C;
      int64_t b = 0;
      for (; b + 64 <= C; b += 64) max_block<64>(p0 + b, dw * C, dh * W * C, c.taps, r.taps, o + b);
      for (; b + 16 <= C; b += 16) max_block<16>(p0 + b, dw * C, dh * W * C, c.taps, r.taps, o + b);
      for (; b < C; ++b) max_block<1>(p0 + b, dw * C, dh * W * C, c.taps, r.taps, o + b);
      continue;
    }
    std::fill(acc, acc + C, 0.0f);
    for (int64_t j = 0; j < c.taps; ++j) {
      const T* p = in + (r.first * W + c.first + j * dw) * C;
      std::fill(col, col + C, 0.0f);
      for (int64_t i = 0; i < r.taps; ++i, p += dh * W * C)
        for (int64_t ch = 0; ch < C; ++ch) col[ch] += to_float(p[ch]);
      for (int64_t ch = 0; ch < C; ++ch) acc[ch] += col[ch];
    }
    const float n = static_cast<float>(g.count_include_pad ? r.padded * c.padded : r.taps * c.taps);
    for (int64_t ch = 0; ch < C; ++ch) o[ch] = convert<T>(acc[ch] / n);
  }
}

}  // namespace

void pool2d(bool max, const PoolGeometry& g, const TensorView& x, const TensorView& out,
            ThreadPool& pool) {
  if (!x.is_contiguous() || !out.is_contiguous())
    throw std::invalid_argument("pool2d: needs contiguous tensors");
  const Window2d& w = g.win;
  std::vector<Span> rows, cols;
  for (int64_t o = 0; o < w.out[0]; ++o) rows.push_back(window(w, 0, o));
  for (int64_t o = 0; o < w.out[1]; ++o) cols.push_back(window(w, 1, o));
  const int64_t in_plane = w.in[0] * w.in[1], out_plane = w.out[0] * w.out[1];
  visit_dtype(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloatStorage<T> || std::is_same_v<T, u8>) {  // u8: MaxPool, exact in f32
      const T* src = x.as<const T>();
      T* dst = out.as<T>();
      if (g.nhwc) {  // one task per output row of an image
        const int64_t in_image = in_plane * g.c, out_row = w.out[1] * g.c;
        const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(out_row, 1));
        pool.parallel_for(g.n * w.out[0], grain, [&](int64_t s, int64_t e) {
          thread_local std::vector<float> acc, col;
          if (static_cast<int64_t>(acc.size()) < g.c) acc.resize(g.c), col.resize(g.c);
          for (int64_t t = s; t < e; ++t) {
            const int64_t n = t / w.out[0], oh = t % w.out[0];
            nhwc_row(max, g, src + n * in_image, dst + t * out_row, rows[oh], cols, acc.data(),
                     col.data());
          }
        });
        return;
      }
      const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(out_plane, 1));
      pool.parallel_for(g.n * g.c, grain, [&](int64_t s, int64_t e) {
        thread_local std::vector<float> row;
        if (static_cast<int64_t>(row.size()) < w.in[1]) row.resize(w.in[1]);
        for (int64_t p = s; p < e; ++p)
          plane(max, g, src + p * in_plane, dst + p * out_plane, rows, cols, row.data());
      });
    } else {
      throw std::invalid_argument("pool2d: needs a float type (or u8 for MaxPool)");
    }
  });
}

}  // namespace hf::cpu
