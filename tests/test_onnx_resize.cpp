// Resize and Upsample (runtime/io/onnx_lower_resize.cpp, runtime/cpu/resize.cpp) against
// a naive reference written here as the ONNX reference defines the op: each output element
// interpolated axis by axis recursively, the n nearest neighbours of the source coordinate
// found by sorting distances in the edge-padded input. Every mode, coordinate
// transformation, rounding, cubic coefficient, exclude_outside, antialias, roi with
// extrapolation, axes and keep_aspect_ratio_policy, on odd sizes up and down, and the
// errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/io/graph_json.h"
#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

struct Spec {
  std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
  double a = -0.75, extrapolation = 0;
  bool exclude = false, antialias = false;
};

// ---- the reference -------------------------------------------------------------------

std::vector<double> coeffs(const Spec& s, double ratio, double scale) {
  if (s.mode == "nearest") {
    if (ratio == std::floor(ratio)) return {0, 1};
    if (s.nearest == "round_prefer_floor")
      return {ratio > 0.5 ? 0.0 : 1.0, ratio > 0.5 ? 1.0 : 0.0};
    if (s.nearest == "round_prefer_ceil")
      return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (s.nearest == "floor") return {1, 0};
    if (s.nearest == "ceil") return {0, 1};
    // simple (opset 10, Upsample): floor when enlarging, ceil when shrinking
    return scale < 1 ? std::vector<double>{0, 1} : std::vector<double>{1, 0};
  }
  auto keys = [&](double x) {
    x = std::fabs(x);
    if (x <= 1) return (s.a + 2) * x * x * x - (s.a + 3) * x * x + 1;
    if (x < 2) return s.a * x * x * x - 5 * s.a * x * x + 8 * s.a * x - 4 * s.a;
    return 0.0;
  };
  std::vector<double> c;
  const double sc = s.antialias ? std::min(scale, 1.0) : 1.0;
  const int start =
      s.mode == "linear" ? int(std::floor(-1 / sc)) + 1 : int(std::floor(-2 / sc)) + 1;
  for (int i = start; i < 2 - start; ++i) {
    const double x = sc * (i - ratio);
    c.push_back(s.mode == "linear" ? std::max(0.0, 1 - std::fabs(x)) : keys(x));
  }
  if (s.antialias) {
    const double sum = std::accumulate(c.begin(), c.end(), 0.0);
    for (double& v : c) v /= sum;
  }
  return c;
}

double interp_1d(const Spec& s, const std::vector<double>& data, double scale, int64_t out,
                 double y, double r0, double r1) {
  const double n = double(data.size()), width = scale * n;
  double x;
  if (s.coord == "align_corners")
    x = width == 1 ? 0 : y * (n - 1) / (width - 1);
  else if (s.coord == "asymmetric")
    x = y / scale;
  else if (s.coord == "tf_crop_and_resize") {
    x = (width == 1 ? (r1 - r0) * (n - 1) / 2 : y * (r1 - r0) * (n - 1) / (width - 1)) +
        r0 * (n - 1);
    if (x < 0 || x > n - 1) return s.extrapolation;
  } else if (s.coord == "pytorch_half_pixel")
    x = width == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
  else if (s.coord == "half_pixel")
    x = (y + 0.5) / scale - 0.5;
  else if (s.coord == "tf_half_pixel_for_nn")
    x = (y + 0.5) / scale;
  else  // half_pixel_symmetric
    x = n / 2 * (1 - double(out) / width) + (y + 0.5) / scale - 0.5;
  const double ratio = x == std::floor(x) ? 1 : x - std::floor(x);
  std::vector<double> c = coeffs(s, ratio, scale);
  const int k = int(c.size()), pad = (k + 1) / 2;
  std::vector<double> padded;
  for (int i = 0; i < pad; ++i) padded.push_back(data.front());
  padded.insert(padded.end(), data.begin(), data.end());
  for (int i = 0; i < pad; ++i) padded.push_back(data.back());
  std::vector<int64_t> idx(padded.size());
  std::iota(idx.begin(), idx.end(), 0);
  const double xp = x + pad;
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t p, int64_t q) {
    return std::fabs(xp - double(p)) < std::fabs(xp - double(q));
  });
  idx.resize(k);
  std::sort(idx.begin(), idx.end());
  if (s.exclude) {
    double sum = 0;
    for (int i = 0; i < k; ++i) {
      const int64_t orig = idx[i] - pad;
      if (orig < 0 || orig >= int64_t(data.size())) c[i] = 0;
      sum += c[i];
    }
    for (double& v : c) v = sum == 0 ? 0 : v / sum;
  }
  double r = 0;
  for (int i = 0; i < k; ++i) r += c[i] * padded[idx[i]];
  return r;
}

// Element `pos` (output index) of x resized: the first axis interpolated over the
// recursively resized rows below it (axes whose geometry is the identity are indexed).
double resize_at(const Spec& s, const std::vector<double>& x, const Shape& in,
                 const std::vector<int64_t>& out, const std::vector<double>& scale,
                 const std::vector<double>& roi, const std::vector<int64_t>& pos, size_t axis,
                 int64_t base) {
  const size_t rank = in.size();
  int64_t stride = 1;
  for (size_t d = axis + 1; d < rank; ++d) stride *= in[d];
  const bool identity =
      in[axis] == out[axis] && std::fabs(scale[axis] - 1) < 1e-9 &&
      (s.coord != "tf_crop_and_resize" || (roi[axis] == 0 && roi[rank + axis] == 1));
  auto row = [&](int64_t i) {
    return axis + 1 == rank
               ? x[base + i]
               : resize_at(s, x, in, out, scale, roi, pos, axis + 1, base + i * stride);
  };
  if (identity) return row(pos[axis]);
  std::vector<double> rows;
  for (int64_t i = 0; i < in[axis]; ++i) rows.push_back(row(i));
  const double r0 = s.coord == "tf_crop_and_resize" ? roi[axis] : 0;
  const double r1 = s.coord == "tf_crop_and_resize" ? roi[rank + axis] : 1;
  return interp_1d(s, rows, scale[axis], out[axis], double(pos[axis]), r0, r1);
}

std::vector<double> reference(const Spec& s, const std::vector<double>& x, const Shape& in,
                              const std::vector<int64_t>& out, const std::vector<double>& scale,
                              const std::vector<double>& roi = {}) {
  std::vector<double> r;
  const int64_t count = numel(Shape(out.begin(), out.end()));
  for (int64_t k = 0; k < count; ++k) {
    std::vector<int64_t> pos(out.size());
    int64_t rest = k;
    for (int d = int(out.size()) - 1; d >= 0; --d) {
      pos[d] = rest % out[d];
      rest /= out[d];
    }
    r.push_back(resize_at(s, x, in, out, scale, roi, pos, 0, 0));
  }
  return r;
}

// ---- models --------------------------------------------------------------------------

std::vector<double> values(int64_t n) {  // distinct, uneven, some negative
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k) v.push_back(std::round(std::sin(k * 1.7) * 40 + k) / 4);
  return v;
}

struct Made {
  Model m;
  std::vector<int64_t> out;
  std::vector<double> scale;
};

// Resize-19 of [1, 2, 5, 7] by `scales` or to `sizes` over all axes.
Made resize_model(const Spec& s, const std::vector<float>& scales,
                  const std::vector<int64_t>& sizes, const std::vector<float>& roi = {},
                  int opset = 19) {
  Made r{Model(opset), {}, {}};
  const Shape in{1, 2, 5, 7};
  r.m.input("x", TP::FLOAT, {1, 2, 5, 7});
  std::vector<std::string> ins{"x", roi.empty() ? "" : "roi"};
  if (!roi.empty()) r.m.init_floats("roi", {int64_t(roi.size())}, roi);
  if (!scales.empty()) {
    r.m.init_floats("s", {4}, scales);
    ins.push_back("s");
    for (int d = 0; d < 4; ++d) {
      r.out.push_back(int64_t(std::floor(double(in[d]) * double(scales[d]))));
      r.scale.push_back(double(scales[d]));
    }
  } else {
    r.m.init_int64s("z", {4}, sizes);
    ins.push_back("");
    ins.push_back("z");
    for (int d = 0; d < 4; ++d) {
      r.out.push_back(sizes[d]);
      r.scale.push_back(double(sizes[d]) / double(in[d]));
    }
  }
  auto& n = r.m.node("Resize", ins, {"y"});
  set_s(n, "mode", s.mode);
  set_s(n, "coordinate_transformation_mode", s.coord);
  set_s(n, "nearest_mode", s.nearest);
  set_f(n, "cubic_coeff_a", float(s.a));
  set_i(n, "exclude_outside", s.exclude);
  set_f(n, "extrapolation_value", float(s.extrapolation));
  if (opset >= 18) set_i(n, "antialias", s.antialias);
  r.m.output("y");
  return r;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 double tol = 1e-4) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k)
    ASSERT_NEAR(got[k], want[k], tol * (1 + std::fabs(want[k]))) << "element " << k;
}

const Shape kIn{1, 2, 5, 7};

void check(const Spec& s, const std::vector<float>& scales, const std::vector<int64_t>& sizes,
           const std::vector<float>& roi = {}) {
  Made r = resize_model(s, scales, sizes, roi);
  const std::vector<double> x = values(numel(kIn));
  std::vector<double> roi_d(roi.begin(), roi.end());
  expect_near(run(r.m, {tensor(DType::F32, kIn, x)})[0],
              reference(s, x, kIn, r.out, r.scale, roi_d));
}

TEST(OnnxResize, EveryModeAndCoordinateTransformation) {
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* coord : {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                              "align_corners", "asymmetric"}) {
      Spec s;
      s.mode = mode;
      s.coord = coord;
      SCOPED_TRACE(std::string(mode) + " " + coord);
      check(s, {}, {1, 2, 9, 4});        // up 5 -> 9, down 7 -> 4
      check(s, {1, 1, 1.7f, 0.6f}, {});  // scales that do not give whole sizes
      check(s, {}, {1, 2, 1, 11});       // one output row
      check(s, {1, 1, 2, 3}, {});        // whole factors
      check(s, {1, 1, 1.1f, 1}, {});     // a scale that keeps the size
    }
}

TEST(OnnxResize, EveryNearestMode) {
  for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
    for (const char* coord : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
      Spec s;
      s.nearest = nearest;
      s.coord = coord;
      SCOPED_TRACE(std::string(nearest) + " " + coord);
      check(s, {}, {1, 2, 10, 3});
      check(s, {1, 1, 2.5f, 0.5f}, {});
      check(s, {1, 1, 3, 2}, {});
    }
}

TEST(OnnxResize, CubicCoefficientAndExcludeOutside) {
  for (double a : {-0.5, -0.75})
    for (bool exclude : {false, true}) {
      Spec s;
      s.mode = "cubic";
      s.a = a;
      s.exclude = exclude;
      SCOPED_TRACE(std::to_string(a) + (exclude ? " exclude" : ""));
      check(s, {1, 1, 1.6f, 0.8f}, {});
      check(s, {}, {1, 2, 3, 13});
    }
}

TEST(OnnxResize, Antialias) {
  for (const char* mode : {"linear", "cubic"})
    for (bool exclude : {false, true}) {
      Spec s;
      s.mode = mode;
      s.antialias = true;
      s.exclude = exclude;
      SCOPED_TRACE(std::string(mode) + (exclude ? " exclude" : ""));
      check(s, {1, 1, 0.4f, 0.55f}, {});
      check(s, {}, {1, 2, 2, 3});
      check(s, {}, {1, 2, 8, 3});  // up on one axis: no widening there
    }
}

TEST(OnnxResize, TfCropAndResizeWithExtrapolation) {
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    Spec s;
    s.mode = mode;
    s.coord = "tf_crop_and_resize";
    s.extrapolation = 10;
    SCOPED_TRACE(mode);
    check(s, {}, {1, 2, 4, 6}, {0, 0, 0.2f, -0.3f, 1, 1, 0.9f, 1.2f});
    check(s, {1, 1, 0.8f, 1.3f}, {}, {0, 0, 0.4f, 0.1f, 1, 1, 0.6f, 0.8f});
    check(s, {}, {1, 2, 1, 1}, {0, 0, 0.1f, 0.3f, 1, 1, 0.5f, 0.9f});
  }
}

TEST(OnnxResize, AxesAndKeepAspectRatio) {
  const std::vector<double> x = values(numel(kIn));
  for (const char* policy : {"stretch", "not_larger", "not_smaller"}) {
    SCOPED_TRACE(policy);
    Model m(18);
    m.input("x", TP::FLOAT, {1, 2, 5, 7});
    m.init_int64s("z", {2}, {4, 9});  // axes (3, 2): width 4, height 9
    auto& n = m.node("Resize", {"x", "", "", "z"}, {"y"});
    set_s(n, "mode", "linear");
    set_ints(n, "axes", {3, -2});
    set_s(n, "keep_aspect_ratio_policy", policy);
    m.output("y");
    std::vector<int64_t> out{1, 2, 9, 4};
    std::vector<double> scale{1, 1, 9.0 / 5, 4.0 / 7};
    if (std::string(policy) != "stretch") {
      const double r = std::string(policy) == "not_larger" ? 4.0 / 7 : 9.0 / 5;
      out = {1, 2, int64_t(r * 5 + 0.5), int64_t(r * 7 + 0.5)};
      scale = {1, 1, r, r};
    }
    Spec s;
    s.mode = "linear";
    expect_near(run(m, {tensor(DType::F32, kIn, x)})[0], reference(s, x, kIn, out, scale));
  }
}

TEST(OnnxResize, EveryOpsetForm) {
  const std::vector<double> x = values(numel(kIn));
  const HostTensor in = tensor(DType::F32, kIn, x);
  const std::vector<float> sc{1, 1, 1.6f, 0.6f};
  const std::vector<int64_t> out{1, 2, 8, 4};
  const std::vector<double> scale{1, 1, 1.6f, 0.6f};
  for (int opset : {7, 9, 10}) {
    for (const char* mode : {"nearest", "linear"}) {
      SCOPED_TRACE(std::to_string(opset) + " " + mode);
      Model m(opset);
      m.input("x", TP::FLOAT, {1, 2, 5, 7});
      const char* op = opset == 10 ? "Resize" : "Upsample";
      auto& n = opset == 7 ? m.node(op, {"x"}, {"y"}) : m.node(op, {"x", "s"}, {"y"});
      if (opset == 7) {
        auto* a = n.add_attribute();
        a->set_name("scales");
        a->set_type(pb::AttributeProto::FLOATS);
        for (float v : sc) a->add_floats(v);
      } else {
        m.init_floats("s", {4}, sc);
      }
      set_s(n, "mode", mode);
      m.output("y");
      Spec s;
      s.mode = mode;
      s.coord = "asymmetric";
      s.nearest = "simple";
      expect_near(run(m, {in})[0], reference(s, x, kIn, out, scale));
    }
  }
  // Opset 11's tf_half_pixel_for_nn (removed in 13).
  Spec s;
  s.coord = "tf_half_pixel_for_nn";
  Made r = resize_model(s, {}, {1, 2, 3, 4}, {}, 11);
  expect_near(run(r.m, {in})[0], reference(s, x, kIn, r.out, r.scale));
  EXPECT_EQ(import_error(resize_model(s, {}, {1, 2, 3, 4}, {}, 13).m),
            "m.onnx: node 0 (Resize): coordinate_transformation_mode 'tf_half_pixel_for_nn' was "
            "removed in opset 13");
}

TEST(OnnxResize, NearestCopiesAnyDtypeExactly) {
  Model m(19);
  m.input("x", TP::INT64, {1, 2, 5, 7});
  m.init_int64s("z", {4}, {1, 2, 8, 3});
  m.node("Resize", {"x", "", "", "z"}, {"y"});
  m.output("y");
  std::vector<double> x;
  for (int k = 0; k < 70; ++k) x.push_back(double((int64_t(1) << 40) + k * 3));
  Spec s;
  const Shape in{1, 2, 5, 7};
  std::vector<double> want = reference(s, x, in, {1, 2, 8, 3}, {1, 1, 8.0 / 5, 3.0 / 7});
  EXPECT_EQ(run(m, {tensor(DType::I64, in, x)})[0], want);
}

// Linear and cubic in f16 and bf16 (through f32) and f64 (in f64).
TEST(OnnxResize, FloatTypes) {
  const std::vector<double> x = values(numel(kIn));  // quarters: exact in every type
  struct Case {
    int elem;
    DType t;
    double tol;
  } cases[] = {{TP::FLOAT16, DType::F16, 2e-3},
               {TP::BFLOAT16, DType::BF16, 1e-2},
               {TP::DOUBLE, DType::F64, 1e-12}};
  for (const Case& c : cases)
    for (const char* mode : {"linear", "cubic"}) {
      SCOPED_TRACE(std::string(dtype_name(c.t)) + " " + mode);
      Model m(19);
      m.input("x", c.elem, {1, 2, 5, 7});
      m.init_int64s("z", {4}, {1, 2, 8, 3});
      set_s(m.node("Resize", {"x", "", "", "z"}, {"y"}), "mode", mode);
      m.output("y");
      Spec s;
      s.mode = mode;
      expect_near(run(m, {tensor(c.t, kIn, x)})[0],
                  reference(s, x, kIn, {1, 2, 8, 3}, {1, 1, 8.0 / 5, 3.0 / 7}), c.tol);
    }
}

// Whole factors in nearest mode stay views (fusable); the rest is one Resize node.
TEST(OnnxResize, WholeFactorsAreViews) {
  auto ops = [](const Model& m) {
    std::string s;
    const Graph g = import(m);  // alive for the loop: nodes() is a reference into it
    for (const Node& n : g.nodes()) s += std::string(op_type_name(n.op)) + " ";
    return s;
  };
  Spec s;
  EXPECT_EQ(ops(resize_model(s, {1, 1, 2, 3}, {}).m).find("Resize"), std::string::npos);
  EXPECT_EQ(ops(resize_model(s, {}, {1, 2, 5, 7}).m).find("Resize"), std::string::npos);
  s.coord = "align_corners";  // not a repeat: the kernel
  EXPECT_NE(ops(resize_model(s, {1, 1, 2, 3}, {}).m).find("Resize"), std::string::npos);
  s = Spec();
  s.mode = "linear";
  EXPECT_NE(ops(resize_model(s, {1, 1, 2, 3}, {}).m).find("Resize"), std::string::npos);
  EXPECT_EQ(ops(resize_model(s, {}, {1, 2, 5, 7}).m), "");  // nothing resized: the input itself
}

// The op itself, as a hand-written graph gives it: scales default to out / in; bad
// attributes name the node.
TEST(OnnxResize, GraphJsonOp) {
  auto graph = [](const std::string& attrs) {
    return parse_graph_json(
        R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [1, 2, 5, 7]}], "nodes": [)"
        R"({"name": "r", "op": "Resize", "attrs": )" +
            attrs + R"(, "inputs": ["x"]}], "outputs": ["r:0"]})",
        "test");
  };
  Graph g = graph(R"({"sizes": [1, 2, 4, 9], "mode": "cubic"})");
  cpu::CpuBackend backend;
  Executor exec(g, backend);
  const std::vector<double> x = values(numel(kIn));
  HostTensor in = tensor(DType::F32, kIn, x);
  std::vector<double> got;
  const std::vector<TensorView> ins{in.view()};
  const TensorView out = exec.run(ins)[0];
  for (int64_t k = 0; k < out.numel(); ++k) got.push_back(load_double(out, k));
  Spec s;
  s.mode = "cubic";
  expect_near(got, reference(s, x, kIn, {1, 2, 4, 9}, {1, 1, 4.0 / 5, 9.0 / 7}));
  auto error = [&](const std::string& attrs) {
    try {
      graph(attrs);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error(R"({"sizes": [1, 2, 4, 9], "mode": "area"})")
                .find("node 'r' (Resize): mode 'area' is not supported"),
            std::string::npos);
  EXPECT_NE(error(R"({"sizes": [1, 2, 4]})").find("sizes and scales need one entry per axis (4)"),
            std::string::npos);
  EXPECT_NE(error(R"({"sizes": [1, 2, 4, 9], "coordinate_transformation_mode": )"
                  R"("tf_crop_and_resize", "roi": [0, 1]})")
                .find("roi needs 8 entries"),
            std::string::npos);
  EXPECT_NE(error(R"({"sizes": [1, 2, 4, 9], "scales": [1, 1, 0, 1]})").find("scales must be > 0"),
            std::string::npos);
}

TEST(OnnxResize, ErrorsNameTheNode) {
  Spec s;
  s.mode = "bicubic";
  EXPECT_EQ(import_error(resize_model(s, {}, {1, 2, 3, 4}).m),
            "m.onnx: node 0 (Resize): mode 'bicubic' is not supported");
  s = Spec();
  s.coord = "tf_crop_and_resize";
  EXPECT_EQ(import_error(resize_model(s, {}, {1, 2, 3, 4}).m),
            "m.onnx: node 0 (Resize): tf_crop_and_resize needs the roi input");
  EXPECT_EQ(import_error(resize_model(s, {}, {1, 2, 3, 4}, {0, 1}).m),
            "m.onnx: node 0 (Resize): roi needs 8 entries");
  s = Spec();
  s.nearest = "nearest";
  EXPECT_EQ(import_error(resize_model(s, {}, {1, 2, 3, 4}).m),
            "m.onnx: node 0 (Resize): nearest_mode 'nearest' is not supported");
  s = Spec();
  s.coord = "corners";
  EXPECT_EQ(import_error(resize_model(s, {}, {1, 2, 3, 4}).m),
            "m.onnx: node 0 (Resize): coordinate_transformation_mode 'corners' is not supported");
  s = Spec();
  s.coord = "half_pixel_symmetric";
  EXPECT_EQ(import_error(resize_model(s, {}, {1, 2, 3, 4}, {}, 18).m),
            "m.onnx: node 0 (Resize): coordinate_transformation_mode 'half_pixel_symmetric' "
            "needs opset 19");
  s = Spec();
  s.mode = "linear";
  s.antialias = false;
  EXPECT_EQ(import_error(resize_model(s, {1, 1, -2, 1}, {}).m),
            "m.onnx: node 0 (Resize): scales must be > 0");
  s.mode = "nearest";
  s.antialias = true;
  EXPECT_EQ(import_error(resize_model(s, {}, {1, 2, 3, 4}).m),
            "m.onnx: node 0 (Resize): antialias is not defined for mode nearest");
}

}  // namespace
}  // namespace hf
