// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (runtime/io/onnx_lower_quant.cpp)
// against ONNX's reference formulas written out here: per tensor, per axis, blocked (with a
// short last block), every integer type with saturation, ties rounding to even, opsets 10 to
// 23, the refusals of types hotfuse does not store, and the shape errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

double rint_even(double v) {
  return std::nearbyint(v);  // the default rounding mode: half to even
}

struct QType {
  int elem;
  DType dtype;
  double lo, hi;
};
const QType kTypes[] = {{TP::INT8, DType::I8, -128, 127},
                        {TP::UINT8, DType::U8, 0, 255},
                        {TP::INT16, DType::I16, -32768, 32767},
                        {TP::UINT16, DType::U16, 0, 65535}};

// x [2, 3, 5]: halves (ties), negatives, values that saturate every type.
std::vector<double> input_values() {
  std::vector<double> x;
  for (int k = 0; k < 30; ++k)
    x.push_back((k % 2 ? -1 : 1) * (0.5 * k + (k % 7) * 1000.25 * (k % 3 == 0)));
  return x;
}

TEST(OnnxQuant, QuantizePerTensorPerAxisAndBlocked) {
  const std::vector<int64_t> xs = {2, 3, 5};
  const std::vector<double> x = input_values();
  struct Case {
    int opset, axis, block;
    std::vector<int64_t> ps;  // scale / zero point shape
  } cases[] = {{10, 1, 0, {}},        {13, 1, 0, {3}},       {13, -1, 0, {5}},
               {19, 0, 0, {2}},       {21, 2, 2, {2, 3, 3}}, {21, 1, 3, {2, 1, 5}},
               {23, 0, 1, {2, 3, 5}}, {21, 1, 0, {1}}};
  for (const Case& c : cases)
    for (const QType& q : kTypes) {
      if (c.opset < 21 && (q.dtype == DType::I16 || q.dtype == DType::U16)) continue;
      int64_t np = 1;
      for (int64_t d : c.ps) np *= d;
      std::vector<float> scale;
      std::vector<int64_t> zp;
      for (int64_t k = 0; k < np; ++k) {
        scale.push_back(0.5f + 0.25f * static_cast<float>(k % 3));
        zp.push_back(q.lo < 0 ? (k % 5) - 2 : (k % 5) * 3);
      }
      Model m(c.opset);
      m.input("x", TP::FLOAT, xs);
      m.init_floats("s", c.ps, scale);
      auto& z = m.init("z");
      z.set_data_type(q.elem);
      for (int64_t d : c.ps) z.add_dims(d);
      for (int64_t v : zp) z.add_int32_data(static_cast<int32_t>(v));
      auto& n = m.node("QuantizeLinear", {"x", "s", "z"}, {"y"});
      if (c.opset >= 13) set_i(n, "axis", c.axis);
      if (c.block) set_i(n, "block_size", c.block);
      m.output("y");
      Graph g = import(m);
      EXPECT_EQ(g.value(g.outputs()[0]).dtype, q.dtype);
      auto got = run(m, {tensor(DType::F32, xs, x)})[0];
      const int axis = c.axis < 0 ? c.axis + 3 : c.axis;
      for (int64_t k = 0; k < 30; ++k) {
        int64_t idx[3] = {k / 15, (k / 5) % 3, k % 5};
        int64_t p = 0;  // the parameter's element for x[k]
        if (np > 1) {
          if (c.block) {
            int64_t pi[3] = {idx[0], idx[1], idx[2]};
            pi[axis] /= c.block;
            p = (pi[0] * c.ps[1] + pi[1]) * c.ps[2] + pi[2];
          } else {
            p = idx[axis];
          }
        }
        float ratio = static_cast<float>(x[k]) / scale[p];
        double want = std::clamp(rint_even(ratio) + static_cast<double>(zp[p]), q.lo, q.hi);
        EXPECT_EQ(got[k], want) << "opset " << c.opset << " type " << dtype_name(q.dtype)
                                << " block " << c.block << " element " << k;
      }
    }
}

TEST(OnnxQuant, QuantizeWithoutZeroPointAndTies) {
  // No zero point: UINT8; output_dtype (21) picks another type. Ties round to even.
  const std::vector<double> x = {0.5, 1.5, 2.5, -0.5, -1.5, 300, -7, 3.49};
  for (int od : {0, int(TP::INT8), int(TP::UINT16)}) {
    Model m(od ? 21 : 13);
    m.input("x", TP::FLOAT, {8});
    m.init_floats("s", {}, {1.0f});
    auto& n = m.node("QuantizeLinear", {"x", "s"}, {"y"});
    if (od) set_i(n, "output_dtype", od);
    m.output("y");
    std::vector<double> want;
    double lo = od == TP::INT8 ? -128 : 0, hi = od == TP::INT8 ? 127 : od ? 65535 : 255;
    for (double v : x) want.push_back(std::clamp(rint_even(v), lo, hi));
    EXPECT_EQ(run(m, {tensor(DType::F32, {8}, x)})[0], want) << "output_dtype " << od;
  }
  // Types hotfuse does not store are refused by name; so is a per-axis scale of the wrong size.
  Model f8(21);
  f8.input("x", TP::FLOAT, {2});
  f8.init_floats("s", {}, {1.0f});
  set_i(f8.node("QuantizeLinear", {"x", "s"}, {"y"}), "output_dtype", 17);  // FLOAT8E4M3FN
  f8.output("y");
  EXPECT_EQ(import_error(f8),
            "m.onnx: node 0 (QuantizeLinear): unsupported op (QuantizeLinear to FLOAT8E4M3FN; "
            "hotfuse quantizes to INT8, UINT8, INT16 and UINT16)");
  Model ax(13);
  ax.input("x", TP::FLOAT, {2, 3});
  ax.init_floats("s", {2}, {1.0f, 2.0f});
  ax.node("QuantizeLinear", {"x", "s"}, {"y"});
  ax.output("y");
  EXPECT_EQ(import_error(ax),
            "m.onnx: node 0 (QuantizeLinear): the scale has shape [2]; per axis it needs [3] "
            "(axis 1 of [2,3])");
}

TEST(OnnxQuant, DequantizePerTensorPerAxisAndBlocked) {
  const std::vector<int64_t> xs = {3, 4};
  struct Case {
    int opset, axis, block, elem;
    DType dtype;
    std::vector<int64_t> ps;
    bool zero_point;
  } cases[] = {{10, 1, 0, TP::UINT8, DType::U8, {}, true},
               {13, 0, 0, TP::INT8, DType::I8, {3}, true},
               {13, 1, 0, TP::INT32, DType::I32, {4}, false},
               {21, 1, 3, TP::INT16, DType::I16, {3, 2}, true},
               {21, 0, 2, TP::UINT16, DType::U16, {2, 4}, true},
               {23, -1, 0, TP::INT8, DType::I8, {4}, true}};
  for (const Case& c : cases) {
    std::vector<double> x;
    for (int k = 0; k < 12; ++k)
      x.push_back(c.dtype == DType::U8 || c.dtype == DType::U16 ? k * 21 : k * 11 - 60);
    int64_t np = 1;
    for (int64_t d : c.ps) np *= d;
    std::vector<float> scale;
    std::vector<int64_t> zp;
    for (int64_t k = 0; k < np; ++k) {
      scale.push_back(0.125f * static_cast<float>(k + 1));
      zp.push_back(k % 3 + 1);
    }
    Model m(c.opset);
    m.input("x", c.elem, xs);
    m.init_floats("s", c.ps, scale);
    std::vector<std::string> ins = {"x", "s"};
    if (c.zero_point) {
      auto& z = m.init("z");
      z.set_data_type(c.elem);
      for (int64_t d : c.ps) z.add_dims(d);
      for (int64_t v : zp) z.add_int32_data(static_cast<int32_t>(v));
      ins.push_back("z");
    }
    auto& n = m.node("DequantizeLinear", ins, {"y"});
    if (c.opset >= 13) set_i(n, "axis", c.axis);
    if (c.block) set_i(n, "block_size", c.block);
    m.output("y");
    auto got = run(m, {tensor(c.dtype, xs, x)})[0];
    const int axis = c.axis < 0 ? c.axis + 2 : c.axis;
    for (int64_t k = 0; k < 12; ++k) {
      int64_t idx[2] = {k / 4, k % 4};
      int64_t p = 0;
      if (np > 1) {
        if (c.block) {
          idx[axis] /= c.block;
          p = idx[0] * c.ps[1] + idx[1];
        } else {
          p = idx[axis];
        }
      }
      float dx = static_cast<float>(x[k]) - (c.zero_point ? static_cast<float>(zp[p]) : 0.0f);
      EXPECT_EQ(got[k], static_cast<double>(dx * scale[p]))
          << "opset " << c.opset << " " << dtype_name(c.dtype) << " element " << k;
    }
  }
  // A zero point of another type than the input is an error.
  Model z(13);
  z.input("x", TP::INT8, {2});
  z.init_floats("s", {}, {1.0f});
  auto& zp = z.init("z");
  zp.set_data_type(TP::UINT8);
  zp.add_int32_data(0);
  z.node("DequantizeLinear", {"x", "s", "z"}, {"y"});
  z.output("y");
  EXPECT_EQ(import_error(z),
            "m.onnx: node 0 (DequantizeLinear): the zero point is UINT8, the input INT8");
}

TEST(OnnxQuant, DynamicQuantizeLinearMatchesTheReference) {
  const std::vector<std::vector<double>> inputs = {{0, 2, -3, -2.5, 1.34, 0.5},
                                                   {-1, -2.1, -1.3, -2.5, -3.34, -4},
                                                   {1, 2.1, 1.3, 2.5, 3.34, 4},
                                                   {0, 0, 0, 0, 0, 0}};
  for (const auto& x : inputs) {
    Model m(11);
    m.input("x", TP::FLOAT, {2, 3});
    m.node("DynamicQuantizeLinear", {"x"}, {"y", "s", "z"});
    m.output("y");
    m.output("s");
    m.output("z");
    auto got = run(m, {tensor(DType::F32, {2, 3}, x)});
    float mx = 0, mn = 0;
    for (double v : x) {
      mx = std::max(mx, static_cast<float>(v));
      mn = std::min(mn, static_cast<float>(v));
    }
    float scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
    float zp = static_cast<float>(rint_even(std::clamp(0.0f - mn / scale, 0.0f, 255.0f)));
    EXPECT_EQ(got[1], std::vector<double>{scale});
    EXPECT_EQ(got[2], std::vector<double>{zp});
    for (size_t k = 0; k < x.size(); ++k)
      EXPECT_EQ(got[0][k], std::clamp(rint_even(static_cast<float>(x[k]) / scale) + zp, 0.0, 255.0))
          << "element " << k;
  }
}

// The integer operands of the four integer ops: an INT8 or UINT8 input and its zero point.
pb::TensorProto& int8_init(Model& m, const std::string& name, int elem,
                           const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
  auto& t = m.init(name);
  t.set_data_type(elem);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t x : v) t.add_int32_data(static_cast<int32_t>(x));
  return t;
}

TEST(OnnxQuant, MatMulIntegerAndQLinearMatMulAreExact) {
  // A [3, 5] UINT8 with a per-row zero point, B [5, 4] INT8 with a per-column one.
  const int M = 3, K = 5, N = 4;
  std::vector<double> a, b;
  for (int k = 0; k < M * K; ++k) a.push_back((k * 53) % 256);
  for (int k = 0; k < K * N; ++k) b.push_back((k * 71) % 256 - 128);
  const std::vector<int64_t> azp = {0, 255, 17}, bzp = {-128, 127, 0, 5};
  std::vector<double> acc(M * N, 0);
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c)
      for (int k = 0; k < K; ++k)
        acc[r * N + c] += (a[r * K + k] - azp[r]) * (b[k * N + c] - bzp[c]);
  Model m(10);
  m.input("a", TP::UINT8, {M, K});
  m.input("b", TP::INT8, {K, N});
  int8_init(m, "az", TP::UINT8, {M}, azp);
  int8_init(m, "bz", TP::INT8, {N}, bzp);
  m.node("MatMulInteger", {"a", "b", "az", "bz"}, {"y"});
  m.output("y");
  Graph g = import(m);
  EXPECT_EQ(g.value(g.outputs()[0]).dtype, DType::I32);
  EXPECT_EQ(run(m, {tensor(DType::U8, {M, K}, a), tensor(DType::I8, {K, N}, b)})[0], acc);

  // QLinearMatMul with scalar parameters (UINT8 x UINT8 -> UINT8) and INT8 output.
  for (int out : {int(TP::UINT8), int(TP::INT8)}) {
    Model q(10);
    q.input("a", TP::UINT8, {M, K});
    q.init_floats("as", {}, {0.02f});
    int8_init(q, "az", TP::UINT8, {}, {113});
    q.input("b", TP::UINT8, {K, N});
    q.init_floats("bs", {1}, {0.015f});
    int8_init(q, "bz", TP::UINT8, {1}, {98});
    q.init_floats("ys", {}, {0.07f});
    int8_init(q, "yz", out, {}, {out == TP::INT8 ? -3 : 120});
    q.node("QLinearMatMul", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"});
    q.output("y");
    std::vector<double> bu;
    for (double v : b) bu.push_back(v + 128);
    const float factor = 0.02f * 0.015f / 0.07f;
    std::vector<double> want;
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < N; ++c) {
        int64_t sum = 0;
        for (int k = 0; k < K; ++k)
          sum +=
              static_cast<int64_t>(a[r * K + k] - 113) * static_cast<int64_t>(bu[k * N + c] - 98);
        double d =
            static_cast<double>(sum) * static_cast<double>(factor) + (out == TP::INT8 ? -3 : 120);
        want.push_back(std::clamp(rint_even(d), out == TP::INT8 ? -128.0 : 0.0,
                                  out == TP::INT8 ? 127.0 : 255.0));
      }
    EXPECT_EQ(run(q, {tensor(DType::U8, {M, K}, a), tensor(DType::U8, {K, N}, bu)})[0], want)
        << "output " << out;
  }
  // An inner dimension past 258 (where one f32 sum could round): slices summed in INT32,
  // exact; all values 255 with zero points 0 give 255 * 255 * 601 exactly.
  Model big(10);
  big.input("a", TP::UINT8, {2, 601});
  big.input("b", TP::UINT8, {601, 3});
  big.node("MatMulInteger", {"a", "b"}, {"y"});
  big.output("y");
  std::vector<double> a255(2 * 601, 255), b255(601 * 3, 255), bv(601 * 3);
  for (size_t k = 0; k < bv.size(); ++k) bv[k] = static_cast<double>((k * 29) % 256);
  EXPECT_EQ(run(big, {tensor(DType::U8, {2, 601}, a255), tensor(DType::U8, {601, 3}, b255)})[0],
            std::vector<double>(6, 255.0 * 255 * 601));
  std::vector<double> want_big(6, 0);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 601; ++k) want_big[r * 3 + c] += 255 * bv[k * 3 + c];
  EXPECT_EQ(run(big, {tensor(DType::U8, {2, 601}, a255), tensor(DType::U8, {601, 3}, bv)})[0],
            want_big);
  // A Conv with more products per output than that is refused, not rounded.
  Model bc(10);
  bc.input("x", TP::UINT8, {1, 40, 3, 3});
  bc.input("w", TP::UINT8, {1, 40, 3, 3});
  bc.node("ConvInteger", {"x", "w"}, {"y"});
  bc.output("y");
  EXPECT_EQ(import_error(bc),
            "m.onnx: node 0 (ConvInteger): unsupported op (ConvInteger with 360 products per "
            "output: its f32 accumulation is exact only up to 258)");
}

TEST(OnnxQuant, ConvIntegerAndQLinearConvAreExact) {
  // x [1, 2, 5, 6] UINT8, w [3, 2, 2, 3] UINT8 with per-channel zero points, pads 1, stride 2.
  const int C = 2, H = 5, W = 6, M = 3, KH = 2, KW = 3, OH = 3, OW = 3;
  std::vector<double> x, w;
  for (int k = 0; k < C * H * W; ++k) x.push_back((k * 37) % 256);
  for (int k = 0; k < M * C * KH * KW; ++k) w.push_back((k * 91) % 256);
  const int64_t xz = 7;
  const std::vector<int64_t> wz = {3, 200, 128};
  const std::vector<int64_t> bias = {-1000, 0, 123456};
  auto conv_ref = [&](int m, int oh, int ow) {
    int64_t s = 0;
    for (int c = 0; c < C; ++c)
      for (int i = 0; i < KH; ++i)
        for (int j = 0; j < KW; ++j) {
          int h = oh * 2 - 1 + i, v = ow * 2 - 1 + j;
          if (h < 0 || h >= H || v < 0 || v >= W) continue;  // padding: 0 after the shift
          s += static_cast<int64_t>(x[(c * H + h) * W + v] - xz) *
               static_cast<int64_t>(w[((m * C + c) * KH + i) * KW + j] - wz[m]);
        }
    return s;
  };
  auto attrs = [](pb::NodeProto& n) {
    set_ints(n, "pads", {1, 1, 1, 1});
    set_ints(n, "strides", {2, 2});
  };
  Model m(10);
  m.input("x", TP::UINT8, {1, C, H, W});
  m.input("w", TP::UINT8, {M, C, KH, KW});
  int8_init(m, "xz", TP::UINT8, {}, {xz});
  int8_init(m, "wz", TP::UINT8, {M}, wz);
  attrs(m.node("ConvInteger", {"x", "w", "xz", "wz"}, {"y"}));
  m.output("y");
  std::vector<double> want;
  for (int c = 0; c < M; ++c)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) want.push_back(static_cast<double>(conv_ref(c, oh, ow)));
  EXPECT_EQ(run(m, {tensor(DType::U8, {1, C, H, W}, x), tensor(DType::U8, {M, C, KH, KW}, w)})[0],
            want);

  // QLinearConv: per-channel weight scales, an INT32 bias, UINT8 output.
  Model q(10);
  q.input("x", TP::UINT8, {1, C, H, W});
  q.init_floats("xs", {}, {0.05f});
  int8_init(q, "xz", TP::UINT8, {}, {xz});
  q.input("w", TP::UINT8, {M, C, KH, KW});
  q.init_floats("ws", {M}, {0.01f, 0.02f, 0.003f});
  int8_init(q, "wz", TP::UINT8, {M}, wz);
  q.init_floats("ys", {}, {0.9f});
  int8_init(q, "yz", TP::UINT8, {}, {100});
  auto& bt = q.init("B");
  bt.set_data_type(TP::INT32);
  bt.add_dims(M);
  for (int64_t v : bias) bt.add_int32_data(static_cast<int32_t>(v));
  attrs(q.node("QLinearConv", {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "B"}, {"y"}));
  q.output("y");
  const float wsv[3] = {0.01f, 0.02f, 0.003f};
  std::vector<double> wq;
  for (int c = 0; c < M; ++c) {
    const float factor = 0.05f * wsv[c] / 0.9f;
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        double r = static_cast<double>(conv_ref(c, oh, ow) + bias[c]) * factor + 100;
        wq.push_back(rint_even(std::clamp(r, 0.0, 255.0)));
      }
  }
  EXPECT_EQ(run(q, {tensor(DType::U8, {1, C, H, W}, x), tensor(DType::U8, {M, C, KH, KW}, w)})[0],
            wq);
}

}  // namespace
}  // namespace hf
