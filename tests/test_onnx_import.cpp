// ONNX import: models built here with the protobuf classes, written to a temporary
// directory, imported, and run on the CPU backend against values computed in the test.
// No Python: the models are small and spelled out below.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/io/onnx_import.h"
#include "runtime/ir/error.h"
#include "runtime/ops/half.h"
#include "tests/support/onnx_builder.h"
#include "tests/support/scoped_env.h"
#include "tests/support/temp_dir.h"

namespace hf {
namespace {

namespace fs = std::filesystem;
using namespace test::onnx;

// --- building models: tests/support/onnx_builder.h ---------------------------------------------

void write_file(const fs::path& p, const std::string& data) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << data;
}

// Writes the model as <dir>/m.onnx and imports it.
Graph import(const Model& m, const TempDir& dir, const OnnxImportOptions& opt = {}) {
  write_file(dir.root / "m.onnx", m.bytes());
  return read_graph_onnx(dir.root / "m.onnx", opt);
}
Graph import(const Model& m, const OnnxImportOptions& opt = {}) {
  TempDir dir;
  return import(m, dir, opt);
}

// The message of the hf::Error importing `m` throws, with the temp directory cut off so it
// starts with "m.onnx: ".
std::string import_error(const Model& m, const OnnxImportOptions& opt = {}) {
  TempDir dir;
  try {
    import(m, dir, opt);
  } catch (const Error& e) {
    std::string msg = e.what();
    std::string prefix = dir.root.string() + "/";
    if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
    return msg;
  }
  return "(no error)";
}

// --- running graphs ----------------------------------------------------------------------------

HostTensor tensor(DType t, const Shape& s, const std::vector<double>& v) {
  HostTensor h(t, s);
  EXPECT_EQ(static_cast<int64_t>(v.size()), h.numel());
  for (int64_t i = 0; i < h.numel(); ++i) {
    switch (t) {
      case DType::F32:
        h.as<float>()[i] = static_cast<float>(v[i]);
        break;
      case DType::F16:
        h.as<f16>()[i] = to_f16(static_cast<float>(v[i]));
        break;
      case DType::BF16:
        h.as<bf16>()[i] = to_bf16(static_cast<float>(v[i]));
        break;
      case DType::I32:
        h.as<int32_t>()[i] = static_cast<int32_t>(v[i]);
        break;
      case DType::I64:
        h.as<int64_t>()[i] = static_cast<int64_t>(v[i]);
        break;
      case DType::Bool:
        h.as<uint8_t>()[i] = v[i] != 0;
        break;
      case DType::U8:
        h.as<uint8_t>()[i] = static_cast<uint8_t>(v[i]);
        break;
      default:  // the wide dtypes
        store_double(h.view(), i, v[i]);
        break;
    }
  }
  return h;
}

struct Result {
  DType dtype;
  Shape shape;
  std::vector<double> v;
};

std::vector<Result> run(const Graph& g, const std::vector<HostTensor>& in) {
  cpu::CpuBackend backend;
  Executor exec(g, backend);
  std::vector<TensorView> views;
  for (const HostTensor& t : in) views.push_back(t.view());
  auto out = exec.run(views);
  std::vector<Result> res;
  for (const TensorView& t : out) {
    Result r{t.dtype, t.shape, {}};
    for (int64_t i = 0; i < t.numel(); ++i) r.v.push_back(load_double(t, i));
    res.push_back(std::move(r));
  }
  return res;
}

void expect_close(const std::vector<double>& expected, const std::vector<double>& actual,
                  double rtol = 1e-5, double atol = 1e-6, const std::string& what = "") {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  for (size_t i = 0; i < expected.size(); ++i) {
    double e = expected[i], a = actual[i];
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(a)) << what << " element " << i << ": expected NaN, got " << a;
    } else if (std::isinf(e)) {
      EXPECT_EQ(e, a) << what << " element " << i;
    } else {
      EXPECT_LE(std::fabs(a - e), atol + rtol * std::fabs(e))
          << what << " element " << i << ": expected " << e << ", got " << a;
    }
  }
}

std::vector<double> linspace(double lo, double hi, int n) {
  std::vector<double> v;
  for (int k = 0; k < n; ++k) v.push_back(lo + (hi - lo) * k / (n - 1));
  return v;
}

// Values as f32 stores them, so references start from what the graph reads.
std::vector<double> as_f32(std::vector<double> v) {
  for (double& x : v) x = static_cast<float>(x);
  return v;
}

// NumPy broadcasting in the test, independent of the runtime's.
Shape bshape(const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t k = 0; k < r; ++k) {
    int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    out[k] = std::max(da, db);
  }
  return out;
}
int64_t bindex(const Shape& in, const Shape& out, int64_t flat) {
  std::vector<int64_t> pos(out.size());
  for (int k = static_cast<int>(out.size()) - 1; k >= 0; --k) {
    pos[k] = flat % out[k];
    flat /= out[k];
  }
  int64_t idx = 0;
  size_t off = out.size() - in.size();
  for (size_t k = 0; k < in.size(); ++k) idx = idx * in[k] + (in[k] == 1 ? 0 : pos[off + k]);
  return idx;
}

int count_op(const Graph& g, OpType t) {
  int n = 0;
  for (const Node& node : g.nodes())
    if (!node.dead && node.op == t) ++n;
  return n;
}

// A one-input, one-output model: y = op(x) over f32[n].
Model unary_model(const std::string& op, int n, int opset = 17) {
  Model m(opset);
  m.input("x", TP::FLOAT, {n});
  m.node(op, {"x"}, {"y"}, "op");
  m.output("y");
  return m;
}

// --- shapes, dtypes, names -------------------------------------------------------------------

TEST(onnx, ShapesDtypesAndNames) {
  Model m;
  m.input("x", TP::FLOAT, {2, 3});
  m.input("b", TP::FLOAT, {3});
  m.input("i", TP::INT64, {4});
  m.node("Add", {"x", "b"}, {"s"}, "add");
  m.node("Relu", {"s"}, {"y"}, "relu");
  m.node("Less", {"x", "b"}, {"lt"});
  m.node("Cast", {"i"}, {"fi"});
  set_i(m.g->mutable_node(3)[0], "to", TP::FLOAT);
  m.output("y", TP::FLOAT, {2, 3});
  m.output("lt");
  m.output("fi");
  m.output("x");
  Graph g = import(m);
  EXPECT_EQ(g.name, "test");
  ASSERT_EQ(g.inputs().size(), 3u);
  EXPECT_EQ(g.value(g.inputs()[0]).name, "x");
  EXPECT_EQ(g.value(g.inputs()[2]).dtype, DType::I64);
  ASSERT_EQ(g.outputs().size(), 4u);
  const Value& y = g.value(g.outputs()[0]);
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.shape, (Shape{2, 3}));
  EXPECT_EQ(y.dtype, DType::F32);
  EXPECT_EQ(g.value(g.outputs()[1]).dtype, DType::Bool);
  EXPECT_EQ(g.value(g.outputs()[1]).shape, (Shape{2, 3}));
  EXPECT_EQ(g.value(g.outputs()[2]).dtype, DType::F32);
  EXPECT_EQ(g.value(g.outputs()[2]).name, "fi");
  EXPECT_EQ(g.outputs()[3], g.inputs()[0]);    // an output that is an input
  EXPECT_TRUE(g.find_value("s").has_value());  // intermediate values keep ONNX names

  auto r =
      run(g, {tensor(DType::F32, {2, 3}, {-1, 2, -3, 4, -5, 6}),
              tensor(DType::F32, {3}, {0.5, 0.5, 10}), tensor(DType::I64, {4}, {1, -2, 3, 4})});
  expect_close({0, 2.5, 7, 4.5, 0, 16}, r[0].v);
  expect_close({1, 0, 1, 0, 1, 1}, r[1].v);
  expect_close({1, -2, 3, 4}, r[2].v);
  expect_close({-1, 2, -3, 4, -5, 6}, r[3].v);
}

TEST(onnx, FileNamesAndSymbolicDims) {
  EXPECT_TRUE(is_onnx_path("a/b/model.onnx"));
  EXPECT_TRUE(is_onnx_path("M.ONNX"));
  EXPECT_FALSE(is_onnx_path("graph.json"));

  Model m;
  auto& vi = m.input("x", TP::FLOAT, {0, 3});
  vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  m.node("Neg", {"x"}, {"y"});
  m.output("y");
  EXPECT_EQ(import_error(m),
            "m.onnx: input 'x': dimension 0 is symbolic ('batch') and no size is given: not "
            "supported (hotfuse needs static shapes)");
  OnnxImportOptions opt;
  opt.dims["batch"] = 5;
  Graph g = import(m, opt);
  EXPECT_EQ(g.value(g.inputs()[0]).shape, (Shape{5, 3}));
}

// --- element-wise numerics ---------------------------------------------------------------------

struct UnaryCase {
  const char* op;
  double lo, hi;
  std::function<double(double)> ref;
  std::function<void(pb::NodeProto&)> attrs = nullptr;
};

TEST(onnx, UnaryOpsMatchTheirDefinitions) {
  auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  const double selu_a = 1.67326319217681884765625, selu_g = 1.05070102214813232421875;
  std::vector<UnaryCase> cases = {
      {"Sqrt", 0.01, 9, [](double x) { return std::sqrt(x); }},
      {"Exp", -5, 5, [](double x) { return std::exp(x); }},
      {"Log", 0.01, 10, [](double x) { return std::log(x); }},
      {"Tanh", -4, 4, [](double x) { return std::tanh(x); }},
      {"Sigmoid", -8, 8, sigmoid},
      {"Relu", -2, 2, [](double x) { return x > 0 ? x : 0; }},
      {"Erf", -3, 3, [](double x) { return std::erf(x); }},
      {"Abs", -2, 2, [](double x) { return std::fabs(x); }},
      {"Neg", -2, 2, [](double x) { return -x; }},
      {"Reciprocal", 0.1, 4, [](double x) { return 1 / x; }},
      {"Floor", -3.3, 3.3, [](double x) { return std::floor(x); }},
      {"Ceil", -3.3, 3.3, [](double x) { return std::ceil(x); }},
      {"Sin", -3, 3, [](double x) { return std::sin(x); }},
      {"Cos", -3, 3, [](double x) { return std::cos(x); }},
      {"Tan", -1.2, 1.2, [](double x) { return std::tan(x); }},
      {"Asin", -0.99, 0.99, [](double x) { return std::asin(x); }},
      {"Acos", -0.99, 0.99, [](double x) { return std::acos(x); }},
      {"Atan", -5, 5, [](double x) { return std::atan(x); }},
      {"Sinh", -3, 3, [](double x) { return std::sinh(x); }},
      {"Cosh", -3, 3, [](double x) { return std::cosh(x); }},
      {"Asinh", -5, 5, [](double x) { return std::asinh(x); }},
      {"Acosh", 1.01, 6, [](double x) { return std::acosh(x); }},
      {"Atanh", -0.95, 0.95, [](double x) { return std::atanh(x); }},
      {"Sign", -2, 2, [](double x) { return double((x > 0) - (x < 0)); }},
      {"Softplus", -10, 10, [](double x) { return std::log1p(std::exp(x)); }},
      {"Softsign", -4, 4, [](double x) { return x / (1 + std::fabs(x)); }},
      {"HardSwish", -5, 5, [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }},
      {"Identity", -2, 2, [](double x) { return x; }},
      {"HardSigmoid", -5, 5, [](double x) { return std::clamp(0.3f * x + 0.4f, 0.0, 1.0); },
       [](pb::NodeProto& n) {
         set_f(n, "alpha", 0.3f);
         set_f(n, "beta", 0.4f);
       }},
      {"LeakyRelu", -2, 2, [](double x) { return x > 0 ? x : 0.1f * x; },
       [](pb::NodeProto& n) { set_f(n, "alpha", 0.1f); }},
      {"Elu", -4, 2, [](double x) { return x > 0 ? x : 0.7f * std::expm1(x); },
       [](pb::NodeProto& n) { set_f(n, "alpha", 0.7f); }},
      {"Selu", -4, 2, [&](double x) { return selu_g * (x > 0 ? x : selu_a * std::expm1(x)); }},
      {"Celu", -4, 2,
       [](double x) { return std::max(0.0, x) + std::min(0.0, 1.5 * std::expm1(x / 1.5)); },
       [](pb::NodeProto& n) { set_f(n, "alpha", 1.5f); }},
      {"ThresholdedRelu", -2, 2, [](double x) { return x > 0.5 ? x : 0; },
       [](pb::NodeProto& n) { set_f(n, "alpha", 0.5f); }},
  };
  const int n = 33;
  for (const UnaryCase& c : cases) {
    SCOPED_TRACE(c.op);
    Model m = unary_model(c.op, n);
    if (c.attrs) c.attrs(m.g->mutable_node(0)[0]);
    Graph g = import(m);
    std::vector<double> x = as_f32(linspace(c.lo, c.hi, n));
    auto r = run(g, {tensor(DType::F32, {n}, x)});
    std::vector<double> expected;
    for (double v : x) expected.push_back(c.ref(v));
    expect_close(expected, r[0].v, 2e-5, 2e-6, c.op);
  }
}

TEST(onnx, RoundIsHalfToEven) {
  std::vector<double> x = {-3.5, -2.5,       -1.5, -0.5, 0.5, 1.5, 2.5,
                           3.5,  0.49999997, -3.7, 3.7,  1e9, -0.2};
  std::vector<double> expected = {-4, -2, -2, -0.0, 0, 2, 2, 4, 0, -4, 4, 1e9, -0.0};
  for (DType t : {DType::F32, DType::F16}) {
    Model m;
    m.input("x", t == DType::F32 ? TP::FLOAT : TP::FLOAT16, {static_cast<int64_t>(x.size())});
    m.node("Round", {"x"}, {"y"});
    m.output("y");
    Graph g = import(m);
    auto r = run(g, {tensor(t, {static_cast<int64_t>(x.size())}, x)});
    std::vector<double> e = expected;
    if (t == DType::F16) {  // 0.49999997 is 0.5 in f16, a tie; 1e9 is inf
      e[8] = 0;
      e[11] = INFINITY;
    }
    expect_close(e, r[0].v, 0, 0);
  }
}

TEST(onnx, BinaryOpsBroadcastNumPyStyle) {
  Shape sa{2, 1, 4}, sb{3, 1};
  std::vector<double> a, b;
  for (int k = 0; k < 8; ++k) a.push_back((k % 5) - 2 + (k % 2) * 0.5);
  for (int k = 0; k < 3; ++k) b.push_back(k - 1.0);  // -1, 0, 1: division by zero included
  Shape so = bshape(sa, sb);
  struct Case {
    const char* op;
    std::function<double(double, double)> f;
    bool to_bool = false;
    std::function<void(pb::NodeProto&)> attrs = nullptr;
  };
  std::vector<Case> cases = {
      {"Add", [](double x, double y) { return x + y; }},
      {"Sub", [](double x, double y) { return x - y; }},
      {"Mul", [](double x, double y) { return x * y; }},
      {"Div", [](double x, double y) { return x / y; }},
      {"Max", [](double x, double y) { return std::max(x, y); }},
      {"Min", [](double x, double y) { return std::min(x, y); }},
      {"Mod", [](double x, double y) { return std::fmod(x, y); }, false,
       [](pb::NodeProto& n) { set_i(n, "fmod", 1); }},
      {"Less", [](double x, double y) { return double(x < y); }, true},
      {"LessOrEqual", [](double x, double y) { return double(x <= y); }, true},
      {"Greater", [](double x, double y) { return double(x > y); }, true},
      {"GreaterOrEqual", [](double x, double y) { return double(x >= y); }, true},
      {"Equal", [](double x, double y) { return double(x == y); }, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    Model m;
    m.input("a", TP::FLOAT, {2, 1, 4});
    m.input("b", TP::FLOAT, {3, 1});
    auto& n = m.node(c.op, {"a", "b"}, {"y"});
    if (c.attrs) c.attrs(n);
    m.output("y");
    Graph g = import(m);
    const Value& y = g.value(g.outputs()[0]);
    EXPECT_EQ(y.shape, so);
    EXPECT_EQ(y.dtype, c.to_bool ? DType::Bool : DType::F32);
    auto r = run(g, {tensor(DType::F32, sa, a), tensor(DType::F32, sb, b)});
    std::vector<double> e;
    for (int64_t i = 0; i < numel(so); ++i)
      e.push_back(c.f(a[bindex(sa, so, i)], b[bindex(sb, so, i)]));
    expect_close(e, r[0].v, 1e-6, 0, c.op);
  }
}

TEST(onnx, PowWhereClipAndVariadics) {
  Model m(13);
  m.input("x", TP::FLOAT, {2, 3});
  m.input("e", TP::FLOAT, {3});
  m.input("c", TP::BOOL, {2, 1});
  m.init_floats("two", {}, {2.0f});
  m.init_floats("half", {1}, {0.5f});
  m.init_floats("lo", {}, {-0.5f});
  m.init_floats("hi", {}, {1.5f});
  m.node("Pow", {"x", "e"}, {"p"});     // run-time exponent: POW
  m.node("Pow", {"x", "two"}, {"p2"});  // constant exponent: PowC
  m.node("Abs", {"x"}, {"ax"});
  m.node("Pow", {"ax", "half"}, {"ph"});
  m.node("Where", {"c", "x", "e"}, {"w"});
  m.node("Clip", {"x", "lo", "hi"}, {"cl"});
  m.node("Clip", {"x", "", "hi"}, {"cmax"});
  m.node("Sum", {"x", "e", "x"}, {"sum"});
  m.node("Mean", {"x", "e"}, {"mean"});
  m.node("Max", {"x", "e", "two"}, {"max3"});
  for (const char* o : {"p", "p2", "ph", "w", "cl", "cmax", "sum", "mean", "max3"}) m.output(o);
  Graph g = import(m);
  EXPECT_EQ(g.value(g.outputs()[1]).shape, (Shape{2, 3}));
  EXPECT_EQ(g.value(g.outputs()[2]).shape, (Shape{2, 3}));  // [2,3] ^ [1]
  EXPECT_GE(count_op(g, OpType::PowC), 2);
  std::vector<double> x = {0.5, 1.5, 2.5, -1, 3, 0.25}, e = {2, 0.5, -1}, c = {1, 0};
  auto r = run(g, {tensor(DType::F32, {2, 3}, x), tensor(DType::F32, {3}, e),
                   tensor(DType::Bool, {2, 1}, c)});
  std::vector<double> p, p2, ph, w, cl, cmax, sum, mean, max3;
  for (int i = 0; i < 6; ++i) {
    double ev = e[i % 3];
    p.push_back(std::pow(x[i], ev));
    p2.push_back(x[i] * x[i]);
    ph.push_back(std::sqrt(std::fabs(x[i])));
    w.push_back(c[i / 3] ? x[i] : ev);
    cl.push_back(std::clamp(x[i], -0.5, 1.5));
    cmax.push_back(std::min(x[i], 1.5));
    sum.push_back(2 * x[i] + ev);
    mean.push_back((x[i] + ev) / 2);
    max3.push_back(std::max({x[i], ev, 2.0}));
  }
  expect_close(p, r[0].v, 1e-6, 0, "Pow");
  expect_close(p2, r[1].v, 1e-6, 0, "Pow const");
  expect_close(ph, r[2].v, 1e-6, 0, "Pow 0.5");
  expect_close(w, r[3].v, 0, 0, "Where");
  expect_close(cl, r[4].v, 0, 0, "Clip");
  expect_close(cmax, r[5].v, 0, 0, "Clip max only");
  expect_close(sum, r[6].v, 1e-6, 0, "Sum");
  expect_close(mean, r[7].v, 1e-6, 0, "Mean");
  expect_close(max3, r[8].v, 0, 0, "Max");
}

TEST(onnx, ClipWithAttributesInOldOpsets) {
  Model m(9);
  m.input("x", TP::FLOAT, {4});
  auto& n = m.node("Clip", {"x"}, {"y"});
  set_f(n, "min", -1);
  set_f(n, "max", 2);
  m.output("y");
  auto r = run(import(m), {tensor(DType::F32, {4}, {-3, 0.5, 1.5, 7})});
  expect_close({-1, 0.5, 1.5, 2}, r[0].v, 0, 0);
}

TEST(onnx, IntegerAndLogicOps) {
  Model m;
  m.input("a", TP::INT32, {6});
  m.input("b", TP::INT32, {6});
  m.input("p", TP::BOOL, {4});
  m.input("q", TP::BOOL, {4});
  m.node("Div", {"a", "b"}, {"div"});
  m.node("Mod", {"a", "b"}, {"mod"});  // fmod=0: the sign of the divisor
  set_i(m.node("Mod", {"a", "b"}, {"fmod"}), "fmod", 1);
  m.node("Sub", {"a", "b"}, {"sub"});
  m.node("Abs", {"a"}, {"abs"});
  m.node("And", {"p", "q"}, {"and"});
  m.node("Or", {"p", "q"}, {"or"});
  m.node("Xor", {"p", "q"}, {"xor"});
  m.node("Not", {"p"}, {"not"});
  m.node("Equal", {"p", "q"}, {"eqb"});
  m.node("Equal", {"a", "b"}, {"eqi"});
  m.node("Where", {"p", "p", "q"}, {"wb"});
  set_i(m.node("Cast", {"a"}, {"af"}), "to", TP::FLOAT);
  for (const char* o :
       {"div", "mod", "fmod", "sub", "abs", "and", "or", "xor", "not", "eqb", "eqi", "wb", "af"})
    m.output(o);
  Graph g = import(m);
  std::vector<double> a = {7, -7, 7, -7, 0, 6}, b = {2, 2, -2, -2, 3, 6};
  std::vector<double> p = {0, 0, 1, 1}, q = {0, 1, 0, 1};
  auto r = run(g, {tensor(DType::I32, {6}, a), tensor(DType::I32, {6}, b),
                   tensor(DType::Bool, {4}, p), tensor(DType::Bool, {4}, q)});
  expect_close({3, -3, -3, 3, 0, 1}, r[0].v, 0, 0, "Div truncates");
  expect_close({1, 1, -1, -1, 0, 0}, r[1].v, 0, 0, "Mod");
  expect_close({1, -1, 1, -1, 0, 0}, r[2].v, 0, 0, "Mod fmod=1");
  expect_close({5, -9, 9, -5, -3, 0}, r[3].v, 0, 0, "Sub");
  expect_close({7, 7, 7, 7, 0, 6}, r[4].v, 0, 0, "Abs");
  expect_close({0, 0, 0, 1}, r[5].v, 0, 0, "And");
  expect_close({0, 1, 1, 1}, r[6].v, 0, 0, "Or");
  expect_close({0, 1, 1, 0}, r[7].v, 0, 0, "Xor");
  expect_close({1, 1, 0, 0}, r[8].v, 0, 0, "Not");
  expect_close({1, 0, 0, 1}, r[9].v, 0, 0, "Equal bool");
  expect_close({0, 0, 0, 0, 0, 1}, r[10].v, 0, 0, "Equal int");
  expect_close({0, 1, 1, 1}, r[11].v, 0, 0, "Where bool");
  EXPECT_EQ(r[11].dtype, DType::Bool);
  expect_close(a, r[12].v, 0, 0, "Cast");
}

TEST(onnx, BitShiftOnBytes) {
  Model m;
  m.input("a", TP::UINT8, {3});
  m.input("s", TP::UINT8, {3});
  set_s(m.node("BitShift", {"a", "s"}, {"l"}), "direction", "LEFT");
  set_s(m.node("BitShift", {"a", "s"}, {"r"}), "direction", "RIGHT");
  m.output("l");
  m.output("r");
  auto r =
      run(import(m), {tensor(DType::U8, {3}, {1, 200, 255}), tensor(DType::U8, {3}, {3, 1, 4})});
  expect_close({8, 144, 240}, r[0].v, 0, 0);
  expect_close({0, 100, 15}, r[1].v, 0, 0);
}

TEST(onnx, IsNanIsInfAndCastLike) {
  Model m;
  m.input("x", TP::FLOAT, {5});
  m.input("i", TP::INT64, {5});
  m.node("IsNaN", {"x"}, {"nan"});
  m.node("IsInf", {"x"}, {"inf"});
  set_i(m.node("IsInf", {"x"}, {"pinf"}), "detect_negative", 0);
  m.node("CastLike", {"i", "x"}, {"il"});
  for (const char* o : {"nan", "inf", "pinf", "il"}) m.output(o);
  auto r = run(import(m), {tensor(DType::F32, {5}, {1, NAN, INFINITY, -INFINITY, 0}),
                           tensor(DType::I64, {5}, {1, 2, 3, -4, 5})});
  expect_close({0, 1, 0, 0, 0}, r[0].v, 0, 0);
  expect_close({0, 0, 1, 1, 0}, r[1].v, 0, 0);
  expect_close({0, 0, 1, 0, 0}, r[2].v, 0, 0);
  EXPECT_EQ(r[3].dtype, DType::F32);
  expect_close({1, 2, 3, -4, 5}, r[3].v, 0, 0);
}

// --- reductions and normalisations ---------------------------------------------------------

TEST(onnx, Reductions) {
  Shape s{2, 3, 4};
  std::vector<double> x;
  for (int k = 0; k < 24; ++k) x.push_back(static_cast<float>(0.1 * k - 1.1));
  // Reference over axis 1 (the middle one).
  auto over_axis1 = [&](std::function<double(const std::vector<double>&)> f) {
    std::vector<double> out;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k) {
        std::vector<double> v;
        for (int j = 0; j < 3; ++j) v.push_back(x[(i * 3 + j) * 4 + k]);
        out.push_back(f(v));
      }
    return out;
  };
  auto sum = [](const std::vector<double>& v) {
    double s = 0;
    for (double e : v) s += e;
    return s;
  };
  struct Case {
    const char* op;
    std::function<double(const std::vector<double>&)> f;
  };
  std::vector<Case> cases = {
      {"ReduceSum", sum},
      {"ReduceMean", [&](const std::vector<double>& v) { return sum(v) / v.size(); }},
      {"ReduceMax",
       [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }},
      {"ReduceMin",
       [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }},
      {"ReduceProd",
       [](const std::vector<double>& v) {
         double p = 1;
         for (double e : v) p *= e;
         return p;
       }},
      {"ReduceSumSquare",
       [](const std::vector<double>& v) {
         double s = 0;
         for (double e : v) s += e * e;
         return s;
       }},
      {"ReduceL1",
       [](const std::vector<double>& v) {
         double s = 0;
         for (double e : v) s += std::fabs(e);
         return s;
       }},
      {"ReduceL2",
       [](const std::vector<double>& v) {
         double s = 0;
         for (double e : v) s += e * e;
         return std::sqrt(s);
       }},
      {"ReduceLogSumExp",
       [](const std::vector<double>& v) {
         double s = 0;
         for (double e : v) s += std::exp(e);
         return std::log(s);
       }},
  };
  for (int opset : {11, 13}) {
    for (const Case& c : cases) {
      for (int keep : {0, 1}) {
        SCOPED_TRACE(std::string(c.op) + " opset " + std::to_string(opset) + " keepdims " +
                     std::to_string(keep));
        Model m(opset);
        m.input("x", TP::FLOAT, {2, 3, 4});
        pb::NodeProto* n;
        if (opset >= 13 && std::string(c.op) == "ReduceSum") {
          m.init_int64s("axes", {1}, {-2});
          n = &m.node(c.op, {"x", "axes"}, {"y"});
        } else {
          n = &m.node(c.op, {"x"}, {"y"});
          set_ints(*n, "axes", {1});
        }
        set_i(*n, "keepdims", keep);
        m.output("y");
        Graph g = import(m);
        EXPECT_EQ(g.value(g.outputs()[0]).shape, keep ? Shape({2, 1, 4}) : Shape({2, 4}));
        auto r = run(g, {tensor(DType::F32, s, x)});
        expect_close(over_axis1(c.f), r[0].v, 1e-5, 1e-6, c.op);
      }
    }
  }
  // No axes: everything; ReduceSum 13 with noop_with_empty_axes: the input.
  Model all(13);
  all.input("x", TP::FLOAT, {2, 3, 4});
  set_i(all.node("ReduceMean", {"x"}, {"m"}), "keepdims", 0);
  set_i(all.node("ReduceSum", {"x"}, {"same"}), "noop_with_empty_axes", 1);
  all.output("m");
  all.output("same");
  Graph g = import(all);
  EXPECT_EQ(g.value(g.outputs()[0]).shape, Shape{});
  EXPECT_EQ(g.outputs()[1], g.inputs()[0]);
  auto r = run(g, {tensor(DType::F32, s, x)});
  expect_close({sum(x) / 24}, r[0].v, 1e-5, 1e-6);
}

std::vector<double> softmax_ref(const std::vector<double>& x, int rows, int cols, bool log) {
  std::vector<double> out;
  for (int r = 0; r < rows; ++r) {
    double mx = -INFINITY, s = 0;
    for (int c = 0; c < cols; ++c) mx = std::max(mx, x[r * cols + c]);
    for (int c = 0; c < cols; ++c) s += std::exp(x[r * cols + c] - mx);
    for (int c = 0; c < cols; ++c)
      out.push_back(log ? x[r * cols + c] - mx - std::log(s) : std::exp(x[r * cols + c] - mx) / s);
  }
  return out;
}

TEST(onnx, SoftmaxAndLogSoftmax) {
  std::vector<double> x;
  for (int k = 0; k < 24; ++k) x.push_back(static_cast<float>(std::sin(k * 1.3) * 4));
  for (bool log : {false, true}) {
    const char* op = log ? "LogSoftmax" : "Softmax";
    // Opset 13: the last axis. Opset 11, axis 1: coerced to [2, 12], rows of 12.
    for (int opset : {13, 11}) {
      SCOPED_TRACE(std::string(op) + " opset " + std::to_string(opset));
      Model m(opset);
      m.input("x", TP::FLOAT, {2, 3, 4});
      auto& n = m.node(op, {"x"}, {"y"});
      if (opset == 11) set_i(n, "axis", 1);
      m.output("y");
      auto r = run(import(m), {tensor(DType::F32, {2, 3, 4}, x)});
      auto e = opset == 13 ? softmax_ref(x, 6, 4, log) : softmax_ref(x, 2, 12, log);
      expect_close(e, r[0].v, 1e-5, 1e-6, op);
    }
  }
}

// The hand-written reference: per row over the axes from `axis` on, in double.
void layernorm_ref(const std::vector<double>& x, const std::vector<double>& scale,
                   const std::vector<double>& bias, int rows, int cols, double eps,
                   std::vector<double>& y, std::vector<double>& mean, std::vector<double>& inv) {
  for (int r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int c = 0; c < cols; ++c) m += x[r * cols + c];
    m /= cols;
    for (int c = 0; c < cols; ++c) v += (x[r * cols + c] - m) * (x[r * cols + c] - m);
    v /= cols;
    double is = 1 / std::sqrt(v + eps);
    mean.push_back(m);
    inv.push_back(is);
    for (int c = 0; c < cols; ++c)
      y.push_back((x[r * cols + c] - m) * is * scale[c] + (bias.empty() ? 0 : bias[c]));
  }
}

TEST(onnx, LayerNormalizationDecomposition) {
  const int rows = 6, cols = 16;
  std::vector<double> x, scale, bias;
  for (int k = 0; k < rows * cols; ++k)
    x.push_back(static_cast<float>(std::cos(k * 0.7) * 3 + k % 5));
  for (int c = 0; c < cols; ++c) {
    scale.push_back(static_cast<float>(0.5 + 0.1 * c));
    bias.push_back(static_cast<float>(0.25 * c - 1));
  }
  for (DType t : {DType::F32, DType::F16}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    int elem = t == DType::F32 ? TP::FLOAT : TP::FLOAT16;
    Model m(17);
    m.input("x", elem, {2, 3, cols});
    m.input("scale", elem, {cols});
    m.input("bias", elem, {cols});
    auto& n = m.node("LayerNormalization", {"x", "scale", "bias"}, {"y", "mean", "inv"}, "ln");
    set_i(n, "axis", -1);
    set_f(n, "epsilon", 1e-3f);
    m.output("y");
    m.output("mean");
    m.output("inv");
    Graph g = import(m);
    // Decomposed into the op table: two reductions, no opaque op.
    EXPECT_EQ(count_op(g, OpType::Reduce), 2);
    EXPECT_EQ(g.value(g.outputs()[0]).dtype, t);
    EXPECT_EQ(g.value(g.outputs()[1]).dtype, DType::F32);  // stash_type 1: f32 statistics
    EXPECT_EQ(g.value(g.outputs()[1]).shape, (Shape{2, 3, 1}));
    std::vector<double> xs = x, ss = scale, bs = bias;
    if (t == DType::F16)
      for (auto* v : {&xs, &ss, &bs})
        for (double& e : *v) e = to_f32(to_f16(static_cast<float>(e)));
    auto r = run(g, {tensor(t, {2, 3, cols}, xs), tensor(t, {cols}, ss), tensor(t, {cols}, bs)});
    std::vector<double> y, mean, inv;
    layernorm_ref(xs, ss, bs, rows, cols, static_cast<float>(1e-3), y, mean, inv);
    double tol = t == DType::F32 ? 1e-5 : 2e-3;
    expect_close(y, r[0].v, tol, tol, "Y");
    expect_close(mean, r[1].v, 1e-5, 1e-6, "Mean");
    expect_close(inv, r[2].v, 1e-5, 1e-6, "InvStdDev");
  }
  // Over the last two axes, without bias, constant scale.
  Model m(17);
  m.input("x", TP::FLOAT, {2, 3, 4});
  std::vector<float> sc(12);
  for (int k = 0; k < 12; ++k) sc[k] = 1 + 0.125f * k;
  m.init_floats("scale", {3, 4}, sc);
  set_i(m.node("LayerNormalization", {"x", "scale"}, {"y"}), "axis", 1);
  m.output("y");
  std::vector<double> x2(x.begin(), x.begin() + 24);
  auto r = run(import(m), {tensor(DType::F32, {2, 3, 4}, x2)});
  std::vector<double> y, mean, inv;
  layernorm_ref(x2, std::vector<double>(sc.begin(), sc.end()), {}, 2, 12, static_cast<float>(1e-5),
                y, mean, inv);
  expect_close(y, r[0].v, 1e-5, 1e-5);
}

TEST(onnx, BatchNormalizationInference) {
  const int N = 2, C = 3, H = 2, W = 2;
  std::vector<double> x;
  for (int k = 0; k < N * C * H * W; ++k) x.push_back(static_cast<float>(k * 0.37 - 3));
  std::vector<float> scale = {0.5, 1, 2}, bias = {0, -1, 0.25}, mean = {0.1, -0.2, 1},
                     var = {1, 0.5, 4};
  std::vector<double> expected;
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c)
      for (int i = 0; i < H * W; ++i) {
        double v = x[(n * C + c) * H * W + i];
        expected.push_back((v - mean[c]) / std::sqrt(var[c] + 1e-5f) * scale[c] + bias[c]);
      }
  for (bool constant : {true, false}) {
    SCOPED_TRACE(constant ? "constant parameters" : "run-time parameters");
    Model m(15);
    m.input("x", TP::FLOAT, {N, C, H, W});
    std::vector<HostTensor> in = {tensor(DType::F32, {N, C, H, W}, x)};
    const char* names[] = {"scale", "B", "mean", "var"};
    const std::vector<float>* vals[] = {&scale, &bias, &mean, &var};
    for (int k = 0; k < 4; ++k) {
      if (constant) {
        m.init_floats(names[k], {C}, *vals[k]);
      } else {
        m.input(names[k], TP::FLOAT, {C});
        in.push_back(
            tensor(DType::F32, {C}, std::vector<double>(vals[k]->begin(), vals[k]->end())));
      }
    }
    m.node("BatchNormalization", {"x", "scale", "B", "mean", "var"}, {"y"}, "bn");
    m.output("y");
    Graph g = import(m);
    if (constant) {
      EXPECT_EQ(count_op(g, OpType::Elemwise), 1);  // one FUSE_MUL_ADD3
    }
    auto r = run(g, in);
    expect_close(expected, r[0].v, 1e-5, 1e-5);
  }
}

// --- layout ops and matrix products -------------------------------------------------------------

TEST(onnx, LayoutOpsOnRunTimeValues) {
  Model m(13);
  m.input("x", TP::FLOAT, {2, 3, 4});
  set_ints(m.node("Transpose", {"x"}, {"t"}), "perm", {2, 0, 1});
  m.init_int64s("shape", {3}, {0, -1, 2});
  m.node("Reshape", {"x", "shape"}, {"r"});
  set_i(m.node("Flatten", {"x"}, {"f"}), "axis", 2);
  m.init_int64s("ax0", {2}, {0, -1});
  m.node("Unsqueeze", {"x", "ax0"}, {"u"});
  m.init_int64s("ax1", {1}, {0});
  m.node("Squeeze", {"u", "ax1"}, {"s"});
  m.init_int64s("target", {4}, {2, 2, 3, 1});
  m.input("b", TP::FLOAT, {3, 1});
  m.node("Expand", {"b", "target"}, {"e"});
  for (const char* o : {"t", "r", "f", "u", "s", "e"}) m.output(o);
  Graph g = import(m);
  auto shape = [&](int k) { return g.value(g.outputs()[k]).shape; };
  EXPECT_EQ(shape(0), (Shape{4, 2, 3}));
  EXPECT_EQ(shape(1), (Shape{2, 6, 2}));
  EXPECT_EQ(shape(2), (Shape{6, 4}));
  EXPECT_EQ(shape(3), (Shape{1, 2, 3, 4, 1}));
  EXPECT_EQ(shape(4), (Shape{2, 3, 4, 1}));
  EXPECT_EQ(shape(5), (Shape{2, 2, 3, 1}));
  std::vector<double> x;
  for (int k = 0; k < 24; ++k) x.push_back(k);
  auto r = run(g, {tensor(DType::F32, {2, 3, 4}, x), tensor(DType::F32, {3, 1}, {7, 8, 9})});
  std::vector<double> t;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) t.push_back(x[(i * 3 + j) * 4 + k]);
  expect_close(t, r[0].v, 0, 0, "Transpose");
  expect_close(x, r[1].v, 0, 0, "Reshape");
  expect_close(x, r[4].v, 0, 0, "Squeeze");
  expect_close({7, 8, 9, 7, 8, 9, 7, 8, 9, 7, 8, 9}, r[5].v, 0, 0, "Expand");
}

TEST(onnx, MatMulAndGemm) {
  auto mm = [](const std::vector<double>& a, const std::vector<double>& b, int M, int K, int N) {
    std::vector<double> c(M * N, 0);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        for (int k = 0; k < K; ++k) c[i * N + j] += a[i * K + k] * b[k * N + j];
    return c;
  };
  std::vector<double> a, b, v;
  for (int k = 0; k < 6; ++k) a.push_back(k * 0.5 - 1);    // [2, 3]
  for (int k = 0; k < 12; ++k) b.push_back(1 - k * 0.25);  // [3, 4]
  v = {1, -2, 0.5};                                        // [3]
  Model m;
  m.input("a", TP::FLOAT, {2, 3});
  m.input("b", TP::FLOAT, {3, 4});
  m.input("v", TP::FLOAT, {3});
  m.input("bt", TP::FLOAT, {4, 3});
  m.input("c", TP::FLOAT, {4});
  m.node("MatMul", {"a", "b"}, {"ab"});
  m.node("MatMul", {"v", "b"}, {"vb"});  // [3] x [3,4] -> [4]
  m.node("MatMul", {"a", "v"}, {"av"});  // [2,3] x [3] -> [2]
  auto& gm = m.node("Gemm", {"a", "bt", "c"}, {"gemm"});
  set_i(gm, "transB", 1);
  set_f(gm, "alpha", 2);
  set_f(gm, "beta", 0.5);
  for (const char* o : {"ab", "vb", "av", "gemm"}) m.output(o);
  Graph g = import(m);
  EXPECT_EQ(g.value(g.outputs()[1]).shape, (Shape{4}));
  EXPECT_EQ(g.value(g.outputs()[2]).shape, (Shape{2}));
  std::vector<double> bt(12), c = {1, 2, 3, 4};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) bt[j * 3 + i] = b[i * 4 + j];
  auto r = run(
      g, {tensor(DType::F32, {2, 3}, a), tensor(DType::F32, {3, 4}, b), tensor(DType::F32, {3}, v),
          tensor(DType::F32, {4, 3}, bt), tensor(DType::F32, {4}, c)});
  expect_close(mm(a, b, 2, 3, 4), r[0].v, 1e-6, 1e-6, "MatMul");
  expect_close(mm(v, b, 1, 3, 4), r[1].v, 1e-6, 1e-6, "vector x matrix");
  expect_close(mm(a, v, 2, 3, 1), r[2].v, 1e-6, 1e-6, "matrix x vector");
  std::vector<double> gemm = mm(a, b, 2, 3, 4);
  for (int i = 0; i < 8; ++i) gemm[i] = 2 * gemm[i] + 0.5 * c[i % 4];
  expect_close(gemm, r[3].v, 1e-6, 1e-6, "Gemm");

  // Batched, batch axes broadcast.
  Model bm;
  bm.input("a", TP::FLOAT, {2, 1, 2, 3});
  bm.input("b", TP::FLOAT, {3, 3, 4});
  bm.node("MatMul", {"a", "b"}, {"y"});
  bm.output("y");
  Graph bg = import(bm);
  EXPECT_EQ(bg.value(bg.outputs()[0]).shape, (Shape{2, 3, 2, 4}));
}

// --- constant folding -------------------------------------------------------------------------

TEST(onnx, ShapeSubgraphsAreFoldedToStaticReshapes) {
  // y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): PyTorch's way of writing
  // x.view(x.size(0), -1).
  Model m(13);
  m.input("x", TP::FLOAT, {2, 3, 4});
  m.node("Shape", {"x"}, {"shp"});
  m.init_int64s("zero", {}, {0});
  m.node("Gather", {"shp", "zero"}, {"n"});
  m.init_int64s("axes0", {1}, {0});
  m.node("Unsqueeze", {"n", "axes0"}, {"n1"});
  fill_int64s(set_t(m.node("Constant", {}, {"minus1"}), "value"), {1}, {-1});
  set_i(m.node("Concat", {"n1", "minus1"}, {"target"}), "axis", 0);
  m.node("Reshape", {"x", "target"}, {"y"});
  // A second target, [4, 3, 2], through Range, Sub, Equal, Where, Slice, Cast, Size, Div,
  // Mul, ConstantOfShape and Squeeze.
  m.init_int64s("r0", {}, {0});
  m.init_int64s("r1", {}, {3});
  m.init_int64s("r2", {}, {1});
  m.init_int64s("four", {}, {4});
  m.node("Range", {"r0", "r1", "r2"}, {"range"});  // [0, 1, 2]
  m.node("Sub", {"four", "range"}, {"rev"});       // [4, 3, 2]
  m.node("Equal", {"range", "r2"}, {"is1"});       // [F, T, F]
  m.init_int64s("s0", {1}, {1});
  m.init_int64s("s1", {1}, {2});
  m.node("Slice", {"shp", "s0", "s1"}, {"mid"});  // [3]
  set_i(m.node("Cast", {"mid"}, {"midf"}), "to", TP::FLOAT);
  set_i(m.node("Cast", {"midf"}, {"midi"}), "to", TP::INT64);
  m.node("Squeeze", {"midi", "axes0"}, {"mid0"});   // 3
  m.node("Where", {"is1", "mid0", "rev"}, {"t3"});  // [4, 3, 2]
  m.node("Size", {"x"}, {"size"});
  m.node("Div", {"size", "size"}, {"one"});
  m.init_int64s("len", {1}, {3});
  auto& cos = m.node("ConstantOfShape", {"len"}, {"ones"});
  fill_int64s(set_t(cos, "value"), {1}, {1});
  m.node("Mul", {"t3", "ones"}, {"t4"});
  m.node("Mul", {"t4", "one"}, {"t5"});
  m.node("Reshape", {"x", "t5"}, {"y2"});
  m.output("y");
  m.output("y2");
  Graph g = import(m);
  EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{2, 12}));
  EXPECT_EQ(g.value(g.outputs()[1]).shape, (Shape{4, 3, 2}));
  // Nothing but the two Reshapes is left to run.
  EXPECT_EQ(g.live_node_count(), 2);
  EXPECT_EQ(count_op(g, OpType::Reshape), 2);
  std::vector<double> x;
  for (int k = 0; k < 24; ++k) x.push_back(k);
  auto r = run(g, {tensor(DType::F32, {2, 3, 4}, x)});
  expect_close(x, r[0].v, 0, 0);
  expect_close(x, r[1].v, 0, 0);
}

TEST(onnx, FoldedConstantsReachRunTimeOps) {
  // Transpose and Unsqueeze of an initializer are folded; Tile and Expand of constants too.
  Model m(11);
  m.input("x", TP::FLOAT, {2, 3});
  m.init_floats("w", {3, 2}, {1, 2, 3, 4, 5, 6});
  m.node("Transpose", {"w"}, {"wt"});  // [[1,3,5],[2,4,6]]
  m.node("Add", {"x", "wt"}, {"y"});
  m.init_floats("b", {3}, {10, 20, 30});
  set_ints(m.node("Unsqueeze", {"b"}, {"b2"}), "axes", {0});  // opset 11: attribute
  m.init_int64s("reps", {2}, {2, 1});
  m.node("Tile", {"b2", "reps"}, {"bt"});  // [2, 3]
  m.node("Mul", {"y", "bt"}, {"z"});
  m.output("z");
  Graph g = import(m);
  EXPECT_EQ(count_op(g, OpType::Dimshuffle), 0);
  auto r = run(g, {tensor(DType::F32, {2, 3}, {0, 0, 0, 1, 1, 1})});
  expect_close({10, 60, 150, 30, 100, 210}, r[0].v, 0, 0);
}

// --- initializers ----------------------------------------------------------------------------

TEST(onnx, InitializersRawTypedAndNarrowTypes) {
  Model m;
  m.input("x", TP::FLOAT, {3});
  m.init_floats("raw", {3}, {1.5f, -2, 3});
  auto& typed = m.init("typed");
  typed.set_data_type(TP::FLOAT);
  typed.add_dims(3);
  for (float v : {0.25f, 0.5f, 0.75f}) typed.add_float_data(v);
  auto& i32 = m.init("i32");
  i32.set_data_type(TP::INT32);
  i32.add_dims(3);
  for (int v : {-7, 0, 2147483647}) i32.add_int32_data(v);
  m.init_int64s("i64", {3}, {-(int64_t(1) << 40), 0, 5});
  auto& dbl = m.init("dbl");
  dbl.set_data_type(TP::DOUBLE);
  dbl.add_dims(3);
  for (double v : {0.1, -1e10, 3.0}) dbl.add_double_data(v);
  set_i(m.node("Cast", {"dbl"}, {"dblf"}), "to", TP::FLOAT);  // DOUBLE only at import time
  auto& h = m.init("h");                                      // FLOAT16 bits in int32_data
  h.set_data_type(TP::FLOAT16);
  h.add_dims(3);
  for (float v : {1.0f, -0.5f, 65504.0f}) h.add_int32_data(to_f16(v).bits);
  auto& hr = m.init("hr");  // FLOAT16 as raw_data
  hr.set_data_type(TP::FLOAT16);
  hr.add_dims(3);
  uint16_t hbits[3] = {to_f16(2.0f).bits, to_f16(0.1f).bits, to_f16(-3.0f).bits};
  hr.set_raw_data(std::string(reinterpret_cast<const char*>(hbits), sizeof hbits));
  auto& bo = m.init("bo");
  bo.set_data_type(TP::BOOL);
  bo.add_dims(3);
  for (int v : {1, 0, 1}) bo.add_int32_data(v);
  auto& u8 = m.init("u8");
  u8.set_data_type(TP::UINT8);
  u8.add_dims(3);
  u8.set_raw_data(std::string("\x00\x80\xff", 3));
  auto& i8 = m.init("i8");
  i8.set_data_type(TP::INT8);
  i8.add_dims(3);
  for (int v : {-128, 5, 127}) i8.add_int32_data(v);
  set_i(m.node("Cast", {"i8"}, {"i8f"}), "to", TP::FLOAT);
  m.node("Add", {"x", "raw"}, {"y"});
  // A graph input that is also an initializer is a constant, not an input.
  m.input("raw", TP::FLOAT, {3});
  for (const char* o : {"y", "typed", "i32", "i64", "dblf", "h", "hr", "bo", "u8", "i8f"})
    m.output(o);
  Graph g = import(m);
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.value(g.inputs()[0]).name, "x");
  auto r = run(g, {tensor(DType::F32, {3}, {1, 1, 1})});
  expect_close({2.5, -1, 4}, r[0].v, 0, 0, "raw");
  expect_close({0.25, 0.5, 0.75}, r[1].v, 0, 0, "float_data");
  EXPECT_EQ(r[2].dtype, DType::I32);
  expect_close({-7, 0, 2147483647}, r[2].v, 0, 0, "int32_data");
  EXPECT_EQ(r[3].dtype, DType::I64);
  expect_close({-1099511627776.0, 0, 5}, r[3].v, 0, 0, "int64_data");
  expect_close({static_cast<float>(0.1), -1e10, 3}, r[4].v, 0, 0, "double_data");
  EXPECT_EQ(r[5].dtype, DType::F16);
  expect_close({1, -0.5, 65504}, r[5].v, 0, 0, "f16 int32_data");
  expect_close({2, to_f32(to_f16(0.1f)), -3}, r[6].v, 0, 0, "f16 raw");
  EXPECT_EQ(r[7].dtype, DType::Bool);
  expect_close({1, 0, 1}, r[7].v, 0, 0, "bool");
  expect_close({0, 128, 255}, r[8].v, 0, 0, "u8 raw");
  expect_close({-128, 5, 127}, r[9].v, 0, 0, "int8");
}

pb::TensorProto& external(Model& m, const std::string& name, const std::string& location,
                          std::optional<int64_t> offset = {}, std::optional<int64_t> length = {}) {
  auto& t = m.init(name);
  t.set_data_type(TP::FLOAT);
  t.add_dims(3);
  t.set_data_location(TP::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    auto* e = t.add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  if (offset) kv("offset", std::to_string(*offset));
  if (length) kv("length", std::to_string(*length));
  return t;
}

std::string floats_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

TEST(onnx, ExternalData) {
  TempDir dir;
  write_file(dir.root / "weights.bin", "JUNKJUNK" + floats_bytes({1, 2, 3}) + "tail");
  write_file(dir.root / "data" / "w2.bin", floats_bytes({10, 20, 30}));
  Model m;
  m.input("x", TP::FLOAT, {3});
  external(m, "w", "weights.bin", 8, 12);
  external(m, "w2", "data/w2.bin");
  m.node("Add", {"x", "w"}, {"y"});
  m.node("Mul", {"y", "w2"}, {"z"});
  m.output("z");
  Graph g = import(m, dir);
  auto r = run(g, {tensor(DType::F32, {3}, {1, 1, 1})});
  expect_close({20, 60, 120}, r[0].v, 0, 0);
}

// A tiny model pointing at a huge (sparse) external file is refused by the memory cap from
// the declared sizes, before a byte of the file is read.
TEST(onnx, ExternalDataIsCheckedAgainstTheMemoryCapBeforeItIsRead) {
  TempDir dir;
  {
    std::ofstream(dir.root / "big.bin").put('\0');
  }
  fs::resize_file(dir.root / "big.bin", int64_t(512) << 20);  // sparse: nothing written
  Model m;
  m.input("x", TP::FLOAT, {1});
  auto& t = external(m, "w", "big.bin");
  t.set_dims(0, int64_t(128) << 20);  // 512 MiB of floats
  m.node("ReduceSum", {"w"}, {"s"});
  m.node("Add", {"x", "s"}, {"y"});
  m.output("y");
  ScopedEnv cap("HOTFUSE_MAX_BYTES", "1M");
  std::string e = "(no error)";
  try {
    import(m, dir);
  } catch (const Error& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("holding the model's 1 initializers needs 536870912 bytes, more than the limit "
                   "of 1048576 bytes (HOTFUSE_MAX_BYTES)"),
            std::string::npos)
      << e;
}

TEST(onnx, ExternalDataMustStayInsideTheModelDirectory) {
  auto error = [](const std::function<void(Model&)>& add,
                  const std::function<void(TempDir&)>& files) {
    TempDir dir;
    fs::create_directories(dir.root / "model");
    files(dir);
    Model m;
    m.input("x", TP::FLOAT, {3});
    add(m);
    m.node("Add", {"x", "w"}, {"y"});
    m.output("y");
    write_file(dir.root / "model" / "m.onnx", m.bytes());
    try {
      read_graph_onnx(dir.root / "model" / "m.onnx");
    } catch (const Error& e) {
      std::string msg = e.what();
      std::string prefix = (dir.root / "model").string() + "/";
      return msg.rfind(prefix, 0) == 0 ? msg.substr(prefix.size()) : msg;
    }
    return std::string("(no error)");
  };
  auto outside = [](TempDir& d) { write_file(d.root / "evil.bin", floats_bytes({6, 6, 6})); };
  EXPECT_EQ(
      error([](Model& m) { external(m, "w", "../evil.bin"); }, outside),
      "m.onnx: initializer 'w': external data location '../evil.bin' leaves the model's directory");
  EXPECT_EQ(error([](Model& m) { external(m, "w", "sub/../../evil.bin"); }, outside),
            "m.onnx: initializer 'w': external data location 'sub/../../evil.bin' leaves the "
            "model's directory");
  EXPECT_EQ(error([](Model& m) { external(m, "w", "/etc/passwd"); }, outside),
            "m.onnx: initializer 'w': external data location '/etc/passwd' must be a path "
            "relative to the model's directory");
  EXPECT_EQ(
      error([](Model& m) { external(m, "w", "link.bin"); },
            [](TempDir& d) {
              write_file(d.root / "evil.bin", floats_bytes({6, 6, 6}));
              fs::create_symlink(d.root / "evil.bin", d.root / "model" / "link.bin");
            }),
      "m.onnx: initializer 'w': external data location 'link.bin' leaves the model's directory");
  auto inside = [](TempDir& d) { write_file(d.root / "model" / "w.bin", floats_bytes({1, 2, 3})); };
  EXPECT_EQ(
      error([](Model& m) { external(m, "w", "missing.bin"); }, inside),
      "m.onnx: initializer 'w': external data file 'missing.bin' does not exist or is not a file");
  EXPECT_EQ(error([](Model& m) { external(m, "w", "w.bin", 4); }, inside),
            "m.onnx: initializer 'w': external data file 'w.bin' is too short: 12 bytes at "
            "offset 4, the file has 12");
  EXPECT_EQ(
      error([](Model& m) { external(m, "w", "w.bin", 0, 8); }, inside),
      "m.onnx: initializer 'w': external data 'w.bin' has length 8, the tensor needs 12 bytes");
  EXPECT_EQ(
      error([](Model& m) { external(m, "w", "w.bin", -1); }, inside),
      "m.onnx: initializer 'w': external data 'offset' must be a non-negative integer, got '-1'");
  EXPECT_EQ(error([](Model& m) { external(m, "w", "w.bin"); }, inside), "(no error)");
}

TEST(onnx, BadInitializers) {
  auto with = [](const std::function<void(Model&)>& add) {
    Model m;
    m.input("x", TP::FLOAT, {3});
    add(m);
    m.node("Add", {"x", "w"}, {"y"});
    m.output("y");
    return import_error(m);
  };
  EXPECT_EQ(with([](Model& m) {
              m.init_floats("w", {3}, {1, 2});
            }),
            "m.onnx: initializer 'w': raw_data has 8 bytes, FLOAT[3] needs 12");
  EXPECT_EQ(with([](Model& m) {
              auto& t = m.init("w");
              t.set_data_type(TP::FLOAT);
              t.add_dims(3);
              t.add_float_data(1);
            }),
            "m.onnx: initializer 'w': float_data has 1 values, the shape needs 3");
  EXPECT_EQ(with([](Model& m) {
              auto& t = m.init("w");
              t.set_data_type(TP::FLOAT);
              t.add_dims(int64_t(1) << 40);
              t.add_dims(int64_t(1) << 40);
            }),
            "m.onnx: initializer 'w': tensor has too many elements: [1099511627776,1099511627776]");
  EXPECT_EQ(with([](Model& m) {
              auto& t = m.init("w");
              t.set_data_type(TP::FLOAT);
              t.add_dims(-3);
            }),
            "m.onnx: initializer 'w': tensor has a negative dimension in [-3]");
  EXPECT_EQ(with([](Model& m) {
              auto& t = m.init("w");
              t.set_data_type(TP::STRING);
              t.add_dims(1);
              t.add_string_data("hello");
            }),
            "m.onnx: initializer 'w': element type STRING is not supported");
  EXPECT_EQ(with([](Model& m) {
              auto& t = m.init("w");
              t.set_data_type(TP::COMPLEX64);
              t.add_dims(3);
              for (int k = 0; k < 6; ++k) t.add_float_data(k);
            }),
            "m.onnx: initializer 'w': element type COMPLEX64 is not supported");
}

// --- other ops and graph structure ---------------------------------------------------------------

TEST(onnx, DropoutIdentityConstantOutputsAndDeadBranches) {
  Model m(13);
  m.input("x", TP::FLOAT, {4});
  m.node("Dropout", {"x"}, {"d", "mask"});
  m.node("Identity", {"d"}, {"y"});
  fill_floats(set_t(m.node("Constant", {}, {"k"}), "value"), {2}, {0.5f, 4});
  m.node("Conv", {"x", "x"}, {"dead"}, "conv1");  // unsupported, but nothing reads it
  m.output("y");
  m.output("mask");
  m.output("k");
  Graph g = import(m);
  EXPECT_EQ(g.outputs()[0], g.inputs()[0]);
  EXPECT_EQ(g.value(g.outputs()[1]).dtype, DType::Bool);
  EXPECT_EQ(g.value(g.outputs()[2]).name, "k");
  auto r = run(g, {tensor(DType::F32, {4}, {1, 2, 3, 4})});
  expect_close({1, 2, 3, 4}, r[0].v, 0, 0);
  expect_close({1, 1, 1, 1}, r[1].v, 0, 0);
  expect_close({0.5, 4}, r[2].v, 0, 0);
}

TEST(onnx, ErrorsNameTheFileAndTheNode) {
  {
    Model m;
    m.input("x", TP::FLOAT, {1, 3, 8, 8});
    m.input("w", TP::FLOAT, {4, 3, 3, 3});
    m.node("Relu", {"x"}, {"r"}, "relu0");
    m.node("DeformConv", {"r", "w"}, {"y"}, "deform1");
    m.output("y");
    EXPECT_EQ(import_error(m), "m.onnx: node 1 'deform1' (DeformConv): unsupported op");
  }
  {
    Model m;
    m.input("x", TP::FLOAT, {1, 3, 8, 8});
    m.node("MaxRoiPool", {"x"}, {"y"});
    m.output("y");
    EXPECT_EQ(import_error(m), "m.onnx: node 0 (MaxRoiPool): unsupported op");
  }
  {
    Model m;
    m.input("n", TP::INT64, {});
    m.init_int64s("start", {}, {0});
    m.init_int64s("step", {}, {1});
    m.node("Range", {"start", "n", "step"}, {"y"}, "g");
    m.output("y");
    EXPECT_EQ(import_error(m),
              "m.onnx: node 0 'g' (Range): unsupported op (on run-time data; "
              "Range is only folded, when its inputs are constants or their values are given "
              "with the input data (--inputs, --check))");
  }
  {
    Model m;
    m.input("x", TP::FLOAT, {4});
    m.node("FusedGemm", {"x"}, {"y"}).set_domain("com.microsoft");
    m.output("y");
    EXPECT_EQ(import_error(m),
              "m.onnx: node 0 (com.microsoft.FusedGemm): unsupported op (domain 'com.microsoft')");
  }
  for (int opset : {29}) {
    Model m(opset);
    m.input("x", TP::FLOAT, {4});
    m.node("Neg", {"x"}, {"y"});
    m.output("y");
    EXPECT_EQ(import_error(m), "m.onnx: opset " + std::to_string(opset) +
                                   " is not supported (this build reads opsets 1-28)");
  }
  {
    Model m;
    m.m.mutable_opset_import(0)->set_domain("ai.onnx.ml");
    m.input("x", TP::FLOAT, {4});
    m.node("Neg", {"x"}, {"y"});
    m.output("y");
    EXPECT_EQ(import_error(m),
              "m.onnx: imports no version of the default ONNX opset (ai.onnx); models of other "
              "domains only are not supported");
  }
  {
    Model m;
    m.input("x", TP::FLOAT, {4});
    m.node("Add", {"x"}, {"y"}, "add");
    m.output("y");
    EXPECT_EQ(import_error(m), "m.onnx: node 0 'add' (Add): input 1 is missing");
  }
  {
    Model m;
    m.input("x", TP::FLOAT, {4});
    m.node("Add", {"x", "nope"}, {"y"}, "add");
    m.output("y");
    EXPECT_EQ(import_error(m),
              "m.onnx: node 0 'add' (Add): input 'nope' is not defined before use");
  }
  {
    Model m;
    m.input("x", TP::FLOAT, {4});
    m.input("y", TP::FLOAT, {3});
    m.node("Add", {"x", "y"}, {"z"}, "add");
    m.output("z");
    std::string e = import_error(m);
    EXPECT_EQ(e.rfind("m.onnx: node 0 'add' (Add): ", 0), 0u) << e;
    EXPECT_NE(e.find("do not broadcast"), std::string::npos) << e;
  }
  {
    Model m;
    m.input("x", TP::COMPLEX128, {4});
    m.node("Neg", {"x"}, {"y"});
    m.output("y");
    EXPECT_EQ(import_error(m),
              "m.onnx: input 'x': element type COMPLEX128 is not supported "
              "(hotfuse computes in FLOAT DOUBLE FLOAT16 BFLOAT16 INT8 INT16 INT32 INT64 UINT8 "
              "UINT16 UINT32 UINT64 BOOL)");
  }
  {
    Model m;
    m.input("x", TP::FLOAT, {int64_t(1) << 40, int64_t(1) << 40});
    m.node("Neg", {"x"}, {"y"});
    m.output("y");
    EXPECT_EQ(import_error(m),
              "m.onnx: input 'x' has too many elements: [1099511627776,1099511627776]");
  }
  {
    Model m;
    m.input("x", TP::FLOAT, {4});
    m.input("sh", TP::INT64, {2});
    m.node("Reshape", {"x", "sh"}, {"y"}, "rs");
    m.output("y");
    EXPECT_EQ(import_error(m),
              "m.onnx: node 0 'rs' (Reshape): shape (input 1 'sh') must be a constant or "
              "computable at import time, or its value given with the input data (--inputs, "
              "--check): a value known only at run time is not supported (hotfuse plans "
              "static shapes)");
  }
  {
    Model m;
    m.input("x", TP::FLOAT, {4});
    m.init_int64s("sh", {2}, {3, -1});
    m.node("Reshape", {"x", "sh"}, {"y"}, "rs");
    m.output("y");
    EXPECT_EQ(import_error(m), "m.onnx: node 0 'rs' (Reshape): cannot reshape [4] to [3,-1]");
  }
  {
    Model m;
    m.input("x", TP::FLOAT, {3});
    m.node("Neg", {"x"}, {"y"});
    m.output("y", TP::FLOAT, {5});
    EXPECT_EQ(import_error(m), "m.onnx: output 'y' is declared [5] but computes [3]");
    Model m2;
    m2.input("x", TP::FLOAT, {3});
    m2.node("Neg", {"x"}, {"y"});
    m2.output("y", TP::INT64, {3});
    EXPECT_EQ(import_error(m2), "m.onnx: output 'y' is declared INT64 but computes FLOAT");
    Model m3;
    m3.input("x", TP::FLOAT, {3});
    m3.output("zz");
    EXPECT_EQ(import_error(m3), "m.onnx: output 'zz' is never computed");
  }
  {
    Model m(13);
    m.input("x", TP::FLOAT, {3});
    m.init("t").set_data_type(TP::BOOL);
    m.g->mutable_initializer(0)->add_int32_data(1);
    m.node("Dropout", {"x", "", "t"}, {"y"}, "drop");
    m.output("y");
    EXPECT_EQ(import_error(m), "m.onnx: node 0 'drop' (Dropout): unsupported op (training_mode=1 with a ratio above "
            "0: random dropout)");
  }
  {
    Model m;
    m.input("x", TP::FLOAT, {3});
    set_i(m.node("Cast", {"x"}, {"y"}, "c"), "to", TP::STRING);
    m.output("y");
    EXPECT_EQ(import_error(m),
              "m.onnx: node 0 'c' (Cast): casting to STRING is not supported "
              "(hotfuse computes in FLOAT DOUBLE FLOAT16 BFLOAT16 INT8 INT16 INT32 INT64 UINT8 "
              "UINT16 UINT32 UINT64 BOOL)");
  }
  {
    Model m;
    m.input("x", TP::FLOAT, {3});
    set_i(m.node("Neg", {"x"}, {"y"}), "axis", 1);  // harmless: unknown attributes are ignored
    m.node("Neg", {"y"}, {"y"}, "again");
    m.output("y");
    EXPECT_EQ(import_error(m), "m.onnx: node 1 'again' (Neg): output 'y' is already defined");
  }
  {
    Model m;
    m.m.clear_graph();
    EXPECT_EQ(import_error(m), "m.onnx: the model has no graph");
  }
}

TEST(onnx, BadFilesAreErrorsNotCrashes) {
  TempDir dir;
  write_file(dir.root / "garbage.onnx", "this is not a protobuf at all");
  auto message = [&](const fs::path& p) {
    try {
      read_graph_onnx(p);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message(dir.root / "garbage.onnx"),
            (dir.root / "garbage.onnx").string() +
                ": not a valid ONNX model (malformed or truncated protobuf)");
  EXPECT_EQ(message(dir.root / "missing.onnx"),
            (dir.root / "missing.onnx").string() + ": cannot open file");
  EXPECT_EQ(message(dir.root), dir.root.string() + ": is a directory, not a model file");

  // A model with a bit of everything, then every truncation of it and random corruptions:
  // each import either succeeds or throws hf::Error.
  Model m(17);
  m.input("x", TP::FLOAT, {2, 3, 4});
  m.init_floats("scale", {4}, {1, 2, 3, 4});
  m.init_floats("bias", {4}, {0, 0, 1, 1});
  m.node("LayerNormalization", {"x", "scale", "bias"}, {"ln"}, "ln");
  m.node("Shape", {"ln"}, {"shp"});
  m.init_int64s("zero", {}, {0});
  m.node("Gather", {"shp", "zero"}, {"n"});
  m.init_int64s("axes", {1}, {0});
  m.node("Unsqueeze", {"n", "axes"}, {"n1"});
  fill_int64s(set_t(m.node("Constant", {}, {"m1"}), "value"), {1}, {-1});
  set_i(m.node("Concat", {"n1", "m1"}, {"target"}), "axis", 0);
  m.node("Reshape", {"ln", "target"}, {"flat"});
  m.node("Softmax", {"flat"}, {"sm"});
  m.init_floats("w", {12, 5}, std::vector<float>(60, 0.5f));
  m.node("MatMul", {"sm", "w"}, {"mm"});
  m.init_int64s("target2", {3}, {3, 1, 1});
  m.node("Expand", {"mm", "target2"}, {"y"});  // [2,5] vs [3,1,1] -> [3,2,5]
  m.output("y");
  std::string bytes = m.bytes();
  Graph ok = parse_graph_onnx(bytes, "fuzz.onnx");
  EXPECT_EQ(ok.value(ok.outputs()[0]).shape, (Shape{3, 2, 5}));
  int errors = 0;
  for (size_t len = 0; len < bytes.size(); ++len) {
    try {
      parse_graph_onnx(bytes.substr(0, len), "fuzz.onnx");
    } catch (const Error& e) {
      ++errors;
      EXPECT_EQ(std::string(e.what()).rfind("fuzz.onnx: ", 0), 0u) << e.what();
    }
  }
  EXPECT_GT(errors, static_cast<int>(bytes.size()) / 2);
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string b = bytes;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < flips; ++k) b[rng() % b.size()] = static_cast<char>(rng() % 256);
    try {
      parse_graph_onnx(b, "fuzz.onnx");
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("fuzz.onnx: ", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace hf
