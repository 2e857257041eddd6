// The ScatterRows op (runtime/cpu/scatter.cpp): shape inference, the CPU kernel against the
// naive reference (tests/support/reference_nn.cpp) for every reduction and many dtypes with
// random (duplicate, negative) indices, run twice (the second run reuses every buffer), the
// run-time error for an index out of range, the attribute and shape errors naming the node,
// and fusion treating it as a barrier.
#include <gtest/gtest.h>

#include <string>

#include "fusion/detect.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "tests/support/reference.h"

namespace hf {
namespace {

std::string input(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& init = "") {
  return R"({"name": ")" + name + R"(", "dtype": ")" + dtype + R"(", "shape": )" + shape +
         (init.empty() ? "" : R"(, "init": )" + init) + "}";
}

Graph scatter(const std::string& reduction, const std::string& inputs) {
  std::string text = R"({"inputs": [)" + inputs +
                     R"(], "nodes": [{"name": "n", "op": "ScatterRows", "attrs": {"reduction": ")" +
                     reduction + R"("}, "inputs": ["d", "i", "u"]}], "outputs": ["n:0"]})";
  return parse_graph_json(text, "test");
}

std::vector<TensorView> views(const std::vector<HostTensor>& ts) {
  std::vector<TensorView> v;
  for (const HostTensor& t : ts) v.push_back(t.view());
  return v;
}

void expect_matches_reference(const Graph& g, double rtol, uint64_t seed) {
  cpu::ThreadPool pool(3);
  cpu::CpuBackend backend(&pool);
  Executor exec(g, backend);
  std::vector<HostTensor> in = random_inputs(g, seed);
  std::vector<HostTensor> ref = test::reference_run(g, in);
  for (int iter = 0; iter < 2; ++iter) {
    auto out = exec.run(views(in));
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].shape, ref[0].shape());
    test::Mismatch m = test::compare(ref[0].view(), out[0], rtol, rtol);
    EXPECT_EQ(m.index, -1) << "iteration " << iter << " element " << m.index << ": expected "
                           << m.expected << ", got " << m.actual;
  }
}

TEST(ScatterRows, MatchesTheReferenceForEveryReductionAndDtype) {
  struct Dt {
    const char* name;
    double rtol;
  } dtypes[] = {{"f32", 1e-6}, {"f16", 1e-2}, {"bf16", 2e-2}, {"f64", 1e-12},
                {"i32", 0},    {"i64", 0},    {"u8", 0},      {"i16", 0}};
  // data [7, 3, 5], indices [4, 3] (12 rows into 7: duplicates, negatives), rows of 15.
  for (const char* r : {"none", "add", "mul", "max", "min"})
    for (const Dt& t : dtypes)
      for (const char* it : {"i64", "i32"}) {
        SCOPED_TRACE(std::string(r) + " " + t.name + " " + it);
        std::string range = std::string(t.name) == "u8" ? "[0, 9]" : "[-4, 4]";
        Graph g = scatter(r, input("d", t.name, "[7,3,5]", range) + "," +
                                 input("i", it, "[4,3]", "[-7, 7]") + "," +
                                 input("u", t.name, "[4,3,3,5]", range));
        EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{7, 3, 5}));
        expect_matches_reference(g, t.rtol, 11);
      }
  // bool data without a reduction; one-dimensional data (single elements, the ONNX
  // ScatterElements case); a scalar index.
  expect_matches_reference(
      scatter("none", input("d", "bool", "[5,2]") + "," + input("i", "i64", "[3]", "[-5, 5]") +
                          "," + input("u", "bool", "[3,2]")),
      0, 3);
  expect_matches_reference(
      scatter("add", input("d", "f32", "[9]") + "," + input("i", "i64", "[2,7]", "[-9, 9]") + "," +
                         input("u", "f32", "[2,7]")),
      1e-6, 5);
  expect_matches_reference(
      scatter("max", input("d", "f32", "[4,3]") + "," + input("i", "i64", "[]", "[0, 4]") + "," +
                         input("u", "f32", "[3]")),
      0, 5);
}

TEST(ScatterRows, IndexOutOfRangeThrowsNamingIt) {
  Graph g = scatter("add", input("d", "f32", "[3,2]") + "," + input("i", "i64", "[2]") + "," +
                               input("u", "f32", "[2,2]"));
  cpu::CpuBackend backend;
  Executor exec(g, backend);
  HostTensor d(DType::F32, {3, 2}), i(DType::I64, {2}), u(DType::F32, {2, 2});
  for (int64_t bad : {3, -4}) {
    i.as<int64_t>()[0] = 0;
    i.as<int64_t>()[1] = bad;
    std::vector<TensorView> in{d.view(), i.view(), u.view()};
    try {
      exec.run(in);
      FAIL() << "no error";
    } catch (const Error& e) {  // bad input data: exit code 2 in hotfuse-run
      EXPECT_NE(std::string(e.what()).find("node 'n' (ScatterRows): scatter: index " +
                                           std::to_string(bad) +
                                           " is out of range for an axis of size 3"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(ScatterRows, BadAttributesAndShapesNameTheNode) {
  auto error_of = [](const std::string& r, const std::string& inputs) -> std::string {
    try {
      scatter(r, inputs);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  auto has = [](const std::string& msg, const char* part) {
    EXPECT_NE(msg.find("node 'n'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  };
  const std::string ok = input("d", "f32", "[3,2]") + "," + input("i", "i64", "[2]") + "," +
                         input("u", "f32", "[2,2]");
  has(error_of("sum", ok), "reduction must be none, add, mul, max or min");
  has(error_of("none", input("d", "f32", "[3,2]") + "," + input("i", "i64", "[2]") + "," +
                           input("u", "f32", "[2,3]")),
      "updates have shape [2,3], expected [2,2]");
  has(error_of("none", input("d", "f32", "[3,2]") + "," + input("i", "f32", "[2]") + "," +
                           input("u", "f32", "[2,2]")),
      "indices must be i32 or i64");
  has(error_of("none", input("d", "f32", "[3,2]") + "," + input("i", "i64", "[2]") + "," +
                           input("u", "f16", "[2,2]")),
      "updates and data differ in dtype");
  has(error_of("add", input("d", "bool", "[3]") + "," + input("i", "i64", "[2]") + "," +
                          input("u", "bool", "[2]")),
      "a reduction needs a numeric type");
  has(error_of("none", input("d", "f32", "[]") + "," + input("i", "i64", "[2]") + "," +
                           input("u", "f32", "[2]")),
      "cannot scatter into a scalar");
}

TEST(ScatterRows, FusionTreatsItAsABarrier) {
  const char* text = R"({
    "inputs": [{"name": "d", "dtype": "f32", "shape": [4,3]},
               {"name": "i", "dtype": "i64", "shape": [2], "init": [0, 4]},
               {"name": "u", "dtype": "f32", "shape": [2,3]}],
    "nodes": [
      {"name": "a", "op": "Elemwise", "mode": "EXP", "inputs": ["d"]},
      {"name": "s", "op": "ScatterRows", "attrs": {"reduction": "mul"}, "inputs": ["a:0", "i", "u"]},
      {"name": "b", "op": "Elemwise", "mode": "NEGATE", "inputs": ["s:0"]}],
    "outputs": ["b:0"]})";
  Graph g = parse_graph_json(text, "barrier");
  fusion::Detection det = fusion::detect_regions(g);
  const fusion::Decision* dec = det.decision_of(1);
  ASSERT_NE(dec, nullptr);
  EXPECT_FALSE(dec->fused);
  EXPECT_NE(dec->reason.find("not fused (a barrier)"), std::string::npos) << dec->reason;
  expect_matches_reference(g, 1e-6, 2);
  std::string text2 = write_graph_json(g);
  EXPECT_EQ(write_graph_json(parse_graph_json(text2, "again")), text2);
}

}  // namespace
}  // namespace hf
