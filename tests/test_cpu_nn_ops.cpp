// Conv, MaxPool, AveragePool, Concat, Slice and Gather: shape inference, the CPU kernels
// against the naive reference (tests/support/reference_nn.cpp) over the configurations
// ResNet and MobileNet use and the corner cases around them, run twice (the second run
// reuses every buffer), errors that name the node, and fusion treating them as barriers.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fusion/detect.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "tests/support/jit_env.h"
#include "tests/support/reference.h"

namespace hf {
namespace {

// A graph of one node `op` with `attrs` over inputs declared as JSON input objects.
Graph one_node(const std::string& op, const std::string& attrs, const std::string& inputs,
               const std::string& names) {
  std::string text = R"({"inputs": [)" + inputs + R"(], "nodes": [{"name": "n", "op": ")" + op +
                     R"(", "attrs": )" + attrs + R"(, "inputs": [)" + names +
                     R"(]}], "outputs": ["n:0"]})";
  return parse_graph_json(text, "test");
}

std::string f32(const std::string& name, const std::string& shape, const char* dtype = "f32") {
  return R"({"name": ")" + name + R"(", "dtype": ")" + dtype + R"(", "shape": )" + shape + "}";
}

void expect_matches_reference(const Graph& g, double rtol, double atol = 1e-5) {
  cpu::ThreadPool pool(2);
  cpu::CpuBackend backend(&pool);
  Executor exec(g, backend);
  std::vector<HostTensor> in = random_inputs(g, 7);
  std::vector<HostTensor> ref = test::reference_run(g, in);
  for (int iter = 0; iter < 2; ++iter) {
    auto out = exec.run(views(in));
    ASSERT_EQ(out.size(), ref.size());
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out[i].shape, ref[i].shape());
      test::Mismatch m = test::compare(ref[i].view(), out[i], rtol, atol);
      EXPECT_EQ(m.index, -1) << "iteration " << iter << " element " << m.index << ": expected "
                             << m.expected << ", got " << m.actual;
    }
  }
}

std::string error_of(const std::string& op, const std::string& attrs, const std::string& inputs,
                     const std::string& names);

Shape out_shape(const Graph& g) {
  return g.value(g.outputs()[0]).shape;
}

struct ConvCase {
  const char* what;
  std::string x, w;  // shapes
  std::string attrs;
  bool bias;
  Shape expect;
};

TEST(NnOps, ConvMatchesTheReference) {
  const ConvCase cases[] = {
      {"3x3 pad 1", "[2,4,9,10]", "[6,4,3,3]", R"({"pads": [1,1,1,1]})", true, {2, 6, 9, 10}},
      {"7x7 stride 2 pad 3 (ResNet stem)",
       "[1,3,23,21]",
       "[8,3,7,7]",
       R"({"strides": [2,2], "pads": [3,3,3,3]})",
       false,
       {1, 8, 12, 11}},
      {"1x1 (read in place)", "[1,16,7,5]", "[12,16,1,1]", "{}", true, {1, 12, 7, 5}},
      {"1x1 stride 2", "[1,8,9,9]", "[4,8,1,1]", R"({"strides": [2,2]})", false, {1, 4, 5, 5}},
      {"asymmetric pads, dilation 2",
       "[1,3,11,12]",
       "[5,3,3,2]",
       R"({"pads": [0,2,3,1], "dilations": [2,2]})",
       true,
       {1, 5, 10, 13}},
      {"groups 2",
       "[1,6,8,8]",
       "[4,3,3,3]",
       R"({"group": 2, "pads": [1,1,1,1]})",
       true,
       {1, 4, 8, 8}},
      {"depthwise stride 2",
       "[1,8,15,14]",
       "[8,1,3,3]",
       R"({"group": 8, "strides": [2,2], "pads": [1,1,1,1]})",
       true,
       {1, 8, 8, 7}},
      {"depthwise multiplier 2, stride 3, dilation",
       "[2,3,13,17]",
       "[6,1,3,3]",
       R"({"group": 3, "strides": [3,3], "pads": [2,0,1,2], "dilations": [2,1]})",
       false,
       {2, 6, 4, 6}},
      {"depthwise 5x5",
       "[1,4,9,9]",
       "[4,1,5,5]",
       R"({"group": 4, "pads": [2,2,2,2]})",
       true,
       {1, 4, 9, 9}},
  };
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(c.what);
    std::string inputs = f32("x", c.x) + "," + f32("w", c.w);
    std::string names = R"("x", "w")";
    if (c.bias) {
      inputs += "," + f32("b", "[" + std::to_string(c.expect[1]) + "]");
      names += R"(, "b")";
    }
    Graph g = one_node("Conv", c.attrs, inputs, names);
    EXPECT_EQ(out_shape(g), c.expect);
    expect_matches_reference(g, 1e-5);
  }
}

TEST(NnOps, ConvInHalfPrecision) {
  for (const char* t : {"f16", "bf16"}) {
    SCOPED_TRACE(t);
    Graph g = one_node(
        "Conv", R"({"pads": [1,1,1,1], "strides": [2,1]})",
        f32("x", "[1,4,6,7]", t) + "," + f32("w", "[3,4,3,3]", t) + "," + f32("b", "[3]", t),
        R"("x", "w", "b")");
    expect_matches_reference(g, 1e-2, 2e-2);
  }
}

TEST(NnOps, PoolingMatchesTheReference) {
  struct Case {
    const char* op;
    std::string attrs;
    Shape expect;
  };
  const Case cases[] = {
      {"MaxPool", R"({"kernel_shape": [3,3], "strides": [2,2], "pads": [1,1,1,1]})", {2, 3, 6, 7}},
      {"MaxPool", R"({"kernel_shape": [2,2], "strides": [2,2], "ceil_mode": 1})", {2, 3, 6, 7}},
      {"MaxPool",
       R"({"kernel_shape": [2,3], "dilations": [2,1], "pads": [0,1,1,0]})",
       {2, 3, 10, 12}},
      {"AveragePool",
       R"({"kernel_shape": [3,3], "strides": [2,2], "pads": [1,1,1,1]})",
       {2, 3, 6, 7}},
      {"AveragePool",
       R"({"kernel_shape": [3,3], "strides": [2,2], "pads": [1,1,1,1], "count_include_pad": 1})",
       {2, 3, 6, 7}},
      {"AveragePool",
       R"({"kernel_shape": [2,2], "strides": [2,2], "ceil_mode": 1, "count_include_pad": 1})",
       {2, 3, 6, 7}},
      {"AveragePool",
       R"({"kernel_shape": [3,2], "strides": [3,2], "pads": [1,0,1,1], "ceil_mode": 1})",
       {2, 3, 4, 7}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.op) + " " + c.attrs);
    Graph g = one_node(c.op, c.attrs, f32("x", "[2,3,11,13]"), R"("x")");
    EXPECT_EQ(out_shape(g), c.expect);
    expect_matches_reference(g, 1e-6);
  }
}

TEST(NnOps, MaxPoolOfBytes) {
  Graph g =
      one_node("MaxPool", R"({"kernel_shape": [3,3], "strides": [2,2], "pads": [1,1,1,1]})",
               R"({"name": "x", "dtype": "u8", "shape": [1,2,7,6], "init": [0, 256]})", R"("x")");
  expect_matches_reference(g, 0, 0);
  EXPECT_NE(
      error_of("AveragePool", R"({"kernel_shape": [2,2]})", f32("x", "[1,1,4,4]", "u8"), R"("x")")
          .find("needs a float input"),
      std::string::npos);
}

TEST(NnOps, MaxPoolPropagatesNaN) {
  Graph g = one_node("MaxPool", R"({"kernel_shape": [2,2], "strides": [2,2]})",
                     f32("x", "[1,1,2,4]"), R"("x")");
  cpu::CpuBackend backend;
  Executor exec(g, backend);
  HostTensor x(DType::F32, {1, 1, 2, 4});
  float v[] = {1, NAN, 5, 6, -1, 2, 7, 8};
  std::copy(v, v + 8, x.as<float>());
  std::vector<TensorView> in{x.view()};
  auto out = exec.run(in);
  EXPECT_TRUE(std::isnan(out[0].as<float>()[0]));
  EXPECT_EQ(out[0].as<float>()[1], 8.0f);
}

TEST(NnOps, ConcatSliceGatherMatchTheReference) {
  Graph concat = one_node("Concat", R"({"axis": -2})",
                          f32("a", "[2,3,4]") + "," + f32("b", "[2,1,4]") + "," +
                              f32("c", "[2,0,4]") + "," + f32("d", "[2,5,4]"),
                          R"("a", "b", "c", "d")");
  EXPECT_EQ(out_shape(concat), (Shape{2, 9, 4}));
  expect_matches_reference(concat, 0, 0);

  struct SliceCase {
    std::string attrs;
    Shape expect;
  };
  const SliceCase slices[] = {
      {R"({"starts": [1], "ends": [-1], "axes": [2]})", {4, 5, 4}},
      {R"({"starts": [-1, 0], "ends": [-1000000, 100], "axes": [0, 2], "steps": [-2, 3]})",
       {2, 5, 2}},
      {R"({"starts": [2, 4], "ends": [1, 9], "axes": [1, -1]})", {4, 0, 2}},
      {R"({"starts": [0, 1, 0], "ends": [4, 5, 6], "steps": [1, 2, 5]})", {4, 2, 2}},
  };
  for (const SliceCase& c : slices) {
    SCOPED_TRACE(c.attrs);
    Graph g = one_node("Slice", c.attrs, f32("x", "[4,5,6]", "i64"), R"("x")");
    EXPECT_EQ(out_shape(g), c.expect);
    expect_matches_reference(g, 0, 0);
  }

  for (const char* it : {"i64", "i32"}) {
    SCOPED_TRACE(it);
    std::string idx =
        R"({"name": "i", "dtype": ")" + std::string(it) + R"(", "shape": [2,3], "init": [-5, 5]})";
    Graph g = one_node("Gather", R"({"axis": 1})", f32("x", "[3,5,4]") + "," + idx, R"("x", "i")");
    EXPECT_EQ(out_shape(g), (Shape{3, 2, 3, 4}));
    expect_matches_reference(g, 0, 0);
  }
  Graph scalar_index = one_node(
      "Gather", R"({"axis": -1})",
      f32("x", "[3,5]", "f16") + R"(, {"name": "i", "dtype": "i64", "shape": [], "init": [0, 5]})",
      R"("x", "i")");
  EXPECT_EQ(out_shape(scalar_index), (Shape{3}));
  expect_matches_reference(scalar_index, 0, 0);
}

TEST(NnOps, GatherIndexOutOfRangeThrowsNamingIt) {
  Graph g =
      one_node("Gather", R"({"axis": 0})",
               f32("x", "[3]") + R"(, {"name": "i", "dtype": "i64", "shape": [1]})", R"("x", "i")");
  cpu::CpuBackend backend;
  Executor exec(g, backend);
  HostTensor x(DType::F32, {3}), i(DType::I64, {1});
  i.as<int64_t>()[0] = 3;
  std::vector<TensorView> in{x.view(), i.view()};
  try {
    exec.run(in);
    FAIL() << "no error";
  } catch (const Error& e) {  // bad input data: exit code 2 in hotfuse-run
    EXPECT_NE(std::string(e.what()).find(
                  "node 'n' (Gather): gather: index 3 is out of range for an axis of size 3"),
              std::string::npos)
        << e.what();
  }
}

std::string error_of(const std::string& op, const std::string& attrs, const std::string& inputs,
                     const std::string& names) {
  try {
    one_node(op, attrs, inputs, names);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(NnOps, BadAttributesAndShapesNameTheNode) {
  auto has = [](const std::string& msg, const char* part) {
    EXPECT_NE(msg.find("node 'n'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  };
  std::string xw = f32("x", "[1,4,8,8]") + "," + f32("w", "[6,4,3,3]");
  has(error_of("Conv", R"({"group": 3})", xw, R"("x", "w")"), "group 3 must divide");
  has(error_of("Conv", "{}", f32("x", "[1,4,8,8]") + "," + f32("w", "[6,3,3,3]"), R"("x", "w")"),
      "input channels per group");
  has(error_of("Conv", R"({"strides": [0, 1]})", xw, R"("x", "w")"),
      "strides entries must be >= 1");
  has(error_of("Conv", "{}", f32("x", "[1,4,2,8]") + "," + f32("w", "[6,4,3,3]"), R"("x", "w")"),
      "larger than the padded input");
  has(error_of("Conv", "{}", xw + "," + f32("b", "[5]"), R"("x", "w", "b")"), "bias has shape");
  has(error_of("Conv", "{}", f32("x", "[1,4,8]") + "," + f32("w", "[6,4,3]"), R"("x", "w")"),
      "must be 4-D");
  has(error_of("MaxPool", R"({"kernel_shape": [2,2], "pads": [2,0,0,0]})", f32("x", "[1,1,4,4]"),
               R"("x")"),
      "pads must be smaller than the window");
  has(error_of("AveragePool", "{}", f32("x", "[1,1,4,4]"), R"("x")"), "kernel_shape");
  has(error_of("Concat", R"({"axis": 0})", f32("a", "[2,3]") + "," + f32("b", "[2,4]"),
               R"("a", "b")"),
      "does not match");
  has(error_of("Slice", R"({"starts": [0], "ends": [1], "steps": [0]})", f32("x", "[3]"), R"("x")"),
      "steps must not be 0");
  has(error_of("Gather", "{}", f32("x", "[3]") + "," + f32("i", "[2]"), R"("x", "i")"),
      "indices must be i32 or i64");
}

TEST(NnOps, FusionTreatsThemAsBarriersWithAReason) {
  const char* text = R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [1,4,8,8]},
               {"name": "w", "dtype": "f32", "shape": [4,1,3,3]}],
    "nodes": [
      {"name": "a", "op": "Elemwise", "mode": "RELU", "inputs": ["x"]},
      {"name": "conv", "op": "Conv", "attrs": {"group": 4, "pads": [1,1,1,1]}, "inputs": ["a:0", "w"]},
      {"name": "b", "op": "Elemwise", "mode": "SIGMOID", "inputs": ["conv:0"]},
      {"name": "pool", "op": "MaxPool", "attrs": {"kernel_shape": [2,2], "strides": [2,2]}, "inputs": ["b:0"]},
      {"name": "s", "op": "Slice", "attrs": {"starts": [1], "ends": [3], "axes": [1]}, "inputs": ["pool:0"]},
      {"name": "cat", "op": "Concat", "attrs": {"axis": 1}, "inputs": ["s:0", "pool:0"]},
      {"name": "c", "op": "Elemwise", "mode": "EXP", "inputs": ["cat:0"]},
      {"name": "d", "op": "Elemwise", "mode": "NEGATE", "inputs": ["c:0"]}],
    "outputs": ["d:0"]})";
  Graph g = parse_graph_json(text, "barriers");
  fusion::Detection det = fusion::detect_regions(g);
  for (const char* name : {"conv", "pool", "s", "cat"}) {
    NodeId id = -1;
    for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n)
      if (g.node(n).name == name) id = n;
    const fusion::Decision* dec = det.decision_of(id);
    ASSERT_NE(dec, nullptr);
    EXPECT_FALSE(dec->fused) << name;
    EXPECT_TRUE(dec->reason.find("not element-wise") != std::string::npos ||
                dec->reason.find("not fused (a barrier)") != std::string::npos)
        << name << ": " << dec->reason;
  }
  ASSERT_EQ(det.regions.size(), 1u);  // exp + negate
  expect_matches_reference(g, 1e-5);
  // The JSON format carries their attributes through a round trip unchanged.
  std::string text2 = write_graph_json(g);
  EXPECT_EQ(write_graph_json(parse_graph_json(text2, "again")), text2);
}

}  // namespace
}  // namespace hf
