// Static pattern fusion: each rewrite as a before graph and the expected graph (compared
// structurally), where it must not apply, the number of rewrites per example, and the
// numbers: the reference interpreter gives the same outputs before and after.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fusion/static_patterns.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "tests/support/reference.h"

namespace hf::fusion {
namespace {

// The live nodes in execution order, one line each: "y = Elemwise FUSE_MUL_ADD3(a, b, c)".
// Node names are left out (a rewrite names its node after the root); value names are kept.
std::string structure(const Graph& g) {
  std::string s;
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    for (size_t i = 0; i < n.outputs.size(); ++i) s += (i ? ", " : "") + g.value(n.outputs[i]).name;
    s += " = " + std::string(op_type_name(n.op));
    if (n.op == OpType::Elemwise) s += std::string(" ") + mode_info(n.mode).name;
    s += "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) s += (i ? ", " : "") + g.value(n.inputs[i]).name;
    s += ")\n";
  }
  return s;
}

Graph parse(const std::string& nodes, const std::string& inputs = "",
            const std::string& outputs = R"(["y"])") {
  std::string in = inputs.empty() ? R"({"name": "a", "dtype": "f32", "shape": [4, 5]},
      {"name": "b", "dtype": "f32", "shape": [4, 5]}, {"name": "c", "dtype": "f32", "shape": [4, 5]},
      {"name": "d", "dtype": "f32", "shape": [4, 5]})"
                                  : inputs;
  return parse_graph_json(
      "{\"inputs\": [" + in + "], \"nodes\": [" + nodes + "], \"outputs\": " + outputs + "}",
      "test.json");
}

std::string node(const std::string& out, const std::string& mode, const std::string& ins) {
  return R"({"name": ")" + out + R"(", "op": "Elemwise", "mode": ")" + mode + R"(", "inputs": [)" +
         ins + R"(], "outputs": [")" + out + R"("]})";
}

// rtol doubles as atol: where a*b+c cancels, an f16 rounding of a*b is large relative to it.
void expect_same_numbers(const Graph& before, const Graph& after, double rtol) {
  std::vector<HostTensor> in = random_inputs(before, 3);
  std::vector<HostTensor> want = test::reference_run(before, in);
  std::vector<HostTensor> got = test::reference_run(after, in);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    test::Mismatch m = test::compare(want[i].view(), got[i].view(), rtol, rtol);
    EXPECT_EQ(m.index, -1) << before.name << " output " << i << " element " << m.index
                           << ": expected " << m.expected << ", got " << m.actual;
  }
}

// Rewrites `before`, checks it against `expected` and the numbers, returns the rewrites.
// f32 may differ in the last bit: kernels built with -march=native may contract a*b+c
// into one FMA (C++ defaults to -ffp-contract=fast), the unfused chain rounds a*b first.
int expect_rewrite(const Graph& before, const Graph& expected, double rtol = 1e-6) {
  Graph g = before;
  int n = apply_static_patterns(g);
  verify(g);
  EXPECT_EQ(structure(g), structure(expected));
  expect_same_numbers(before, g, rtol);
  return n;
}

TEST(StaticPatterns, MulAdd3EitherOperandOrder) {
  EXPECT_EQ(expect_rewrite(
                parse(node("ab", "MUL", R"("a", "b")") + "," + node("y", "ADD", R"("ab", "c")")),
                parse(node("y", "FUSE_MUL_ADD3", R"("a", "b", "c")"))),
            1);
  EXPECT_EQ(expect_rewrite(
                parse(node("ab", "MUL", R"("a", "b")") + "," + node("y", "ADD", R"("c", "ab")")),
                parse(node("y", "FUSE_MUL_ADD3", R"("a", "b", "c")"))),
            1);
}

TEST(StaticPatterns, MulAdd4) {
  EXPECT_EQ(expect_rewrite(
                parse(node("ab", "MUL", R"("a", "b")") + "," + node("cd", "MUL", R"("c", "d")") +
                      "," + node("y", "ADD", R"("cd", "ab")")),
                parse(node("y", "FUSE_MUL_ADD4", R"("a", "b", "c", "d")"))),
            1);
}

TEST(StaticPatterns, AddThenActivation) {
  for (std::string act : {"RELU", "SIGMOID", "TANH", "H_SWISH"}) {
    SCOPED_TRACE(act);
    EXPECT_EQ(
        expect_rewrite(parse(node("s", "ADD", R"("a", "b")") + "," + node("y", act, R"("s")")),
                       parse(node("y", "FUSE_ADD_" + act, R"("a", "b")"))),
        1);
  }
}

TEST(StaticPatterns, TheFirstPatternInTopologicalOrderWins) {
  // a*b+c then RELU: the ADD is visited first, so FUSE_MUL_ADD3 then RELU.
  EXPECT_EQ(
      expect_rewrite(parse(node("ab", "MUL", R"("a", "b")") + "," +
                           node("s", "ADD", R"("ab", "c")") + "," + node("y", "RELU", R"("s")")),
                     parse(node("s", "FUSE_MUL_ADD3", R"("a", "b", "c")") + "," +
                           node("y", "RELU", R"("s")"))),
      1);
  // Two chained patterns both apply.
  EXPECT_EQ(expect_rewrite(
                parse(node("s", "ADD", R"("a", "b")") + "," + node("t", "TANH", R"("s")") + "," +
                      node("tc", "MUL", R"("t", "c")") + "," + node("y", "ADD", R"("tc", "d")")),
                parse(node("t", "FUSE_ADD_TANH", R"("a", "b")") + "," +
                      node("y", "FUSE_MUL_ADD3", R"("t", "c", "d")"))),
            2);
}

TEST(StaticPatterns, BroadcastingInputsKeepTheirShapes) {
  const char* in = R"({"name": "a", "dtype": "f32", "shape": [4, 1]},
      {"name": "b", "dtype": "f32", "shape": [1, 5]}, {"name": "c", "dtype": "f32", "shape": [5]},
      {"name": "d", "dtype": "f32", "shape": [3, 1, 1]})";
  EXPECT_EQ(
      expect_rewrite(
          parse(node("ab", "MUL", R"("a", "b")") + "," + node("y", "ADD", R"("ab", "c")"), in),
          parse(node("y", "FUSE_MUL_ADD3", R"("a", "b", "c")"), in)),
      1);
  // The ADD broadcasts the product further: still the ADD's shape.
  Graph g = parse(node("ab", "MUL", R"("a", "c")") + "," + node("y", "ADD", R"("ab", "d")"), in);
  EXPECT_EQ(expect_rewrite(g, parse(node("y", "FUSE_MUL_ADD3", R"("a", "c", "d")"), in)), 1);
}

TEST(StaticPatterns, IntegersAndHalfPrecision) {
  const char* ints = R"({"name": "a", "dtype": "i32", "shape": [6]},
      {"name": "b", "dtype": "i32", "shape": [6]}, {"name": "c", "dtype": "i32", "shape": [6]})";
  EXPECT_EQ(
      expect_rewrite(
          parse(node("ab", "MUL", R"("a", "b")") + "," + node("s", "ADD", R"("ab", "c")") + "," +
                    node("y", "RELU", R"("s")"),
                ints),
          parse(node("s", "FUSE_MUL_ADD3", R"("a", "b", "c")") + "," + node("y", "RELU", R"("s")"),
                ints)),
      1);
  // f16: the fused mode rounds once, the chain twice; within an f16 ulp.
  const char* halves = R"({"name": "a", "dtype": "f16", "shape": [64]},
      {"name": "b", "dtype": "f16", "shape": [64]}, {"name": "c", "dtype": "f16", "shape": [64]})";
  EXPECT_EQ(
      expect_rewrite(
          parse(node("ab", "MUL", R"("a", "b")") + "," + node("y", "ADD", R"("ab", "c")"), halves),
          parse(node("y", "FUSE_MUL_ADD3", R"("a", "b", "c")"), halves), 2e-3),
      1);
}

TEST(StaticPatterns, NothingChangesWhereTheIntermediateIsNeeded) {
  auto unchanged = [](const Graph& g) {
    Graph h = g;
    EXPECT_EQ(apply_static_patterns(h), 0);
    EXPECT_EQ(structure(h), structure(g));
  };
  // The product is read again.
  unchanged(parse(node("ab", "MUL", R"("a", "b")") + "," + node("y", "ADD", R"("ab", "c")") + "," +
                      node("z", "EXP", R"("ab")"),
                  "", R"(["y", "z"])"));
  // The product is a graph output.
  unchanged(parse(node("ab", "MUL", R"("a", "b")") + "," + node("y", "ADD", R"("ab", "c")"), "",
                  R"(["y", "ab"])"));
  // The sum feeds the activation and something else.
  unchanged(parse(node("s", "ADD", R"("a", "b")") + "," + node("y", "RELU", R"("s")") + "," +
                      node("z", "NEGATE", R"("s")"),
                  "", R"(["y", "z"])"));
  // x*x + c: replace_nodes lists a repeated input once, so FUSE_MUL_ADD3(x, x, c) cannot be
  // expressed as a region rewrite; left alone.
  unchanged(parse(node("aa", "MUL", R"("a", "a")") + "," + node("y", "ADD", R"("aa", "c")")));
  // Other modes.
  unchanged(parse(node("ab", "SUB", R"("a", "b")") + "," + node("y", "ADD", R"("ab", "c")") + "," +
                      node("z", "SIGMOID", R"("y")"),
                  "", R"(["z", "y"])"));
}

Graph example(const std::string& name) {
  std::ifstream f(HF_SOURCE_DIR "/traces/graphs/" + name + ".json");
  std::stringstream s;
  s << f.rdbuf();
  std::string text = s.str();
  for (auto [from, to] : {std::pair<std::string, std::string>{"1048576", "1000"},
                          {"[1024, 1024]", "[16, 96]"},
                          {"[1024]", "[96]"},
                          {"[8, 64, 32, 64]", "[2, 8, 3, 5]"},
                          {"[64, 1, 1]", "[8, 1, 1]"}})
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  return parse_graph_json(text, name + ".json");
}

TEST(StaticPatterns, Examples) {
  struct Row {
    const char* name;
    int rewrites, removed;  // FUSE_MUL_ADD4 replaces three nodes, the others two
    const char* fused;      // the rewritten nodes, in order
  };
  const Row rows[] = {
      {"abc", 0, 0, ""},
      {"ab_plus_c", 1, 1, "FUSE_MUL_ADD3 "},
      {"gelu_chain", 0, 0, ""},
      {"activation_chain", 2, 2, "FUSE_MUL_ADD3 FUSE_MUL_ADD3 "},
      {"adam", 2, 4, "FUSE_MUL_ADD4 FUSE_MUL_ADD4 "},
      {"bias_activation", 1, 1, "FUSE_MUL_ADD3 "},
      {"layernorm", 1, 1, "FUSE_MUL_ADD3 "},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    Graph before = example(r.name);
    Graph g = before;
    EXPECT_EQ(apply_static_patterns(g), r.rewrites);
    verify(g);
    std::string fused;
    for (NodeId id : g.topo_order())
      if (g.node(id).op == OpType::Elemwise &&
          std::string(mode_info(g.node(id).mode).name).rfind("FUSE_", 0) == 0)
        fused += std::string(mode_info(g.node(id).mode).name) + " ";
    EXPECT_EQ(fused, r.fused);
    EXPECT_EQ(g.live_node_count(), before.live_node_count() - r.removed);
    expect_same_numbers(before, g, 1e-6);
  }
}

}  // namespace
}  // namespace hf::fusion
