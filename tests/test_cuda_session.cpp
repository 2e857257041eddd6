// The adaptive Session on the CUDA backend (cuda_session_target): on every example graph it
// profiles, compiles NVRTC kernels on its worker, validates them against the unfused plan
// (downloaded live-outs) and swaps them in, and every iteration's outputs match the unfused
// graph on the device; Conv chains run in NHWC. Needs a GPU (skipped with the runtime's
// reason otherwise); what runs anywhere: the device FLOP-rate formula, and a CUDA session
// refusing the CPU-only hook.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "runtime/ir/nn_geometry.h"
#include "session/session.h"
#include "tests/support/jit_env.h"
#include "tests/support/scoped_env.h"
#include "tests/support/source_dir.h"
#if HF_HAVE_CUDA_BACKEND
#include "profiler/device_peak.h"
#include "runtime/cuda/cuda_backend.h"
#include "session/fusing_cuda_backend.h"
#include "tests/support/cuda_device.h"
#endif

namespace hf {
namespace {

#if HF_HAVE_CUDA_BACKEND

// ---- everywhere ---------------------------------------------------------------------------

TEST(CudaDevicePeak, FlopRateFromSmsLanesAndClock) {
  EXPECT_EQ(cuda::fp32_lanes_per_sm(80), 64);  // A100
  EXPECT_EQ(cuda::fp32_lanes_per_sm(89), 128);
  EXPECT_EQ(cuda::fp32_lanes_per_sm(90), 128);  // H100
  // H100 SXM: 132 SMs at 1980 MHz: 66.9 TFLOP/s f32, NVIDIA's datasheet figure.
  EXPECT_NEAR(cuda::fp32_peak_gflops(90, 132, 1'980'000), 66'908, 1);
}

// ---- with a GPU ---------------------------------------------------------------------------

Graph example(const std::string& name) {
  return read_graph_json(source_dir() + "/traces/graphs/" + name + ".json");
}

std::vector<HostTensor> download(std::span<const TensorView> views) {
  std::vector<HostTensor> out;
  for (const TensorView& v : views) {
    out.emplace_back(v.dtype, v.shape);
    gpu().download(out.back().data(), v.data, out.back().bytes());
  }
  return out;
}

const MachinePeak& device_machine() {
  static MachinePeak m = cuda::device_peak(gpu());
  return m;
}

TEST(CudaSession, DevicePeakIsMeasuredAndPlausible) {
  REQUIRE_CUDA_DEVICE();
  const MachinePeak& m = device_machine();
  std::cout << m.cpu << ": " << m.bandwidth_gbps << " GB/s, " << m.gflops << " GFLOP/s, "
            << m.launch_us << " us per step\n";
  EXPECT_GT(m.bandwidth_gbps, 100);  // any sm_90 part copies far faster than a CPU
  EXPECT_GT(m.gflops, 1000);
  EXPECT_GT(m.launch_us, 0);
  EXPECT_LT(m.launch_us, 1000);
  EXPECT_GT(m.balance(), 1);  // a GPU computes more per byte than elementwise ops need
}

// Every example: settled with every selected region validated and swapped in at least once
// (re-profiling may revert a kernel that is not faster), every iteration matching the
// unfused graph run on the device.
TEST(CudaSession, EveryExampleSwapsValidatedKernelsAndMatchesUnfused) {
  REQUIRE_CUDA_DEVICE();
  const char* const examples[] = {"abc",  "ab_plus_c", "gelu_chain",     "activation_chain",
                                  "adam", "layernorm", "bias_activation"};
  int swapped_total = 0, kept_total = 0;
  for (const char* name : examples) {
    SCOPED_TRACE(name);
    JitEnv env;
    Graph g = example(name);
    std::vector<HostTensor> host = random_inputs(g, 7);
    DeviceInputs in(gpu(), host);
    std::vector<HostTensor> want;
    {
      Executor unfused(g, gpu());
      want = download(unfused.run(in.views));
    }
    const cuda::DeviceStatus& d = cuda::device_status();
    fusion::KernelCache cache(cuda_toolchain(d.arch), env.workdir, env.disk);
    SessionOptions o;
    o.sync_compile = true;
    o.warmup_min_s = 0;
    o.select.min_share = 0;  // small graphs: fuse whatever saves anything
    o.select.expected_iters = 1'000'000'000;
    Session s(g, cuda_session_target(gpu(), cache), device_machine(), o);
    auto expect_matches = [&](std::span<const TensorView> got_views) {
      std::vector<HostTensor> got = download(got_views);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        Mismatch m = compare(want[i].view(), got[i].view(), fused_tolerance(got[i].dtype()));
        EXPECT_EQ(m.index, -1) << "iteration " << s.iterations().size() - 1 << " ("
                               << phase_name(s.iterations().back().phase) << ") output " << i
                               << " element " << m.index << ": " << m.actual << " vs "
                               << m.expected;
      }
    };
    auto t0 = std::chrono::steady_clock::now();
    while (!s.settled()) {
      expect_matches(s.run(in.views));
      ASSERT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 120)
          << "not steady; phase " << phase_name(s.phase());
    }
    for (int i = 0; i < 3; ++i) expect_matches(s.run(in.views));
    int queued = 0;
    for (const RegionRecord& r : s.regions()) {
      if (r.state == RegionState::Rejected) continue;
      ++queued;
      EXPECT_NE(r.state, RegionState::Failed) << r.reason;
      EXPECT_EQ(r.validation.rfind("passed", 0), 0u) << r.kernel << ": " << r.validation;
      EXPECT_GE(r.swapped_at, 0) << r.kernel;
      swapped_total += r.swapped_at >= 0;
      kept_total += r.state == RegionState::Swapped;
    }
    EXPECT_GT(queued, 0) << "nothing selected on the device";
    for (const OpRecord& op : s.unfused_ops()) EXPECT_GT(op.cost.seconds, 0) << op.name;
  }
  EXPECT_GT(swapped_total, 0);
  EXPECT_GT(kept_total, 0) << "every fused kernel was reverted as not faster";
}

// A hot 4-op chain on 2^22 floats: one fused kernel reads 2 and writes 1 array instead of
// 4 launches moving 11: kept after re-profiling, and the iteration got faster.
TEST(CudaSession, HotChainIsKeptAndFaster) {
  REQUIRE_CUDA_DEVICE();
  JitEnv env;
  Graph g = parse_graph_json(
      R"({"format": "hotfuse-graph", "version": 1, "name": "hot", "inputs": [
           {"name": "x", "dtype": "f32", "shape": [4194304]},
           {"name": "y", "dtype": "f32", "shape": [4194304]}], "nodes": [
         {"name": "sq", "op": "Elemwise", "mode": "MUL", "inputs": ["x", "x"], "outputs": ["sq"]},
         {"name": "sum", "op": "Elemwise", "mode": "ADD", "inputs": ["sq", "y"], "outputs": ["sum"]},
         {"name": "half", "op": "Elemwise", "mode": "MUL", "inputs": ["sum", "y"], "outputs": ["half"]},
         {"name": "hot", "op": "Elemwise", "mode": "SUB", "inputs": ["half", "x"], "outputs": ["hot"]}],
         "outputs": ["hot"]})",
      "test");
  std::vector<HostTensor> host = random_inputs(g, 3);
  DeviceInputs in(gpu(), host);
  const cuda::DeviceStatus& d = cuda::device_status();
  fusion::KernelCache cache(cuda_toolchain(d.arch), env.workdir, env.disk);
  SessionOptions o;
  o.sync_compile = true;
  o.select.expected_iters = 1'000'000'000;  // an uncached compile is charged 500 ms
  o.warmup_min_s = 0;  // phases by iteration counts alone: settling takes a known number
  Session s(g, cuda_session_target(gpu(), cache), device_machine(), o);
  for (int i = 0; i < 200 && !s.settled(); ++i) s.run(in.views);
  ASSERT_TRUE(s.settled()) << phase_name(s.phase());
  for (int i = 0; i < 10; ++i) s.run(in.views);
  ASSERT_EQ(s.regions().size(), 1u);
  const RegionRecord& r = s.regions()[0];
  EXPECT_EQ(r.state, RegionState::Swapped) << r.reason;
  EXPECT_LT(r.measured_fused_s, r.candidate.unfused_s);
  EXPECT_EQ(s.kernels_now(), 1);
  EXPECT_LT(s.median_ms(Phase::Steady), s.median_ms(Phase::Profiling));
}

// A residual block and a pool: its Conv chain runs in NHWC on the device (HOTFUSE_CUDA_LAYOUT
// unset), one transpose in and one out; under --fusion all its Conv+RELU and Conv+ADD+RELU
// epilogues run as cuDNN's fused convolution, validated and swapped in; and every iteration
// matches the CPU backend running the graph as given. A backend made with
// HOTFUSE_CUDA_LAYOUT=nchw keeps the graph's NCHW, and fuses the same epilogues.
TEST(CudaSession, ConvChainsRunInNhwcWithFusedEpiloguesAndMatchTheCpu) {
  REQUIRE_CUDA_DEVICE();
  ScopedEnv strict("HOTFUSE_F32_PRECISION", "highest");  // FMA math, as the CPU's
  Graph g = parse_graph_json(
      R"({"name": "block", "inputs": [
           {"name": "x", "dtype": "f32", "shape": [2,8,12,12]},
           {"name": "w1", "dtype": "f32", "shape": [8,8,3,3]}, {"name": "b1", "dtype": "f32", "shape": [8]},
           {"name": "w2", "dtype": "f32", "shape": [8,8,3,3]}], "nodes": [
         {"name": "c1", "op": "Conv", "attrs": {"pads": [1,1,1,1]}, "inputs": ["x", "w1", "b1"]},
         {"name": "r1", "op": "Elemwise", "mode": "RELU", "inputs": ["c1:0"]},
         {"name": "c2", "op": "Conv", "attrs": {"pads": [1,1,1,1]}, "inputs": ["r1:0", "w2"]},
         {"name": "res", "op": "Elemwise", "mode": "ADD", "inputs": ["c2:0", "x"]},
         {"name": "r2", "op": "Elemwise", "mode": "RELU", "inputs": ["res:0"]},
         {"name": "pool", "op": "MaxPool", "attrs": {"kernel_shape": [2,2], "strides": [2,2]},
          "inputs": ["r2:0"]}],
         "outputs": ["pool:0"]})",
      "block");
  std::vector<HostTensor> host = random_inputs(g, 5);
  cpu::CpuBackend cpu_backend;
  Executor cpu_exec(g, cpu_backend);
  const std::vector<HostTensor> want = copies(cpu_exec.run(views(host)));
  auto nhwc_convs = [](const Graph& graph) {
    int n = 0;
    for (NodeId id : graph.topo_order()) {
      const Node& node = graph.node(id);
      n += node.op == OpType::Conv && nhwc_layout(node);
    }
    return n;
  };
  auto run = [&](cuda::CudaBackend& b, int want_nhwc) {
    JitEnv env;
    DeviceInputs in(b, host);
    const cuda::DeviceStatus& d = cuda::device_status();
    fusion::KernelCache cache(cuda_toolchain(d.arch), env.workdir, env.disk);
    SessionOptions o;
    o.policy = FusionPolicy::All;
    o.sync_compile = true;
    o.warmup_min_s = 0;
    Session s(g, cuda_session_target(b, cache), device_machine(), o);
    EXPECT_EQ(nhwc_convs(s.graph()), want_nhwc);
    for (int i = 0; i < 60 && (!s.settled() || i < 40); ++i) {
      std::span<const TensorView> res = s.run(in.views);
      ASSERT_EQ(res.size(), 1u);
      HostTensor got(res[0].dtype, res[0].shape);
      b.download(got.data(), res[0].data, got.bytes());
      Mismatch m = compare(want[0].view(), got.view(), Tolerance{1e-4, 1e-4});
      EXPECT_EQ(m.index, -1) << "iteration " << i << " element " << m.index << ": cpu "
                             << m.expected << ", cuda " << m.actual;
    }
    EXPECT_TRUE(s.settled()) << phase_name(s.phase());
    std::vector<std::string> fused;
    for (const RegionRecord& r : s.regions()) {
      EXPECT_NE(r.state, RegionState::Failed) << r.kernel << ": " << r.reason;
      if (r.state == RegionState::Swapped) fused.push_back(r.kernel);
      if (r.kernel.rfind("Conv+", 0) == 0) {
        EXPECT_EQ(r.validation.rfind("passed", 0), 0u) << r.kernel << ": " << r.validation;
      }
    }
    EXPECT_EQ(fused, (std::vector<std::string>{"Conv+RELU", "Conv+ADD+RELU"}));
  };
  {
    SCOPED_TRACE("nhwc");
    run(gpu(), 2);
  }
  SCOPED_TRACE("nchw");
  ScopedEnv nchw("HOTFUSE_CUDA_LAYOUT", "nchw");
  cuda::CudaBackend plain;
  EXPECT_FALSE(plain.nhwc_conv_chains());
  run(plain, 0);
}

TEST(CudaSession, AfterFusedRunHookIsRefused) {
  REQUIRE_CUDA_DEVICE();
  JitEnv env;
  Graph g = example("abc");
  const cuda::DeviceStatus& d = cuda::device_status();
  fusion::KernelCache cache(cuda_toolchain(d.arch), env.workdir, nullptr);
  SessionOptions o;
  o.after_fused_run = [](int, std::span<const TensorView>) {};
  EXPECT_THROW(Session(g, cuda_session_target(gpu(), cache), device_machine(), o), Error);
}

#else

TEST(CudaSession, NotBuilt) {
  GTEST_SKIP() << "this build has no CUDA backend (no CUDA toolkit)";
}

#endif

}  // namespace
}  // namespace hf
