// ONNX opsets 18-28 (runtime/io/onnx_lower*.cpp): each op whose semantics changed after
// opset 17, and each op added since that hotfuse imports, at the versions that differ. Results
// are compared with the same computation at the older opset or with the op's formula in
// double. The node tests of a current ONNX release cover the same ops through hotfuse-run
// (tests/onnx_conformance.cmake); these run without PyPI.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/support/onnx_run.h"

namespace hf {
namespace {

using namespace test::onnx;

std::vector<double> ramp(int n, double from, double step) {
  std::vector<double> v;
  for (int k = 0; k < n; ++k) v.push_back(from + k * step);
  return v;
}

// A one-node model y = op(x[, more inputs]) at `opset`.
Model unary_model(int opset, const std::string& op, int elem, const std::vector<int64_t>& dims) {
  Model m(opset);
  m.input("x", elem, dims);
  m.node(op, {"x"}, {"y"});
  m.output("y");
  return m;
}

TEST(OnnxOpsets, ReduceAxesAreAnInputFromOpset18) {
  const std::vector<double> x = ramp(24, 0.25, 0.125);
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare",
                         "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"}) {
    SCOPED_TRACE(op);
    Model old_form(17);
    old_form.input("x", TP::FLOAT, {2, 3, 4});
    set_ints(old_form.node(op, {"x"}, {"y"}), "axes", {1});
    old_form.output("y");
    Model new_form(18);
    new_form.input("x", TP::FLOAT, {2, 3, 4});
    new_form.init_int64s("axes", {1}, {1});
    new_form.node(op, {"x", "axes"}, {"y"});
    new_form.output("y");
    HostTensor in = tensor(DType::F32, {2, 3, 4}, x);
    std::vector<double> want = run(old_form, {in})[0];
    EXPECT_EQ(want.size(), 8u);
    EXPECT_EQ(run(new_form, {in})[0], want);

    // No axes: every axis, unless noop_with_empty_axes asks for the input itself.
    Model all(18);
    all.input("x", TP::FLOAT, {2, 3, 4});
    all.node(op, {"x"}, {"y"});
    all.output("y");
    EXPECT_EQ(run(all, {in})[0].size(), 1u);
    Model noop(18);
    noop.input("x", TP::FLOAT, {2, 3, 4});
    set_i(noop.node(op, {"x"}, {"y"}), "noop_with_empty_axes", 1);
    noop.output("y");
    EXPECT_EQ(run(noop, {in})[0], run(unary_model(18, "Identity", TP::FLOAT, {2, 3, 4}), {in})[0]);

    // The attribute of opset 17 is no longer read: a model that still gives it is refused.
    Model stale(18);
    stale.input("x", TP::FLOAT, {2, 3, 4});
    set_ints(stale.node(op, {"x"}, {"y"}), "axes", {1});
    stale.output("y");
    EXPECT_EQ(import_error(stale), std::string("m.onnx: node 0 (") + op +
                                       "): attribute 'axes' is an input from opset 18 on");
  }
}

TEST(OnnxOpsets, ReduceMaxAndMinOfBoolAreAnyAndAllFromOpset20) {
  const std::vector<double> x = {0, 0, 0, 1, 0, 1, 1, 1, 1};  // rows: none, some, all true
  HostTensor in = tensor(DType::Bool, {3, 3}, x);
  for (auto [op, want] : {std::pair<const char*, std::vector<double>>{"ReduceMax", {0, 1, 1}},
                          {"ReduceMin", {0, 0, 1}}}) {
    Model m(20);
    m.input("x", TP::BOOL, {3, 3});
    m.init_int64s("axes", {1}, {1});
    set_i(m.node(op, {"x", "axes"}, {"y"}), "keepdims", 0);
    m.output("y");
    EXPECT_EQ(run(m, {in})[0], want) << op;
  }
}

TEST(OnnxOpsets, ReductionsOverAnEmptySetGiveTheirIdentity) {
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* op;
    int elem;
    DType t;
    double want;
  } cases[] = {{"ReduceMax", TP::FLOAT, DType::F32, -inf},
               {"ReduceMin", TP::FLOAT, DType::F32, inf},
               {"ReduceLogSumExp", TP::FLOAT, DType::F32, -inf},
               {"ReduceMax", TP::INT32, DType::I32, double(std::numeric_limits<int32_t>::min())},
               {"ReduceMin", TP::UINT8, DType::U8, 255}};
  for (const Case& c : cases) {
    Model m(18);
    m.input("x", c.elem, {2, 0, 3});
    m.init_int64s("axes", {1}, {1});
    set_i(m.node(c.op, {"x", "axes"}, {"y"}), "keepdims", 0);
    m.output("y");
    EXPECT_EQ(run(m, {HostTensor(c.t, {2, 0, 3})})[0], std::vector<double>(6, c.want)) << c.op;
  }
}

TEST(OnnxOpsets, SplitIntoNumOutputsFromOpset18) {
  Model m(18);
  m.input("x", TP::FLOAT, {7});
  set_i(m.node("Split", {"x"}, {"a", "b", "c"}), "num_outputs", 3);
  for (const char* o : {"a", "b", "c"}) m.output(o);
  auto got = run(m, {tensor(DType::F32, {7}, ramp(7, 0, 1))});
  EXPECT_EQ(got, (std::vector<std::vector<double>>{{0, 1, 2}, {3, 4, 5}, {6}}));

  Model wrong(18);
  wrong.input("x", TP::FLOAT, {7});
  set_i(wrong.node("Split", {"x"}, {"a", "b", "c"}), "num_outputs", 2);
  for (const char* o : {"a", "b", "c"}) wrong.output(o);
  EXPECT_EQ(import_error(wrong), "m.onnx: node 0 (Split): num_outputs is 2 for 3 outputs");

  Model both(18);
  both.input("x", TP::FLOAT, {7});
  both.init_int64s("split", {2}, {3, 4});
  set_i(both.node("Split", {"x", "split"}, {"a", "b"}), "num_outputs", 2);
  both.output("a");
  both.output("b");
  EXPECT_EQ(import_error(both),
            "m.onnx: node 0 (Split): takes either the input split or num_outputs, not both");
}

TEST(OnnxOpsets, GeluOfOpset20InBothForms) {
  const std::vector<double> x = ramp(33, -4, 0.25);
  HostTensor in = tensor(DType::F32, {33}, x);
  std::vector<double> exact, tanh_form;
  for (double v : x) {
    exact.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    tanh_form.push_back(0.5 * v *
                        (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
  }
  expect_near_all(run(unary_model(20, "Gelu", TP::FLOAT, {33}), {in})[0], exact, 1e-6);
  Model t = unary_model(20, "Gelu", TP::FLOAT, {33});
  set_s(*t.g->mutable_node(0), "approximate", "tanh");
  expect_near_all(run(t, {in})[0], tanh_form, 1e-6);
  Model bad = unary_model(20, "Gelu", TP::FLOAT, {33});
  set_s(*bad.g->mutable_node(0), "approximate", "fast");
  EXPECT_EQ(import_error(bad),
            "m.onnx: node 0 (Gelu): approximate must be 'none' or 'tanh', not 'fast'");
}

TEST(OnnxOpsets, MishOfOpset18AndSwishOfOpset24) {
  const std::vector<double> x = ramp(33, -8, 0.5);
  HostTensor in = tensor(DType::F32, {33}, x);
  std::vector<double> mish, swish1, swish_half;
  for (double v : x) {
    mish.push_back(v * std::tanh(std::log1p(std::exp(v))));
    swish1.push_back(v / (1 + std::exp(-v)));
    swish_half.push_back(v / (1 + std::exp(-0.5 * v)));
  }
  expect_near_all(run(unary_model(18, "Mish", TP::FLOAT, {33}), {in})[0], mish, 1e-6);
  expect_near_all(run(unary_model(24, "Swish", TP::FLOAT, {33}), {in})[0], swish1, 1e-6);
  Model half = unary_model(24, "Swish", TP::FLOAT, {33});
  set_f(*half.g->mutable_node(0), "alpha", 0.5f);
  expect_near_all(run(half, {in})[0], swish_half, 1e-6);
}

TEST(OnnxOpsets, BitwiseOpsOfOpset18) {
  const std::vector<double> a = {0, 1, 5, 12, 255, 170}, b = {0, 3, 6, 10, 15, 85};
  for (auto [elem, t] : {std::pair{int(TP::INT32), DType::I32},
                         {int(TP::INT64), DType::I64},
                         {int(TP::UINT8), DType::U8}}) {
    SCOPED_TRACE(dtype_name(t));
    HostTensor ta = tensor(t, {6}, a), tb = tensor(t, {6}, b);
    for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
      Model m(18);
      m.input("a", elem, {6});
      m.input("b", elem, {6});
      m.node(op, {"a", "b"}, {"y"});
      m.output("y");
      std::vector<double> want;
      for (size_t k = 0; k < a.size(); ++k) {
        int64_t x = static_cast<int64_t>(a[k]), y = static_cast<int64_t>(b[k]);
        std::string o = op;
        want.push_back(double(o == "BitwiseAnd" ? (x & y) : o == "BitwiseOr" ? (x | y) : (x ^ y)));
      }
      EXPECT_EQ(run(m, {ta, tb})[0], want) << op;
    }
    std::vector<double> want;
    for (double v : a)
      want.push_back(t == DType::U8 ? double(uint8_t(~uint8_t(v))) : double(~int64_t(v)));
    EXPECT_EQ(run(unary_model(18, "BitwiseNot", elem, {6}), {ta})[0], want);
  }
  EXPECT_EQ(import_error(unary_model(18, "BitwiseNot", TP::FLOAT, {6})),
            "m.onnx: node 0 (BitwiseNot): needs an integer input");
}

TEST(OnnxOpsets, FloatModTakesFmod0FromOpset28) {
  const std::vector<double> a = {5.5, -5.5, 5.5, -5.5, 3, -3, 7.25};
  const std::vector<double> b = {2, 2, -2, -2, 3, 4, 1e30};
  std::vector<double> want;  // A - floor(A / B) * B: the sign of B
  for (size_t k = 0; k < a.size(); ++k) {
    double r = std::fmod(a[k], b[k]);
    want.push_back(r != 0 && (r < 0) != (b[k] < 0) ? r + b[k] : r);
  }
  auto model = [](int opset) {
    Model m(opset);
    m.input("a", TP::FLOAT, {7});
    m.input("b", TP::FLOAT, {7});
    m.node("Mod", {"a", "b"}, {"y"});
    m.output("y");
    return m;
  };
  EXPECT_EQ(run(model(28), {tensor(DType::F32, {7}, a), tensor(DType::F32, {7}, b)})[0], want);
  EXPECT_EQ(import_error(model(27)),
            "m.onnx: node 0 (Mod): fmod must be 1 for float inputs before opset 28");
}

TEST(OnnxOpsets, RmsNormalizationOfOpset23) {
  const std::vector<double> x = ramp(24, -1.5, 0.2), scale = {0.5, 1, 1.5, 2};
  Model m(23);
  m.input("x", TP::FLOAT, {2, 3, 4});
  m.init_floats("scale", {4}, {0.5f, 1, 1.5f, 2});
  set_f(m.node("RMSNormalization", {"x", "scale"}, {"y"}), "epsilon", 1e-3f);
  m.output("y");
  std::vector<double> want;
  for (int row = 0; row < 6; ++row) {
    double ss = 0;
    for (int c = 0; c < 4; ++c) ss += x[row * 4 + c] * x[row * 4 + c];
    double inv = 1 / std::sqrt(ss / 4 + double(1e-3f));
    for (int c = 0; c < 4; ++c) want.push_back(x[row * 4 + c] * inv * scale[c]);
  }
  expect_near_all(run(m, {tensor(DType::F32, {2, 3, 4}, x)})[0], want, 1e-5);
}

TEST(OnnxOpsets, GroupNormalizationScalesPerGroupAt18AndPerChannelAt21) {
  // N=2, C=4, 3 positions, 2 groups of 2 channels.
  const std::vector<double> x = ramp(24, -2, 0.3);
  for (int opset : {18, 21}) {
    SCOPED_TRACE(opset);
    int params = opset == 18 ? 2 : 4;
    std::vector<float> scale = {0.5f, 2, 1.5f, -1}, bias = {0.25f, -0.5f, 1, 0};
    scale.resize(params);
    bias.resize(params);
    Model m(opset);
    m.input("x", TP::FLOAT, {2, 4, 3});
    m.init_floats("scale", {params}, scale);
    m.init_floats("bias", {params}, bias);
    auto& n = m.node("GroupNormalization", {"x", "scale", "bias"}, {"y"});
    set_i(n, "num_groups", 2);
    set_f(n, "epsilon", 1e-2f);
    m.output("y");
    std::vector<double> want(24);
    for (int s = 0; s < 2; ++s)
      for (int grp = 0; grp < 2; ++grp) {
        int at = s * 12 + grp * 6;
        double mean = 0, var = 0;
        for (int k = 0; k < 6; ++k) mean += x[at + k] / 6;
        for (int k = 0; k < 6; ++k) var += (x[at + k] - mean) * (x[at + k] - mean) / 6;
        for (int k = 0; k < 6; ++k) {
          int p = opset == 18 ? grp : grp * 2 + k / 3;
          want[at + k] = (x[at + k] - mean) / std::sqrt(var + double(1e-2f)) * scale[p] + bias[p];
        }
      }
    expect_near_all(run(m, {tensor(DType::F32, {2, 4, 3}, x)})[0], want, 1e-5);
  }
  Model bad(21);
  bad.input("x", TP::FLOAT, {2, 4, 3});
  bad.init_floats("scale", {2}, {1, 1});
  bad.init_floats("bias", {2}, {0, 0});
  set_i(bad.node("GroupNormalization", {"x", "scale", "bias"}, {"y"}), "num_groups", 2);
  bad.output("y");
  EXPECT_EQ(import_error(bad),
            "m.onnx: node 0 (GroupNormalization): scale has shape [2], expected [4]");
}

TEST(OnnxOpsets, TheNewestOpsetImportsAndNewerTypesAreRefusedByName) {
  EXPECT_NO_THROW(import(unary_model(28, "Neg", TP::FLOAT, {4})));
  EXPECT_EQ(import_error(unary_model(28, "Neg", 17, {4})),
            "m.onnx: input 'x': element type FLOAT8E4M3FN is not supported (hotfuse computes in "
            "FLOAT DOUBLE FLOAT16 BFLOAT16 INT8 INT16 INT32 INT64 UINT8 UINT16 UINT32 UINT64 "
            "BOOL)");
  EXPECT_NE(
      import_error(unary_model(28, "Neg", 22, {4})).find("element type INT4 is not supported"),
      std::string::npos);
  // AveragePool's dilations other than 1 before opset 19, which added them, are refused,
  // not ignored (from 19 on they are computed: test_onnx_window_ops).
  Model m(18);
  m.input("x", TP::FLOAT, {1, 1, 5, 5});
  auto& n = m.node("AveragePool", {"x"}, {"y"});
  set_ints(n, "kernel_shape", {2, 2});
  set_ints(n, "dilations", {2, 2});
  m.output("y");
  EXPECT_EQ(import_error(m),
            "m.onnx: node 0 (AveragePool): unsupported attribute: dilations (an AveragePool "
            "attribute from opset 19)");
}

// Opsets 1-6 (runtime/io/onnx_legacy.cpp): each legacy form against its opset-7 equivalent.
TEST(OnnxOpsets, LegacyBroadcastAlignsBAtItsAxis) {
  const std::vector<double> a = ramp(24, 0, 1), b = {10, 20, 30};
  HostTensor ta = tensor(DType::F32, {2, 3, 4}, a), tb = tensor(DType::F32, {3}, b);
  for (bool constant_b : {false, true}) {
    Model m(6);
    m.input("a", TP::FLOAT, {2, 3, 4});
    if (constant_b)
      m.init_floats("b", {3}, {10, 20, 30});
    else
      m.input("b", TP::FLOAT, {3});
    auto& n = m.node("Add", {"a", "b"}, {"y"});
    set_i(n, "broadcast", 1);
    set_i(n, "axis", 1);
    set_ints(n, "consumed_inputs", {0, 0});
    m.output("y");
    std::vector<double> want;
    for (int k = 0; k < 24; ++k) want.push_back(a[k] + b[(k / 4) % 3]);
    EXPECT_EQ(run(m, constant_b ? std::vector<HostTensor>{ta} : std::vector<HostTensor>{ta, tb})[0],
              want);
  }
  Model bad(6);
  bad.input("a", TP::FLOAT, {2, 3, 4});
  bad.input("b", TP::FLOAT, {3});
  auto& n = bad.node("Mul", {"a", "b"}, {"y"});
  set_i(n, "broadcast", 1);
  set_i(n, "axis", 2);
  bad.output("y");
  EXPECT_EQ(import_error(bad), "m.onnx: node 0 (Mul): B [3] does not fit A [2,3,4] at axis 2");
}

TEST(OnnxOpsets, LegacyCastReshapeConcatSplitPReluAndTile) {
  Model cast(1);
  cast.input("x", TP::FLOAT, {3});
  set_s(cast.node("Cast", {"x"}, {"y"}), "to", "INT32");
  cast.output("y");
  Graph g = import(cast);
  EXPECT_EQ(g.value(g.outputs()[0]).dtype, DType::I32);
  EXPECT_EQ(run(cast, {tensor(DType::F32, {3}, {1.75, -2.5, 3})})[0],
            (std::vector<double>{1, -2, 3}));

  Model reshape(4);
  reshape.input("x", TP::FLOAT, {2, 3});
  set_ints(reshape.node("Reshape", {"x"}, {"y"}), "shape", {3, -1});
  reshape.output("y");
  Graph r = import(reshape);
  EXPECT_EQ(r.value(r.outputs()[0]).shape, (Shape{3, 2}));

  Model concat(3);
  concat.input("a", TP::FLOAT, {2, 1});
  concat.input("b", TP::FLOAT, {2, 2});
  concat.node("Concat", {"a", "b"}, {"y"});  // axis 1 by default before opset 4
  concat.output("y");
  EXPECT_EQ(run(concat,
                {tensor(DType::F32, {2, 1}, {1, 2}), tensor(DType::F32, {2, 2}, {3, 4, 5, 6})})[0],
            (std::vector<double>{1, 3, 4, 2, 5, 6}));

  Model split(1);
  split.input("x", TP::FLOAT, {5});
  split.init_int64s("parts", {2}, {2, 3});
  split.node("Split", {"x", "parts"}, {"a", "b"});
  split.output("a");
  split.output("b");
  EXPECT_EQ(run(split, {tensor(DType::F32, {5}, ramp(5, 0, 1))}),
            (std::vector<std::vector<double>>{{0, 1}, {2, 3, 4}}));

  Model prelu(6);  // a [C] slope is per channel before opset 7
  prelu.input("x", TP::FLOAT, {1, 2, 2});
  prelu.init_floats("slope", {2}, {0.5f, 0.25f});
  prelu.node("PRelu", {"x", "slope"}, {"y"});
  prelu.output("y");
  EXPECT_EQ(run(prelu, {tensor(DType::F32, {1, 2, 2}, {-2, 2, -4, 4})})[0],
            (std::vector<double>{-1, 2, -1, 4}));

  Model tile(5);
  tile.input("x", TP::FLOAT, {2});
  tile.init_int64s("tiles", {}, {2});
  tile.init_int64s("axis", {}, {0});
  tile.node("Tile", {"x", "tiles", "axis"}, {"y"});
  tile.output("y");
  EXPECT_EQ(import_error(tile),
            "m.onnx: node 0 (Tile): unsupported op (Tile before opset 6 (tiles and axis given as "
            "inputs))");
}

}  // namespace
}  // namespace hf
