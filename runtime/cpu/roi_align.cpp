// RoiAlign as the ONNX reference (and onnxruntime) compute it: per roi, the bilinear taps
// of every sampling point of every bin are found once, then read for every channel. Max
// mode takes, per sampling point, the largest of the four weighted taps, and the largest
// of those over the bin (the reference's definition, not a max of interpolated values).
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/resample_kernels.h"

namespace hf::cpu {

namespace {

constexpr double kMaxPoints = double(1 << 24);

struct Tap {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

template <class T>
void run(const RoiAlignGeometry& g, const TensorView& xv, const TensorView& rv,
         const TensorView& bv, const TensorView& yv, ThreadPool& pool) {
  const T* x = xv.as<const T>();
  const T* rois = rv.as<const T>();
  T* y = yv.as<T>();
  auto batch = [&](int64_t k) -> int64_t {
    const int64_t b =
        bv.dtype == DType::I64 ? bv.as<const int64_t>()[k] : bv.as<const int32_t>()[k];
    if (b < 0 || b >= g.n)
      throw std::out_of_range("batch index " + std::to_string(b) + " of roi " + std::to_string(k) +
                              " is out of range for a batch of " + std::to_string(g.n));
    return b;
  };
  for (int64_t k = 0; k < g.rois; ++k) batch(k);  // checked before any work
  const int64_t bins = g.out_h * g.out_w, plane = g.h * g.w;
  pool.parallel_for(g.rois, 1, [&](int64_t s, int64_t e) {
    std::vector<Tap> taps;
    for (int64_t k = s; k < e; ++k) {
      const double off = g.half_pixel ? 0.5 : 0.0;
      auto coord = [&](int j) { return convert<double>(rois[k * 4 + j]) * g.spatial_scale - off; };
      const double x0 = coord(0), y0 = coord(1), x1 = coord(2), y1 = coord(3);
      double rw = x1 - x0, rh = y1 - y0;
      if (!g.half_pixel) {
        rw = std::max(rw, 1.0);
        rh = std::max(rh, 1.0);
      }
      const double bh = rh / static_cast<double>(g.out_h), bw = rw / static_cast<double>(g.out_w);
      // Sampling points per bin: the attribute, or ceil(roi size / bins) from the roi's own
      // (run-time) values, which must not ask for more points than a kernel can hold.
      const double sh = g.sampling_ratio > 0 ? double(g.sampling_ratio) : std::ceil(rh / g.out_h);
      const double sw = g.sampling_ratio > 0 ? double(g.sampling_ratio) : std::ceil(rw / g.out_w);
      if (!(sh * sw * double(bins) <= kMaxPoints))
        throw std::out_of_range("roi " + std::to_string(k) + " (" + std::to_string(x0) + ", " +
                                std::to_string(y0) + ", " + std::to_string(x1) + ", " +
                                std::to_string(y1) + ") needs more than 2^24 sampling points");
      const int64_t gh = static_cast<int64_t>(sh), gw = static_cast<int64_t>(sw);
      const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
      taps.assign(bins * std::max<int64_t>(gh, 0) * std::max<int64_t>(gw, 0), Tap{});
      size_t t = 0;
      const double height = static_cast<double>(g.h), width = static_cast<double>(g.w);
      for (int64_t ph = 0; ph < g.out_h; ++ph)
        for (int64_t pw = 0; pw < g.out_w; ++pw)
          for (int64_t iy = 0; iy < gh; ++iy) {
            const double yy = y0 + ph * bh + (iy + 0.5) * bh / gh;
            for (int64_t ix = 0; ix < gw; ++ix, ++t) {
              double xx = x0 + pw * bw + (ix + 0.5) * bw / gw, yc = yy;
              if (yc < -1.0 || yc > height || xx < -1.0 || xx > width) continue;  // all zero
              yc = std::max(yc, 0.0);
              xx = std::max(xx, 0.0);
              int64_t ylo = static_cast<int64_t>(yc), xlo = static_cast<int64_t>(xx), yhi, xhi;
              if (ylo >= g.h - 1) {
                yhi = ylo = g.h - 1;
                yc = static_cast<double>(ylo);
              } else {
                yhi = ylo + 1;
              }
              if (xlo >= g.w - 1) {
                xhi = xlo = g.w - 1;
                xx = static_cast<double>(xlo);
              } else {
                xhi = xlo + 1;
              }
              const double ly = yc - ylo, lx = xx - xlo, hy = 1 - ly, hx = 1 - lx;
              Tap& tp = taps[t];
              tp.pos[0] = ylo * g.w + xlo;
              tp.pos[1] = ylo * g.w + xhi;
              tp.pos[2] = yhi * g.w + xlo;
              tp.pos[3] = yhi * g.w + xhi;
              tp.w[0] = hy * hx;
              tp.w[1] = hy * lx;
              tp.w[2] = ly * hx;
              tp.w[3] = ly * lx;
            }
          }
      const int64_t b = batch(k);
      const size_t per_bin = static_cast<size_t>(std::max<int64_t>(gh * gw, 0));
      for (int64_t c = 0; c < g.c; ++c) {
        const T* xc = x + (b * g.c + c) * plane;
        T* yc = y + (k * g.c + c) * bins;
        for (int64_t bin = 0; bin < bins; ++bin) {
          const Tap* tp = taps.data() + bin * per_bin;
          double acc = 0;
          for (size_t q = 0; q < per_bin; ++q) {
            double v[4];
            for (int j = 0; j < 4; ++j) v[j] = tp[q].w[j] * convert<double>(xc[tp[q].pos[j]]);
            if (g.max) {
              const double m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
              acc = q == 0 ? m : std::max(acc, m);
            } else {
              acc += v[0] + v[1] + v[2] + v[3];
            }
          }
          yc[bin] = convert<T>(g.max ? acc : acc / count);
        }
      }
    }
  });
}

}  // namespace

void roi_align(const RoiAlignGeometry& g, const TensorView& x, const TensorView& rois,
               const TensorView& batch_indices, const TensorView& y, ThreadPool& pool) {
  if (!x.is_contiguous() || !rois.is_contiguous() || !batch_indices.is_contiguous() ||
      !y.is_contiguous())
    throw std::invalid_argument("roi_align: needs contiguous tensors");
  if (y.numel() == 0) return;
  if (g.h == 0 || g.w == 0) throw std::invalid_argument("roi_align: x has an empty plane");
  switch (x.dtype) {
    case DType::F32:
      return run<float>(g, x, rois, batch_indices, y, pool);
    case DType::F16:
      return run<f16>(g, x, rois, batch_indices, y, pool);
    case DType::BF16:
      return run<bf16>(g, x, rois, batch_indices, y, pool);
    case DType::F64:
      return run<double>(g, x, rois, batch_indices, y, pool);
    default:
      throw std::invalid_argument("roi_align: x must be a float tensor");
  }
}

}  // namespace hf::cpu
