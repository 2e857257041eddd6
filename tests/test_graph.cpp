// The graph IR: shape/dtype inference, the verifier's messages, topological order and
// the region-replacement rewrite that fusion relies on.
#include <gtest/gtest.h>

#include "runtime/ir/error.h"
#include "runtime/ir/graph.h"
#include "runtime/ir/op_table.h"
#include "tests/support/error_of.h"

namespace hf {
namespace {

Node ew(Mode m, std::vector<ValueId> in, std::string name = "") {
  Node n;
  n.name = std::move(name);
  n.op = OpType::Elemwise;
  n.mode = m;
  n.inputs = std::move(in);
  return n;
}

Node op(OpType t, std::vector<ValueId> in, Attrs attrs, std::string name = "") {
  Node n;
  n.name = std::move(name);
  n.op = t;
  n.inputs = std::move(in);
  n.attrs = std::move(attrs);
  return n;
}

// An init range the input's type cannot hold is an error naming the input (issue 23): an
// i32 in [0, 1e30] was all zeros, an f32 in [-1e308, 1e308] all infinities.
TEST(Graph, InitRangeMustFitTheInputsType) {
  struct Case {
    DType t;
    double lo, hi;
  } bad[] = {{DType::I32, 0, 1e30}, {DType::I64, 0, 1e30},   {DType::I32, -3e9, 0},
             {DType::U8, -1, 10},   {DType::U8, 0, 257},     {DType::F32, -1e308, 1e308},
             {DType::F16, 0, 1e5},  {DType::BF16, -1e39, 0}, {DType::F32, 2, 1}};
  for (const Case& c : bad) {
    Graph g;
    try {
      g.add_input("x", c.t, {4}, InitRange{c.lo, c.hi});
      ADD_FAILURE() << dtype_name(c.t) << " [" << c.lo << ", " << c.hi << "] accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("value 'x': init ["), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(dtype_name(c.t)), std::string::npos) << e.what();
    }
  }
  Graph g;  // the edges of each type are fine
  g.add_input("i32", DType::I32, {4}, InitRange{-2147483648.0, 2147483648.0});
  g.add_input("i64", DType::I64, {4}, InitRange{-9.2e18, 9.2e18});
  g.add_input("u8", DType::U8, {4}, InitRange{0, 256});
  g.add_input("f16", DType::F16, {4}, InitRange{-65504, 65504});
  g.add_input("f32", DType::F32, {4}, InitRange{-1e38, 1e38});
}

TEST(Graph, ElemwiseInfersBroadcastShapeAndBoolForComparisons) {
  Graph g;
  ValueId a = g.add_input("a", DType::F32, {4, 1, 3});
  ValueId b = g.add_input("b", DType::F32, {5, 1});
  ValueId s = g.add_node(ew(Mode::ADD, {a, b}))[0];
  EXPECT_EQ(g.value(s).shape, (Shape{4, 5, 3}));
  ValueId c = g.add_node(ew(Mode::LT, {a, b}))[0];
  EXPECT_EQ(g.value(c).dtype, DType::Bool);
  ValueId i = g.add_node(ew(Mode::ISNAN, {a}))[0];
  EXPECT_EQ(g.value(i).dtype, DType::Bool);
}

TEST(Graph, ErrorsNameTheNode) {
  Graph g;
  ValueId a = g.add_input("a", DType::F32, {3});
  ValueId b = g.add_input("b", DType::F32, {4});
  ValueId i = g.add_input("i", DType::I32, {3});
  EXPECT_EQ(error_of([&] {
              g.add_node(ew(Mode::ADD, {a, b}, "sum"));
            }),
            "node 'sum' (Elemwise ADD): input shapes [3] and [4] do not broadcast");
  EXPECT_EQ(error_of([&] { g.add_node(ew(Mode::ADD, {a}, "one")); }),
            "node 'one' (Elemwise ADD): takes 2 inputs, got 1");
  EXPECT_EQ(error_of([&] { g.add_node(ew(Mode::EXP, {i}, "e")); }),
            "node 'e' (Elemwise EXP): needs a float type (f32, f16, bf16), got i32");
  EXPECT_EQ(error_of([&] {
              g.add_node(ew(Mode::SHL, {a, a}, "s"));
            }),
            "node 's' (Elemwise SHL): needs an integer type (i32, i64, u8), got f32");
  EXPECT_EQ(error_of([&] {
              g.add_node(ew(Mode::MUL, {a, i}, "m"));
            }),
            "node 'm' (Elemwise MUL): input 1 is i32 but input 0 is f32 (insert a TypeCvt)");
  EXPECT_EQ(error_of([&] {
              g.add_node(op(OpType::Reshape, {a}, {{"shape", std::vector<int64_t>{2, 2}}}, "r"));
            }),
            "node 'r' (Reshape): cannot reshape [3] (3 elements) to [2,2]");
  EXPECT_EQ(error_of([&] {
              g.add_node(op(OpType::Reduce, {a}, {{"mode", std::string("AVG")}}, "red"));
            }),
            "node 'red' (Reduce): unknown reduce mode 'AVG'");
  EXPECT_EQ(error_of([&] { g.add_node(op(OpType::Reduce, {a}, {}, "red2")); }),
            "node 'red2' (Reduce): missing attribute 'mode'");
  EXPECT_EQ(error_of([&] {
              g.add_node(op(OpType::PowC, {a}, {{"exponent", std::string("two")}}, "p"));
            }),
            "node 'p' (PowC): attribute 'exponent' must be a number");
}

// Names reach the terminal escaped (issue 23, item 6): ESC sequences rewrote the terminal's
// title and cleared the screen, a newline split the one-line error. (Octal escapes below:
// they end after three digits, hex ones do not.)
TEST(Printable, EscapesWhatATerminalActsOnAndKeepsTheRest) {
  EXPECT_EQ(printable("plain name/with\\backslash"), "plain name/with\\backslash");
  EXPECT_EQ(printable("a\033]0;pwned\007b"), "a\\x1b]0;pwned\\x07b");
  EXPECT_EQ(printable("one\ntwo\rthree\tfour"), "one\\ntwo\\rthree\\tfour");
  EXPECT_EQ(printable(std::string("nul\0del\177", 8)), "nul\\x00del\\x7f");
  EXPECT_EQ(printable("csi\302\2332J"), "csi\\u009b2J") << "C1 controls in UTF-8";
  EXPECT_EQ(printable("rtl\342\200\256evil"), "rtl\\u202eevil") << "bidirectional override";
  EXPECT_EQ(printable("bad\x9b\xff"), "bad\\x9b\\xff") << "bytes that are not UTF-8";
  EXPECT_EQ(printable("caf\xc3\xa9 \xe6\x97\xa5"), "caf\xc3\xa9 \xe6\x97\xa5")
      << "valid UTF-8 passes";
  const std::string once = printable("x\x1b[2J\n");
  EXPECT_EQ(printable(once), once) << "idempotent: printing it again changes nothing";
}

TEST(Graph, ErrorsNamingANodeOrValueArePrintable) {
  Graph g;
  ValueId a = g.add_input("a\x1b[31m", DType::F32, {3});
  ValueId b = g.add_input("b", DType::F32, {4});
  EXPECT_EQ(error_of([&] {
              g.add_node(ew(Mode::ADD, {a, b}, "evil\x1b[2J\nline"));
            }),
            "node 'evil\\x1b[2J\\nline' (Elemwise ADD): input shapes [3] and [4] do not broadcast");
  EXPECT_EQ(error_of([&] { g.add_input("a\x1b[31m", DType::F32, {3}); }),
            "value name 'a\\x1b[31m' is defined twice");
}

TEST(Graph, ReduceDimshuffleReshapeBroadcastConstantMatMulShapes) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {2, 3, 4});
  auto shape_of = [&](Node n) { return g.value(g.add_node(std::move(n))[0]).shape; };
  EXPECT_EQ(shape_of(op(OpType::Reduce, {x},
                        {{"mode", std::string("SUM")}, {"axes", std::vector<int64_t>{-1}}})),
            (Shape{2, 3, 1}));
  EXPECT_EQ(shape_of(op(OpType::Reduce, {x},
                        {{"mode", std::string("MAX")},
                         {"axes", std::vector<int64_t>{0, 2}},
                         {"keepdims", int64_t{0}}})),
            (Shape{3}));
  EXPECT_EQ(shape_of(op(OpType::Reduce, {x}, {{"mode", std::string("MEAN")}})), (Shape{1, 1, 1}));
  EXPECT_EQ(shape_of(op(OpType::Dimshuffle, {x}, {{"perm", std::vector<int64_t>{2, -1, 0, 1}}})),
            (Shape{4, 1, 2, 3}));
  EXPECT_EQ(shape_of(op(OpType::Reshape, {x}, {{"shape", std::vector<int64_t>{6, -1}}})),
            (Shape{6, 4}));
  EXPECT_EQ(shape_of(op(OpType::Broadcast, {x}, {{"shape", std::vector<int64_t>{5, 2, 3, 4}}})),
            (Shape{5, 2, 3, 4}));
  EXPECT_EQ(shape_of(op(OpType::Constant, {},
                        {{"dtype", std::string("f32")},
                         {"shape", std::vector<int64_t>{2}},
                         {"value", std::vector<double>{1, 2}}})),
            (Shape{2}));
  ValueId w = g.add_input("w", DType::F32, {4, 7});
  EXPECT_EQ(shape_of(op(OpType::MatMul, {x, w}, {})), (Shape{2, 3, 7}));
  EXPECT_NE(error_of([&] {
              g.add_node(op(OpType::MatMul, {w, x}, {}, "mm"));
            }).find("inner dimensions differ"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] {
        g.add_node(op(OpType::Dimshuffle, {x}, {{"perm", std::vector<int64_t>{0, 0, 1}}}, "d"));
      }).find("each of the 3 input axes once"),
      std::string::npos);
}

TEST(Graph, DuplicateNamesAndUndefinedValuesAreRejected) {
  Graph g;
  g.add_input("a", DType::F32, {3});
  EXPECT_EQ(error_of([&] { g.add_input("a", DType::F32, {3}); }),
            "value name 'a' is defined twice");
  EXPECT_NE(error_of([&] { g.add_node(ew(Mode::RELU, {42}, "bad")); }).find("undefined value"),
            std::string::npos);
  EXPECT_NE(error_of([&] { g.add_input("deep", DType::F32, Shape(9, 1)); }).find("rank 9"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { verify(g); }), "graph '' has no outputs");
}

// a -> relu -> r ; r -> exp -> e ; (r, e) -> add -> y : the diamond fusion sees.
struct Diamond {
  Graph g;
  ValueId a, r, e, y;
  NodeId relu, exp, add;
  Diamond() {
    a = g.add_input("a", DType::F32, {8});
    r = g.add_node(ew(Mode::RELU, {a}, "relu"))[0];
    e = g.add_node(ew(Mode::EXP, {r}, "exp"))[0];
    y = g.add_node(ew(Mode::ADD, {r, e}, "add"))[0];
    relu = 0, exp = 1, add = 2;
    g.mark_output(y);
  }
};

struct FakeSpec : FusedSignature {
  std::vector<ValueType> outs;
  std::vector<ValueType> output_types(const std::vector<ValueType>&) const override { return outs; }
  double flops(const std::vector<ValueType>&) const override { return 0; }
  const std::vector<NodeId>& replaced_nodes() const override { return nodes; }
  std::vector<NodeId> nodes;
};

// Replaces `nodes` of d's graph by a Fused node with `outputs` f32[8] outputs.
NodeId fuse(Diamond& d, const std::vector<NodeId>& nodes, size_t outputs) {
  Node fused;
  fused.op = OpType::Fused;
  fused.name = "fused";
  auto spec = std::make_shared<FakeSpec>();
  spec->outs.assign(outputs, {DType::F32, {8}});
  fused.payload = spec;
  return d.g.replace_nodes(nodes, fused);
}

TEST(Graph, ConsumersAreTheLiveReadersInIdOrderOnceEach) {
  Diamond d;  // a -> relu -> r; exp(r); add(r, exp)
  EXPECT_EQ(d.g.consumers(d.a), std::vector<NodeId>{d.relu});
  EXPECT_EQ(d.g.consumers(d.r), (std::vector<NodeId>{d.exp, d.add}));
  NodeId f = fuse(d, {d.relu, d.exp}, 2);  // reads a; add now reads its outputs
  EXPECT_EQ(d.g.consumers(d.a), std::vector<NodeId>{f});
  for (ValueId v : d.g.node(f).outputs) EXPECT_EQ(d.g.consumers(v), std::vector<NodeId>{d.add});
  // A node reading one value twice is listed once.
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {4});
  Node sq;
  sq.name = "sq";
  sq.op = OpType::Elemwise;
  sq.mode = Mode::MUL;
  sq.inputs = {x, x};
  g.add_node(sq);
  EXPECT_EQ(g.consumers(x).size(), 1u);
}

TEST(Graph, ReplaceNodesComputesLiveInsAndLiveOuts) {
  Diamond d;
  NodeId f = fuse(d, {d.relu, d.exp, d.add}, 1);
  EXPECT_EQ(d.g.node(f).inputs, std::vector<ValueId>{d.a});
  EXPECT_EQ(d.g.node(f).outputs, std::vector<ValueId>{d.y});
  EXPECT_EQ(d.g.live_node_count(), 1);
  EXPECT_EQ(d.g.topo_order(), std::vector<NodeId>{f});
  EXPECT_NO_THROW(verify(d.g));
}

TEST(Graph, ReplaceNodesKeepsValuesUsedOutsideAsOutputs) {
  Diamond d;
  NodeId f = fuse(d, {d.relu, d.exp}, 2);  // r is also read by add
  EXPECT_EQ(d.g.node(f).outputs, (std::vector<ValueId>{d.r, d.e}));
  EXPECT_EQ(d.g.topo_order(), (std::vector<NodeId>{f, d.add}));
  EXPECT_NO_THROW(verify(d.g));
}

TEST(Graph, ReplaceNodesRefusesACycle) {
  // relu and add fused without exp would need exp's output inside and exp's input outside.
  Diamond d;
  Node fused;
  fused.op = OpType::Fused;
  std::string msg = error_of([&] { d.g.replace_nodes({d.relu, d.add}, fused); });
  EXPECT_NE(msg.find("would create a cycle through node 'exp'"), std::string::npos) << msg;
  EXPECT_EQ(d.g.live_node_count(), 3);  // unchanged
}

// A subset's order follows its edges, not its ids (a rewrite's node has the highest id and
// feeds older nodes), ignores edges to nodes outside it, and refuses dead nodes.
TEST(Graph, TopoOrderOfASubsetFollowsItsEdges) {
  Diamond d;
  NodeId f = fuse(d, {d.relu, d.exp}, 2);
  EXPECT_EQ(d.g.topo_order({d.add, f}), (std::vector<NodeId>{f, d.add}));
  EXPECT_EQ(d.g.topo_order({d.add}), std::vector<NodeId>{d.add});
  std::string msg = error_of([&] { d.g.topo_order({d.relu, d.add}); });
  EXPECT_NE(msg.find("node id 0 is not a live node"), std::string::npos) << msg;
}

TEST(Graph, TopoOrderIsInsertionOrderAndDetectsConsumersOfDeadNodes) {
  Diamond d;
  EXPECT_EQ(d.g.topo_order(), (std::vector<NodeId>{0, 1, 2}));
  EXPECT_EQ(d.g.consumers(d.r), (std::vector<NodeId>{1, 2}));
}

TEST(OpTable, FlopsAndBytesFollowShapes) {
  Graph g;
  ValueId a = g.add_input("a", DType::F32, {1024});
  ValueId b = g.add_input("b", DType::F32, {1});
  g.add_node(ew(Mode::ADD, {a, b}));
  g.add_node(ew(Mode::EXP, {a}));
  EXPECT_EQ(node_flops(g, g.node(0)), 1024);
  EXPECT_EQ(node_bytes(g, g.node(0)), (1024 + 1 + 1024) * 4);
  EXPECT_EQ(node_flops(g, g.node(1)), 1024 * mode_info(Mode::EXP).flops);
}

}  // namespace
}  // namespace hf
