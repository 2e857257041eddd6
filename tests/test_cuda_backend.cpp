// The CUDA backend. What runs on any machine: backend selection and its reasons, the
// allocator's size classes, the PTX cache key, NVRTC compiles of the fused kernels the
// CUDA path launches, and CUPTI's loader degrading cleanly. What needs a GPU (skipped with
// the runtime's reason otherwise): every op against the CPU backend in f32/f16/bf16, fused
// against unfused on every example and on random DAGs, the PTX disk cache and the per-device
// function cache on a second run, CUPTI records mapped to the right nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "fusion/codegen_cuda.h"
#include "fusion/detect.h"
#include "fusion/disk_cache.h"
#include "fusion/embedded_headers.h"
#include "fusion/nvrtc_compiler.h"
#include "fusion/region_spec.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/io/graph_json.h"
#include "runtime/io/random_inputs.h"
#include "runtime/ir/error.h"
#include "runtime/ir/op_table.h"
#include "session/backend_select.h"
#include "session/fuse_graph.h"
#include "tests/support/jit_env.h"
#include "tests/support/random_dag.h"
#include "tests/support/scoped_env.h"
#include "tests/support/source_dir.h"
#if HF_HAVE_CUDA_BACKEND
#include "profiler/cupti_profile.h"
#include "profiler/cupti_tracer.h"
#include "runtime/cuda/caching_allocator.h"
#include "runtime/cuda/conv_algo.h"
#include "runtime/cuda/conv_fusion.h"
#include "runtime/cuda/conv_layout.h"
#include "runtime/cuda/cublas_api.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_math.h"
#include "session/disk_result_store.h"
#include "session/fusing_cuda_backend.h"
#include "tests/support/cuda_device.h"
#endif

namespace hf {
namespace {

namespace fs = std::filesystem;

const char* const kExamples[] = {"abc",  "ab_plus_c", "gelu_chain",     "activation_chain",
                                 "adam", "layernorm", "bias_activation"};

[[maybe_unused]] Graph example(const std::string& name) {  // only the CUDA build's tests
  return read_graph_json(source_dir() + "/traces/graphs/" + name + ".json");
}

// ---- everywhere ---------------------------------------------------------------------------

TEST(CudaBackendSelect, AutoFallsBackToCpuWithOneReasonAndCudaIsRefused) {
  std::string why = cuda_unavailable_reason();
  if (why.empty()) GTEST_SKIP() << "a CUDA device is present: the fallback cannot be observed";
  BackendChoice c = choose_backend("auto");
  EXPECT_EQ(c.cuda, nullptr);
  EXPECT_EQ(c.line, "backend auto: using cpu (" + why + ")");
  EXPECT_EQ(c.line.find('\n'), std::string::npos);
  try {
    choose_backend("cuda");
    ADD_FAILURE() << "--backend cuda accepted without a device";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--backend cuda: " + why);
  }
  EXPECT_EQ(choose_backend("cpu").cuda, nullptr);
  EXPECT_TRUE(choose_backend("cpu").line.empty());
  EXPECT_THROW(choose_backend("tpu"), Error);
}

#if HF_HAVE_CUDA_BACKEND

TEST(CudaBackendSelect, NoDeviceReasonComesFromTheRuntime) {
  const cuda::DeviceStatus& s = cuda::device_status();
  if (s.usable) GTEST_SKIP() << "a CUDA device is present: " << s.name;
  EXPECT_FALSE(s.reason.empty());
  // Without a driver the reason says so once, in plain words (issue 23): cudart's
  // "driver version is insufficient" read as if there were one.
  EXPECT_EQ(cuda_unavailable_reason(), s.no_driver ? s.reason : "no CUDA device: " + s.reason);
  if (s.no_driver) {
    EXPECT_EQ(s.reason, "no NVIDIA driver on this machine: libcuda.so.1 cannot be loaded");
    EXPECT_EQ(choose_backend("auto").line,
              "backend auto: using cpu (no NVIDIA driver on this machine: libcuda.so.1 cannot be "
              "loaded)");
  }
  EXPECT_THROW(cuda::CudaBackend(), Error);
}

// HOTFUSE_F32_PRECISION on CUDA: f32 Convs and MatMuls on TF32 tensor cores at high (the
// default), FMA math at highest; halves on tensor cores at either; never f32 -> f16.
TEST(CudaMath, F32IsTf32AtHighFmaAtHighestAndNeverConvertedToAHalf) {
  const cuda::CudaMath high = cuda::cuda_math(DType::F32, F32Precision::High);
  EXPECT_TRUE(high.tf32);
  EXPECT_EQ(high.gemm, CUBLAS_COMPUTE_32F_FAST_TF32);
  EXPECT_EQ(high.conv, CUDNN_DEFAULT_MATH);
  const cuda::CudaMath highest = cuda::cuda_math(DType::F32, F32Precision::Highest);
  EXPECT_FALSE(highest.tf32);
  EXPECT_EQ(highest.gemm, CUBLAS_COMPUTE_32F);
  EXPECT_EQ(highest.conv, CUDNN_FMA_MATH);
  for (DType t : {DType::F16, DType::BF16})
    for (F32Precision p : {F32Precision::High, F32Precision::Highest}) {
      const cuda::CudaMath m = cuda::cuda_math(t, p);
      EXPECT_FALSE(m.tf32) << dtype_name(t);
      EXPECT_EQ(m.gemm, CUBLAS_COMPUTE_32F) << dtype_name(t);  // f32 accumulation
      EXPECT_EQ(m.conv, CUDNN_DEFAULT_MATH) << dtype_name(t);
      EXPECT_TRUE(cuda::conv_math_allowed(m, t, CUDNN_TENSOR_OP_MATH));
      EXPECT_TRUE(cuda::conv_math_allowed(m, t, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION));
    }
  // What cuDNN may rate an f32 algorithm with, and whether it may run.
  const struct {
    cudnnMathType_t rated;
    bool at_high, at_highest;
  } cases[] = {{CUDNN_FMA_MATH, true, true},
               {CUDNN_DEFAULT_MATH, true, true},  // on a strict descriptor: FMA kernels
               {CUDNN_TENSOR_OP_MATH, true, false},
               {CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, false, false}};
  for (const auto& c : cases) {
    EXPECT_EQ(cuda::conv_math_allowed(high, DType::F32, c.rated), c.at_high) << c.rated;
    EXPECT_EQ(cuda::conv_math_allowed(highest, DType::F32, c.rated), c.at_highest) << c.rated;
  }
}

// HOTFUSE_CUDA_LAYOUT: Conv chains move to NHWC unless nchw; anything else names the variable.
TEST(CudaConvLayout, NhwcUnlessNchwAndNothingElse) {
  {
    ScopedEnv unset("HOTFUSE_CUDA_LAYOUT", nullptr);
    EXPECT_TRUE(cuda::nhwc_conv_chains_enabled());
  }
  {
    ScopedEnv nhwc("HOTFUSE_CUDA_LAYOUT", "nhwc");
    EXPECT_TRUE(cuda::nhwc_conv_chains_enabled());
  }
  {
    ScopedEnv nchw("HOTFUSE_CUDA_LAYOUT", "nchw");
    EXPECT_FALSE(cuda::nhwc_conv_chains_enabled());
  }
  ScopedEnv bad("HOTFUSE_CUDA_LAYOUT", "NHWC8");
  try {
    cuda::nhwc_conv_chains_enabled();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "HOTFUSE_CUDA_LAYOUT='NHWC8': expected nhwc or nchw");
  }
}

// ---- Conv epilogues on CUDA: cuDNN's fused convolution (conv_fusion.h) ---------------------

// Detection with the CUDA target's filter: what each graph's epilogue regions are, and what
// the regions left to NVRTC hold.
struct CudaEpilogues {
  std::vector<std::string> epilogues;  // HeavyEpilogue::summary() of each epilogue region
  int jit_regions = 0;
};
CudaEpilogues cuda_epilogues(const std::string& extra_inputs, const std::string& nodes,
                             const char* layout = "") {
  const Graph g = parse_graph_json(
      std::string(R"({"name": "e", "inputs": [{"name": "x", "dtype": "f32", "shape": )") +
          (*layout ? "[1,6,6,4]" : "[1,4,6,6]") +
          R"(}, {"name": "w", "dtype": "f32", "shape": [4,4,3,3]},
          {"name": "b", "dtype": "f32", "shape": [4]}, {"name": "r", "dtype": "f32", "shape": )" +
          (*layout ? "[1,6,6,4]" : "[1,4,6,6]") + "}" + extra_inputs +
          R"(], "nodes": [{"name": "c", "op": "Conv", "attrs": {"pads": [1,1,1,1])" + layout +
          R"(}, "inputs": ["x", "w", "b"]}, )" + nodes + R"(], "outputs": ["out:0"]})",
      "e");
  fusion::DetectOptions o;
  o.epilogues = true;
  o.epilogue_runs = cuda_runs_epilogue;
  CudaEpilogues out;
  for (const fusion::Region& r : fusion::detect_regions(g, o).regions) {
    if (r.heavy)
      out.epilogues.push_back(fusion::build_region_kernel(g, r).epilogue->summary());
    else
      ++out.jit_regions;
  }
  return out;
}

TEST(CudaConvFusion, ReluOrResidualAddThenReluAndNothingElse) {
  auto relu = [](const char* name, const char* in) {
    return std::string(R"({"name": ")") + name +
           R"(", "op": "Elemwise", "mode": "RELU", "inputs": [")" + in + R"("]})";
  };
  auto binary = [](const char* name, const char* mode, const char* a, const char* b) {
    return std::string(R"({"name": ")") + name + R"(", "op": "Elemwise", "mode": ")" + mode +
           R"(", "inputs": [")" + a + R"(", ")" + b + R"("]})";
  };
  // Fused: a ReLU; a residual add (either operand order) then a ReLU; in NCHW and NHWC.
  for (const char* layout : {"", R"(, "layout": "NHWC")"}) {
    SCOPED_TRACE(layout);
    EXPECT_EQ(cuda_epilogues("", relu("out", "c:0"), layout).epilogues,
              std::vector<std::string>{"Conv+RELU"});
    EXPECT_EQ(cuda_epilogues("", binary("s", "ADD", "c:0", "r") + ", " + relu("out", "s:0"), layout)
                  .epilogues,
              std::vector<std::string>{"Conv+ADD+RELU"});
    EXPECT_EQ(cuda_epilogues("", binary("s", "ADD", "r", "c:0") + ", " + relu("out", "s:0"), layout)
                  .epilogues,
              std::vector<std::string>{"Conv+ADD+RELU"});
  }
  // Not cuDNN's form: left to NVRTC regions, not lost to fusion.
  const std::string clip =
      R"({"name": "lo", "op": "Constant", "attrs": {"dtype": "f32", "shape": [1], "value": [0]}, "inputs": []},
      {"name": "hi", "op": "Constant", "attrs": {"dtype": "f32", "shape": [1], "value": [6]}, "inputs": []},
      {"name": "clip", "op": "Elemwise", "mode": "CLIP", "inputs": ["c:0", "lo:0", "hi:0"]},
      {"name": "out", "op": "Elemwise", "mode": "MUL", "inputs": ["clip:0", "r"]})";
  const CudaEpilogues clipped = cuda_epilogues("", clip);
  EXPECT_TRUE(clipped.epilogues.empty());
  EXPECT_EQ(clipped.jit_regions, 1);
  const CudaEpilogues add_only = cuda_epilogues("", binary("out", "ADD", "c:0", "r"));
  EXPECT_TRUE(add_only.epilogues.empty());
  const CudaEpilogues relu_then_add =
      cuda_epilogues("", relu("s", "c:0") + ", " + binary("out", "ADD", "s:0", "r"));
  EXPECT_TRUE(relu_then_add.epilogues.empty());
  EXPECT_EQ(relu_then_add.jit_regions, 1);
  // A per-channel add is a second bias, not a residual.
  const CudaEpilogues per_channel =
      cuda_epilogues(R"(, {"name": "k", "dtype": "f32", "shape": [1,4,1,1]})",
                     binary("s", "ADD", "c:0", "k") + ", " + relu("out", "s:0"));
  EXPECT_TRUE(per_channel.epilogues.empty());
  const CudaEpilogues sub =
      cuda_epilogues("", binary("s", "SUB", "c:0", "r") + ", " + relu("out", "s:0"));
  EXPECT_TRUE(sub.epilogues.empty());
}

// ---- cuDNN's algorithm, measured once per shape and kept (conv_algo.h) ----------------------

cuda::CudnnConvShape some_conv_shape() {
  cuda::CudnnConvShape s{};
  s.n = 2, s.c = 16, s.h = 28, s.w = 28, s.m = 32, s.cg = 16, s.kh = 3, s.kw = 3;
  s.oh = 28, s.ow = 28, s.pad[0] = s.pad[1] = 1, s.stride[0] = s.stride[1] = 1;
  s.dilation[0] = s.dilation[1] = 1, s.group = 1;
  return s;
}

TEST(ConvAlgo, TheKeyChangesWithEverythingAMeasurementDependsOn) {
  const cuda::CudnnConvShape s = some_conv_shape();
  const cuda::CudaMath tf32 = cuda::cuda_math(DType::F32, F32Precision::High);
  const cuda::CudaMath fma = cuda::cuda_math(DType::F32, F32Precision::Highest);
  const std::string base = cuda::conv_algo_key("H200", 90, 91900, s, DType::F32, tf32);
  EXPECT_EQ(base, cuda::conv_algo_key("H200", 90, 91900, s, DType::F32, tf32));
  std::set<std::string> keys{base};
  auto add = [&](const std::string& k) { EXPECT_TRUE(keys.insert(k).second) << k; };
  add(cuda::conv_algo_key("H100", 90, 91900, s, DType::F32, tf32));
  add(cuda::conv_algo_key("H200", 80, 91900, s, DType::F32, tf32));
  add(cuda::conv_algo_key("H200", 90, 91901, s, DType::F32, tf32));
  add(cuda::conv_algo_key("H200", 90, 91900, s, DType::F16, tf32));
  add(cuda::conv_algo_key("H200", 90, 91900, s, DType::F32, fma));
  for (int f = 0; f < 17; ++f) {
    cuda::CudnnConvShape t = s;
    int* v[] = {&t.n,         &t.c,         &t.h,           &t.w,           &t.m,      &t.cg,
                &t.kh,        &t.kw,        &t.oh,          &t.ow,          &t.pad[0], &t.pad[1],
                &t.stride[0], &t.stride[1], &t.dilation[0], &t.dilation[1], &t.group};
    *v[f] += 1;
    add(cuda::conv_algo_key("H200", 90, 91900, t, DType::F32, tf32));
  }
  cuda::CudnnConvShape nhwc = s;
  nhwc.nhwc = !s.nhwc;
  add(cuda::conv_algo_key("H200", 90, 91900, nhwc, DType::F32, tf32));
}

TEST(ConvAlgo, AChoiceRoundTripsAndAnythingElseIsRejected) {
  cuda::ConvAlgoChoice c;
  c.algo = CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
  c.math = CUDNN_TENSOR_OP_MATH;
  c.workspace = size_t(5) << 30;  // beyond 32 bits
  c.ms = 0.0421f;
  std::optional<cuda::ConvAlgoChoice> d = cuda::decode(cuda::encode(c));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->algo, c.algo);
  EXPECT_EQ(d->math, c.math);
  EXPECT_EQ(d->workspace, c.workspace);
  EXPECT_FLOAT_EQ(d->ms, c.ms);
  for (const char* bad : {"", "garbage", "1 2 3", "1 3 0 0.5 extra", "99 3 0 0.5", "-1 3 0 0.5",
                          "1 7 0 0.5", "1 3 x 0.5"})
    EXPECT_FALSE(cuda::decode(bad)) << "'" << bad << "'";
}

TEST(ConvAlgo, PickTakesTheFirstCandidateThatSucceededIsAllowedAndFits) {
  auto entry = [](cudnnConvolutionFwdAlgo_t a, cudnnMathType_t m, cudnnStatus_t st, float ms) {
    cudnnConvolutionFwdAlgoPerf_t r{};
    r.algo = a;
    r.mathType = m;
    r.status = st;
    r.time = ms;
    return r;
  };
  const cudnnConvolutionFwdAlgoPerf_t perf[] = {
      entry(CUDNN_CONVOLUTION_FWD_ALGO_FFT, CUDNN_FMA_MATH, CUDNN_STATUS_NOT_SUPPORTED, 0.1f),
      entry(CUDNN_CONVOLUTION_FWD_ALGO_GEMM, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION,
            CUDNN_STATUS_SUCCESS, 0.2f),
      entry(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_TENSOR_OP_MATH,
            CUDNN_STATUS_SUCCESS, 0.3f),
      entry(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, CUDNN_FMA_MATH, CUDNN_STATUS_SUCCESS, 0.4f),
      entry(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_FMA_MATH, CUDNN_STATUS_SUCCESS, 0.5f),
  };
  std::vector<cudnnConvolutionFwdAlgo_t> asked;
  auto take_all = [&](const cudnnConvolutionFwdAlgoPerf_t& r) -> std::optional<size_t> {
    asked.push_back(r.algo);
    return size_t(100) * static_cast<size_t>(r.algo);
  };
  // TF32 allowed: the tensor-op candidate; never the one converting f32 to f16.
  const cuda::CudaMath high = cuda::cuda_math(DType::F32, F32Precision::High);
  std::optional<cuda::ConvAlgoChoice> c = cuda::pick_algorithm(perf, high, DType::F32, take_all);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->algo, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
  EXPECT_EQ(c->math, CUDNN_TENSOR_OP_MATH);
  EXPECT_EQ(c->workspace, size_t(100) * CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
  EXPECT_FLOAT_EQ(c->ms, 0.3f);
  EXPECT_EQ(asked, std::vector{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM});
  // Strict f32: FMA math only.
  asked.clear();
  const cuda::CudaMath highest = cuda::cuda_math(DType::F32, F32Precision::Highest);
  c = cuda::pick_algorithm(perf, highest, DType::F32, take_all);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->algo, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD);
  // A candidate whose workspace cannot be had: the next one.
  asked.clear();
  auto no_winograd = [&](const cudnnConvolutionFwdAlgoPerf_t& r) -> std::optional<size_t> {
    asked.push_back(r.algo);
    if (r.algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD) return std::nullopt;
    return size_t(0);
  };
  c = cuda::pick_algorithm(perf, highest, DType::F32, no_winograd);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->algo, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);
  EXPECT_EQ(asked.size(), 2u);
  // Halves: whatever cuDNN rated best that succeeded.
  c = cuda::pick_algorithm(perf, cuda::cuda_math(DType::F16, F32Precision::Highest), DType::F16,
                           take_all);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->algo, CUDNN_CONVOLUTION_FWD_ALGO_GEMM);
  // Nothing usable.
  auto take_none = [](const cudnnConvolutionFwdAlgoPerf_t&) -> std::optional<size_t> {
    return std::nullopt;
  };
  EXPECT_FALSE(cuda::pick_algorithm(perf, high, DType::F32, take_none));
  EXPECT_FALSE(cuda::pick_algorithm({}, high, DType::F32, take_all));
}

// A choice kept by one process's memo is found by the next one's through the disk store;
// another shape, device or math finds nothing; an entry moved under another key's name
// reads as absent.
TEST(ConvAlgo, AChoiceKeptOnDiskIsFoundByTheNextProcessOnly) {
  const fs::path dir = fs::path(::testing::TempDir()) / "hf_conv_algo_store";
  fs::remove_all(dir);
  auto disk = std::make_shared<fusion::DiskCache>(dir);
  const cuda::CudnnConvShape s = some_conv_shape();
  const cuda::CudaMath tf32 = cuda::cuda_math(DType::F32, F32Precision::High);
  cuda::ConvAlgoChoice c;
  c.algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  c.math = CUDNN_TENSOR_OP_MATH;
  c.workspace = 4096;
  c.ms = 0.125f;
  std::string key;
  {
    cuda::ConvAlgoMemo first("NVIDIA H200", 90);
    first.set_store(std::make_shared<DiskResultStore>(disk));
    key = first.key(s, DType::F32, tf32);
    EXPECT_FALSE(first.find(key));
    first.keep(key, c);
    EXPECT_TRUE(first.find(key));
  }
  cuda::ConvAlgoMemo next("NVIDIA H200", 90);
  EXPECT_FALSE(next.find(key)) << "no store yet: nothing on disk is read";
  next.set_store(std::make_shared<DiskResultStore>(disk));
  std::optional<cuda::ConvAlgoChoice> got = next.find(key);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->algo, c.algo);
  EXPECT_EQ(got->math, c.math);
  EXPECT_EQ(got->workspace, c.workspace);
  EXPECT_FLOAT_EQ(got->ms, c.ms);
  cuda::ConvAlgoMemo other_device("NVIDIA H100 80GB HBM3", 90);
  other_device.set_store(std::make_shared<DiskResultStore>(disk));
  EXPECT_FALSE(other_device.find(other_device.key(s, DType::F32, tf32)));
  EXPECT_FALSE(
      next.find(next.key(s, DType::F32, cuda::cuda_math(DType::F32, F32Precision::Highest))));
  // The store checks the key it finds inside an entry.
  DiskResultStore store(disk);
  store.put("shape a", "1 3 0 0.5");
  EXPECT_EQ(store.get("shape a"), std::optional<std::string>("1 3 0 0.5"));
  EXPECT_FALSE(store.get("shape b"));
  const auto entry = [&](const std::string& k) {
    return disk->entry_path(fusion::DiskCache::make_key({"cuda result", k}));
  };
  fs::copy_file(entry("shape a"), entry("shape b"), fs::copy_options::overwrite_existing);
  EXPECT_FALSE(store.get("shape b")) << "another key's entry, read under this key";
  fs::remove_all(dir);
}

// cuBLAS is opened on first use (no GPU needed to open it): every entry point resolves.
TEST(CublasApi, OpensOnFirstUseWithEveryEntryPoint) {
  const cuda::CublasApi& api = cuda::cublas();
  EXPECT_NE(api.create, nullptr);
  EXPECT_NE(api.gemm_strided_batched_ex, nullptr);
  EXPECT_STREQ(api.status_name(CUBLAS_STATUS_NOT_INITIALIZED), "CUBLAS_STATUS_NOT_INITIALIZED");
  EXPECT_EQ(&api, &cuda::cublas());
}

TEST(CudaAllocator, SizeClassesRoundUpAndStayClose) {
  using cuda::CachingAllocator;
  EXPECT_EQ(CachingAllocator::bucket(0), 512u);
  EXPECT_EQ(CachingAllocator::bucket(1), 512u);
  EXPECT_EQ(CachingAllocator::bucket(513), 1024u);
  for (size_t b : {size_t(1) << 20, (size_t(1) << 20) + 1, size_t(3) << 24, size_t(1000000007)}) {
    size_t k = CachingAllocator::bucket(b);
    EXPECT_GE(k, b);
    EXPECT_LE(k, b + b / 8 + 512) << b;  // at most 1/8 wasted
    EXPECT_EQ(CachingAllocator::bucket(k), k);
  }
}

TEST(CudaToolchain, KernelKeyDependsOnSpecArchAndFormat) {
  Graph g = example("activation_chain");
  fusion::Detection d = fusion::detect_regions(g);
  ASSERT_FALSE(d.regions.empty());
  fusion::RegionKernel k = fusion::build_region_kernel(g, d.regions[0]);
  JitEnv env;
  fusion::KernelCache a(cuda_toolchain(90), env.workdir, nullptr),
      b(cuda_toolchain(90), env.workdir, nullptr), old(cuda_toolchain(80), env.workdir, nullptr),
      future(cuda_toolchain(1000), env.workdir, nullptr);
  EXPECT_EQ(a.disk_key(k.spec), b.disk_key(k.spec));
  EXPECT_NE(a.disk_key(k.spec), old.disk_key(k.spec));
  EXPECT_NE(a.disk_key(k.spec), future.disk_key(k.spec));  // a CUBIN is not the PTX
  Graph g2 = example("gelu_chain");
  fusion::RegionKernel k2 = fusion::build_region_kernel(g2, fusion::detect_regions(g2).regions[0]);
  EXPECT_NE(a.disk_key(k.spec), a.disk_key(k2.spec));
}

// An arch NVRTC knows gets machine code (no JIT at load, no driver as new as NVRTC needed);
// one newer than NVRTC knows gets PTX for the newest arch it does know, and the one line
// hotfuse-run prints says which.
TEST(CudaToolchain, CompilesCubinForAKnownArchAndPtxBeyondIt) {
  if (!fusion::nvrtc_available()) GTEST_SKIP() << "no NVRTC";
  Graph g = example("activation_chain");
  fusion::RegionKernel k = fusion::build_region_kernel(g, fusion::detect_regions(g).regions[0]);
  const std::string name = fusion::KernelCache::kernel_name(k.spec);
  const std::string src = fusion::generate_cuda(k.spec, name, "test");
  JitEnv env;
  fusion::Workdir& wd = *env.workdir;
  fusion::KernelToolchain::Built cubin = cuda_toolchain(90)->compile(src, name, "test", wd);
  ASSERT_TRUE(cubin.ok) << cubin.failure;
  EXPECT_EQ(cubin.artifact.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_EQ(cuda_kernel_format(90), "CUBIN sm_90 from NVRTC");
  fusion::KernelToolchain::Built ptx = cuda_toolchain(1000)->compile(src, name, "test", wd);
  ASSERT_TRUE(ptx.ok) << ptx.failure;
  EXPECT_NE(ptx.artifact.find(".entry " + name + "("), std::string::npos);
  const std::string newest = std::to_string(fusion::nvrtc_supported_archs().back());
  EXPECT_EQ(cuda_kernel_format(1000),
            "PTX compute_" + newest + " from NVRTC, compiled for sm_1000 by the driver at load");
}

// A row-stage kernel (LayerNorm) takes a warp per row up to kCudaWarpRowStagesMax elements,
// kCudaBlock / 32 rows per block, and a block per longer row; at most 32 blocks per SM.
TEST(CudaToolchain, RowStageLaunchesAWarpPerShortRowAndABlockPerLongOne) {
  Graph g = example("layernorm");
  const fusion::Detection d = fusion::detect_regions(g);
  ASSERT_EQ(d.regions.size(), 1u);
  const fusion::RegionKernel k = fusion::build_region_kernel(g, d.regions[0]);
  ASSERT_TRUE(k.spec.row_stages());
  ASSERT_EQ(k.spec.rank, 2);
  auto launch = [&](long long rows, long long len, int sms) {
    fusion::KernelArgs a{};
    a.shape[0] = rows;
    a.shape[1] = len;
    a.numel = rows * len;
    return fusion::cuda_launch_config(k.spec, a, sms);
  };
  const unsigned per_block = fusion::kCudaBlock / 32;
  EXPECT_EQ(launch(1000, 1024, 132).grid, (1000 + per_block - 1) / per_block);
  EXPECT_EQ(launch(1000, fusion::kCudaWarpRowStagesMax, 132).grid,
            (1000 + per_block - 1) / per_block);
  EXPECT_EQ(launch(1000, fusion::kCudaWarpRowStagesMax + 1, 132).grid, 1000u);
  EXPECT_EQ(launch(65536, 8192, 132).grid, 132u * 32);
  EXPECT_EQ(launch(65536, 1024, 132).grid, 132u * 32);  // 8192 blocks of rows, capped
  EXPECT_EQ(launch(4000, 1024, 132).grid, 4000u / per_block);
  EXPECT_EQ(launch(0, 1024, 132).grid, 0u);
  EXPECT_EQ(launch(1000, 1024, 132).block, static_cast<unsigned>(fusion::kCudaBlock));
}

// What FusingCudaBackend loads: NVRTC PTX for the device arch with the entry point
// cudaLibraryGetKernel looks up (the e2e suite compiles the examples for sm_80/sm_90).
TEST(CudaToolchain, RandomDagKernelsCompileToPtxWithTheirEntryPoint) {
  if (!fusion::nvrtc_available()) GTEST_SKIP() << "no NVRTC";
  std::mt19937 rng(77);
  int compiled = 0;
  for (int i = 0; i < 6; ++i) {
    Graph g = random_dag(rng, i % 3 == 2 ? DType::BF16 : i % 3 == 1 ? DType::F16 : DType::F32);
    for (const fusion::Region& r : fusion::detect_regions(g).regions) {
      fusion::RegionKernel k = fusion::build_region_kernel(g, r);
      const std::string name = fusion::KernelCache::kernel_name(k.spec);
      fusion::PtxResult p = fusion::compile_ptx(fusion::generate_cuda(k.spec, name, "dag"), name,
                                                fusion::clamp_arch(90));
      ASSERT_TRUE(p.ok) << write_graph_json(g) << p.log;
      EXPECT_NE(p.ptx.find(".entry " + name + "("), std::string::npos) << name;
      ++compiled;
    }
  }
  EXPECT_GE(compiled, 3);
}

TEST(Cupti, LoaderDegradesWithAReasonAndNeverCrashes) {
  {
    ScopedEnv env("HOTFUSE_CUPTI_LIB", "/nonexistent/libcupti.so");
    std::string why;
    EXPECT_EQ(cuda::CuptiTracer::create(&why), nullptr);
    EXPECT_NE(why.find("libcupti could not be loaded"), std::string::npos) << why;
  }
  // The real library: on a machine without a device CUPTI may refuse (a reason) or accept
  // (a tracer that records nothing); either way no crash, and a second tracer is refused.
  std::string why;
  auto t = cuda::CuptiTracer::create(&why);
  if (!t) {
    EXPECT_FALSE(why.empty());
    std::cout << "CUPTI refused, as it may without a device: " << why << "\n";
    return;
  }
  std::cout << "CUPTI started without a device; it records nothing\n";
  std::string second;
  EXPECT_EQ(cuda::CuptiTracer::create(&second), nullptr);
  EXPECT_NE(second.find("already active"), std::string::npos);
  t->end_iteration();
  cuda::IterationNodeSeconds none = t->collect();
  ASSERT_EQ(none.size(), 1u);
  EXPECT_TRUE(none[0].empty());
}

// The join, on records laid out as CUPTI 13 writes them: kernels through the runtime and
// the driver API, a copy and a memset, each tied to its node and iteration by an
// external-correlation record that may come before or after it; API records ignored.
// A record as CUPTI's buffers hold it: its own layout, read through the common header.
template <class Record>
const CUpti_Activity& as_activity(const Record& r) {
  return *static_cast<const CUpti_Activity*>(static_cast<const void*>(&r));
}

TEST(Cupti, RecordsJoinTheirNodeAndIterationThroughCorrelationIds) {
  cuda::ActivityJoin join;
  auto kernel = [&](uint32_t correlation, uint64_t ns) {
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = 1000;
    k.end = 1000 + ns;
    k.correlationId = correlation;
    join.add(as_activity(k));
  };
  auto tag = [&](uint32_t correlation, uint32_t iteration, uint32_t node,
                 CUpti_ExternalCorrelationKind kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
    CUpti_ActivityExternalCorrelation e{};
    e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    e.externalKind = kind;
    e.externalId = cuda::external_id(iteration, node);
    e.correlationId = correlation;
    join.add(as_activity(e));
  };
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  api.correlationId = 7;
  join.add(as_activity(api));
  kernel(7, 3000);  // node 2, iteration 0, its tag after it
  tag(7, 0, 2);
  tag(8, 0, 5);
  kernel(8, 1000);
  CUpti_ActivityMemcpy6 copy{};
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.start = 10;
  copy.end = 510;
  copy.correlationId = 9;
  join.add(as_activity(copy));
  tag(9, 0, 5);  // a second launch of node 5: its times add up
  CUpti_ActivityMemset4 set{};
  set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  set.start = 0;
  set.end = 250;
  set.correlationId = 10;
  join.add(as_activity(set));
  tag(10, 1, 2);
  kernel(11, 4000);  // iteration 1, node 0xffffffff: the largest node id survives the packing
  tag(11, 1, 0xffffffffu);
  kernel(12, 100);  // no tag: uncorrelated
  kernel(13, 100);  // an OpenACC tag is not ours
  tag(13, 0, 1, CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC);
  kernel(14, 100);  // an iteration the window has not ended
  tag(14, 2, 1);

  cuda::IterationNodeSeconds t = join.take(2);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].size(), 2u);
  EXPECT_DOUBLE_EQ(t[0].at(2), 3e-6);
  EXPECT_DOUBLE_EQ(t[0].at(5), 1.5e-6);
  EXPECT_EQ(t[1].size(), 2u);
  EXPECT_DOUBLE_EQ(t[1].at(2), 0.25e-6);
  EXPECT_DOUBLE_EQ(t[1].at(0xffffffffu), 4e-6);
  EXPECT_EQ(join.device_records, 8u);
  EXPECT_EQ(join.uncorrelated, 3u);
  EXPECT_EQ(join.other, 2u);  // the API record and the OpenACC tag

  // take() forgets the window: a new one starts empty, its tags and spans its own.
  EXPECT_TRUE(join.take(1)[0].empty());
  kernel(20, 200);
  tag(20, 0, 3);
  EXPECT_DOUBLE_EQ(join.take(1)[0].at(3), 0.2e-6);
}

// The launch join for trace.json: each kernel with its node and iteration (external
// correlation) and the API call that launched it (same correlation id), on CUPTI's clock;
// a kernel missing either is left out; take() without a list keeps the old behaviour.
TEST(Cupti, KernelsJoinTheirLaunchCallsForTheTrace) {
  cuda::ActivityJoin join;
  auto kernel = [&](uint32_t correlation, uint64_t start, uint64_t end, uint32_t stream,
                    const char* name) {
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = start;
    k.end = end;
    k.streamId = stream;
    k.name = name;
    k.correlationId = correlation;
    join.add(as_activity(k));
  };
  auto api = [&](uint32_t correlation, uint64_t start, uint64_t end, CUpti_ActivityKind kind) {
    CUpti_ActivityAPI a{};
    a.kind = kind;
    a.start = start;
    a.end = end;
    a.threadId = 77;
    a.correlationId = correlation;
    join.add(as_activity(a));
  };
  auto tag = [&](uint32_t correlation, uint32_t iteration, uint32_t node) {
    CUpti_ActivityExternalCorrelation e{};
    e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    e.externalId = cuda::external_id(iteration, node);
    e.correlationId = correlation;
    join.add(as_activity(e));
  };
  kernel(21, 5000, 5600, 7, "hf_fused_a");  // the kernel before its launch call's record
  api(21, 4000, 4100, CUPTI_ACTIVITY_KIND_RUNTIME);
  tag(21, 0, 3);
  tag(22, 1, 4);
  api(22, 6000, 6050, CUPTI_ACTIVITY_KIND_DRIVER);  // cuLaunchKernel (NVRTC kernels)
  kernel(22, 6100, 6200, 7, "hf_fused_b");
  kernel(23, 7000, 7100, 7, "no_api");  // tagged, but no launch call recorded
  tag(23, 1, 5);
  api(24, 8000, 8010, CUPTI_ACTIVITY_KIND_RUNTIME);  // no tag: no node
  kernel(24, 8100, 8200, 7, "untagged");
  kernel(25, 9000, 9100, 7, "later");  // an iteration the window has not ended
  api(25, 8900, 8950, CUPTI_ACTIVITY_KIND_RUNTIME);
  tag(25, 2, 6);

  std::vector<cuda::DeviceLaunch> launches;
  cuda::IterationNodeSeconds t = join.take(2, &launches);
  ASSERT_EQ(launches.size(), 2u);
  const cuda::DeviceLaunch& a = launches[0];
  EXPECT_EQ(a.correlation, 21u);
  EXPECT_EQ(a.iteration, 0u);
  EXPECT_EQ(a.node, 3u);
  EXPECT_EQ(a.kernel, "hf_fused_a");
  EXPECT_EQ(a.stream, 7u);
  EXPECT_EQ(a.thread, 77u);
  EXPECT_EQ(a.api_start_ns, 4000u);
  EXPECT_EQ(a.api_end_ns, 4100u);
  EXPECT_EQ(a.start_ns, 5000u);
  EXPECT_EQ(a.end_ns, 5600u);
  EXPECT_EQ(launches[1].correlation, 22u);
  EXPECT_EQ(launches[1].iteration, 1u);
  EXPECT_EQ(launches[1].node, 4u);
  // The per-node times are as before: the launch join takes nothing from them.
  ASSERT_EQ(t.size(), 2u);
  EXPECT_DOUBLE_EQ(t[0].at(3), 0.6e-6);
  EXPECT_DOUBLE_EQ(t[1].at(5), 0.1e-6);
  EXPECT_EQ(join.other, 4u);  // the four API records
  // The window is forgotten: nothing joins across it.
  std::vector<cuda::DeviceLaunch> next;
  kernel(26, 100, 200, 7, "alone");
  join.take(1, &next);
  EXPECT_TRUE(next.empty());
}

// ---- with a GPU ---------------------------------------------------------------------------

// Runs `g` on `b` (device memory: inputs uploaded, outputs downloaded), `iters` times.
std::vector<HostTensor> run_on_device(const Graph& g, Backend& b, const std::vector<HostTensor>& in,
                                      int iters = 1) {
  DeviceInputs dev(b, in);
  std::vector<HostTensor> out;
  {
    Executor exec(g, b);
    std::span<const TensorView> res;
    for (int i = 0; i < iters; ++i) res = exec.run(dev.views);
    for (const TensorView& v : res) {
      HostTensor h(v.dtype, v.shape);
      b.download(h.data(), v.data, h.bytes());
      out.push_back(std::move(h));
    }
  }
  return out;
}

// Device vs host math: f32 as fused_tolerance; a 1-ulp f32 difference may round to the
// neighbouring f16/bf16 value, so the storage types allow one of their ulps (bf16: 2^-7).
Tolerance device_tolerance(DType t) {
  if (t == DType::BF16) return {8e-3, 1e-3};
  return fused_tolerance(t);
}

// Reductions: the CPU sums in a pairwise tree, the device in compensated per-lane sums; they
// differ by a few ulps of the sum of |x|, not of the result: 1e-7 per reduced element.
Tolerance reduce_tolerance(DType t, int64_t len) {
  Tolerance tol = device_tolerance(t);
  tol.atol = std::max(tol.atol, 1e-7 * static_cast<double>(len));
  return tol;
}

void expect_cuda_matches_cpu(const Graph& g, uint64_t seed = 5,
                             std::optional<Tolerance> tolerance = {}) {
  std::vector<HostTensor> in = random_inputs(g, seed);
  cpu::CpuBackend cpu_backend;
  Executor cpu_exec(g, cpu_backend);
  std::vector<HostTensor> want = copies(cpu_exec.run(views(in)));
  std::vector<HostTensor> got = run_on_device(g, gpu(), in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    Mismatch m = compare(want[i].view(), got[i].view(),
                         tolerance.value_or(device_tolerance(got[i].dtype())));
    EXPECT_EQ(m.index, -1) << g.name << " output " << i << " element " << m.index << ": cpu "
                           << m.expected << ", cuda " << m.actual;
  }
}

std::vector<DType> dtypes_of(ModeKind k) {
  switch (k) {
    case ModeKind::Float:
    case ModeKind::Predicate:
      return {DType::F32, DType::F16, DType::BF16};
    case ModeKind::Numeric:
    case ModeKind::Compare:
      return {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8};
    case ModeKind::Int:
      return {DType::I32, DType::I64, DType::U8};
    case ModeKind::Logic:
      return {DType::Bool, DType::I32, DType::I64, DType::U8};
  }
  return {};
}

Graph one_node(DType t, const std::vector<Shape>& in_shapes, Node n) {
  Graph g;
  g.name = describe(n);
  for (size_t k = 0; k < in_shapes.size(); ++k)
    n.inputs.push_back(g.add_input("x" + std::to_string(k), t, in_shapes[k]));
  for (ValueId v : g.add_node(std::move(n))) g.mark_output(v);
  return g;
}

TEST(CudaOps, EveryElemwiseModeAndDtypeMatchesTheCpuBackend) {
  REQUIRE_CUDA_DEVICE();
  for (int m = 0; m < kModeCount; ++m) {
    const ModeInfo& info = mode_info(static_cast<Mode>(m));
    for (DType t : dtypes_of(info.kind)) {
      Node n;
      n.op = OpType::Elemwise;
      n.mode = static_cast<Mode>(m);
      n.name = info.name;
      // Dense (the float4 path for f32; 4099 is not a multiple of 4: the tail), then
      // broadcast (stride 0) and lower-rank operands.
      std::vector<Shape> dense(info.arity, Shape{4099}), bcast(info.arity, Shape{5, 67});
      bcast[0] = {1, 67};
      if (info.arity > 1) bcast[1] = {5, 1};
      if (info.arity > 2) bcast[2] = {67};
      SCOPED_TRACE(std::string(info.name) + " " + std::string(dtype_name(t)));
      expect_cuda_matches_cpu(one_node(t, dense, n));
      expect_cuda_matches_cpu(one_node(t, bcast, n));
      // One-element operands (rank 0 and [1]) stay on the flat, vectorised path: first
      // and last operand, so that each kernel reads them in either position.
      if (info.arity > 1) {
        std::vector<Shape> first(dense), last(dense);
        first[0] = {};
        last[info.arity - 1] = {1};
        expect_cuda_matches_cpu(one_node(t, first, n));
        expect_cuda_matches_cpu(one_node(t, last, n));
      }
    }
  }
}

TEST(CudaOps, TypeCvtPowCReduceCopiesMatMulMatchTheCpuBackend) {
  REQUIRE_CUDA_DEVICE();
  const DType all[] = {DType::F32, DType::F16,  DType::BF16, DType::I32,
                       DType::I64, DType::Bool, DType::U8};
  for (DType from : all)
    for (DType to : all) {
      Node n;
      n.op = OpType::TypeCvt;
      n.attrs["dtype"] = std::string(dtype_name(to));
      expect_cuda_matches_cpu(one_node(from, {{3, 1000}}, n));
    }
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    for (double e : {2.0, 3.0, -1.0, 0.5, -0.5, 1.7, 0.0}) {
      Node n;
      n.op = OpType::PowC;
      n.attrs["exponent"] = e;
      expect_cuda_matches_cpu(one_node(t, {{1031}}, n));
    }
    for (const char* mode : {"SUM", "SUM_SQR", "PRODUCT", "MIN", "MAX", "MEAN"})
      for (std::vector<int64_t> axes : {std::vector<int64_t>{2}, {0}, {1}, {0, 2}, {}}) {
        Node n;
        n.op = OpType::Reduce;
        n.attrs["mode"] = std::string(mode);
        n.attrs["axes"] = axes;
        n.attrs["keepdims"] = int64_t{1};
        const Shape shape{6, 37, 129};
        int64_t len = 1;
        for (size_t d = 0; d < shape.size(); ++d)
          if (axes.empty() || std::count(axes.begin(), axes.end(), int64_t(d))) len *= shape[d];
        SCOPED_TRACE(std::string(mode) + " " + std::string(dtype_name(t)));
        expect_cuda_matches_cpu(one_node(t, {shape}, n), 5, reduce_tolerance(t, len));
      }
    Node perm;
    perm.op = OpType::Dimshuffle;
    perm.attrs["perm"] = std::vector<int64_t>{2, -1, 0, 1};
    expect_cuda_matches_cpu(one_node(t, {{4, 5, 6}}, perm));
    Node bc;
    bc.op = OpType::Broadcast;
    bc.attrs["shape"] = std::vector<int64_t>{3, 4, 5};
    expect_cuda_matches_cpu(one_node(t, {{4, 1}}, bc));
    Node rs;
    rs.op = OpType::Reshape;
    rs.attrs["shape"] = std::vector<int64_t>{5, -1};
    expect_cuda_matches_cpu(one_node(t, {{4, 5, 6}}, rs));
    Node mm;
    mm.op = OpType::MatMul;
    // FMA math on f32 as on the CPU (TF32 at high: test_cuda_nn_ops.cpp checks its bound).
    ScopedEnv strict("HOTFUSE_F32_PRECISION", "highest");
    expect_cuda_matches_cpu(one_node(t, {{3, 33, 17}, {17, 65}}, mm));  // broadcast batch
    expect_cuda_matches_cpu(one_node(t, {{2, 3, 8, 16}, {2, 3, 16, 9}}, mm));
    expect_cuda_matches_cpu(one_node(t, {{2, 1, 8, 16}, {1, 3, 16, 9}}, mm));  // per-batch GEMMs
  }
  for (DType t : {DType::I32, DType::I64, DType::U8})
    for (const char* mode : {"SUM", "MIN", "MAX", "MEAN"}) {
      Node n;
      n.op = OpType::Reduce;
      n.attrs["mode"] = std::string(mode);
      n.attrs["axes"] = std::vector<int64_t>{1};
      n.attrs["keepdims"] = int64_t{0};
      expect_cuda_matches_cpu(one_node(t, {{7, 300}}, n));
    }
}

TEST(CudaOps, IterationsAndReplansAllocateNothing) {
  REQUIRE_CUDA_DEVICE();
  Graph g = example("adam");
  std::vector<HostTensor> in = random_inputs(g, 2);
  run_on_device(g, gpu(), in, 1);  // plans, runs, frees into the cache
  const size_t before = gpu().allocator().malloc_calls();
  run_on_device(g, gpu(), in, 5);  // the same sizes again: every block from the cache
  EXPECT_EQ(gpu().allocator().malloc_calls(), before);
}

// Fused (NVRTC) against unfused (AOT) on the device, two iterations each.
FusionResult expect_fused_matches_unfused_on_cuda(const Graph& g, fusion::KernelCache& cache,
                                                  uint64_t seed = 3) {
  std::vector<HostTensor> in = random_inputs(g, seed);
  std::vector<HostTensor> want = run_on_device(g, gpu(), in);
  FusionResult fr = fuse_graph(g, fusion::FusionLevel::All, cache);
  EXPECT_TRUE(fr.failures.empty()) << fr.failures.front();
  FusingCudaBackend fusing(gpu(), cache);
  std::vector<HostTensor> got = run_on_device(fr.graph, fusing, in, 2);
  for (size_t i = 0; i < got.size(); ++i) {
    Mismatch m = compare(want[i].view(), got[i].view(), fused_tolerance(got[i].dtype()));
    EXPECT_EQ(m.index, -1) << g.name << " output " << i << " element " << m.index << ": unfused "
                           << m.expected << ", fused " << m.actual;
  }
  return fr;
}

TEST(CudaFusion, EveryExampleAndRandomDagsMatchUnfused) {
  REQUIRE_CUDA_DEVICE();
  const cuda::DeviceStatus& d = cuda::device_status();
  JitEnv env;
  fusion::KernelCache cache(cuda_toolchain(d.arch), env.workdir, nullptr);
  for (const char* name : kExamples) {
    SCOPED_TRACE(name);
    EXPECT_GT(expect_fused_matches_unfused_on_cuda(example(name), cache).regions_fused, 0);
  }
  std::mt19937 rng(1234);
  int fused = 0;
  for (int i = 0; i < 24; ++i) {
    Graph g = random_dag(rng, i % 3 == 2 ? DType::F16 : DType::F32);
    SCOPED_TRACE("dag " + std::to_string(i) + "\n" + write_graph_json(g));
    fused += expect_fused_matches_unfused_on_cuda(g, cache, i).regions_fused;
  }
  EXPECT_GE(fused, 12);
}

TEST(CudaFusion, SecondRunHitsThePtxDiskCacheAndTheFunctionCache) {
  REQUIRE_CUDA_DEVICE();
  JitEnv env;
  const cuda::DeviceStatus& d = cuda::device_status();
  Graph g = example("activation_chain");
  auto ensure_all = [&](fusion::KernelCache& c) {
    return fuse_graph(g, fusion::FusionLevel::All, c);
  };
  fusion::KernelCache first(cuda_toolchain(d.arch), env.workdir, env.disk);
  FusionResult a = ensure_all(first);
  ASSERT_GT(a.regions_fused, 0);
  EXPECT_EQ(first.compiles(), a.regions_fused);
  FusionResult again = ensure_all(first);  // same process: the loaded functions
  EXPECT_EQ(first.memory_hits(), a.regions_fused);
  EXPECT_EQ(first.compiles(), a.regions_fused);
  // A new process: PTX from disk.
  fusion::KernelCache second(cuda_toolchain(d.arch), env.workdir, env.disk);
  FusionResult b = ensure_all(second);
  EXPECT_EQ(second.compiles(), 0);
  EXPECT_EQ(second.disk_hits(), b.regions_fused);
  EXPECT_EQ(b.cache_hits, b.regions_fused);
}

TEST(Cupti, RecordsMapToTheNodesThatLaunchedThem) {
  REQUIRE_CUDA_DEVICE();
  Graph g = example("activation_chain");
  std::vector<HostTensor> host = random_inputs(g, 1);
  DeviceInputs in(gpu(), host);
  cuda::CuptiProfile p = cuda::profile_with_cupti(g, gpu(), gpu(), in.views, 5);
  // The fallback must time every step too.
  for (const OpRow& r : p.rows) EXPECT_GT(r.seconds, 0) << r.node << " has no device time";
  if (!p.cupti) GTEST_SKIP() << "CUPTI unavailable here (CUDA events timed it): " << p.why_not;
  ASSERT_EQ(p.rows.size(), static_cast<size_t>(kernel_count(g)));
  for (const OpRow& r : p.rows) EXPECT_GT(r.seconds, 0) << r.node << " has no device time";
  EXPECT_EQ(p.uncorrelated, 0u);
  EXPECT_GE(p.records, 5u * p.rows.size());
  // The steps' device times add up to at most the iteration's wall time (a record counted
  // twice would double them; medians of steps need not add up exactly, hence the margin).
  double device_ms = 0;
  for (const OpRow& r : p.rows) device_ms += 1e3 * r.seconds;
  EXPECT_LE(device_ms, p.traced_ms * 1.5);
  std::cout << "CUPTI overhead " << 100 * p.overhead() << "% (" << p.plain_ms << " -> "
            << p.traced_ms << " ms)\n";
}

#else

TEST(CudaBackend, NotBuilt) {
  GTEST_SKIP() << "this build has no CUDA backend (no CUDA toolkit)";
}

#endif

}  // namespace
}  // namespace hf
