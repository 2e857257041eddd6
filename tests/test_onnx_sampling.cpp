// GridSample, RoiAlign, AffineGrid and CenterCropPad (runtime/io/onnx_lower_sampling.cpp,
// runtime/cpu/grid_sample.cpp, roi_align.cpp) against naive references written here from
// the ONNX definitions: GridSample recursively axis by axis as the ONNX reference does,
// RoiAlign sample point by sample point, AffineGrid and CenterCropPad by index. Every
// mode, padding mode, align_corners and coordinate transformation on odd sizes, opset 16's
// and 20's names, 3-D grids, and the errors.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

std::vector<double> values(int64_t n, double scale = 1) {
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k)
    v.push_back(std::round(std::sin(k * 1.3 + 0.2) * 64) / 16 * scale);
  return v;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 double tol = 1e-4) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k)
    ASSERT_NEAR(got[k], want[k], tol * (1 + std::fabs(want[k]))) << "element " << k;
}

// ---- GridSample ------------------------------------------------------------------------

struct Grid {
  std::string mode, padding;
  bool align;
};

float reflect(float x, float lo, float hi) {
  const float range = hi - lo;
  while (x < lo || x > hi) x = x < lo ? lo + (lo - x) : hi - (x - hi);  // mirror step by step
  (void)range;
  return x;
}

// x[plane] (dims) at the denormalised coordinates c, axis `a` on (the rows above fixed).
double sample(const Grid& g, const std::vector<double>& plane, const std::vector<int64_t>& dims,
              const std::vector<float>& c, size_t a, int64_t base) {
  int64_t stride = 1;
  for (size_t d = a + 1; d < dims.size(); ++d) stride *= dims[d];
  const float lo = g.align ? 0.f : -0.5f, hi = g.align ? float(dims[a] - 1) : float(dims[a]) - 0.5f;
  auto at = [&](int64_t i) -> double {  // the padding mode on index i
    if (i < 0 || i >= dims[a]) {
      if (g.padding == "zeros") return 0;
      i = g.padding == "border" ? std::clamp<int64_t>(i, 0, dims[a] - 1)
                                : int64_t(reflect(float(i), lo, hi));
    }
    return a + 1 == dims.size() ? plane[base + i * stride]
                                : sample(g, plane, dims, c, a + 1, base + i * stride);
  };
  const float x = c[a];
  if (g.mode == "nearest") return at(int64_t(x));
  const int64_t x0 = int64_t(std::floor(x));
  const float t = x - float(x0);
  if (g.mode == "linear") return (1 - t) * at(x0) + t * at(x0 + 1);
  const double A = -0.75;
  auto w = [&](double d) {
    d = std::fabs(d);
    return d <= 1 ? ((A + 2) * d - (A + 3)) * d * d + 1 : ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
  };
  return w(t + 1) * at(x0 - 1) + w(t) * at(x0) + w(1 - t) * at(x0 + 1) + w(2 - t) * at(x0 + 2);
}

std::vector<double> grid_reference(const Grid& g, const std::vector<double>& x, const Shape& xs,
                                   const std::vector<double>& grid, const Shape& gs) {
  const size_t r = xs.size() - 2;
  std::vector<int64_t> dims(xs.begin() + 2, xs.end());
  int64_t plane = 1, points = 1;
  for (int64_t d : dims) plane *= d;
  for (size_t d = 1; d + 1 < gs.size(); ++d) points *= gs[d];
  std::vector<double> out;
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t ch = 0; ch < xs[1]; ++ch) {
      std::vector<double> p(x.begin() + (n * xs[1] + ch) * plane,
                            x.begin() + (n * xs[1] + ch + 1) * plane);
      for (int64_t q = 0; q < points; ++q) {
        std::vector<float> c(r);
        for (size_t a = 0; a < r; ++a) {
          const float v = float(grid[(n * points + q) * r + (r - 1 - a)]), L = float(dims[a]);
          float u = g.align ? (v + 1) / 2 * (L - 1) : ((v + 1) * L - 1) / 2;
          if (g.mode == "nearest") u = std::nearbyint(u);
          const float lo = g.align ? 0.f : -0.5f, hi = g.align ? L - 1 : L - 0.5f;
          if ((u < lo || u > hi) && g.padding == "border") u = std::clamp(u, 0.f, L - 1);
          if ((u < lo || u > hi) && g.padding == "reflection") u = reflect(u, lo, hi);
          c[a] = u;
        }
        out.push_back(sample(g, p, dims, c, 0, 0));
      }
    }
  return out;
}

std::vector<double> run_grid(const Grid& g, int opset, const Shape& xs, const Shape& gs,
                             const std::vector<double>& x, const std::vector<double>& grid) {
  Model m(opset);
  m.input("x", TP::FLOAT, std::vector<int64_t>(xs.begin(), xs.end()));
  m.input("g", TP::FLOAT, std::vector<int64_t>(gs.begin(), gs.end()));
  auto& n = m.node("GridSample", {"x", "g"}, {"y"});
  std::string mode = g.mode;
  if (opset < 20 && mode != "nearest") mode = mode == "linear" ? "bilinear" : "bicubic";
  set_s(n, "mode", mode);
  set_s(n, "padding_mode", g.padding);
  set_i(n, "align_corners", g.align);
  m.output("y");
  return run(m, {tensor(DType::F32, xs, x), tensor(DType::F32, gs, grid)})[0];
}

TEST(OnnxSampling, GridSampleEveryModePaddingAndAlignment) {
  const Shape xs{2, 3, 5, 6}, gs{2, 4, 7, 2};
  const std::vector<double> x = values(numel(xs));
  std::vector<double> grid = values(numel(gs), 0.4);  // in [-1.6, 1.6]: outside too
  grid[3] = 1.0;                                      // exactly on the border
  grid[5] = -1.0;
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (bool align : {false, true})
        for (int opset : {16, 20, 22}) {
          const Grid g{mode, padding, align};
          SCOPED_TRACE(std::string(mode) + " " + padding + (align ? " align" : "") + " opset " +
                       std::to_string(opset));
          expect_near(run_grid(g, opset, xs, gs, x, grid), grid_reference(g, x, xs, grid, gs));
        }
}

TEST(OnnxSampling, GridSampleVolumetric) {
  const Shape xs{1, 2, 3, 4, 5}, gs{1, 2, 3, 4, 3};
  const std::vector<double> x = values(numel(xs));
  const std::vector<double> grid = values(numel(gs), 0.3);
  for (const char* mode : {"nearest", "linear"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (bool align : {false, true}) {
        const Grid g{mode, padding, align};
        SCOPED_TRACE(std::string(mode) + " " + padding + (align ? " align" : ""));
        expect_near(run_grid(g, 20, xs, gs, x, grid), grid_reference(g, x, xs, grid, gs));
      }
}

// NaN and infinite grid points read zeros (zeros padding) or an edge (border): no crash.
TEST(OnnxSampling, GridSampleNonFinitePoints) {
  const Shape xs{1, 1, 2, 3}, gs{1, 1, 3, 2};
  const std::vector<double> x{1, 2, 3, 4, 5, 6};
  const std::vector<double> grid{NAN, 0, INFINITY, 0, -INFINITY, -INFINITY};
  for (const char* padding : {"zeros", "border", "reflection"})
    for (const char* mode : {"nearest", "linear", "cubic"}) {
      SCOPED_TRACE(std::string(mode) + " " + padding);
      const std::vector<double> y = run_grid(Grid{mode, padding, false}, 20, xs, gs, x, grid);
      ASSERT_EQ(y.size(), 3u);
      for (double v : y) EXPECT_TRUE(std::isfinite(v));
      if (std::string(padding) == "zeros") {
        EXPECT_EQ(y, std::vector<double>(3, 0.0));
      }
    }
}

TEST(OnnxSampling, GridSampleErrors) {
  auto error = [](int opset, const std::vector<int64_t>& xs, const std::vector<int64_t>& gs,
                  const char* mode) {
    Model m(opset);
    m.input("x", TP::FLOAT, xs);
    m.input("g", TP::FLOAT, gs);
    set_s(m.node("GridSample", {"x", "g"}, {"y"}), "mode", mode);
    m.output("y");
    return import_error(m);
  };
  EXPECT_EQ(error(16, {1, 1, 2, 2, 2}, {1, 1, 1, 1, 3}, "nearest"),
            "m.onnx: node 0 (GridSample): GridSample before opset 20 takes a 4-D input, got "
            "[1,1,2,2,2]");
  EXPECT_EQ(error(16, {1, 1, 2, 2}, {1, 1, 1, 2}, "linear"),
            "m.onnx: node 0 (GridSample): mode 'linear' is not supported");
  EXPECT_EQ(error(20, {1, 1, 2, 2}, {1, 1, 1, 2}, "bilinear"),
            "m.onnx: node 0 (GridSample): mode 'bilinear' is not supported");
  EXPECT_NE(
      error(20, {1, 1, 2, 2}, {1, 1, 1, 3}, "linear").find("grid must be [1, ...(2 axes), 2]"),
      std::string::npos);
  EXPECT_NE(error(20, {1, 1, 2, 2, 2}, {1, 1, 1, 1, 3}, "cubic").find("cubic mode needs 2 spatial"),
            std::string::npos);
  Model m(20);
  m.input("x", TP::FLOAT, {1, 1, 2, 2});
  m.input("g", TP::FLOAT, {1, 1, 1, 2});
  set_s(m.node("GridSample", {"x", "g"}, {"y"}), "padding_mode", "wrap");
  m.output("y");
  EXPECT_EQ(import_error(m), "m.onnx: node 0 (GridSample): padding_mode 'wrap' is not supported");
}

// ---- RoiAlign --------------------------------------------------------------------------

std::vector<double> roi_reference(const std::vector<double>& x, const Shape& xs,
                                  const std::vector<double>& rois, const std::vector<int64_t>& bi,
                                  bool max, bool half, int64_t oh, int64_t ow, int64_t ratio,
                                  double scale) {
  const int64_t C = xs[1], H = xs[2], W = xs[3];
  std::vector<double> out;
  for (size_t r = 0; r < bi.size(); ++r) {
    const double off = half ? 0.5 : 0;
    const double x0 = rois[r * 4] * scale - off, y0 = rois[r * 4 + 1] * scale - off;
    double rw = rois[r * 4 + 2] * scale - off - x0, rh = rois[r * 4 + 3] * scale - off - y0;
    if (!half) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    const double bh = rh / oh, bw = rw / ow;
    const int64_t gh = ratio > 0 ? ratio : int64_t(std::ceil(rh / oh));
    const int64_t gw = ratio > 0 ? ratio : int64_t(std::ceil(rw / ow));
    for (int64_t c = 0; c < C; ++c) {
      auto px = [&](int64_t yy, int64_t xx) { return x[((bi[r] * C + c) * H + yy) * W + xx]; };
      for (int64_t ph = 0; ph < oh; ++ph)
        for (int64_t pw = 0; pw < ow; ++pw) {
          double acc = 0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; ++iy)
            for (int64_t ix = 0; ix < gw; ++ix) {
              double y = y0 + ph * bh + (iy + 0.5) * bh / gh;
              double xx = x0 + pw * bw + (ix + 0.5) * bw / gw;
              double v[4] = {0, 0, 0, 0};
              if (!(y < -1 || y > H || xx < -1 || xx > W)) {
                y = std::max(y, 0.0);
                xx = std::max(xx, 0.0);
                int64_t yl = int64_t(y), xl = int64_t(xx), yh = yl + 1, xh = xl + 1;
                if (yl >= H - 1) yl = yh = H - 1, y = double(yl);
                if (xl >= W - 1) xl = xh = W - 1, xx = double(xl);
                const double ly = y - yl, lx = xx - xl;
                v[0] = (1 - ly) * (1 - lx) * px(yl, xl);
                v[1] = (1 - ly) * lx * px(yl, xh);
                v[2] = ly * (1 - lx) * px(yh, xl);
                v[3] = ly * lx * px(yh, xh);
              }
              if (max) {
                const double m = std::max({v[0], v[1], v[2], v[3]});
                acc = first ? m : std::max(acc, m);
              } else {
                acc += v[0] + v[1] + v[2] + v[3];
              }
              first = false;
            }
          out.push_back(max ? acc : acc / double(std::max<int64_t>(gh * gw, 1)));
        }
    }
  }
  return out;
}

TEST(OnnxSampling, RoiAlignEveryModeAndTransformation) {
  const Shape xs{2, 3, 9, 11};
  const std::vector<double> x = values(numel(xs));
  const std::vector<double> rois{0,   0,   9,  9,  0.5, 1.5, 7.3, 5.1, 3,    4,
                                 3.2, 4.1, -2, -3, 12,  15,  8,   2,   10.5, 8.7};
  const std::vector<int64_t> bi{0, 1, 1, 0, 1};
  for (int opset : {10, 16})
    for (const char* mode : {"avg", "max"})
      for (const char* coord : {"half_pixel", "output_half_pixel"})
        for (int64_t ratio : {0, 2})
          for (double scale : {1.0, 0.625}) {
            if (opset == 10 && std::string(coord) == "half_pixel") continue;
            SCOPED_TRACE(std::to_string(opset) + " " + mode + " " + coord + " ratio " +
                         std::to_string(ratio) + " scale " + std::to_string(scale));
            Model m(opset);
            m.input("x", TP::FLOAT, {2, 3, 9, 11});
            m.init_floats("r", {5, 4}, std::vector<float>(rois.begin(), rois.end()));
            m.init_int64s("b", {5}, bi);
            auto& n = m.node("RoiAlign", {"x", "r", "b"}, {"y"});
            set_s(n, "mode", mode);
            if (opset >= 16) set_s(n, "coordinate_transformation_mode", coord);
            set_i(n, "output_height", 3);
            set_i(n, "output_width", 4);
            set_i(n, "sampling_ratio", ratio);
            set_f(n, "spatial_scale", float(scale));
            m.output("y");
            std::vector<double> rf;
            for (double v : rois) rf.push_back(double(float(v)));
            expect_near(run(m, {tensor(DType::F32, xs, x)})[0],
                        roi_reference(x, xs, rf, bi, std::string(mode) == "max",
                                      std::string(coord) == "half_pixel", 3, 4, ratio,
                                      double(float(scale))));
          }
}

TEST(OnnxSampling, RoiAlignErrors) {
  Model m(16);
  m.input("x", TP::FLOAT, {1, 1, 4, 4});
  m.input("r", TP::FLOAT, {1, 4});
  m.input("b", TP::INT64, {1});
  set_s(m.node("RoiAlign", {"x", "r", "b"}, {"y"}, "ra"), "mode", "avg");
  m.output("y");
  HostTensor x = tensor(DType::F32, {1, 1, 4, 4}, values(16));
  HostTensor r = tensor(DType::F32, {1, 4}, {0, 0, 2, 2});
  HostTensor b = tensor(DType::I64, {1}, {3});
  try {
    run(m, {x, r, b});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch index 3 of roi 0 is out of range for a batch of 1"),
              std::string::npos)
        << e.what();
  }
  // A roi whose size asks for more sampling points than a kernel holds (sampling_ratio 0).
  r = tensor(DType::F32, {1, 4}, {0, 0, 1e9, 1e9});
  b = tensor(DType::I64, {1}, {0});
  try {
    run(m, {x, r, b});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs more than 2^24 sampling points"), std::string::npos)
        << e.what();
  }
  auto with = [](const char* key, const char* value) {
    Model m(16);
    m.input("x", TP::FLOAT, {1, 1, 4, 4});
    m.input("r", TP::FLOAT, {1, 4});
    m.input("b", TP::INT64, {1});
    set_s(m.node("RoiAlign", {"x", "r", "b"}, {"y"}, "ra"), key, value);
    m.output("y");
    return import_error(m);
  };
  EXPECT_EQ(with("mode", "sum"), "m.onnx: node 0 'ra' (RoiAlign): mode 'sum' is not supported");
  EXPECT_EQ(with("coordinate_transformation_mode", "corners"),
            "m.onnx: node 0 'ra' (RoiAlign): coordinate_transformation_mode 'corners' is not "
            "supported");
}

// ---- AffineGrid and CenterCropPad -------------------------------------------------------

TEST(OnnxSampling, AffineGrid) {
  for (int r : {2, 3})
    for (bool align : {false, true}) {
      SCOPED_TRACE(std::to_string(r) + (align ? "-D align" : "-D"));
      const std::vector<int64_t> size =
          r == 2 ? std::vector<int64_t>{2, 3, 5, 1} : std::vector<int64_t>{2, 3, 3, 4, 5};
      const Shape ts{2, r, r + 1};
      const std::vector<double> theta = values(numel(ts));
      Model m(20);
      m.input("t", TP::FLOAT, {2, r, r + 1});
      m.init_int64s("s", {int64_t(size.size())}, size);
      set_i(m.node("AffineGrid", {"t", "s"}, {"y"}), "align_corners", align);
      m.output("y");
      std::vector<double> want;
      std::vector<int64_t> dims(size.begin() + 2, size.end());
      int64_t points = 1;
      for (int64_t d : dims) points *= d;
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t p = 0; p < points; ++p) {
          std::vector<double> h(r + 1, 1.0);  // (x, y[, z], 1)
          int64_t rest = p;
          for (int a = r - 1; a >= 0; --a) {
            const int64_t k = rest % dims[a], L = dims[a];
            rest /= dims[a];
            h[r - 1 - a] =
                align ? (L == 1 ? -1.0 : -1.0 + 2.0 * k / (L - 1)) : (2.0 * k + 1) / L - 1;
          }
          for (int i = 0; i < r; ++i) {
            double s = 0;
            for (int j = 0; j <= r; ++j)
              s += double(float(theta[(n * r + i) * (r + 1) + j])) * h[j];
            want.push_back(s);
          }
        }
      expect_near(run(m, {tensor(DType::F32, ts, theta)})[0], want, 1e-5);
    }
}

TEST(OnnxSampling, CenterCropPad) {
  const Shape xs{3, 4, 5};
  const std::vector<double> x = values(numel(xs));
  struct Case {
    std::vector<int64_t> shape, axes;
  } cases[] = {{{2, 7, 2}, {}}, {{5, 1, 8}, {}}, {{6, 3}, {-1, 0}}, {{3, 4, 5}, {}}, {{0}, {1}}};
  for (const Case& c : cases) {
    Model m(18);
    m.input("x", TP::FLOAT, {3, 4, 5});
    m.init_int64s("s", {int64_t(c.shape.size())}, c.shape);
    auto& n = m.node("CenterCropPad", {"x", "s"}, {"y"});
    if (!c.axes.empty()) set_ints(n, "axes", c.axes);
    m.output("y");
    std::vector<int64_t> target(xs.begin(), xs.end());
    for (size_t k = 0; k < c.shape.size(); ++k)
      target[c.axes.empty() ? k : (c.axes[k] + 3) % 3] = c.shape[k];
    std::vector<double> want;
    for (int64_t i = 0; i < target[0]; ++i)
      for (int64_t j = 0; j < target[1]; ++j)
        for (int64_t k = 0; k < target[2]; ++k) {
          const int64_t o[3] = {i, j, k};
          int64_t src[3];
          bool inside = true;
          for (int a = 0; a < 3; ++a) {  // crop start (n - t) / 2, pad start (t - n) / 2
            src[a] = xs[a] >= target[a] ? o[a] + (xs[a] - target[a]) / 2
                                        : o[a] - (target[a] - xs[a]) / 2;
            inside &= src[a] >= 0 && src[a] < xs[a];
          }
          want.push_back(inside ? x[(src[0] * 4 + src[1]) * 5 + src[2]] : 0.0);
        }
    EXPECT_EQ(run(m, {tensor(DType::F32, xs, x)})[0], want);
  }
}

}  // namespace
}  // namespace hf
