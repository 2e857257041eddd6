// fusion/nvrtc_compiler with the real NVRTC: generated-style CUDA kernels that include the
// embedded headers compile to PTX for sm_80 and sm_90 (and CUBIN) without a GPU; failures
// are results with NVRTC's log; arch clamping. One skipped test without the CUDA toolkit.
#include "fusion/nvrtc_compiler.h"

#include <gtest/gtest.h>

#if HF_HAVE_NVRTC

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "fusion/workdir.h"
#include "tests/support/temp_dir.h"

namespace hf::fusion {
namespace {

namespace fs = std::filesystem;

const char* kKernel = R"(
#include "runtime/ops/scalar_math.h"
#include "runtime/ops/half.h"
#include "fusion/kernel_abi.h"

extern "C" __global__ void hf_test_gelu_add(const hf::fusion::KernelArgs* args) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= args->numel) return;
  const float* a = (const float*)args->in[0];
  const hf::f16* b = (const hf::f16*)args->in[1];
  float* out = (float*)args->out[0];
  float g = hf::ModeFn<hf::Mode::GELU>::apply(a[i]);
  out[i] = hf::ModeFn<hf::Mode::ADD>::apply(g, hf::to_f32(b[i]));
}
)";

class NvrtcPtx : public ::testing::TestWithParam<int> {};

TEST_P(NvrtcPtx, CompilesAGeneratedStyleKernel) {
  PtxResult r = compile_ptx(kKernel, "hf_test_gelu_add", GetParam());
  ASSERT_TRUE(r.ok) << r.log;
  std::cout << "NVRTC PTX for sm_" << r.arch << ": " << r.seconds << " s, " << r.ptx.size()
            << " bytes\n";
  EXPECT_EQ(r.arch, GetParam());
  EXPECT_NE(r.ptx.find(".entry hf_test_gelu_add("), std::string::npos);
  EXPECT_NE(r.ptx.find(".target sm_" + std::to_string(GetParam())), std::string::npos);
  EXPECT_EQ(r.ptx.find('\0'), std::string::npos);
  EXPECT_EQ(r.log.find("warning"), std::string::npos) << r.log;
  EXPECT_GT(r.seconds, 0);
}

INSTANTIATE_TEST_SUITE_P(Archs, NvrtcPtx, ::testing::Values(80, 90));

TEST(NvrtcCompiler, BrokenSourceIsAResultWithTheLog) {
  PtxResult r = compile_ptx(
      "#include \"runtime/ops/scalar_math.h\"\n"
      "extern \"C\" __global__ void k(float* o) { o[0] = hf::ModeFn<hf::Mode::ADD>::apply(1); }\n",
      "hf_test_broken", 80);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.ptx.empty());
  EXPECT_NE(r.log.find("error"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("hf_test_broken.cu"), std::string::npos) << r.log;
}

TEST(NvrtcCompiler, WorkdirGetsSourcePtxAndAFailuresLog) {
  TempDir t("hf-test-nvrtc");
  fs::path dir = t.root / "jit";
  {
    auto w = Workdir::open(dir, /*keep=*/false);
    PtxResult ok = compile_ptx(kKernel, "hf_ok", 90, w.get());
    ASSERT_TRUE(ok.ok) << ok.log;
    EXPECT_EQ(ok.source_file, dir / "hf_ok.cu");
    EXPECT_TRUE(fs::exists(dir / "hf_ok.sm_90.ptx"));
    PtxResult bad = compile_ptx("this is not CUDA", "hf_bad", 90, w.get());
    EXPECT_FALSE(bad.ok);
    EXPECT_EQ(bad.log_file, dir / "hf_bad.log");
  }
  // Only the failure's source and log outlive the workdir.
  EXPECT_FALSE(fs::exists(dir / "hf_ok.cu"));
  EXPECT_FALSE(fs::exists(dir / "hf_ok.sm_90.ptx"));
  EXPECT_TRUE(fs::exists(dir / "hf_bad.cu"));
  EXPECT_TRUE(fs::exists(dir / "hf_bad.log"));
}

TEST(NvrtcCompiler, Cubin) {
  CubinResult r = compile_cubin(kKernel, "hf_test_cubin", 80);
  ASSERT_TRUE(r.ok) << r.log;
  std::cout << "NVRTC CUBIN for sm_80: " << r.seconds << " s, " << r.cubin.size() << " bytes\n";
  EXPECT_EQ(r.cubin.substr(0, 4),
            "\x7f"
            "ELF");
}

TEST(NvrtcCompiler, ClampArch) {
  std::vector<int> archs = nvrtc_supported_archs();
  ASSERT_FALSE(archs.empty());
  EXPECT_TRUE(std::is_sorted(archs.begin(), archs.end()));
  EXPECT_EQ(clamp_arch(90), 90);
  EXPECT_EQ(clamp_arch(80), 80);
  EXPECT_EQ(clamp_arch(1000), archs.back());
  EXPECT_EQ(clamp_arch(1), archs.front());
  // An arch between two supported ones goes down to the older one.
  EXPECT_EQ(clamp_arch(91), *(std::upper_bound(archs.begin(), archs.end(), 91) - 1));
  // A future GPU's arch still compiles, as the newest PTX this NVRTC knows.
  PtxResult r = compile_ptx(kKernel, "hf_test_future", 1000);
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_EQ(r.arch, archs.back());
}

TEST(NvrtcCompiler, Identity) {
  EXPECT_TRUE(nvrtc_available());
  EXPECT_EQ(nvrtc_identity().rfind("NVRTC ", 0), 0u) << nvrtc_identity();
  EXPECT_EQ(nvrtc_identity().find("unknown"), std::string::npos);
  std::cout << nvrtc_identity() << ", archs:";
  for (int a : nvrtc_supported_archs()) std::cout << " " << a;
  std::cout << "\n";
}

}  // namespace
}  // namespace hf::fusion

#else  // !HF_HAVE_NVRTC

TEST(NvrtcCompiler, Skipped) {
  EXPECT_FALSE(hf::fusion::nvrtc_available());
  EXPECT_NE(hf::fusion::compile_ptx("", "k", 80).log.find("NVRTC not available"),
            std::string::npos);
  GTEST_SKIP() << "CMake found no CUDA toolkit (NVRTC)";
}

#endif
