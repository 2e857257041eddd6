// Conv (cuDNN), MaxPool/AveragePool, Concat, Slice and Gather on the CUDA backend.
// Everywhere: how Conv geometries map onto cuDNN's descriptors (symmetric padding, or the
// zero-bordered copy for other pads), NHWC, and that sizes beyond int are refused naming the
// node. With a GPU (skipped with the runtime's reason otherwise): every op against the CPU
// backend over the configurations of tests/test_cpu_nn_ops.cpp, f32/f16/bf16, twice per
// plan, Convs and pools in NCHW and in NHWC (weights given anew each run, or constant); a
// Gather index out of range is an error naming the node; Conv workspaces come from the
// caching allocator and are given back.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "runtime/ir/nn_geometry.h"
#include "tests/support/jit_env.h"
#include "tests/support/scoped_env.h"
#if HF_HAVE_CUDA_BACKEND
#include "runtime/cuda/caching_allocator.h"
#include "runtime/cuda/conv_algo.h"
#include "runtime/cuda/conv_cudnn.h"
#include "runtime/cuda/conv_shape.h"
#include "runtime/cuda/cuda_backend.h"
#include "tests/support/cuda_device.h"
#endif

namespace hf {
namespace {

#if HF_HAVE_CUDA_BACKEND

// A graph of one node `op` named "n" with `attrs` over inputs declared as JSON objects.
Graph one_node(const std::string& op, const std::string& attrs, const std::string& inputs,
               const std::string& names) {
  std::string text = R"({"inputs": [)" + inputs + R"(], "nodes": [{"name": "n", "op": ")" + op +
                     R"(", "attrs": )" + attrs + R"(, "inputs": [)" + names +
                     R"(]}], "outputs": ["n:0"]})";
  return parse_graph_json(text, op);
}

std::string input(const std::string& name, const std::string& shape, const char* dtype = "f32") {
  return R"({"name": ")" + name + R"(", "dtype": ")" + dtype + R"(", "shape": )" + shape + "}";
}

Graph conv(const std::string& x, const std::string& w, const std::string& attrs, int bias_len,
           const char* dtype = "f32") {
  std::string in = input("x", x, dtype) + "," + input("w", w, dtype);
  std::string names = R"("x", "w")";
  if (bias_len > 0) {
    in += "," + input("b", "[" + std::to_string(bias_len) + "]", dtype);
    names += R"(, "b")";
  }
  return one_node("Conv", attrs, in, names);
}

cuda::CudnnConvShape shape_of(const Graph& g) {
  const Node& n = g.node(g.topo_order().front());
  ConvGeometry geo = conv_geometry(n, g.value(n.inputs[0]).shape, g.value(n.inputs[1]).shape);
  return cuda::cudnn_conv_shape(geo, describe(n));
}

// ---- everywhere ---------------------------------------------------------------------------

TEST(CudnnConvShape, SymmetricPadsGoToCudnnOthersAreCopiedIntoABorder) {
  cuda::CudnnConvShape s = shape_of(conv("[2,4,9,10]", "[6,4,3,3]", R"({"pads": [1,1,1,1]})", 6));
  EXPECT_FALSE(s.prepad);
  EXPECT_EQ(s.pad[0], 1);
  EXPECT_EQ(s.pad[1], 1);
  EXPECT_EQ(s.h, 9);
  EXPECT_EQ(s.oh, 9);
  EXPECT_EQ(s.ow, 10);

  // The end padding is never read when it changes nothing: 3 before and 2 after along H,
  // 7x7 stride 2 over 22 rows gives the 11 rows symmetric 3 does.
  s = shape_of(conv("[1,3,22,21]", "[8,3,7,7]", R"({"strides": [2,2], "pads": [3,3,2,3]})", 0));
  EXPECT_FALSE(s.prepad);
  EXPECT_EQ(s.pad[0], 3);
  EXPECT_EQ(s.oh, 11);
  EXPECT_EQ(s.ow, 11);

  // TensorFlow's SAME (0 before, 1 after) cannot be symmetric: the input is copied into a
  // zero-bordered 11x11 buffer and convolved unpadded.
  s = shape_of(conv("[1,3,10,10]", "[4,3,3,3]", R"({"strides": [2,2], "pads": [0,0,1,1]})", 0));
  EXPECT_TRUE(s.prepad);
  EXPECT_EQ(s.pad[0], 0);
  EXPECT_EQ(s.h, 11);
  EXPECT_EQ(s.w, 11);
  EXPECT_EQ(s.in_h, 10);
  EXPECT_EQ(s.pad_top, 0);
  EXPECT_EQ(s.oh, 5);

  s = shape_of(conv("[1,3,11,12]", "[5,3,3,2]", R"({"pads": [0,2,3,1], "dilations": [2,2]})", 5));
  EXPECT_TRUE(s.prepad);
  EXPECT_EQ(s.h, 14);
  EXPECT_EQ(s.w, 15);
  EXPECT_EQ(s.pad_left, 2);
  EXPECT_EQ(s.oh, 10);
  EXPECT_EQ(s.ow, 13);

  s = shape_of(
      conv("[1,8,15,14]", "[8,1,3,3]", R"({"group": 8, "strides": [2,2], "pads": [1,1,1,1]})", 8));
  EXPECT_EQ(s.group, 8);
  EXPECT_EQ(s.cg, 1);
  EXPECT_EQ(s.stride[0], 2);
}

// The same Conv with x as [N, H, W, C] and the layout attribute: the same sizes for cuDNN
// (given as N, C, H, W whatever the format), padded the same way, and marked NHWC.
TEST(CudnnConvShape, NhwcConvsKeepTheirSizesAndSayNhwc) {
  const cuda::CudnnConvShape nchw =
      shape_of(conv("[1,3,10,12]", "[4,3,3,3]", R"({"strides": [2,2], "pads": [0,0,1,1]})", 0));
  const cuda::CudnnConvShape nhwc = shape_of(conv(
      "[1,10,12,3]", "[4,3,3,3]", R"({"strides": [2,2], "pads": [0,0,1,1], "layout": "NHWC"})", 0));
  EXPECT_FALSE(nchw.nhwc);
  EXPECT_TRUE(nhwc.nhwc);
  EXPECT_TRUE(nhwc.prepad);
  for (auto f : {&cuda::CudnnConvShape::n, &cuda::CudnnConvShape::c, &cuda::CudnnConvShape::h,
                 &cuda::CudnnConvShape::w, &cuda::CudnnConvShape::m, &cuda::CudnnConvShape::cg,
                 &cuda::CudnnConvShape::oh, &cuda::CudnnConvShape::ow, &cuda::CudnnConvShape::in_h,
                 &cuda::CudnnConvShape::in_w, &cuda::CudnnConvShape::pad_top,
                 &cuda::CudnnConvShape::pad_left})
    EXPECT_EQ(nhwc.*f, nchw.*f);
  EXPECT_EQ(nhwc.h, 11);
  EXPECT_EQ(nhwc.w, 13);
}

TEST(CudnnConvShape, SizesBeyondIntNameTheNode) {
  Graph g = conv("[1,1,3,3]", "[1,1,1,1]", "{}", 0);
  const Node& n = g.node(g.topo_order().front());
  ConvGeometry geo = conv_geometry(n, g.value(n.inputs[0]).shape, g.value(n.inputs[1]).shape);
  geo.n = int64_t{1} << 33;
  try {
    cuda::cudnn_conv_shape(geo, describe(n));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("node 'n' (Conv): batch 8589934592 is too large for cuDNN"),
        std::string::npos)
        << e.what();
  }
}

// ---- with a GPU ---------------------------------------------------------------------------

HostTensor downloaded(cuda::CudaBackend& b, const TensorView& v) {
  HostTensor h(v.dtype, v.shape);
  b.download(h.data(), v.data, h.bytes());
  return h;
}

// `g` on the CPU backend and on the GPU (inputs uploaded, outputs downloaded), twice on
// the same plan; every output within `tol` (default: the device tolerance of the dtype).
void expect_cuda_matches_cpu(const Graph& g, Tolerance tol, uint64_t seed = 7) {
  SCOPED_TRACE(g.name);
  std::vector<HostTensor> in = random_inputs(g, seed);
  cpu::CpuBackend cpu_backend;
  Executor cpu_exec(g, cpu_backend);
  std::vector<HostTensor> want = copies(cpu_exec.run(views(in)));
  cuda::CudaBackend& b = gpu();
  DeviceInputs dev(b, in);
  {
    Executor exec(g, b);
    for (int iter = 0; iter < 2; ++iter) {
      std::span<const TensorView> res = exec.run(dev.views);
      b.sync();
      ASSERT_EQ(res.size(), want.size());
      for (size_t i = 0; i < res.size(); ++i) {
        Mismatch m = compare(want[i].view(), downloaded(b, res[i]).view(), tol);
        EXPECT_EQ(m.index, -1) << "iteration " << iter << " output " << i << " element " << m.index
                               << ": cpu " << m.expected << ", cuda " << m.actual;
      }
    }
  }
}

Tolerance conv_tolerance(const char* dtype) {
  // f32 (strict, HOTFUSE_F32_PRECISION=highest): FMA math in another summation order than
  // im2col + sgemm; halves: cuDNN rounds the convolution to the storage type before the bias
  // is added, the CPU after.
  return std::string(dtype) == "f32" ? Tolerance{1e-4, 1e-4} : Tolerance{2e-2, 2e-2};
}

struct ConvCase {
  std::string x, w, attrs;
  int bias;
};

const ConvCase kConvCases[] = {
    {"[2,4,9,10]", "[6,4,3,3]", R"({"pads": [1,1,1,1]})", 6},
    {"[1,3,23,21]", "[8,3,7,7]", R"({"strides": [2,2], "pads": [3,3,3,3]})", 0},
    {"[1,16,7,5]", "[12,16,1,1]", "{}", 12},
    {"[1,8,9,9]", "[4,8,1,1]", R"({"strides": [2,2]})", 0},
    {"[1,3,11,12]", "[5,3,3,2]", R"({"pads": [0,2,3,1], "dilations": [2,2]})", 5},  // prepad
    {"[1,3,10,10]", "[4,3,3,3]", R"({"strides": [2,2], "pads": [0,0,1,1]})", 4},    // SAME
    {"[1,3,22,21]", "[8,3,7,7]", R"({"strides": [2,2], "pads": [3,3,2,3]})", 8},    // end unread
    {"[1,6,8,8]", "[4,3,3,3]", R"({"group": 2, "pads": [1,1,1,1]})", 4},
    {"[1,8,15,14]", "[8,1,3,3]", R"({"group": 8, "strides": [2,2], "pads": [1,1,1,1]})", 8},
    {"[2,3,13,17]", "[6,1,3,3]",
     R"({"group": 3, "strides": [3,3], "pads": [2,0,1,2], "dilations": [2,1]})", 0},
    {"[1,4,9,9]", "[4,1,5,5]", R"({"group": 4, "pads": [2,2,2,2]})", 4},
    {"[4,64,28,28]", "[64,64,3,3]", R"({"pads": [1,1,1,1]})", 64},  // a ResNet-sized layer
};

TEST(CudaNnOps, ConvMatchesTheCpuBackend) {
  REQUIRE_CUDA_DEVICE();
  ScopedEnv strict("HOTFUSE_F32_PRECISION", "highest");  // f32: FMA math, as the CPU's
  for (const char* t : {"f32", "f16", "bf16"})
    for (const ConvCase& c : kConvCases) {
      SCOPED_TRACE(std::string(t) + " x " + c.x + " w " + c.w + " " + c.attrs);
      expect_cuda_matches_cpu(conv(c.x, c.w, c.attrs, c.bias, t), conv_tolerance(t));
    }
}

// "[N,C,H,W]" as "[N,H,W,C]"; `attrs` with the layout attribute added.
std::string nhwc_shape(const std::string& nchw) {
  int d[4] = {};
  EXPECT_EQ(std::sscanf(nchw.c_str(), "[%d,%d,%d,%d]", &d[0], &d[1], &d[2], &d[3]), 4) << nchw;
  return "[" + std::to_string(d[0]) + "," + std::to_string(d[2]) + "," + std::to_string(d[3]) +
         "," + std::to_string(d[1]) + "]";
}
std::string with_nhwc(const std::string& attrs) {
  return attrs == "{}" ? R"({"layout": "NHWC"})"
                       : attrs.substr(0, attrs.size() - 1) + R"(, "layout": "NHWC"})";
}

// NHWC Convs (the rewrite of Conv chains): cuDNN reads KRSC weights that the kernel
// transposes from the graph's; prepadding copies whole pixels.
TEST(CudaNnOps, NhwcConvMatchesTheCpuBackend) {
  REQUIRE_CUDA_DEVICE();
  ScopedEnv strict("HOTFUSE_F32_PRECISION", "highest");
  for (const char* t : {"f32", "f16", "bf16"})
    for (const ConvCase& c : kConvCases) {
      SCOPED_TRACE(std::string(t) + " NHWC x " + c.x + " w " + c.w + " " + c.attrs);
      expect_cuda_matches_cpu(conv(nhwc_shape(c.x), c.w, with_nhwc(c.attrs), c.bias, t),
                              conv_tolerance(t));
    }
}

// Weights that are a graph input may change between runs of one plan: each run transposes
// them anew (a kernel that kept the first run's KRSC copy would convolve stale weights).
// Constant weights (written once per plan) are transposed once and stay right.
TEST(CudaNnOps, NhwcConvTakesEachRunsWeights) {
  REQUIRE_CUDA_DEVICE();
  ScopedEnv strict("HOTFUSE_F32_PRECISION", "highest");
  const Graph g = conv("[2,9,10,4]", "[6,4,3,3]", R"({"pads": [1,1,1,1], "layout": "NHWC"})", 6);
  cpu::CpuBackend cpu_backend;
  Executor cpu_exec(g, cpu_backend);
  cuda::CudaBackend& b = gpu();
  Executor exec(g, b);
  for (uint64_t seed : {3, 4, 5}) {
    SCOPED_TRACE(seed);
    std::vector<HostTensor> in = random_inputs(g, seed);
    std::vector<HostTensor> want = copies(cpu_exec.run(views(in)));
    DeviceInputs dev(b, in);
    std::span<const TensorView> res = exec.run(dev.views);
    Mismatch m = compare(want[0].view(), downloaded(b, res[0]).view(), conv_tolerance("f32"));
    EXPECT_EQ(m.index, -1) << "element " << m.index << ": cpu " << m.expected << ", cuda "
                           << m.actual;
  }
  const std::string constant_w = R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [1,5,6,3]}],
    "nodes": [{"name": "w", "op": "Constant", "attrs": {"dtype": "f32", "shape": [4,3,2,2],
                 "value": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,
                           25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48]},
               "inputs": []},
              {"name": "n", "op": "Conv", "attrs": {"layout": "NHWC"}, "inputs": ["x", "w:0"]}],
    "outputs": ["n:0"]})";
  expect_cuda_matches_cpu(parse_graph_json(constant_w, "constant_w"), conv_tolerance("f32"));
}

// At HOTFUSE_F32_PRECISION=high (the default) f32 Convs and MatMuls may run on TF32 tensor
// cores: each input rounded to a 10-bit mantissa (by truncation at worst: relative error
// under 2^-10), so each product is within 2^-9 of its magnitude and each output within
// 2^-9 of the sum of its terms' magnitudes (f32 accumulation on both sides: a few percent of
// that at most, for the sums here). The bound is
// computed per element from the same graph run on |x|, |w| (and |bias|) on the CPU.
void expect_within_tf32_bound(const Graph& g) {
  SCOPED_TRACE(g.name);
  ScopedEnv high("HOTFUSE_F32_PRECISION", "high");
  std::vector<HostTensor> in = random_inputs(g, 11);
  std::vector<HostTensor> mag_in;
  for (const HostTensor& t : in) {
    HostTensor a(t.dtype(), t.shape());
    const float* src = static_cast<const float*>(t.data());
    float* dst = static_cast<float*>(a.data());
    for (int64_t i = 0; i < numel(t.shape()); ++i) dst[i] = std::fabs(src[i]);
    mag_in.push_back(std::move(a));
  }
  cpu::CpuBackend cpu_backend;
  Executor cpu_exec(g, cpu_backend);
  std::vector<HostTensor> want = copies(cpu_exec.run(views(in)));
  std::vector<HostTensor> mag = copies(cpu_exec.run(views(mag_in)));
  cuda::CudaBackend& b = gpu();
  DeviceInputs dev(b, in);
  Executor exec(g, b);
  std::span<const TensorView> res = exec.run(dev.views);
  for (size_t i = 0; i < res.size(); ++i) {
    const HostTensor got = downloaded(b, res[i]);
    const float* w = static_cast<const float*>(want[i].data());
    const float* m = static_cast<const float*>(mag[i].data());
    const float* d = static_cast<const float*>(got.data());
    int bad = 0;
    for (int64_t k = 0; k < numel(got.shape()) && bad < 5; ++k) {
      const double bound = std::ldexp(1.0, -9) * m[k] * 1.05 + 1e-6;
      if (!(std::fabs(double(d[k]) - w[k]) <= bound)) {
        ADD_FAILURE() << "element " << k << ": cpu " << w[k] << ", cuda " << d[k]
                      << ", terms' magnitude " << m[k] << ", bound " << bound;
        ++bad;
      }
    }
  }
}

TEST(CudaNnOps, F32ConvAndMatMulAtHighPrecisionStayWithinTheTf32Bound) {
  REQUIRE_CUDA_DEVICE();
  for (const ConvCase& c : kConvCases) expect_within_tf32_bound(conv(c.x, c.w, c.attrs, c.bias));
  expect_within_tf32_bound(one_node(
      "MatMul", "{}", input("a", "[3,64,256]") + "," + input("b", "[256,96]"), R"("a", "b")"));
}

// A Conv shape's algorithm is timed once (cuDNN's Find) and kept: the next plan of the same
// shape takes the same algorithm without timing; without a memo the heuristics choose.
TEST(CudaNnOps, ConvAlgorithmsAreMeasuredOnceAndKept) {
  REQUIRE_CUDA_DEVICE();
  Graph g = conv("[4,64,28,28]", "[64,64,3,3]", R"({"pads": [1,1,1,1]})", 64);
  const Node& n = g.node(g.topo_order().front());
  const ConvGeometry geo = conv_geometry(n, g.value(n.inputs[0]).shape, g.value(n.inputs[1]).shape);
  auto h = static_cast<cudnnHandle_t>(gpu().cudnn("conv"));
  cuda::ConvAlgoMemo memo(gpu().device().name, gpu().device().arch);
  for (F32Precision p : {F32Precision::High, F32Precision::Highest}) {
    ScopedEnv env("HOTFUSE_F32_PRECISION", p == F32Precision::High ? "high" : "highest");
    cuda::CudnnConv first(h, geo, DType::F32, gpu().allocator(), "conv", &memo);
    EXPECT_GE(first.measured_ms(), 0.0f) << "not measured";
    const std::string key =
        memo.key(cuda::cudnn_conv_shape(geo, "conv"), DType::F32, cuda::cuda_math(DType::F32, p));
    std::optional<cuda::ConvAlgoChoice> kept = memo.find(key);
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->algo, first.algorithm());
    cuda::CudnnConv again(h, geo, DType::F32, gpu().allocator(), "conv", &memo);
    EXPECT_EQ(again.algorithm(), first.algorithm());
    EXPECT_EQ(again.measured_ms(), first.measured_ms());
    cuda::CudnnConv heuristic(h, geo, DType::F32, gpu().allocator(), "conv");
    EXPECT_EQ(heuristic.measured_ms(), -1.0f);
  }
}

TEST(CudaNnOps, ConvWorkspaceComesFromTheAllocatorAndGoesBack) {
  REQUIRE_CUDA_DEVICE();
  Graph g = conv("[4,64,28,28]", "[64,64,3,3]", R"({"pads": [1,1,1,1]})", 64);
  const size_t live = gpu().allocator().live_bytes();
  {
    Executor exec(g, gpu());
    EXPECT_GT(gpu().allocator().live_bytes(), live);
  }
  EXPECT_EQ(gpu().allocator().live_bytes(), live);
}

TEST(CudaNnOps, PoolingMatchesTheCpuBackend) {
  REQUIRE_CUDA_DEVICE();
  const std::pair<const char*, std::string> cases[] = {
      {"MaxPool", R"({"kernel_shape": [3,3], "strides": [2,2], "pads": [1,1,1,1]})"},
      {"MaxPool", R"({"kernel_shape": [2,2], "strides": [2,2], "ceil_mode": 1})"},
      {"MaxPool", R"({"kernel_shape": [2,3], "dilations": [2,1], "pads": [0,1,1,0]})"},
      {"AveragePool", R"({"kernel_shape": [3,3], "strides": [2,2], "pads": [1,1,1,1]})"},
      {"AveragePool",
       R"({"kernel_shape": [3,3], "strides": [2,2], "pads": [1,1,1,1], "count_include_pad": 1})"},
      {"AveragePool",
       R"({"kernel_shape": [2,2], "strides": [2,2], "ceil_mode": 1, "count_include_pad": 1})"},
      {"AveragePool",
       R"({"kernel_shape": [3,2], "strides": [3,2], "pads": [1,0,1,1], "ceil_mode": 1})"},
      {"AveragePool", R"({"kernel_shape": [11,13]})"},  // GlobalAveragePool as lowered
  };
  for (const char* t : {"f32", "f16", "bf16"})
    for (const auto& [op, attrs] : cases) {
      SCOPED_TRACE(std::string(op) + " " + t + " " + attrs);
      expect_cuda_matches_cpu(one_node(op, attrs, input("x", "[2,3,11,13]", t), R"("x")"),
                              fused_tolerance(parse_dtype(t).value()));
      expect_cuda_matches_cpu(
          one_node(op, with_nhwc(attrs), input("x", "[2,11,13,3]", t), R"("x")"),
          fused_tolerance(parse_dtype(t).value()));
    }
  Graph bytes =
      one_node("MaxPool", R"({"kernel_shape": [3,3], "strides": [2,2], "pads": [1,1,1,1]})",
               R"({"name": "x", "dtype": "u8", "shape": [1,2,7,6], "init": [0, 256]})", R"("x")");
  expect_cuda_matches_cpu(bytes, Tolerance{0, 0});
}

TEST(CudaNnOps, MaxPoolPropagatesNaN) {
  REQUIRE_CUDA_DEVICE();
  Graph g = one_node("MaxPool", R"({"kernel_shape": [2,2], "strides": [2,2]})",
                     input("x", "[1,1,2,4]"), R"("x")");
  HostTensor x(DType::F32, {1, 1, 2, 4});
  const float v[] = {1, NAN, 5, 6, -1, 2, 7, 8};
  std::copy(v, v + 8, x.as<float>());
  void* dx = gpu().alloc(x.bytes());
  gpu().upload(dx, x.data(), x.bytes());
  {
    Executor exec(g, gpu());
    std::vector<TensorView> in{contiguous_view(dx, DType::F32, x.shape())};
    auto out = exec.run(in);
    float got[2] = {};
    gpu().download(got, out[0].data, sizeof got);
    EXPECT_TRUE(std::isnan(got[0]));
    EXPECT_EQ(got[1], 8.0f);
  }
  gpu().free(dx);
}

TEST(CudaNnOps, ConcatSliceGatherMatchTheCpuBackend) {
  REQUIRE_CUDA_DEVICE();
  for (const char* t : {"f32", "f16", "i64", "u8"}) {
    SCOPED_TRACE(t);
    expect_cuda_matches_cpu(
        one_node("Concat", R"({"axis": -2})",
                 input("a", "[2,3,4]", t) + "," + input("b", "[2,1,4]", t) + "," +
                     input("c", "[2,0,4]", t) + "," + input("d", "[2,5,4]", t),
                 R"("a", "b", "c", "d")"),
        Tolerance{0, 0});
    expect_cuda_matches_cpu(
        one_node("Concat", R"({"axis": 0})", input("a", "[2,3]", t) + "," + input("b", "[1,3]", t),
                 R"("a", "b")"),
        Tolerance{0, 0});
    expect_cuda_matches_cpu(
        one_node("Concat", R"({"axis": 3})",
                 input("a", "[1,2,3,5]", t) + "," + input("b", "[1,2,3,1]", t), R"("a", "b")"),
        Tolerance{0, 0});
  }
  for (const char* attrs :
       {R"({"starts": [1], "ends": [-1], "axes": [2]})",
        R"({"starts": [-1, 0], "ends": [-1000000, 100], "axes": [0, 2], "steps": [-2, 3]})",
        R"({"starts": [2, 4], "ends": [1, 9], "axes": [1, -1]})",
        R"({"starts": [0, 1, 0], "ends": [4, 5, 6], "steps": [1, 2, 5]})"})
    for (const char* t : {"f32", "bf16", "i64", "bool"}) {
      SCOPED_TRACE(std::string(attrs) + " " + t);
      expect_cuda_matches_cpu(one_node("Slice", attrs, input("x", "[4,5,6]", t), R"("x")"),
                              Tolerance{0, 0});
    }
  for (const char* it : {"i64", "i32"})
    for (const char* axis : {"0", "1", "-1"}) {
      SCOPED_TRACE(std::string(it) + " axis " + axis);
      std::string idx = R"({"name": "i", "dtype": ")" + std::string(it) +
                        R"(", "shape": [2,3], "init": [-3, 3]})";
      expect_cuda_matches_cpu(one_node("Gather", std::string(R"({"axis": )") + axis + "}",
                                       input("x", "[3,5,4]") + "," + idx, R"("x", "i")"),
                              Tolerance{0, 0});
    }
  expect_cuda_matches_cpu(
      one_node("Gather", R"({"axis": 0})",
               input("x", "[50,16]", "f16") +
                   R"(, {"name": "i", "dtype": "i64", "shape": [7], "init": [0, 50]})",
               R"("x", "i")"),
      Tolerance{0, 0});  // an embedding lookup, as GPT-2's
}

TEST(CudaNnOps, GatherIndexOutOfRangeNamesTheNode) {
  REQUIRE_CUDA_DEVICE();
  Graph g = one_node("Gather", R"({"axis": 0})",
                     input("x", "[3]") + R"(, {"name": "i", "dtype": "i64", "shape": [1]})",
                     R"("x", "i")");
  void* dx = gpu().alloc(3 * sizeof(float));
  void* di = gpu().alloc(sizeof(int64_t));
  const int64_t bad = 3;
  gpu().upload(di, &bad, sizeof bad);
  {
    Executor exec(g, gpu());
    std::vector<TensorView> in{contiguous_view(dx, DType::F32, {3}),
                               contiguous_view(di, DType::I64, {1})};
    try {
      exec.run(in);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "node 'n' (Gather): index 3 is out of range for an axis of size 3"),
                std::string::npos)
          << e.what();
    }
    // The stream is still usable: a good index runs.
    const int64_t good = -1;
    gpu().upload(di, &good, sizeof good);
    EXPECT_NO_THROW(exec.run(in));
  }
  gpu().free(dx);
  gpu().free(di);
}

#else

TEST(CudaNnOps, NotBuilt) {
  GTEST_SKIP() << "this build has no CUDA backend (no CUDA toolkit)";
}

#endif

}  // namespace
}  // namespace hf
