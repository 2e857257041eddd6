// 2-D convolution, f32: im2col + OpenBLAS sgemm per (image, group), and a direct kernel for
// depthwise convolutions, whose per-group matrix products are too thin for BLAS. The
// fallback for geometries oneDNN refuses (conv_onednn.h), and the baseline bench/conv_bench
// compares against. Scratch (the im2col matrix) is per calling thread and grows to the
// largest layer seen.
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "runtime/cpu/conv_im2col.h"
#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/sgemm.h"

namespace hf::cpu {
namespace {

std::vector<float>& col_scratch() {
  thread_local std::vector<float> col;
  return col;
}

// Output positions [lo, hi) along an axis whose tap `j` reads inside the input.
void valid_range(const Window2d& w, int a, int64_t j, int64_t& lo, int64_t& hi) {
  const int64_t off = j * w.dilation[a] - w.pad_begin[a], s = w.stride[a];
  // ow * s + off >= 0  and  ow * s + off <= in - 1
  lo = off >= 0 ? 0 : (-off + s - 1) / s;
  int64_t last = w.in[a] - 1 - off;
  hi = last < 0 ? 0 : std::min(w.out[a], last / s + 1);
  lo = std::min(lo, hi);
}

// col[(c * kh + i) * kw + j][oh * OW + ow] = x[c][oh*sh - pt + i*dh][ow*sw - pl + j*dw], 0 in
// the padding.
void im2col(const Window2d& w, int64_t channels, const float* x, float* col, ThreadPool& pool) {
  const int64_t kh = w.k[0], kw = w.k[1], OH = w.out[0], OW = w.out[1], H = w.in[0], W = w.in[1];
  const int64_t rows = channels * kh * kw;
  pool.parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(OH * OW, 1)),
                    [&](int64_t s, int64_t e) {
                      for (int64_t r = s; r < e; ++r) {
                        const int64_t c = r / (kh * kw), i = (r / kw) % kh, j = r % kw;
                        float* dst = col + r * OH * OW;
                        int64_t ow_lo, ow_hi;
                        valid_range(w, 1, j, ow_lo, ow_hi);
                        const int64_t coff = j * w.dilation[1] - w.pad_begin[1];
                        for (int64_t oh = 0; oh < OH; ++oh) {
                          float* d = dst + oh * OW;
                          const int64_t ih = oh * w.stride[0] - w.pad_begin[0] + i * w.dilation[0];
                          if (ih < 0 || ih >= H) {
                            std::fill(d, d + OW, 0.0f);
                            continue;
                          }
                          const float* src = x + (c * H + ih) * W + coff;
                          std::fill(d, d + ow_lo, 0.0f);
                          if (w.stride[1] == 1)
                            std::copy(src + ow_lo, src + ow_hi, d + ow_lo);
                          else
                            for (int64_t ow = ow_lo; ow < ow_hi; ++ow)
                              d[ow] = src[ow * w.stride[1]];
                          std::fill(d + ow_hi, d + OW, 0.0f);
                        }
                      }
                    });
}

// One output plane of a depthwise convolution: y = sum over taps of w[i][j] * shifted x.
void depthwise_plane(const Window2d& w, const float* x, const float* k, float bias, float* y) {
  const int64_t OH = w.out[0], OW = w.out[1], H = w.in[0], W = w.in[1], sw = w.stride[1];
  int64_t lo[16], hi[16];
  const int64_t kw = w.k[1];
  const bool cached = kw <= 16;
  if (cached)
    for (int64_t j = 0; j < kw; ++j) valid_range(w, 1, j, lo[j], hi[j]);
  for (int64_t oh = 0; oh < OH; ++oh) {
    float* __restrict row = y + oh * OW;
    std::fill(row, row + OW, bias);
    for (int64_t i = 0; i < w.k[0]; ++i) {
      const int64_t ih = oh * w.stride[0] - w.pad_begin[0] + i * w.dilation[0];
      if (ih < 0 || ih >= H) continue;
      for (int64_t j = 0; j < kw; ++j) {
        int64_t a, b;
        if (cached)
          a = lo[j], b = hi[j];
        else
          valid_range(w, 1, j, a, b);
        const float kv = k[i * kw + j];
        const float* __restrict src = x + ih * W + j * w.dilation[1] - w.pad_begin[1];
        if (sw == 1)
          for (int64_t ow = a; ow < b; ++ow) row[ow] += kv * src[ow];
        else
          for (int64_t ow = a; ow < b; ++ow) row[ow] += kv * src[ow * sw];
      }
    }
  }
}

}  // namespace

void conv2d_im2col_f32(const ConvGeometry& g, const float* x, const float* wt, const float* bias,
                       float* y, ThreadPool& pool) {
  const Window2d& w = g.win;
  const int64_t cg = g.c / g.group, mg = g.m / g.group;
  const int64_t in_plane = w.in[0] * w.in[1], out_plane = w.out[0] * w.out[1];
  const int64_t taps = w.k[0] * w.k[1], kdim = cg * taps;
  if (cg == 1) {  // depthwise (with any channel multiplier mg)
    pool.parallel_for(g.n * g.m, 1, [&](int64_t s, int64_t e) {
      for (int64_t p = s; p < e; ++p) {
        const int64_t n = p / g.m, m = p % g.m, c = m / mg;
        depthwise_plane(w, x + (n * g.c + c) * in_plane, wt + m * taps, bias ? bias[m] : 0.0f,
                        y + p * out_plane);
      }
    });
    return;
  }
  const bool direct = taps == 1 && w.stride[0] == 1 && w.stride[1] == 1 && w.pad_begin[0] == 0 &&
                      w.pad_begin[1] == 0 && w.pad_end[0] == 0 && w.pad_end[1] == 0;
  float* col = direct ? nullptr : grow(col_scratch(), kdim * out_plane);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t gr = 0; gr < g.group; ++gr) {
      const float* xg = x + (n * g.c + gr * cg) * in_plane;
      float* yg = y + (n * g.m + gr * mg) * out_plane;
      if (!direct) im2col(w, cg, xg, col, pool);
      sgemm(pool, false, false, mg, out_plane, kdim, wt + gr * mg * kdim, kdim, direct ? xg : col,
            out_plane, yg, out_plane);
    }
  if (!bias) return;
  pool.parallel_for(g.n * g.m, std::max<int64_t>(1, 16384 / std::max<int64_t>(out_plane, 1)),
                    [&](int64_t s, int64_t e) {
                      for (int64_t p = s; p < e; ++p) {
                        const float b = bias[p % g.m];
                        float* row = y + p * out_plane;
                        for (int64_t k = 0; k < out_plane; ++k) row[k] += b;
                      }
                    });
}

}  // namespace hf::cpu
