// GridSample as the ONNX reference computes it: each grid point is denormalised per axis,
// moved inside the borders (border, reflection), and its taps (1, 2 or 4 per axis) are
// mapped by the padding mode; the point's weights are the products of the axes' weights.
// The taps of one point are found once and read for every channel.
#include <cmath>
#include <stdexcept>
#include <vector>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/resample_kernels.h"

namespace hf::cpu {

namespace {

constexpr int kMaxAxes = 6;

// Reflects x by the nearer border until it lies within [lo, hi] (the reference's
// _gs_reflect).
float reflect(float x, float lo, float hi) {
  const float range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const float dx = lo - x;
    const int64_t k = static_cast<int64_t>(dx / range);
    const float r = dx - static_cast<float>(k) * range;
    return k % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const float dx = x - hi;
    const int64_t k = static_cast<int64_t>(dx / range);
    const float r = dx - static_cast<float>(k) * range;
    return k % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void cubic_coeffs(float t, float* c) {  // Keys, A = -0.75, taps at -1, 0, 1, 2
  constexpr float A = -0.75f;
  auto near = [](float x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  auto far = [](float x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  c[0] = far(t + 1);
  c[1] = near(t);
  c[2] = near(1 - t);
  c[3] = far(2 - t);
}

template <class T, class G, class A>
void run(const GridSampleGeometry& g, const TensorView& xv, const TensorView& gv,
         const TensorView& yv, ThreadPool& pool) {
  const int r = static_cast<int>(g.in.size());
  if (r > kMaxAxes) throw std::invalid_argument("grid_sample: too many spatial axes");
  int64_t in_size = 1, out_size = 1;
  std::vector<int64_t> stride(r, 1);
  for (int a = r - 1; a >= 0; --a) {
    stride[a] = in_size;
    in_size *= g.in[a];
  }
  for (int64_t d : g.out) out_size *= d;
  const T* x = xv.as<const T>();
  const G* grid = gv.as<const G>();
  T* y = yv.as<T>();
  const int taps = g.mode == GridMode::Nearest ? 1 : g.mode == GridMode::Linear ? 2 : 4;
  pool.parallel_for(
      g.n * out_size, std::max<int64_t>(1, 1024 / std::max<int64_t>(g.c, 1)),
      [&](int64_t s, int64_t e) {
        int64_t idx[kMaxAxes][4];
        float w[kMaxAxes][4];
        std::vector<int64_t> off;
        std::vector<A> wt;
        for (int64_t q = s; q < e; ++q) {
          const int64_t n = q / out_size, p = q % out_size;
          const G* pt = grid + q * r;
          for (int a = 0; a < r; ++a) {
            const float dim = static_cast<float>(g.in[a]);
            const float v = to_float(pt[r - 1 - a]);  // (x, y, z): innermost axis first
            float c = g.align_corners ? (v + 1) / 2 * (dim - 1) : ((v + 1) * dim - 1) / 2;
            // Far outside (NaN and infinities included): a finite position far outside, so the
            // index arithmetic below cannot overflow; it reads zeros, the border or a reflection.
            if (!(std::fabs(c) < 1e9f)) c = c > 0 ? 1e9f : -1e9f;
            const float lo = g.align_corners ? 0.f : -0.5f,
                        hi = g.align_corners ? dim - 1 : dim - 0.5f;
            if (g.mode == GridMode::Nearest) c = std::nearbyint(c);
            if (c < lo || c > hi) {
              if (g.padding == GridPadding::Border)
                c = std::clamp(c, 0.f, dim - 1);
              else if (g.padding == GridPadding::Reflection)
                c = reflect(c, lo, hi);
            }
            // Tap positions, then each mapped by the padding mode (-1: a zero).
            int64_t first;
            if (g.mode == GridMode::Nearest) {
              first = static_cast<int64_t>(c);  // truncated, as the reference's int cast
              w[a][0] = 1;
            } else {
              const float f = std::floor(c), t = c - f;
              first = static_cast<int64_t>(f);
              if (g.mode == GridMode::Linear) {
                w[a][0] = 1 - t;
                w[a][1] = t;
              } else {
                first -= 1;
                cubic_coeffs(t, w[a]);
              }
            }
            const int64_t last = g.in[a] - 1;
            for (int k = 0; k < taps; ++k) {
              int64_t i = first + k;
              if (g.padding == GridPadding::Zeros) {
                if (i < 0 || i > last) i = -1;
              } else if (g.padding == GridPadding::Border) {
                i = std::clamp<int64_t>(i, 0, last);
              } else if (i < 0 || i > last) {
                i = std::clamp<int64_t>(
                    static_cast<int64_t>(reflect(static_cast<float>(i), lo, hi)), 0, last);
              }
              idx[a][k] = i;
            }
          }
          // Every combination of the axes' taps that reads inside x.
          off.clear();
          wt.clear();
          int64_t combos = 1;
          for (int a = 0; a < r; ++a) combos *= taps;
          for (int64_t m = 0; m < combos; ++m) {
            int64_t o = 0, rest = m;
            A weight = 1;
            bool inside = true;
            for (int a = r - 1; a >= 0; --a) {
              const int k = static_cast<int>(rest % taps);
              rest /= taps;
              if (idx[a][k] < 0) inside = false;
              o += idx[a][k] * stride[a];
              weight *= static_cast<A>(w[a][k]);
            }
            if (inside) {
              off.push_back(o);
              wt.push_back(weight);
            }
          }
          const T* xn = x + n * g.c * in_size;
          for (int64_t ch = 0; ch < g.c; ++ch) {
            const T* xc = xn + ch * in_size;
            A acc = 0;
            for (size_t k = 0; k < off.size(); ++k) acc += wt[k] * convert<A>(xc[off[k]]);
            y[(n * g.c + ch) * out_size + p] = convert<T>(acc);
          }
        }
      });
}

template <class T, class A>
void with_grid(const GridSampleGeometry& g, const TensorView& x, const TensorView& grid,
               const TensorView& y, ThreadPool& pool) {
  switch (grid.dtype) {
    case DType::F32:
      return run<T, float, A>(g, x, grid, y, pool);
    case DType::F16:
      return run<T, f16, A>(g, x, grid, y, pool);
    case DType::BF16:
      return run<T, bf16, A>(g, x, grid, y, pool);
    case DType::F64:
      return run<T, double, A>(g, x, grid, y, pool);
    default:
      throw std::invalid_argument("grid_sample: grid must be a float tensor");
  }
}

}  // namespace

void grid_sample(const GridSampleGeometry& g, const TensorView& x, const TensorView& grid,
                 const TensorView& y, ThreadPool& pool) {
  if (!x.is_contiguous() || !grid.is_contiguous() || !y.is_contiguous())
    throw std::invalid_argument("grid_sample: needs contiguous tensors");
  if (y.numel() == 0) return;
  switch (x.dtype) {
    case DType::F32:
      return with_grid<float, float>(g, x, grid, y, pool);
    case DType::F16:
      return with_grid<f16, float>(g, x, grid, y, pool);
    case DType::BF16:
      return with_grid<bf16, float>(g, x, grid, y, pool);
    case DType::F64:
      return with_grid<double, double>(g, x, grid, y, pool);
    default:
      throw std::invalid_argument("grid_sample: x must be a float tensor");
  }
}

}  // namespace hf::cpu
