// ONNX Conv, MaxPool, AveragePool, GlobalAveragePool, Concat, Slice, Split and Gather on
// run-time data (runtime/io/onnx_lower_nn.cpp): what each becomes, with which attributes,
// hand-computed results for small cases, and the errors for what is not supported. The
// kernels themselves are checked in test_cpu_nn_ops.cpp, whole models in tests/models.cmake.
#include <gtest/gtest.h>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/executor.h"
#include "runtime/io/onnx_import.h"
#include "runtime/ir/error.h"
#include "tests/support/onnx_builder.h"

namespace hf {
namespace {

using namespace test::onnx;

Graph import(const Model& m) {
  return parse_graph_onnx(m.bytes(), "m.onnx");
}

std::string import_error(const Model& m) {
  try {
    import(m);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

const Node& only(const Graph& g, OpType t) {
  const Node* found = nullptr;
  for (const Node& n : g.nodes())
    if (!n.dead && n.op == t) {
      EXPECT_EQ(found, nullptr) << "more than one " << op_type_name(t);
      found = &n;
    }
  EXPECT_NE(found, nullptr) << "no " << op_type_name(t);
  return *found;
}

// Runs g on float inputs given as flat values; returns every output as floats.
std::vector<std::vector<float>> run(const Graph& g, const std::vector<std::vector<float>>& in) {
  cpu::CpuBackend backend;
  Executor exec(g, backend);
  std::vector<HostTensor> ts;
  std::vector<TensorView> views;
  for (size_t i = 0; i < in.size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    ts.emplace_back(v.dtype, v.shape);
    EXPECT_EQ(static_cast<int64_t>(in[i].size()), ts.back().numel());
    for (size_t k = 0; k < in[i].size(); ++k) {
      if (v.dtype == DType::I64)
        ts.back().as<int64_t>()[k] = static_cast<int64_t>(in[i][k]);
      else
        ts.back().as<float>()[k] = in[i][k];
    }
    views.push_back(ts.back().view());
  }
  std::vector<std::vector<float>> res;
  for (const TensorView& t : exec.run(views))
    res.emplace_back(t.as<float>(), t.as<float>() + t.numel());
  return res;
}

TEST(OnnxNn, ConvWithBiasGroupsAndAutoPad) {
  auto model = [](const char* auto_pad) {
    Model m;
    m.input("x", TP::FLOAT, {1, 2, 3, 3});
    m.init_floats("w", {2, 1, 2, 2}, {1, 0, 0, 1, 0, 1, 1, 0});  // depthwise 2x2 per channel
    m.init_floats("b", {2}, {10, 20});
    auto& n = m.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
    set_i(n, "group", 2);
    set_s(n, "auto_pad", auto_pad);
    m.output("y");
    return m;
  };
  Graph g = import(model("SAME_UPPER"));
  const Node& c = only(g, OpType::Conv);
  EXPECT_EQ(c.attr_ints("pads"), (std::vector<int64_t>{0, 0, 1, 1}));  // odd padding at the end
  EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{1, 2, 3, 3}));
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 1, 1, 2, 2, 2, 3, 3, 3};
  // channel 0: x[i][j] + x[i+1][j+1] + 10; channel 1: x[i][j+1] + x[i+1][j] + 20; zeros
  // outside.
  std::vector<float> expect = {16, 18, 13, 22, 24, 16, 17, 18, 19,
                               23, 23, 22, 25, 25, 23, 23, 23, 20};
  EXPECT_EQ(run(g, {x})[0], expect);
  EXPECT_EQ(only(import(model("SAME_LOWER")), OpType::Conv).attr_ints("pads"),
            (std::vector<int64_t>{1, 1, 0, 0}));
  Graph valid = import(model("VALID"));
  EXPECT_EQ(valid.value(valid.outputs()[0]).shape, (Shape{1, 2, 2, 2}));
}

TEST(OnnxNn, PoolsAndGlobalPools) {
  Model m;
  m.input("x", TP::FLOAT, {1, 1, 3, 4});
  auto& mp = m.node("MaxPool", {"x"}, {"mp"});
  set_ints(mp, "kernel_shape", {2, 2});
  set_ints(mp, "strides", {2, 2});
  set_i(mp, "ceil_mode", 1);
  auto& ap = m.node("AveragePool", {"x"}, {"ap"});
  set_ints(ap, "kernel_shape", {3, 3});
  set_ints(ap, "pads", {1, 1, 1, 1});
  set_ints(ap, "strides", {2, 2});
  m.node("GlobalAveragePool", {"x"}, {"gap"});
  m.node("GlobalMaxPool", {"x"}, {"gmp"});
  for (const char* o : {"mp", "ap", "gap", "gmp"}) m.output(o);
  Graph g = import(m);
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  auto r = run(g, {x});
  EXPECT_EQ(r[0], (std::vector<float>{6, 8, 10, 12}));  // ceil_mode: a 2x2 grid
  // count_include_pad = 0: windows clipped to the input.
  EXPECT_EQ(r[1], (std::vector<float>{3.5f, 5, 7.5f, 9}));
  EXPECT_EQ(r[2], (std::vector<float>{6.5f}));
  EXPECT_EQ(r[3], (std::vector<float>{12}));
  EXPECT_EQ(g.value(g.outputs()[2]).shape, (Shape{1, 1, 1, 1}));
}

TEST(OnnxNn, ConcatSliceSplitGatherOnRunTimeData) {
  Model m(13);
  m.input("x", TP::FLOAT, {2, 6});
  m.input("idx", TP::INT64, {3});
  m.init_int64s("starts", {1}, {-1});
  m.init_int64s("ends", {1}, {-100});
  m.init_int64s("axes", {1}, {1});
  m.init_int64s("steps", {1}, {-2});
  m.init_int64s("split", {2}, {2, 4});
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"s"});
  auto& sp = m.node("Split", {"x", "split"}, {"p0", "p1"});
  set_i(sp, "axis", 1);
  auto& c = m.node("Concat", {"p1", "p0", "x"}, {"c"});
  set_i(c, "axis", -1);
  auto& ga = m.node("Gather", {"x", "idx"}, {"ga"});
  set_i(ga, "axis", 1);
  for (const char* o : {"s", "c", "ga"}) m.output(o);
  Graph g = import(m);
  std::vector<float> x = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15};
  auto r = run(g, {x, {5, -6, 2}});
  EXPECT_EQ(r[0], (std::vector<float>{5, 3, 1, 15, 13, 11}));
  EXPECT_EQ(r[1], (std::vector<float>{2,  3,  4,  5,  0,  1,  0,  1,  2,  3,  4,  5,  //
                                      12, 13, 14, 15, 10, 11, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(r[2], (std::vector<float>{5, 0, 2, 15, 10, 12}));
}

TEST(OnnxNn, OldOpsetSliceAndEqualSplit) {
  Model m(9);
  m.input("x", TP::FLOAT, {6});
  auto& s = m.node("Slice", {"x"}, {"s"});
  set_ints(s, "starts", {1});
  set_ints(s, "ends", {4});
  m.node("Split", {"x"}, {"a", "b", "c"});
  for (const char* o : {"s", "a", "c"}) m.output(o);
  auto r = run(import(m), {{0, 1, 2, 3, 4, 5}});
  EXPECT_EQ(r[0], (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(r[1], (std::vector<float>{0, 1}));
  EXPECT_EQ(r[2], (std::vector<float>{4, 5}));
}

TEST(OnnxNn, GemmTransposesAConstantWeightAtImport) {
  Model m;
  m.input("x", TP::FLOAT, {1, 3});
  m.init_floats("w", {2, 3}, {1, 2, 3, 4, 5, 6});  // [out, in], as torch's Linear stores it
  set_i(m.node("Gemm", {"x", "w"}, {"y"}), "transB", 1);
  m.output("y");
  Graph g = import(m);
  for (const Node& n : g.nodes()) EXPECT_FALSE(!n.dead && n.op == OpType::Dimshuffle);
  EXPECT_EQ(run(g, {{1, 10, 100}})[0], (std::vector<float>{321, 654}));
}

TEST(OnnxNn, UnsupportedAttributesNameTheNode) {
  auto conv_model = [](const std::string& auto_pad, std::vector<int64_t> xdims) {
    Model m;
    m.input("x", TP::FLOAT, xdims);
    std::vector<int64_t> wd = {2, xdims[1]};
    for (size_t k = 2; k < xdims.size(); ++k) wd.push_back(1);
    m.input("w", TP::FLOAT, wd);
    auto& n = m.node("Conv", {"x", "w"}, {"y"}, "c1");
    if (!auto_pad.empty()) set_s(n, "auto_pad", auto_pad);
    m.output("y");
    return m;
  };
  auto expect_error = [](const Model& m, const std::string& label, const std::string& part) {
    std::string e = import_error(m);
    EXPECT_NE(e.find(label), std::string::npos) << e;
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  expect_error(conv_model("SAME_WEIRD", {1, 3, 4, 4}), "node 0 'c1' (Conv)",
               "auto_pad 'SAME_WEIRD'");
  expect_error(conv_model("", {1, 3, 4, 4, 4, 4}), "node 0 'c1' (Conv)",
               "convolution of rank other than 3 (N, C, W), 4 (N, C, H, W) or 5 (N, C, D, H, W) "
               "is not supported");

  Model mp;
  mp.input("x", TP::FLOAT, {1, 1, 4, 4});
  auto& p = mp.node("MaxPool", {"x"}, {"y"}, "pool");
  set_ints(p, "kernel_shape", {2, 2});
  set_i(p, "storage_order", 2);
  mp.output("y");
  expect_error(mp, "node 0 'pool' (MaxPool)", "storage_order must be 0 or 1, got 2");

  Model idx;
  idx.input("x", TP::FLOAT, {1, 1, 4, 4, 4});
  set_ints(idx.node("MaxPool", {"x"}, {"y", "i"}, "pool"), "kernel_shape", {2, 2, 2});
  idx.output("y");
  idx.output("i");
  expect_error(idx, "(MaxPool)", "unsupported output: Indices of a 3-D MaxPool");

  Model ap(17);
  ap.input("x", TP::FLOAT, {1, 1, 4, 4});
  auto& a = ap.node("AveragePool", {"x"}, {"y"});
  set_ints(a, "kernel_shape", {2, 2});
  set_ints(a, "dilations", {2, 2});
  ap.output("y");
  expect_error(ap, "node 0 (AveragePool)", "dilations");

  Model sp(13);
  sp.input("x", TP::FLOAT, {5});
  sp.node("Split", {"x"}, {"a", "b"}, "sp");
  sp.output("a");
  expect_error(sp, "node 0 'sp' (Split)", "does not split into 2 equal parts");

  Model gc;
  gc.input("x", TP::FLOAT, {2, 5});
  gc.init_int64s("i", {2}, {1, 5});
  set_i(gc.node("Gather", {"x", "i"}, {"y"}, "g"), "axis", -1);
  gc.output("y");
  expect_error(gc, "node 0 'g' (Gather)", "index 5 is out of range for axis 1 of size 5");

  Model ga;
  ga.input("x", TP::FLOAT, {5});
  ga.input("i", TP::FLOAT, {2});
  ga.node("Gather", {"x", "i"}, {"y"});
  ga.output("y");
  expect_error(ga, "(Gather)", "indices must be INT32 or INT64");
}

}  // namespace
}  // namespace hf
