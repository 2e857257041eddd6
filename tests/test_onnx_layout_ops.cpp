// ONNX layout ops on run-time data (runtime/io/onnx_lower_layout.cpp): Pad in every mode and
// version form, DepthToSpace (DCR, CRD) and SpaceToDepth, Tile, OneHot and EyeLike, each
// against the op's definition indexed here.
#include <gtest/gtest.h>

#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

std::vector<double> ramp(int n) {
  std::vector<double> v;
  for (int k = 0; k < n; ++k) v.push_back(k + 1);
  return v;
}

// Pad of a [2, 3] input by (b0, b1, e0, e1) in `mode`, the expected result computed by index.
std::vector<double> padded(const std::vector<double>& x, std::vector<int64_t> p,
                           const std::string& mode, double value) {
  const int64_t R = 2, C = 3;
  int64_t rows = R + p[0] + p[2], cols = C + p[1] + p[3];
  auto src = [&](int64_t i, int64_t n, int64_t before) -> int64_t {
    int64_t s = i - before;
    if (s >= 0 && s < n) return s;
    if (mode == "edge") return s < 0 ? 0 : n - 1;
    if (mode == "reflect") return s < 0 ? -s : 2 * (n - 1) - s;
    if (mode == "wrap") return ((s % n) + n) % n;
    return -1;
  };
  std::vector<double> out;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      int64_t r = src(i, R, p[0]), c = src(j, C, p[1]);
      out.push_back(r < 0 || c < 0 ? value : x[r * C + c]);
    }
  return out;
}

TEST(OnnxLayoutOps, PadInEveryMode) {
  const std::vector<double> x = ramp(6);
  HostTensor in = tensor(DType::F32, {2, 3}, x);
  struct Case {
    const char* mode;
    std::vector<int64_t> pads;
  } cases[] = {{"constant", {1, 2, 0, 1}},
               {"edge", {2, 1, 1, 2}},
               {"reflect", {1, 2, 1, 2}},
               {"wrap", {1, 3, 2, 2}},
               {"edge", {0, 0, 0, 0}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.mode);
    Model m(19);
    m.input("x", TP::FLOAT, {2, 3});
    m.init_int64s("pads", {4}, c.pads);
    m.init_floats("v", {}, {-7});
    set_s(m.node("Pad", {"x", "pads", "v"}, {"y"}), "mode", c.mode);
    m.output("y");
    EXPECT_EQ(run(m, {in})[0], padded(x, c.pads, c.mode, -7));
  }
  // Opset 2: pads and value as attributes; opset 18: pads for the `axes` given only.
  Model old_form(2);
  old_form.input("x", TP::FLOAT, {2, 3});
  auto& n = old_form.node("Pad", {"x"}, {"y"});
  set_ints(n, "pads", {0, 1, 1, 0});
  set_f(n, "value", 2.5f);
  old_form.output("y");
  EXPECT_EQ(run(old_form, {in})[0], padded(x, {0, 1, 1, 0}, "constant", 2.5));
  Model axes(18);
  axes.input("x", TP::FLOAT, {2, 3});
  axes.init_int64s("pads", {2}, {2, 1});
  axes.init_int64s("axes", {1}, {-1});
  axes.node("Pad", {"x", "pads", "", "axes"}, {"y"});
  axes.output("y");
  EXPECT_EQ(run(axes, {in})[0], padded(x, {0, 2, 0, 1}, "constant", 0));
  // Negative pads crop: the first column and the last row go.
  Model crop(13);
  crop.input("x", TP::FLOAT, {2, 3});
  crop.init_int64s("pads", {4}, {0, -1, -1, 1});
  crop.node("Pad", {"x", "pads"}, {"y"});
  crop.output("y");
  EXPECT_EQ(run(crop, {in})[0], (std::vector<double>{2, 3, 0}));
  Model bad(13);
  bad.input("x", TP::FLOAT, {2, 3});
  bad.init_int64s("pads", {4}, {0, 3, 0, 0});
  set_s(bad.node("Pad", {"x", "pads"}, {"y"}), "mode", "reflect");
  bad.output("y");
  EXPECT_EQ(import_error(bad),
            "m.onnx: node 0 (Pad): reflect pads of axis 1 must be smaller than its size 3");
}

TEST(OnnxLayoutOps, DepthToSpaceAndBack) {
  const int64_t N = 2, C = 8, H = 2, W = 3, b = 2;
  const std::vector<double> x = ramp(static_cast<int>(N * C * H * W));
  HostTensor in = tensor(DType::F32, {N, C, H, W}, x);
  for (const char* mode : {"DCR", "CRD"}) {
    Model m(13);
    m.input("x", TP::FLOAT, {N, C, H, W});
    auto& n = m.node("DepthToSpace", {"x"}, {"y"});
    set_i(n, "blocksize", b);
    set_s(n, "mode", mode);
    m.output("y");
    const int64_t Co = C / (b * b);
    std::vector<double> want;
    for (int64_t n0 = 0; n0 < N; ++n0)
      for (int64_t c = 0; c < Co; ++c)
        for (int64_t h = 0; h < H * b; ++h)
          for (int64_t w = 0; w < W * b; ++w) {
            int64_t bh = h % b, bw = w % b;
            int64_t ci =
                std::string(mode) == "DCR" ? (bh * b + bw) * Co + c : c * b * b + bh * b + bw;
            want.push_back(x[((n0 * C + ci) * H + h / b) * W + w / b]);
          }
    EXPECT_EQ(run(m, {in})[0], want) << mode;
  }
  // SpaceToDepth undoes DepthToSpace's DCR.
  Model round(13);
  round.input("x", TP::FLOAT, {N, C, H, W});
  set_i(round.node("DepthToSpace", {"x"}, {"s"}), "blocksize", b);
  set_i(round.node("SpaceToDepth", {"s"}, {"y"}), "blocksize", b);
  round.output("y");
  EXPECT_EQ(run(round, {in})[0], x);
}

TEST(OnnxLayoutOps, ResizeNearestByWholeFactors) {
  const std::vector<double> x = ramp(12);  // [1, 1, 3, 4]
  HostTensor in = tensor(DType::F32, {1, 1, 3, 4}, x);
  auto model = [](int opset, std::vector<float> scales, std::vector<int64_t> sizes) {
    Model m(opset);
    m.input("x", TP::FLOAT, {1, 1, 3, 4});
    if (!scales.empty()) {
      m.init_floats("s", {4}, scales);
      m.node(
          opset >= 11 ? "Resize" : "Upsample",
          opset >= 11 ? std::vector<std::string>{"x", "", "s"} : std::vector<std::string>{"x", "s"},
          {"y"});
    } else {
      m.init_int64s("z", {4}, sizes);
      m.node("Resize", {"x", "", "", "z"}, {"y"});
    }
    m.output("y");
    return m;
  };
  // Up by 2 on both spatial axes (half_pixel, round_prefer_floor: a repeat).
  std::vector<double> up;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 8; ++j) up.push_back(x[(i / 2) * 4 + j / 2]);
  EXPECT_EQ(run(model(13, {1, 1, 2, 2}, {}), {in})[0], up);
  EXPECT_EQ(run(model(9, {1, 1, 2, 2}, {}), {in})[0], up);  // Upsample: asymmetric, floor
  // Down by 2 on the last axis: half_pixel centres are 0.5, 2.5: round_prefer_floor picks 0, 2.
  Model down = model(13, {}, {1, 1, 3, 2});
  EXPECT_EQ(run(down, {in})[0], (std::vector<double>{1, 3, 5, 7, 9, 11}));
  set_s(*down.g->mutable_node(0), "nearest_mode", "round_prefer_ceil");
  EXPECT_EQ(run(down, {in})[0], (std::vector<double>{2, 4, 6, 8, 10, 12}));
  // What is not a repeat or a pick runs the Resize kernel (tests/test_onnx_resize.cpp).
  Model crop = model(13, {1, 1, 1, 1}, {});  // no size changes, but the roi crops
  set_s(*crop.g->mutable_node(0), "coordinate_transformation_mode", "tf_crop_and_resize");
  EXPECT_EQ(import_error(crop), "m.onnx: node 0 (Resize): tf_crop_and_resize needs the roi input");
}

TEST(OnnxLayoutOps, TileOnRunTimeData) {
  Model m(13);
  m.input("x", TP::FLOAT, {2, 3});
  m.init_int64s("r", {2}, {2, 3});
  m.node("Tile", {"x", "r"}, {"y"});
  m.output("y");
  const std::vector<double> x = ramp(6);
  std::vector<double> want;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 9; ++j) want.push_back(x[(i % 2) * 3 + j % 3]);
  EXPECT_EQ(run(m, {tensor(DType::F32, {2, 3}, x)})[0], want);
}

TEST(OnnxLayoutOps, OneHotAndEyeLike) {
  Model m(11);
  m.input("i", TP::INT64, {4});
  m.init_int64s("depth", {}, {3});
  m.init_floats("values", {2}, {-1, 5});
  set_i(m.node("OneHot", {"i", "depth", "values"}, {"y"}), "axis", 0);
  m.output("y");
  // Indices 0, -1 (= 2), 3 (outside: all off), 1; the one-hot axis first.
  EXPECT_EQ(run(m, {tensor(DType::I64, {4}, {0, -1, 3, 1})})[0],
            (std::vector<double>{5, -1, -1, -1, -1, -1, -1, 5, -1, 5, -1, -1}));
  Model eye(9);
  eye.input("x", TP::INT32, {3, 4});
  auto& n = eye.node("EyeLike", {"x"}, {"y"});
  set_i(n, "k", 1);
  set_i(n, "dtype", TP::FLOAT);
  eye.output("y");
  Graph g = import(eye);
  EXPECT_EQ(g.value(g.outputs()[0]).dtype, DType::F32);
  EXPECT_EQ(run(eye, {tensor(DType::I32, {3, 4}, std::vector<double>(12, 7))})[0],
            (std::vector<double>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
}

}  // namespace
}  // namespace hf
