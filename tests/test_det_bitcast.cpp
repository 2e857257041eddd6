// Det and BitCast: the CPU kernels against the naive reference (Laplace expansion in long
// double, tests/support/reference_nn.cpp; the bytes copied) on odd sizes and batches, the
// shape errors naming the node, and the ONNX lowering (Det of opset 11, BitCast of 26).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "tests/support/onnx_run.h"
#include "tests/support/reference.h"

namespace hf {
namespace {

using namespace test::onnx;

Graph one_node(const std::string& op, const std::string& attrs, const std::string& dtype,
               const std::string& shape) {
  const bool no_negatives = dtype == "bool" || dtype[0] == 'u';
  const std::string range = no_negatives ? "[0, 2]" : "[-2, 2]";
  std::string text = R"({"inputs": [{"name": "x", "dtype": ")" + dtype + R"(", "shape": )" + shape +
                     R"(, "init": )" + range + R"(}], "nodes": [{"name": "n", "op": ")" + op +
                     R"(", "attrs": )" + attrs + R"(, "inputs": ["x"]}], "outputs": ["n:0"]})";
  return parse_graph_json(text, "test");
}

void expect_matches_reference(const Graph& g, double rtol) {
  cpu::ThreadPool pool(3);
  cpu::CpuBackend backend(&pool);
  Executor exec(g, backend);
  std::vector<HostTensor> in = random_inputs(g, 9);
  std::vector<HostTensor> ref = test::reference_run(g, in);
  std::vector<TensorView> views = {in[0].view()};
  for (int iter = 0; iter < 2; ++iter) {
    auto out = exec.run(views);
    ASSERT_EQ(out[0].shape, ref[0].shape());
    test::Mismatch m = test::compare(ref[0].view(), out[0], rtol, rtol);
    EXPECT_EQ(m.index, -1) << "element " << m.index << ": expected " << m.expected << ", got "
                           << m.actual;
  }
}

TEST(Det, MatchesTheReferenceOnBatchesOfOddSizes) {
  struct Case {
    const char* dtype;
    std::string shape;
    Shape out;
    double rtol;
  } cases[] = {{"f32", "[1,1]", {}, 1e-6},     {"f32", "[2,2]", {}, 1e-6},
               {"f32", "[5,3,3]", {5}, 1e-5},  {"f64", "[2,3,5,5]", {2, 3}, 1e-12},
               {"f32", "[4,7,7]", {4}, 1e-4},  {"f16", "[3,4,4]", {3}, 1e-2},
               {"bf16", "[2,3,3]", {2}, 2e-2}, {"f32", "[3,0,0]", {3}, 0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.dtype) + " " + c.shape);
    Graph g = one_node("Det", "{}", c.dtype, c.shape);
    EXPECT_EQ(g.value(g.outputs()[0]).shape, c.out);
    expect_matches_reference(g, c.rtol);
  }
  // Exact values: a permutation (sign from the pivoting), a singular matrix, the identity.
  Model m(11);
  m.input("x", TP::FLOAT, {3, 3, 3});
  m.node("Det", {"x"}, {"y"});
  m.output("y");
  auto got = run(m, {tensor(DType::F32, {3, 3, 3},
                            {0, 1, 0, 0, 0, 1, 1, 0, 0,          // a cyclic permutation: +1
                             1, 2, 3, 2, 4, 6, 0, 1, 1,          // two rows dependent: 0
                             0, 2, 0, 3, 0, 0, 0, 0, -1})})[0];  // a swap, 2 * 3 * -1: 6
  EXPECT_EQ(got, (std::vector<double>{1, 0, 6}));
}

TEST(Det, ErrorsNameTheNode) {
  auto error_of = [](const std::string& dtype, const std::string& shape) -> std::string {
    try {
      one_node("Det", "{}", dtype, shape);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of("f32", "[2,3]").find("node 'n' (Det): needs square matrices"),
            std::string::npos);
  EXPECT_NE(error_of("f32", "[3]").find("needs square matrices"), std::string::npos);
  EXPECT_NE(error_of("i32", "[2,2]").find("needs a float input"), std::string::npos);
}

TEST(BitCast, ReinterpretsTheBytes) {
  for (auto [from, to] : {std::pair{"f32", "i32"},
                          {"i32", "f32"},
                          {"f64", "i64"},
                          {"u16", "i16"},
                          {"f16", "u16"},
                          {"i8", "u8"},
                          {"bool", "u8"}}) {
    SCOPED_TRACE(std::string(from) + " -> " + to);
    Graph g = one_node("BitCast", std::string(R"({"dtype": ")") + to + R"("})", from, "[3,5]");
    EXPECT_EQ(g.value(g.outputs()[0]).dtype, *parse_dtype(to));
    expect_matches_reference(g, 0);
  }
  // Against std::bit_cast through the ONNX importer.
  Model m(26);
  m.input("x", TP::FLOAT, {3});
  set_i(m.node("BitCast", {"x"}, {"y"}), "to", TP::INT32);
  m.output("y");
  auto got = run(m, {tensor(DType::F32, {3}, {1.0, -2.5, 0.0})})[0];
  EXPECT_EQ(got,
            (std::vector<double>{std::bit_cast<int32_t>(1.0f), std::bit_cast<int32_t>(-2.5f), 0}));
  try {
    one_node("BitCast", R"({"dtype": "i64"})", "f32", "[2]");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'n' (BitCast): cannot reinterpret f32 as i64"),
              std::string::npos)
        << e.what();
  }
  Model b(26);
  b.input("x", TP::UINT8, {3});
  set_i(b.node("BitCast", {"x"}, {"y"}), "to", TP::BOOL);
  b.output("y");
  EXPECT_EQ(import_error(b),
            "m.onnx: node 0 (BitCast): unsupported op (BitCast to BOOL (a byte other than 0 or 1 "
            "is no bool))");
}

}  // namespace
}  // namespace hf
