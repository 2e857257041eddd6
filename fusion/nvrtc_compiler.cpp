#include "fusion/nvrtc_compiler.h"

#include <algorithm>
#include <chrono>

#include "fusion/embedded_headers.h"
#include "fusion/workdir.h"
#include "runtime/ir/error.h"

#if HF_HAVE_NVRTC
#include "fusion/nvrtc_api.h"
#endif

namespace hf::fusion {

const std::vector<std::string>& nvrtc_options() {
  // --fmad=false: no contraction, as the host kernels and the nvcc-built ones (CMakeLists.txt).
  static const std::vector<std::string> opts = {"-std=c++17", "-default-device", "--fmad=false"};
  return opts;
}

#if HF_HAVE_NVRTC

namespace {

struct Compiled {
  bool ok = false;
  std::string log, code;
  int arch = 0;
  double seconds = 0;
};

std::string error_text(const NvrtcApi& api, const char* what, nvrtcResult r) {
  return std::string(what) + ": " + api.error_string(r) + "\n";
}

// One NVRTC program: create with the embedded headers, compile, fetch log and code.
Compiled compile(const std::string& source, const std::string& name, int sm_arch, bool cubin) {
  auto t0 = std::chrono::steady_clock::now();
  Compiled c;
  c.arch = clamp_arch(sm_arch);
  std::string why;
  const NvrtcApi* api = nvrtc_api(&why);
  if (!api) {
    c.log = why + "\n";
    return c;
  }
  std::vector<const char*> bodies, names;
  std::vector<std::string> paths;  // string_views into the table are not NUL-terminated
  std::vector<std::string> contents;
  for (const EmbeddedHeader& h : embedded_headers()) {
    paths.emplace_back(h.path);
    contents.emplace_back(h.contents);
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    names.push_back(paths[i].c_str());
    bodies.push_back(contents[i].c_str());
  }
  nvrtcProgram prog;
  std::string file = name + ".cu";
  nvrtcResult res = api->create_program(&prog, source.c_str(), file.c_str(), int(bodies.size()),
                                        bodies.data(), names.data());
  if (res != NVRTC_SUCCESS) {
    c.log = error_text(*api, "nvrtcCreateProgram", res);
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return c;
  }
  std::vector<std::string> opts = nvrtc_options();
  opts.push_back(std::string("--gpu-architecture=") + (cubin ? "sm_" : "compute_") +
                 std::to_string(c.arch));
  std::vector<const char*> opt_ptrs;
  for (const std::string& o : opts) opt_ptrs.push_back(o.c_str());
  res = api->compile_program(prog, int(opt_ptrs.size()), opt_ptrs.data());
  size_t n = 0;
  if (api->program_log_size(prog, &n) == NVRTC_SUCCESS && n > 1) {
    c.log.resize(n);
    api->program_log(prog, c.log.data());
    c.log.resize(n - 1);  // the terminating NUL
  }
  if (res != NVRTC_SUCCESS) {
    c.log += error_text(*api, "nvrtcCompileProgram", res);
  } else if (cubin) {
    if ((res = api->cubin_size(prog, &n)) == NVRTC_SUCCESS) {
      c.code.resize(n);
      res = api->cubin(prog, c.code.data());
    }
    if (res != NVRTC_SUCCESS) c.log += error_text(*api, "nvrtcGetCUBIN", res);
    c.ok = res == NVRTC_SUCCESS;
  } else {
    if ((res = api->ptx_size(prog, &n)) == NVRTC_SUCCESS) {
      c.code.resize(n);
      res = api->ptx(prog, c.code.data());
      if (res == NVRTC_SUCCESS && !c.code.empty() && c.code.back() == '\0') c.code.pop_back();
    }
    if (res != NVRTC_SUCCESS) c.log += error_text(*api, "nvrtcGetPTX", res);
    c.ok = res == NVRTC_SUCCESS;
  }
  api->destroy_program(&prog);
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

}  // namespace

bool nvrtc_available() {
  return nvrtc_api() != nullptr;
}

std::vector<int> nvrtc_supported_archs() {
  static const std::vector<int> archs = [] {
    int n = 0;
    std::vector<int> a;
    const NvrtcApi* api = nvrtc_api();
    if (api && api->num_supported_archs(&n) == NVRTC_SUCCESS && n > 0) {
      a.resize(size_t(n));
      if (api->supported_archs(a.data()) != NVRTC_SUCCESS) a.clear();
    }
    std::sort(a.begin(), a.end());
    return a;
  }();
  return archs;
}

int clamp_arch(int requested) {
  std::vector<int> a = nvrtc_supported_archs();
  if (a.empty()) return requested;
  auto it = std::upper_bound(a.begin(), a.end(), requested);
  return it == a.begin() ? a.front() : *(it - 1);
}

std::string nvrtc_identity() {
  int major = 0, minor = 0;
  const NvrtcApi* api = nvrtc_api();
  if (!api) return "NVRTC unavailable";
  if (api->version(&major, &minor) != NVRTC_SUCCESS) return "NVRTC unknown version";
  return "NVRTC " + std::to_string(major) + "." + std::to_string(minor);
}

PtxResult compile_ptx(const std::string& source, const std::string& name, int sm_arch,
                      Workdir* workdir) {
  Compiled c = compile(source, name, sm_arch, /*cubin=*/false);
  PtxResult r{c.ok, std::move(c.code), std::move(c.log), c.arch, c.seconds, {}, {}};
  if (workdir) {
    // The workdir is for humans: a write failure there must not fail the compile.
    try {
      r.source_file = workdir->write_file(name + ".cu", source);
      if (!r.log.empty() || !r.ok) r.log_file = workdir->write_file(name + ".log", r.log);
      if (r.ok) workdir->write_file(name + ".sm_" + std::to_string(r.arch) + ".ptx", r.ptx);
    } catch (const Error& e) {
      r.log += std::string(e.what()) + "\n";
    }
    if (!r.ok) {
      workdir->retain(name + ".cu");
      workdir->retain(name + ".log");
    }
  }
  return r;
}

CubinResult compile_cubin(const std::string& source, const std::string& name, int sm_arch) {
  Compiled c = compile(source, name, sm_arch, /*cubin=*/true);
  return CubinResult{c.ok, std::move(c.code), std::move(c.log), c.arch, c.seconds};
}

#else  // !HF_HAVE_NVRTC

namespace {
constexpr const char* kUnavailable = "NVRTC not available in this build\n";
}

bool nvrtc_available() {
  return false;
}
std::vector<int> nvrtc_supported_archs() {
  return {};
}
int clamp_arch(int requested) {
  return requested;
}
std::string nvrtc_identity() {
  return "NVRTC unavailable";
}

PtxResult compile_ptx(const std::string&, const std::string&, int sm_arch, Workdir*) {
  PtxResult r;
  r.log = kUnavailable;
  r.arch = sm_arch;
  return r;
}

CubinResult compile_cubin(const std::string&, const std::string&, int sm_arch) {
  CubinResult r;
  r.log = kUnavailable;
  r.arch = sm_arch;
  return r;
}

#endif

}  // namespace hf::fusion
