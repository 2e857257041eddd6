// runtime/ops/scalar_math.h under the real NVRTC: a CUDA source that includes it (and
// half.h) and instantiates ModeFn<Mode::X>::apply for every mode and every dtype its kind
// admits must compile to PTX for compute_80 and compute_90, with every kernel present.
//
// NVRTC has no standard headers: the project headers are handed to nvrtcCreateProgram by
// name, read from the source tree (HF_SOURCE_DIR) at run time. No GPU is needed. The options
// are the JIT's (docs/jit.md): -std=c++17 -default-device --gpu-architecture=compute_XX.
// (-default-device is needed only for mode.h's mode_info(), which is not HF_HD.)
// tests/nvrtc.cmake defines HF_HAVE_NVRTC when CMake found the CUDA toolkit; without it this
// file is one skipped test.
#include <gtest/gtest.h>

#if HF_HAVE_NVRTC
#include <nvrtc.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/ops/mode.h"

namespace hf {
namespace {

// The headers scalar_math.h and half.h include, under the names they include them by.
const char* const kHeaders[] = {
    "runtime/ops/hd.h",    "runtime/ops/mode.h", "runtime/ops/elemwise_modes.def",
    "runtime/ops/vmath.h", "runtime/ops/half.h", "runtime/ops/scalar_math.h",
};

std::string read_source(const std::string& rel) {
  std::ifstream f(std::string(HF_SOURCE_DIR) + "/" + rel, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Dtype {
  const char* name;  // in kernel names
  const char* type;  // the C++ type
};
constexpr Dtype kF32{"f32", "float"}, kI32{"i32", "int"}, kI64{"i64", "long long"},
    kU8{"u8", "unsigned char"}, kBool{"bool", "bool"};

std::vector<Dtype> admitted(ModeKind k) {
  switch (k) {
    case ModeKind::Float:
      return {kF32};
    case ModeKind::Numeric:
      return {kF32, kI32, kI64, kU8};
    case ModeKind::Int:
      return {kI32, kI64, kU8};
    case ModeKind::Logic:
      return {kBool, kI32, kI64, kU8};
    case ModeKind::Compare:
      return {kF32, kI32, kI64, kU8};
    case ModeKind::Predicate:
      return {kF32};
  }
  return {};
}

// One kernel per (mode, dtype): out[i] = ModeFn<M>::apply(a0[i], ...). Kernel names go in
// `names` so the PTX can be checked for each.
std::string modes_source(std::vector<std::string>& names) {
  std::ostringstream s;
  s << "#include \"runtime/ops/scalar_math.h\"\n#include \"runtime/ops/half.h\"\n\n";
  for (const ModeInfo& m : kModeInfo) {
    bool to_bool = m.kind == ModeKind::Compare || m.kind == ModeKind::Predicate;
    for (const Dtype& t : admitted(m.kind)) {
      std::string name = std::string("hf_") + m.name + "_" + t.name;
      names.push_back(name);
      s << "extern \"C\" __global__ void " << name << "(" << (to_bool ? "bool" : t.type) << "* out";
      for (int i = 0; i < m.arity; ++i) s << ", const " << t.type << "* a" << i;
      s << ") {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  out[i] = hf::ModeFn<hf::Mode::"
        << m.name << ">::apply(";
      for (int i = 0; i < m.arity; ++i) s << (i ? ", " : "") << "a" << i << "[i]";
      s << ");\n}\n";
    }
  }
  // f16 / bf16 storage: loads and stores through half.h around an f32 mode.
  names.push_back("hf_GELU_f16");
  s << "extern \"C\" __global__ void hf_GELU_f16(hf::f16* out, const hf::f16* a) {\n"
       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  out[i] = hf::to_f16(hf::ModeFn<hf::Mode::GELU>::apply(hf::to_f32(a[i])));\n}\n";
  names.push_back("hf_ADD_bf16");
  s << "extern \"C\" __global__ void hf_ADD_bf16(hf::bf16* out, const hf::bf16* a, "
       "const hf::bf16* b) {\n"
       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  out[i] = hf::to_bf16(hf::ModeFn<hf::Mode::ADD>::apply(hf::to_f32(a[i]), "
       "hf::to_f32(b[i])));\n}\n";
  return s.str();
}

struct Compiled {
  nvrtcResult create = NVRTC_SUCCESS, compile = NVRTC_SUCCESS;
  std::string log, ptx;
};

Compiled compile(const std::string& source, const std::string& arch) {
  std::vector<std::string> contents;
  for (const char* h : kHeaders) contents.push_back(read_source(h));
  std::vector<const char*> bodies, names;
  for (size_t i = 0; i < contents.size(); ++i) {
    bodies.push_back(contents[i].c_str());
    names.push_back(kHeaders[i]);
  }
  Compiled c;
  nvrtcProgram prog;
  c.create = nvrtcCreateProgram(&prog, source.c_str(), "modes.cu", (int)bodies.size(),
                                bodies.data(), names.data());
  if (c.create != NVRTC_SUCCESS) return c;
  std::string arch_opt = "--gpu-architecture=" + arch;
  const char* opts[] = {arch_opt.c_str(), "-std=c++17", "-default-device"};
  c.compile = nvrtcCompileProgram(prog, 3, opts);
  size_t n = 0;
  if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1) {
    c.log.resize(n);
    nvrtcGetProgramLog(prog, c.log.data());
    c.log.resize(n - 1);
  }
  if (c.compile == NVRTC_SUCCESS && nvrtcGetPTXSize(prog, &n) == NVRTC_SUCCESS) {
    c.ptx.resize(n);
    nvrtcGetPTX(prog, c.ptx.data());
  }
  nvrtcDestroyProgram(&prog);
  return c;
}

class NvrtcHeader : public ::testing::TestWithParam<const char*> {};

TEST_P(NvrtcHeader, EveryModeEveryDtypeCompiles) {
  for (const char* h : kHeaders)
    ASSERT_FALSE(read_source(h).empty()) << "cannot read " << HF_SOURCE_DIR << "/" << h;
  std::vector<std::string> kernels;
  std::string source = modes_source(kernels);
  Compiled c = compile(source, GetParam());
  ASSERT_EQ(c.create, NVRTC_SUCCESS) << nvrtcGetErrorString(c.create);
  ASSERT_EQ(c.compile, NVRTC_SUCCESS) << nvrtcGetErrorString(c.compile) << "\nNVRTC log:\n"
                                      << c.log;
  if (!c.log.empty()) std::cout << "NVRTC log (" << GetParam() << "):\n" << c.log << "\n";
  EXPECT_EQ(c.log.find("warning"), std::string::npos) << c.log;
  int missing = 0;
  for (const std::string& k : kernels)
    if (c.ptx.find(".entry " + k + "(") == std::string::npos && ++missing <= 10)
      ADD_FAILURE() << "kernel " << k << " is missing from the PTX";
  EXPECT_EQ(missing, 0);
  // RMULH on i64 takes the device path (__mul64hi), not an emulated __int128.
  EXPECT_NE(c.ptx.find("mul.hi.s64"), std::string::npos);
  // 86 modes; Numeric/Compare/Logic modes have 4 dtypes, Int 3, Float/Predicate 1; + 2.
  EXPECT_GT(kernels.size(), 150u);
  std::cout << GetParam() << ": " << kernels.size() << " kernels, " << c.ptx.size()
            << " bytes of PTX\n";
}

INSTANTIATE_TEST_SUITE_P(Archs, NvrtcHeader, ::testing::Values("compute_80", "compute_90"));

// The check above can fail: NVRTC reports an error in the included headers' context.
TEST(NvrtcHarness, ReportsErrors) {
  Compiled c = compile(
      "#include \"runtime/ops/scalar_math.h\"\n"
      "extern \"C\" __global__ void k(float* o) { o[0] = hf::ModeFn<hf::Mode::ADD>::apply(1); }\n",
      "compute_80");
  ASSERT_EQ(c.create, NVRTC_SUCCESS);
  EXPECT_NE(c.compile, NVRTC_SUCCESS);  // ADD takes two arguments
  EXPECT_NE(c.log.find("error"), std::string::npos) << c.log;
}

}  // namespace
}  // namespace hf

#else  // !HF_HAVE_NVRTC

TEST(NvrtcHeader, Skipped) {
  GTEST_SKIP() << "CMake found no CUDA toolkit (NVRTC)";
}

#endif
