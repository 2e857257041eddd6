// The NHWC rewrite of Conv chains (runtime/ir/nhwc_layout.h): which nodes it
// moves to NHWC, that names of NCHW values, graph inputs and outputs are kept, and that the
// rewritten graph computes what the original does (the naive reference of tests/support)
// over a residual block, a depthwise stride-2 layer with odd sizes, a scalar operand, a value
// leaving the chain half-way and a batch of two, at 1, 2 and 3 threads, run twice.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "runtime/cpu/conv_onednn.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/nn_kernels.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "runtime/ir/nhwc_layout.h"
#include "tests/support/jit_env.h"
#include "tests/support/reference.h"

namespace hf {
namespace {

// x -> conv1 -> relu1 -> conv2 -> add(relu1) -> mul(s) -> dw (3x3/2, group 8) -> relu2 -> out;
// relu1 is a second graph output, and conv3 (1x1) reads relu2 as well; down (1x1/2, ResNet's
// downsampling) reads relu1, whose even height leaves a row its bands skip.
const char* kChain = R"({
  "inputs": [
    {"name": "x", "dtype": "f32", "shape": [2, 6, 10, 11]},
    {"name": "s", "dtype": "f32", "shape": [1]},
    {"name": "w1", "dtype": "f32", "shape": [8, 6, 3, 3]},
    {"name": "b1", "dtype": "f32", "shape": [8]},
    {"name": "w2", "dtype": "f32", "shape": [8, 8, 3, 3]},
    {"name": "w3", "dtype": "f32", "shape": [8, 1, 3, 3]},
    {"name": "w4", "dtype": "f32", "shape": [5, 8, 1, 1]},
    {"name": "w5", "dtype": "f32", "shape": [4, 8, 1, 1]}
  ],
  "nodes": [
    {"name": "conv1", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1]}, "inputs": ["x", "w1", "b1"]},
    {"name": "relu1", "op": "Elemwise", "mode": "RELU", "inputs": ["conv1:0"]},
    {"name": "conv2", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1]}, "inputs": ["relu1:0", "w2"]},
    {"name": "add", "op": "Elemwise", "mode": "ADD", "inputs": ["conv2:0", "relu1:0"]},
    {"name": "mul", "op": "Elemwise", "mode": "MUL", "inputs": ["add:0", "s"]},
    {"name": "dw", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1], "strides": [2, 2], "group": 8},
     "inputs": ["mul:0", "w3"]},
    {"name": "relu2", "op": "Elemwise", "mode": "RELU", "inputs": ["dw:0"]},
    {"name": "conv3", "op": "Conv", "inputs": ["relu2:0", "w4"]},
    {"name": "down", "op": "Conv", "attrs": {"strides": [2, 2]}, "inputs": ["relu1:0", "w5"]}
  ],
  "outputs": ["conv3:0", "relu1:0", "relu2:0", "down:0"]
})";

int count_op(const Graph& g, OpType op) {
  int n = 0;
  for (NodeId id : g.topo_order()) n += g.node(id).op == op;
  return n;
}

TEST(NhwcLayout, MovesConvChainsToNhwcWithOneTransposeAtEachEnd) {
  const Graph g = parse_graph_json(kChain, "chain");
  std::unique_ptr<Graph> nhwc = nhwc_conv_chains(g);
  ASSERT_NE(nhwc, nullptr);
  verify(*nhwc);
  for (NodeId id : nhwc->topo_order()) {
    const Node& n = nhwc->node(id);
    if (n.op == OpType::Conv) {
      EXPECT_EQ(n.attr_str("layout"), "NHWC") << n.name;
    }
  }
  // x in; conv3, relu1, relu2 and down out (relu2 also feeds conv3 inside the chain).
  EXPECT_EQ(count_op(*nhwc, OpType::Dimshuffle), 5);
  ASSERT_EQ(nhwc->outputs().size(), g.outputs().size());
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    EXPECT_EQ(nhwc->value(nhwc->outputs()[i]).name, g.value(g.outputs()[i]).name);
    EXPECT_EQ(nhwc->value(nhwc->outputs()[i]).shape, g.value(g.outputs()[i]).shape);
  }
  for (ValueId v : g.inputs()) EXPECT_TRUE(nhwc->find_value(g.value(v).name)) << g.value(v).name;
}

// The rewritten graph against the naive reference of the original, at 1, 2 and 3 threads,
// twice each (the second run reuses every buffer and packed weight). atol: for outputs that
// cancel, a few f32 ulps of the magnitude of the terms summed.
void expect_nhwc_computes_the_reference(const Graph& g, double atol = 1e-5) {
  std::unique_ptr<Graph> nhwc = nhwc_conv_chains(g);
  ASSERT_NE(nhwc, nullptr);
  std::vector<HostTensor> in = random_inputs(g, 11);
  std::vector<HostTensor> ref = test::reference_run(g, in);
  for (int threads : {1, 2, 3}) {
    cpu::ThreadPool pool(threads);
    cpu::CpuBackend backend(&pool);
    Executor exec(*nhwc, backend);
    for (int iter = 0; iter < 2; ++iter) {
      auto out = exec.run(views(in));
      ASSERT_EQ(out.size(), ref.size());
      for (size_t i = 0; i < out.size(); ++i) {
        ASSERT_EQ(out[i].shape, ref[i].shape());
        test::Mismatch m = test::compare(ref[i].view(), out[i], 1e-4, atol);
        EXPECT_EQ(m.index, -1) << threads << " threads, iteration " << iter << ", output " << i
                               << " element " << m.index << ": expected " << m.expected << ", got "
                               << m.actual;
      }
    }
  }
}

TEST(NhwcLayout, ComputesWhatTheNchwGraphDoes) {
  expect_nhwc_computes_the_reference(parse_graph_json(kChain, "chain"));
}

// A last stage of ResNet, small: images of 5x6 and 3x3 with more channels than pixels, where
// the Convs take the blocked plan (slices of 8- or 16-channel output blocks, conv_onednn.h):
// a residual block (the Add's operand read in the output's layout), 80 output channels that
// split unevenly, a stride-2 downsampling, a batch of two.
const char* kDeepStage = R"({
  "inputs": [
    {"name": "x", "dtype": "f32", "shape": [2, 16, 5, 6]},
    {"name": "w1", "dtype": "f32", "shape": [32, 16, 3, 3]},
    {"name": "b1", "dtype": "f32", "shape": [32]},
    {"name": "w2", "dtype": "f32", "shape": [32, 32, 3, 3]},
    {"name": "w3", "dtype": "f32", "shape": [80, 32, 3, 3]}
  ],
  "nodes": [
    {"name": "conv1", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1]}, "inputs": ["x", "w1", "b1"]},
    {"name": "relu1", "op": "Elemwise", "mode": "RELU", "inputs": ["conv1:0"]},
    {"name": "conv2", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1]}, "inputs": ["relu1:0", "w2"]},
    {"name": "add", "op": "Elemwise", "mode": "ADD", "inputs": ["conv2:0", "relu1:0"]},
    {"name": "relu2", "op": "Elemwise", "mode": "RELU", "inputs": ["add:0"]},
    {"name": "conv3", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1], "strides": [2, 2]},
     "inputs": ["relu2:0", "w3"]}
  ],
  "outputs": ["conv3:0", "relu2:0"]
})";

TEST(NhwcLayout, SmallImagesWithManyChannelsSplitOutputChannels) {
  const Graph g = parse_graph_json(kDeepStage, "deep");
  // Each Conv takes the blocked plan from two threads on (one thread has nothing to split).
  std::unique_ptr<Graph> nhwc = nhwc_conv_chains(g);
  ASSERT_NE(nhwc, nullptr);
  for (int threads : {1, 2, 3}) {
    cpu::ThreadPool pool(threads);
    for (NodeId id : nhwc->topo_order()) {
      const Node& n = nhwc->node(id);
      if (n.op != OpType::Conv) continue;
      const ConvGeometry geo =
          conv_geometry(n, nhwc->value(n.inputs[0]).shape, nhwc->value(n.inputs[1]).shape);
      ASSERT_TRUE(geo.nhwc) << n.name;
      cpu::Conv2d conv(geo, pool, DType::F32, true);
      EXPECT_EQ(std::string(conv.describe()).find(cpu::blocked_layout()) != std::string::npos,
                threads > 1)
          << n.name << " at " << threads << " threads: " << conv.describe();
    }
  }
  // Three Convs of 144-288 products each on values up to about 10: terms' sums near 1e3.
  expect_nhwc_computes_the_reference(g, 2e-3);
}

// ResNet's stem and head: conv -> relu -> MaxPool 3x3/2 (padded) -> conv -> AveragePool
// 2x2 (ceil, padded, counting the pads) -> conv -> global average (Reduce MEAN over H, W,
// kept) -> flatten; odd sizes, a batch of two. The pools and the Reduce join the chain.
const char* kPools = R"({
  "inputs": [
    {"name": "x", "dtype": "f32", "shape": [2, 3, 17, 15]},
    {"name": "w1", "dtype": "f32", "shape": [8, 3, 3, 3]},
    {"name": "w2", "dtype": "f32", "shape": [8, 8, 3, 3]},
    {"name": "w3", "dtype": "f32", "shape": [6, 8, 1, 1]}
  ],
  "nodes": [
    {"name": "conv1", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1]}, "inputs": ["x", "w1"]},
    {"name": "relu", "op": "Elemwise", "mode": "RELU", "inputs": ["conv1:0"]},
    {"name": "maxpool", "op": "MaxPool",
     "attrs": {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
     "inputs": ["relu:0"]},
    {"name": "conv2", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1]}, "inputs": ["maxpool:0", "w2"]},
    {"name": "avgpool", "op": "AveragePool",
     "attrs": {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 1, 1], "ceil_mode": 1,
               "count_include_pad": 1},
     "inputs": ["conv2:0"]},
    {"name": "conv3", "op": "Conv", "inputs": ["avgpool:0", "w3"]},
    {"name": "gap", "op": "Reduce", "attrs": {"mode": "MEAN", "axes": [2, 3], "keepdims": 1},
     "inputs": ["conv3:0"]},
    {"name": "flat", "op": "Reshape", "attrs": {"shape": [2, 6]}, "inputs": ["gap:0"]}
  ],
  "outputs": ["flat:0", "maxpool:0"]
})";

TEST(NhwcLayout, PoolsAndAGlobalAverageStayInTheChain) {
  const Graph g = parse_graph_json(kPools, "pools");
  std::unique_ptr<Graph> nhwc = nhwc_conv_chains(g);
  ASSERT_NE(nhwc, nullptr);
  verify(*nhwc);
  for (NodeId id : nhwc->topo_order()) {
    const Node& n = nhwc->node(id);
    if (n.op == OpType::Conv || n.op == OpType::MaxPool || n.op == OpType::AveragePool) {
      EXPECT_EQ(n.attr_str("layout"), "NHWC") << n.name;
    }
    if (n.op == OpType::Reduce) {
      EXPECT_EQ(n.attr_ints("axes"), (std::vector<int64_t>{1, 2})) << n.name;
    }
  }
  // x in; the global average and the MaxPool (a graph output) out: nothing between.
  EXPECT_EQ(count_op(*nhwc, OpType::Dimshuffle), 3);
  std::vector<HostTensor> in = random_inputs(g, 3);
  std::vector<HostTensor> ref = test::reference_run(g, in);
  for (int threads : {1, 2, 3}) {
    cpu::ThreadPool pool(threads);
    cpu::CpuBackend backend(&pool);
    Executor exec(*nhwc, backend);
    auto out = exec.run(views(in));
    ASSERT_EQ(out.size(), ref.size());
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out[i].shape, ref[i].shape());
      test::Mismatch m = test::compare(ref[i].view(), out[i], 1e-4, 1e-5);
      EXPECT_EQ(m.index, -1) << threads << " threads, output " << i << " element " << m.index
                             << ": expected " << m.expected << ", got " << m.actual;
    }
  }
}

// The NHWC pooling kernel against the NCHW one on the same data: bitwise, max (with a NaN)
// and average, padded, dilated, ceil mode, counting the pads or not. 19 channels: a block of
// 16 held in registers and 3 after it; 83: blocks of 64 and 16 and 3 after them, a NaN in each.
TEST(NhwcLayout, NhwcPoolingIsBitwiseTheNchwOne) {
  struct Case {
    const char* op;
    const char* attrs;
  };
  const Case cases[] = {
      {"MaxPool", R"({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})"},
      {"MaxPool", R"({"kernel_shape": [2, 3], "dilations": [2, 1], "ceil_mode": 1})"},
      {"AveragePool", R"({"kernel_shape": [3, 3], "strides": [2, 1], "pads": [1, 0, 1, 2]})"},
      {"AveragePool",
       R"({"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 0, 0], "count_include_pad": 1, "ceil_mode": 1})"},
  };
  for (const int64_t C : {19, 83})
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.op) + " " + c.attrs + ", " + std::to_string(C) + " channels");
      const std::string ch = std::to_string(C);
      const std::string nchw_text =
          R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [2, )" + ch + R"(, 11, 13]}],
            "nodes": [{"name": "p", "op": ")" +
          c.op + R"(", "attrs": )" + c.attrs + R"(, "inputs": ["x"]}], "outputs": ["p:0"]})";
      const Graph nchw = parse_graph_json(nchw_text, "nchw");
      std::string attrs = c.attrs;
      attrs.insert(1, R"("layout": "NHWC", )");
      const std::string nhwc_text =
          R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [2, 11, 13, )" + ch + R"(]}],
            "nodes": [{"name": "p", "op": ")" +
          c.op + R"(", "attrs": )" + attrs + R"(, "inputs": ["x"]}], "outputs": ["p:0"]})";
      const Graph nhwc = parse_graph_json(nhwc_text, "nhwc");
      std::vector<HostTensor> in = random_inputs(nchw, 7);
      float* x = in[0].view().as<float>();
      // Image 0: one window gets a NaN in channel 0, and with 83 channels in channels 64
      // (the block of 16) and 81 (after the blocks) too, at other pixels.
      x[5 * 143 + 17] = NAN;
      if (C > 64) x[64 * 143 + 40] = x[81 * 143 + 90] = NAN;
      HostTensor t(DType::F32, {2, 11, 13, C});
      float* y = t.view().as<float>();
      for (int n = 0; n < 2; ++n)
        for (int k = 0; k < C; ++k)
          for (int i = 0; i < 11 * 13; ++i) y[(n * 143 + i) * C + k] = x[(n * C + k) * 143 + i];
      cpu::ThreadPool pool(2);
      cpu::CpuBackend backend(&pool);
      Executor a(nchw, backend), b(nhwc, backend);
      std::vector<HostTensor> tin;
      tin.push_back(std::move(t));
      const TensorView want = a.run(views(in))[0];
      const TensorView got = b.run(views(tin))[0];
      ASSERT_EQ(got.shape, (Shape{want.shape[0], want.shape[2], want.shape[3], want.shape[1]}));
      const int64_t P = want.shape[2] * want.shape[3];
      std::set<int64_t> nan_channels;
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t k = 0; k < C; ++k)
          for (int64_t i = 0; i < P; ++i) {
            const float e = want.as<float>()[(n * C + k) * P + i];
            const float v = got.as<float>()[(n * P + i) * C + k];
            if (std::isnan(e)) {
              nan_channels.insert(k);
              EXPECT_TRUE(std::isnan(v)) << n << "," << k << "," << i;
            } else {
              EXPECT_EQ(e, v) << n << "," << k << "," << i;
            }
          }
      EXPECT_EQ(nan_channels.size(), C > 64 ? 3u : 1u);
    }
}

TEST(NhwcLayout, LeavesALoneConvAndOtherLayoutsAlone) {
  const char* one = R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [1, 3, 8, 8]},
               {"name": "w", "dtype": "f32", "shape": [4, 3, 3, 3]}],
    "nodes": [{"name": "c", "op": "Conv", "inputs": ["x", "w"]},
              {"name": "r", "op": "Elemwise", "mode": "RELU", "inputs": ["c:0"]}],
    "outputs": ["r:0"]})";
  EXPECT_EQ(nhwc_conv_chains(parse_graph_json(one, "one")), nullptr);
  // A broadcast operand ([C,1,1]) would need its own transpose: the Add ends the chain.
  const char* bias = R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [1, 3, 8, 8]},
               {"name": "w", "dtype": "f32", "shape": [3, 3, 1, 1]},
               {"name": "b", "dtype": "f32", "shape": [3, 1, 1]}],
    "nodes": [{"name": "c1", "op": "Conv", "inputs": ["x", "w"]},
              {"name": "a", "op": "Elemwise", "mode": "ADD", "inputs": ["c1:0", "b"]},
              {"name": "c2", "op": "Conv", "inputs": ["a:0", "w"]}],
    "outputs": ["c2:0"]})";
  EXPECT_EQ(nhwc_conv_chains(parse_graph_json(bias, "bias")), nullptr);
}

TEST(NhwcLayout, RefusesAnUnknownLayoutNamingTheNode) {
  const char* bad = R"({
    "inputs": [{"name": "x", "dtype": "f32", "shape": [1, 3, 8, 8]},
               {"name": "w", "dtype": "f32", "shape": [4, 3, 3, 3]}],
    "nodes": [{"name": "c", "op": "Conv", "attrs": {"layout": "NCWH"}, "inputs": ["x", "w"]}],
    "outputs": ["c:0"]})";
  try {
    parse_graph_json(bad, "bad");
    FAIL() << "accepted layout NCWH";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'c'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("layout"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hf
