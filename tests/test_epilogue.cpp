// Epilogue fusion on the CPU: a MatMul or Conv with the elementwise ops after it as one Fused
// node (runtime/ir/epilogue.h) whose steps run on each block of the library call's output.
//
// Detection (fusion/epilogue_detect.h): what a chain takes and where it stops. Numerics: the
// fused graph against the unfused one, bitwise (the steps are the unfused ops' own loops on
// the same f32 values), over every path that reports blocks: oneDNN MatMul row blocks,
// column blocks (a matrix-vector product) and batched products, the matmul() fallback, Conv's
// NCHW 1x1 plan, its NHWC plan with reorders, NHWC chains of the graph's own, depthwise; with
// odd sizes, bias vectors along the innermost axis, per-channel and per-row operands, full
// residuals, literals, PowC and GELU's DAG; at 1, 2 and 3 threads. The session: an epilogue
// is selected, validated and reported like a region, and is off where asked.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "fusion/detect.h"
#include "fusion/region_spec.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/plan.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/conv_post_ops.h"
#include "runtime/ir/epilogue.h"
#include "runtime/ir/nhwc_layout.h"
#include "session/session.h"
#include "tests/support/fixed_machine.h"
#include "tests/support/graph_text.h"
#include "tests/support/jit_env.h"

namespace hf {
namespace {

std::string literal(const std::string& name, double v) {
  return R"({"name": ")" + name +
         R"(", "op": "Constant", "attrs": {"dtype": "f32", "shape": [1], "value": [)" +
         std::to_string(v) + "]}, \"inputs\": []}";
}

fusion::Detection detect(const Graph& g, bool epilogues = true) {
  fusion::DetectOptions o;
  o.epilogues = epilogues;
  return fusion::detect_regions(g, o);
}

// The summaries of the epilogue regions, in detection order.
std::vector<std::string> epilogues(const Graph& g, const fusion::Detection& d) {
  std::vector<std::string> out;
  for (const fusion::Region& r : d.regions)
    if (r.heavy) out.push_back(fusion::build_region_kernel(g, r).epilogue->summary());
  return out;
}

// How fused results must match: bitwise where the fused op runs the unfused op's kernel
// with its epilogue added, else within what the session validates a heavy op with its
// epilogue to (compare.h: oneDNN picked another kernel for the post-ops, which adds the
// products in another order).
enum class Match { Bitwise, LibraryOrder };

// Fuses every epilogue region of `g` and checks the fused graph's outputs against the
// unfused graph's at 1, 2 and 3 threads, twice each (packed weights are reused).
void expect_same_results(const Graph& g, size_t want_epilogues, Match match = Match::Bitwise) {
  const fusion::Detection d = detect(g);
  Graph fused = g;
  size_t n = 0;
  for (const fusion::Region& r : d.regions)
    if (r.heavy) {
      fusion::fuse_region(fused, r);
      ++n;
    }
  ASSERT_EQ(n, want_epilogues);
  verify(fused);
  const std::vector<HostTensor> in = random_inputs(g, 7);
  for (int threads : {1, 2, 3}) {
    cpu::ThreadPool pool(threads);
    cpu::CpuBackend backend(&pool);
    Executor ref(g, backend), got(fused, backend);
    for (int iter = 0; iter < 2; ++iter) {
      auto want = ref.run(views(in));
      std::vector<HostTensor> w;
      for (const TensorView& v : want) {
        w.emplace_back(v.dtype, v.shape);
        std::memcpy(w.back().data(), v.data, w.back().bytes());
      }
      auto out = got.run(views(in));
      ASSERT_EQ(out.size(), w.size());
      for (size_t o = 0; o < out.size(); ++o) {
        ASSERT_EQ(out[o].shape, w[o].shape());
        if (match == Match::LibraryOrder) {
          const Mismatch m = compare(w[o].view(), out[o], heavy_epilogue_tolerance(w[o].view()));
          ASSERT_EQ(m.index, -1) << threads << " threads, iteration " << iter << ", output " << o
                                 << " element " << m.index << ": fused " << m.actual << ", unfused "
                                 << m.expected;
          continue;
        }
        const float* a = out[o].as<const float>();
        const float* b = w[o].view().as<const float>();
        for (int64_t i = 0; i < out[o].numel(); ++i)
          ASSERT_TRUE(std::memcmp(&a[i], &b[i], 4) == 0 || (std::isnan(a[i]) && std::isnan(b[i])))
              << threads << " threads, iteration " << iter << ", output " << o << " element " << i
              << ": fused " << a[i] << ", unfused " << b[i];
      }
    }
  }
}

// ---- detection ---------------------------------------------------------------------------

// x [2,37,19] @ w [19,45] + bias [45], then GELU as ONNX exports it (x read twice).
const char* kLinearGeluIn = R"({"name": "x", "dtype": "f32", "shape": [2, 37, 19]},
    {"name": "w", "dtype": "f32", "shape": [19, 45]},
    {"name": "b", "dtype": "f32", "shape": [45]})";
std::string linear_gelu_nodes() {
  return literal("sqrt2", 1.4142135381698608) + "," + literal("one", 1) + "," +
         literal("half", 0.5) + R"(,
    {"name": "mm", "op": "MatMul", "inputs": ["x", "w"]},
    {"name": "bias", "op": "Elemwise", "mode": "ADD", "inputs": ["mm:0", "b"]},
    {"name": "div", "op": "Elemwise", "mode": "TRUE_DIV", "inputs": ["bias:0", "sqrt2:0"]},
    {"name": "erf", "op": "Elemwise", "mode": "ERF", "inputs": ["div:0"]},
    {"name": "add1", "op": "Elemwise", "mode": "ADD", "inputs": ["erf:0", "one:0"]},
    {"name": "mul1", "op": "Elemwise", "mode": "MUL", "inputs": ["bias:0", "add1:0"]},
    {"name": "mul2", "op": "Elemwise", "mode": "MUL", "inputs": ["mul1:0", "half:0"]})";
}

TEST(EpilogueDetect, TakesBiasAndGeluWhoseInputIsReadTwice) {
  Graph g = graph_text(kLinearGeluIn, linear_gelu_nodes(), R"("mul2:0")");
  fusion::Detection d = detect(g);
  EXPECT_EQ(epilogues(g, d), std::vector<std::string>{"MatMul+ADD+TRUE_DIV+ERF+ADD+MUL+MUL"});
  ASSERT_EQ(d.regions.size(), 1u);  // the literals went with it; no JIT region is left
  EXPECT_EQ(d.regions[0].nodes.size(), 10u);
  const fusion::Decision* dec = d.decision_of(d.regions[0].nodes.front());
  ASSERT_NE(dec, nullptr);
  EXPECT_TRUE(dec->fused);
  EXPECT_NE(dec->reason.find("epilogue"), std::string::npos) << dec->reason;
  // Off unless asked: the chain is then a JIT region of its own.
  fusion::Detection off = detect(g, false);
  EXPECT_TRUE(epilogues(g, off).empty());
  ASSERT_EQ(off.regions.size(), 1u);
  EXPECT_FALSE(off.regions[0].heavy);
}

TEST(EpilogueDetect, StopsWhereAValueIsAlsoReadOutside) {
  // bias's result feeds relu and a second MatMul: the epilogue is the ADD alone, and relu
  // (one node) is left unfused.
  Graph g = graph_text(R"({"name": "x", "dtype": "f32", "shape": [8, 16]},
      {"name": "w", "dtype": "f32", "shape": [16, 16]},
      {"name": "b", "dtype": "f32", "shape": [16]})",
                       R"({"name": "mm", "op": "MatMul", "inputs": ["x", "w"]},
      {"name": "bias", "op": "Elemwise", "mode": "ADD", "inputs": ["mm:0", "b"]},
      {"name": "relu", "op": "Elemwise", "mode": "RELU", "inputs": ["bias:0"]},
      {"name": "mm2", "op": "MatMul", "inputs": ["bias:0", "w"]},
      {"name": "out", "op": "Elemwise", "mode": "ADD", "inputs": ["mm2:0", "relu:0"]})",
                       R"("out:0")");
  fusion::Detection d = detect(g);
  // mm2's epilogue takes `out`: relu's result was computed before mm2.
  EXPECT_EQ(epilogues(g, d), (std::vector<std::string>{"MatMul+ADD", "MatMul+ADD"}));
  expect_same_results(g, 2);
}

TEST(EpilogueDetect, NeverTakesAnOperandThatDependsOnTheHeavyOp) {
  // Softmax after a MatMul: EXP joins, the division by the row sum (computed from EXP's
  // result) cannot, and stays with the Reduce in a JIT region.
  Graph g = graph_text(R"({"name": "x", "dtype": "f32", "shape": [6, 10]},
      {"name": "w", "dtype": "f32", "shape": [10, 12]})",
                       R"({"name": "mm", "op": "MatMul", "inputs": ["x", "w"]},
      {"name": "e", "op": "Elemwise", "mode": "EXP", "inputs": ["mm:0"]},
      {"name": "s", "op": "Reduce", "attrs": {"mode": "SUM", "axes": [1], "keepdims": 1},
       "inputs": ["e:0"]},
      {"name": "p", "op": "Elemwise", "mode": "TRUE_DIV", "inputs": ["e:0", "s:0"]})",
                       R"("p:0")");
  fusion::Detection d = detect(g);
  EXPECT_EQ(epilogues(g, d), std::vector<std::string>{"MatMul+EXP"});
  expect_same_results(g, 1);
}

TEST(EpilogueDetect, LeavesAHeavyOutputThatIsNeededAsItIs) {
  Graph g = graph_text(R"({"name": "x", "dtype": "f32", "shape": [4, 8]},
      {"name": "w", "dtype": "f32", "shape": [8, 8]})",
                       R"({"name": "mm", "op": "MatMul", "inputs": ["x", "w"]},
      {"name": "r", "op": "Elemwise", "mode": "RELU", "inputs": ["mm:0"]})",
                       R"("r:0", "mm:0")");
  EXPECT_TRUE(epilogues(g, detect(g)).empty());
  // Integer or f16 chains are left alone too.
  Graph h = graph_text(R"({"name": "x", "dtype": "f16", "shape": [4, 8]},
      {"name": "w", "dtype": "f16", "shape": [8, 8]})",
                       R"({"name": "mm", "op": "MatMul", "inputs": ["x", "w"]},
      {"name": "r", "op": "Elemwise", "mode": "RELU", "inputs": ["mm:0"]})",
                       R"("r:0")");
  EXPECT_TRUE(epilogues(h, detect(h)).empty());
}

// ---- numerics: MatMul ----------------------------------------------------------------------

TEST(EpilogueNumerics, LinearWithBiasAndGeluOverOddSizes) {
  expect_same_results(graph_text(kLinearGeluIn, linear_gelu_nodes(), R"("mul2:0")"), 1);
}

TEST(EpilogueNumerics, LinearWithConstantWeightsPackedOnce) {
  Graph g = graph_text(R"({"name": "x", "dtype": "f32", "shape": [33, 40]},
      {"name": "b", "dtype": "f32", "shape": [1, 700]})",
                       R"({"name": "w", "op": "Constant",
       "attrs": {"dtype": "f32", "shape": [40, 700], "value": [0.03125]}, "inputs": []},
      {"name": "mm", "op": "MatMul", "inputs": ["x", "w:0"]},
      {"name": "bias", "op": "Elemwise", "mode": "ADD", "inputs": ["mm:0", "b"]},
      {"name": "t", "op": "Elemwise", "mode": "TANH", "inputs": ["bias:0"]})",
                       R"("t:0")");
  expect_same_results(g, 1);
}

TEST(EpilogueNumerics, MatrixVectorColumnBlocksWithResidualAndRelu) {
  Graph g = graph_text(R"({"name": "x", "dtype": "f32", "shape": [1, 3, 64]},
      {"name": "w", "dtype": "f32", "shape": [64, 301]},
      {"name": "r", "dtype": "f32", "shape": [1, 3, 301]})",
                       R"({"name": "mm", "op": "MatMul", "inputs": ["x", "w"]},
      {"name": "res", "op": "Elemwise", "mode": "ADD", "inputs": ["r", "mm:0"]},
      {"name": "relu", "op": "Elemwise", "mode": "RELU", "inputs": ["res:0"]})",
                       R"("relu:0")");
  expect_same_results(g, 1);
}

TEST(EpilogueNumerics, AttentionScoresWithScaleAndBroadcastMask) {
  Graph g = graph_text(R"({"name": "q", "dtype": "f32", "shape": [2, 3, 5, 16]},
      {"name": "k", "dtype": "f32", "shape": [2, 3, 16, 33]},
      {"name": "mask", "dtype": "f32", "shape": [2, 1, 5, 33]})",
                       literal("scale", 0.25) + R"(,
      {"name": "mm", "op": "MatMul", "inputs": ["q", "k"]},
      {"name": "mul", "op": "Elemwise", "mode": "MUL", "inputs": ["mm:0", "scale:0"]},
      {"name": "add", "op": "Elemwise", "mode": "ADD", "inputs": ["mul:0", "mask"]})",
                       R"("add:0")");
  expect_same_results(g, 1);
}

TEST(EpilogueNumerics, FallbackMatmulWithPerRowOperandAndPowC) {
  // Batches (2,1) x (1,3): oneDNN's plan refuses them, matmul() runs and the blocks come
  // after. The per-row operand [5,1] is broadcast along the innermost axis.
  Graph g = graph_text(R"({"name": "a", "dtype": "f32", "shape": [2, 1, 5, 7]},
      {"name": "b", "dtype": "f32", "shape": [1, 3, 7, 9]},
      {"name": "row", "dtype": "f32", "shape": [5, 1]})",
                       R"({"name": "mm", "op": "MatMul", "inputs": ["a", "b"]},
      {"name": "sq", "op": "PowC", "attrs": {"exponent": 2.0}, "inputs": ["mm:0"]},
      {"name": "sub", "op": "Elemwise", "mode": "SUB", "inputs": ["sq:0", "row"]})",
                       R"("sub:0")");
  expect_same_results(g, 1);
}

// ---- numerics: Conv ------------------------------------------------------------------------

TEST(EpilogueNumerics, PointwiseConvWithPerChannelAddAndClip) {
  Graph g = graph_text(R"({"name": "x", "dtype": "f32", "shape": [2, 16, 7, 9]},
      {"name": "w", "dtype": "f32", "shape": [24, 16, 1, 1]},
      {"name": "b", "dtype": "f32", "shape": [24]},
      {"name": "c", "dtype": "f32", "shape": [24, 1, 1]})",
                       literal("lo", -0.25) + "," + literal("hi", 0.5) + R"(,
      {"name": "conv", "op": "Conv", "inputs": ["x", "w", "b"]},
      {"name": "add", "op": "Elemwise", "mode": "ADD", "inputs": ["conv:0", "c"]},
      {"name": "clip", "op": "Elemwise", "mode": "CLIP", "inputs": ["add:0", "lo:0", "hi:0"]})",
                       R"("clip:0")");
  expect_same_results(g, 1);
}

TEST(EpilogueNumerics, StridedConvThroughNhwcReordersWithResidual) {
  Graph g = graph_text(
      R"({"name": "x", "dtype": "f32", "shape": [1, 6, 11, 13]},
      {"name": "w", "dtype": "f32", "shape": [10, 6, 3, 3]},
      {"name": "r", "dtype": "f32", "shape": [1, 10, 6, 7]})",
      R"({"name": "conv", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1], "strides": [2, 2]},
       "inputs": ["x", "w"]},
      {"name": "add", "op": "Elemwise", "mode": "ADD", "inputs": ["conv:0", "r"]},
      {"name": "relu", "op": "Elemwise", "mode": "RELU", "inputs": ["add:0"]})",
      R"("relu:0")");
  expect_same_results(g, 1);
}

TEST(EpilogueNumerics, NhwcChainOfTheGraphsOwnWithDepthwiseAndClip) {
  // Lowered by the CPU's own NHWC rewrite, as a session does: the Convs run on NHWC values.
  Graph g = graph_text(R"({"name": "x", "dtype": "f32", "shape": [2, 8, 9, 11]},
      {"name": "w1", "dtype": "f32", "shape": [8, 8, 1, 1]},
      {"name": "b1", "dtype": "f32", "shape": [8]},
      {"name": "w2", "dtype": "f32", "shape": [8, 1, 3, 3]},
      {"name": "w3", "dtype": "f32", "shape": [5, 8, 1, 1]})",
                       literal("lo", 0) + "," + literal("hi", 0.75) + R"(,
      {"name": "pw", "op": "Conv", "inputs": ["x", "w1", "b1"]},
      {"name": "clip1", "op": "Elemwise", "mode": "CLIP", "inputs": ["pw:0", "lo:0", "hi:0"]},
      {"name": "dw", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1], "strides": [2, 2], "group": 8},
       "inputs": ["clip1:0", "w2"]},
      {"name": "clip2", "op": "Elemwise", "mode": "CLIP", "inputs": ["dw:0", "lo:0", "hi:0"]},
      {"name": "proj", "op": "Conv", "inputs": ["clip2:0", "w3"]})",
                       R"("proj:0")");
  std::unique_ptr<Graph> nhwc = nhwc_conv_chains(g);
  ASSERT_NE(nhwc, nullptr);
  EXPECT_EQ(epilogues(*nhwc, detect(*nhwc)), (std::vector<std::string>{"Conv+CLIP", "Conv+CLIP"}));
  expect_same_results(*nhwc, 2);
}

TEST(EpilogueNumerics, NhwcResidualBlockInRegistersAndThroughBlocks) {
  // conv2's epilogue (ADD of the block's input, then RELU) maps onto oneDNN post-ops (a
  // binary add of an operand in the output's layout, then relu); conv1's (TANH) does not,
  // and runs on blocks.
  Graph g = graph_text(R"({"name": "x", "dtype": "f32", "shape": [1, 8, 10, 7]},
      {"name": "w1", "dtype": "f32", "shape": [8, 8, 3, 3]},
      {"name": "w2", "dtype": "f32", "shape": [8, 8, 3, 3]})",
                       R"({"name": "c1", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1]},
       "inputs": ["x", "w1"]},
      {"name": "m", "op": "Elemwise", "mode": "TANH", "inputs": ["c1:0"]},
      {"name": "c2", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1]}, "inputs": ["m:0", "w2"]},
      {"name": "res", "op": "Elemwise", "mode": "ADD", "inputs": ["c2:0", "x"]},
      {"name": "relu", "op": "Elemwise", "mode": "RELU", "inputs": ["res:0"]})",
                       R"("relu:0")");
  std::unique_ptr<Graph> nhwc = nhwc_conv_chains(g);
  ASSERT_NE(nhwc, nullptr);
  EXPECT_EQ(epilogues(*nhwc, detect(*nhwc)),
            (std::vector<std::string>{"Conv+TANH", "Conv+ADD+RELU"}));
  expect_same_results(*nhwc, 2);
}

// ResNet's bottleneck: the block's input `ra` is read last by the third Conv's epilogue (its
// residual ADD), so that Conv writes its output over `ra` (Backend::writes_over): one buffer
// for both in the plan, and still bitwise the unfused results, on each path that reads the
// residual: oneDNN's sum (1x1 Convs: the kernel the Conv has alone) or a copy (a binary
// post-op), its blocked plan's reorders (two and three threads), Winograd's output transform.
void expect_residual_written_over(int64_t channels, int64_t h, int64_t w, int64_t k) {
  const std::string c = std::to_string(channels), kk = std::to_string(k), pad = k == 3 ? "1" : "0";
  const std::string weights = "[" + c + ", " + c + ", " + kk + ", " + kk + "]";
  const std::string conv_attrs =
      R"({"pads": [)" + pad + ", " + pad + ", " + pad + ", " + pad + "]}";
  Graph g = graph_text(R"({"name": "x", "dtype": "f32", "shape": [1, )" + c + ", " +
                           std::to_string(h) + ", " + std::to_string(w) + R"(]},
      {"name": "wa", "dtype": "f32", "shape": )" +
                           weights + R"(},
      {"name": "wb", "dtype": "f32", "shape": )" +
                           weights + R"(},
      {"name": "wc", "dtype": "f32", "shape": )" +
                           weights + "}",
                       R"({"name": "ca", "op": "Conv", "attrs": )" + conv_attrs +
                           R"(, "inputs": ["x", "wa"]},
      {"name": "ra", "op": "Elemwise", "mode": "RELU", "inputs": ["ca:0"]},
      {"name": "cb", "op": "Conv", "attrs": )" +
                           conv_attrs + R"(, "inputs": ["ra:0", "wb"]},
      {"name": "rb", "op": "Elemwise", "mode": "RELU", "inputs": ["cb:0"]},
      {"name": "cc", "op": "Conv", "attrs": )" +
                           conv_attrs + R"(, "inputs": ["rb:0", "wc"]},
      {"name": "res", "op": "Elemwise", "mode": "ADD", "inputs": ["cc:0", "ra:0"]},
      {"name": "out", "op": "Elemwise", "mode": "RELU", "inputs": ["res:0"]})",
                       R"("out:0")");
  std::unique_ptr<Graph> nhwc = nhwc_conv_chains(g);
  ASSERT_NE(nhwc, nullptr);
  const fusion::Detection d = detect(*nhwc);
  ASSERT_EQ(epilogues(*nhwc, d),
            (std::vector<std::string>{"Conv+RELU", "Conv+RELU", "Conv+ADD+RELU"}));
  Graph fused = *nhwc;
  for (const fusion::Region& r : d.regions) fusion::fuse_region(fused, r);
  for (int threads : {1, 2}) {
    cpu::ThreadPool pool(threads);
    cpu::CpuBackend backend(&pool);
    Plan plan(fused, backend);
    int written_over = 0;
    for (const Step& st : plan.steps()) {
      const auto* e = dynamic_cast<const HeavyEpilogue*>(fused.node(st.node).payload.get());
      if (!e || e->summary() != "Conv+ADD+RELU") continue;
      for (const TensorView& in : st.inputs) written_over += in.data == st.outputs[0].data;
    }
    EXPECT_EQ(written_over, 1) << threads << " threads";
  }
  expect_same_results(*nhwc, 3);
}

TEST(EpilogueNumerics, AResidualThatDiesAtItsConvIsWrittenOver) {
  expect_residual_written_over(64, 7, 7, 1);    // 1x1: the sum where oneDNN keeps its kernel
  expect_residual_written_over(16, 16, 18, 3);  // Winograd
  expect_residual_written_over(16, 5, 6, 3);    // direct 3x3, blocked from two threads
}

TEST(EpilogueNumerics, NhwcWinogradResidualBlockInRegistersAndThroughBlocks) {
  // 16 channels on 16x18 images (20 output tiles of 4x4): both 3x3 Convs run Winograd's
  // F(4x4, 3x3) (conv_winograd.h; ConvWinograd.TakesOnlyTheGeometriesItWinsOn), conv1's TANH
  // on the blocks its output transform reports, conv2's ADD + RELU in that transform.
  Graph g = graph_text(R"({"name": "x", "dtype": "f32", "shape": [2, 16, 16, 18]},
      {"name": "w1", "dtype": "f32", "shape": [16, 16, 3, 3]},
      {"name": "b1", "dtype": "f32", "shape": [16]},
      {"name": "w2", "dtype": "f32", "shape": [16, 16, 3, 3]})",
                       R"({"name": "c1", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1]},
       "inputs": ["x", "w1", "b1"]},
      {"name": "m", "op": "Elemwise", "mode": "TANH", "inputs": ["c1:0"]},
      {"name": "c2", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1]}, "inputs": ["m:0", "w2"]},
      {"name": "res", "op": "Elemwise", "mode": "ADD", "inputs": ["c2:0", "x"]},
      {"name": "relu", "op": "Elemwise", "mode": "RELU", "inputs": ["res:0"]})",
                       R"("relu:0")");
  std::unique_ptr<Graph> nhwc = nhwc_conv_chains(g);
  ASSERT_NE(nhwc, nullptr);
  EXPECT_EQ(epilogues(*nhwc, detect(*nhwc)),
            (std::vector<std::string>{"Conv+TANH", "Conv+ADD+RELU"}));
  expect_same_results(*nhwc, 2);
}

TEST(EpilogueNumerics, NhwcSmallImagesSplitOutputChannelsWithTheResidualInRegisters) {
  // Weights outweigh activations: from two threads on, the Convs take the blocked plan
  // (conv_onednn.h), whose post-ops read the residual reordered into the output's blocks;
  // 80 channels split unevenly (5 blocks of 16 or 10 of 8), a batch of two. On AVX-512 the
  // NHWC plan (one thread) runs a Conv with a residual post-op on oneDNN's jit kernel, not
  // the brgconv one the Conv alone gets: the sums' order differs there.
  Graph g = graph_text(R"({"name": "x", "dtype": "f32", "shape": [2, 80, 5, 6]},
      {"name": "w1", "dtype": "f32", "shape": [80, 80, 3, 3]},
      {"name": "w2", "dtype": "f32", "shape": [80, 80, 3, 3]})",
                       R"({"name": "c1", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1]},
       "inputs": ["x", "w1"]},
      {"name": "relu1", "op": "Elemwise", "mode": "RELU", "inputs": ["c1:0"]},
      {"name": "c2", "op": "Conv", "attrs": {"pads": [1, 1, 1, 1]}, "inputs": ["relu1:0", "w2"]},
      {"name": "res", "op": "Elemwise", "mode": "ADD", "inputs": ["c2:0", "relu1:0"]},
      {"name": "relu2", "op": "Elemwise", "mode": "RELU", "inputs": ["res:0"]})",
                       R"("relu2:0")");
  std::unique_ptr<Graph> nhwc = nhwc_conv_chains(g);
  ASSERT_NE(nhwc, nullptr);
  EXPECT_EQ(epilogues(*nhwc, detect(*nhwc)),
            (std::vector<std::string>{"Conv+RELU", "Conv+ADD+RELU"}));
  expect_same_results(*nhwc, 2, Match::LibraryOrder);
}

TEST(EpilogueNumerics, PostOpsMapOnlyWhatTheyComputeExactly) {
  // The mapping itself: which chains become post-ops.
  auto map = [](const Graph& g) {
    fusion::Detection d = detect(g);
    for (const fusion::Region& r : d.regions)
      if (r.heavy) {
        fusion::RegionKernel k = fusion::build_region_kernel(g, r);
        std::vector<Shape> shapes;
        for (ValueId v : k.live_ins) shapes.push_back(g.value(v).shape);
        return conv_epilogue(*k.epilogue, shapes, g.value(k.outputs[0]).shape, false).has_value();
      }
    return false;
  };
  const std::string in = R"({"name": "x", "dtype": "f32", "shape": [1, 4, 6, 6]},
      {"name": "w", "dtype": "f32", "shape": [4, 4, 1, 1]},
      {"name": "c", "dtype": "f32", "shape": [4, 1, 1]},
      {"name": "r", "dtype": "f32", "shape": [1, 4, 6, 6]},
      {"name": "col", "dtype": "f32", "shape": [6]})";
  const std::string conv = R"({"name": "conv", "op": "Conv", "inputs": ["x", "w"]},)";
  auto graph = [&](const std::string& nodes) {
    return graph_text(in, literal("lo", 0) + "," + literal("hi", 6) + "," + conv + nodes,
                      R"("y:0")");
  };
  EXPECT_TRUE(
      map(graph(R"({"name": "a", "op": "Elemwise", "mode": "ADD", "inputs": ["conv:0", "c"]},
      {"name": "y", "op": "Elemwise", "mode": "CLIP", "inputs": ["a:0", "lo:0", "hi:0"]})")));
  EXPECT_TRUE(
      map(graph(R"({"name": "a", "op": "Elemwise", "mode": "SUB", "inputs": ["conv:0", "r"]},
      {"name": "y", "op": "Elemwise", "mode": "RELU", "inputs": ["a:0"]})")));
  // r - conv, a per-column operand, a transcendental: no.
  EXPECT_FALSE(
      map(graph(R"({"name": "y", "op": "Elemwise", "mode": "SUB", "inputs": ["r", "conv:0"]})")));
  EXPECT_FALSE(
      map(graph(R"({"name": "y", "op": "Elemwise", "mode": "ADD", "inputs": ["conv:0", "col"]})")));
  EXPECT_FALSE(
      map(graph(R"({"name": "y", "op": "Elemwise", "mode": "TANH", "inputs": ["conv:0"]})")));
}

// ---- the session ---------------------------------------------------------------------------

TEST(EpilogueSession, SelectedValidatedAndReportedLikeARegion) {
  JitEnv env;
  Graph g = graph_text(kLinearGeluIn, linear_gelu_nodes(), R"("mul2:0")");
  cpu::CpuBackend backend;
  const std::vector<HostTensor> in = random_inputs(g, 3);
  for (bool on : {true, false}) {
    SessionOptions o;
    o.policy = FusionPolicy::All;
    o.warmup_min_s = 0;
    o.epilogues = on;
    Session s(g, backend, *env.cache, fixed_machine(), o);
    for (int i = 0; i < 40 && !s.settled(); ++i) s.run(views(in));
    ASSERT_TRUE(s.settled());
    ASSERT_EQ(s.regions().size(), 1u);
    const RegionRecord& r = s.regions()[0];
    EXPECT_EQ(r.state, RegionState::Swapped) << r.reason;
    EXPECT_EQ(r.validation.rfind("passed", 0), 0u) << r.validation;
    if (on) {
      EXPECT_EQ(r.kernel, "MatMul+ADD+TRUE_DIV+ERF+ADD+MUL+MUL");
      EXPECT_EQ(s.kernels_now(), 1);  // one library call does it all
      EXPECT_EQ(r.compile_ms, 0);
    } else {
      EXPECT_EQ(r.kernel.rfind("hf_", 0), 0u) << r.kernel;
      EXPECT_EQ(s.kernels_now(), 2);  // MatMul, then the compiled kernel
    }
  }
}

TEST(EpilogueSession, SelectionPredictsTheElementwiseTimeAsTheSaving) {
  RegionCandidate c;
  c.unfused_s = 1.5e-3;
  c.heavy_s = 1.2e-3;
  Selection s = select_epilogue(c, 10e-3);
  EXPECT_TRUE(s.selected) << s.reason;
  EXPECT_NEAR(s.saving_s, 0.3e-3, 1e-12);
  EXPECT_EQ(s.compile_ms, 0);
  c.heavy_s = 1.5e-3;  // nothing beside the heavy op: nothing to gain
  EXPECT_FALSE(select_epilogue(c, 10e-3).selected);
}

}  // namespace
}  // namespace hf
