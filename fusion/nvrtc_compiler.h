// NVRTC: generated CUDA source -> PTX (or CUBIN for a known arch). Needs no GPU. Built for
// real only with HF_HAVE_NVRTC (CMake found the CUDA toolkit); otherwise every compile
// fails with the log "NVRTC not available in this build".
//
// The embedded headers (fusion/embedded_headers.h) are handed to NVRTC by name, so sources
// #include "runtime/ops/scalar_math.h" as on the host. Options: -std=c++17,
// --gpu-architecture=compute_XX (sm_XX for CUBIN), -default-device, --fmad=false; no fast
// math (IEEE division and sqrt) and no contraction, like the host kernels: an FMA only
// where the source writes one.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace hf::fusion {

class Workdir;

struct PtxResult {
  bool ok = false;
  std::string ptx, log;
  int arch = 0;  // the arch compiled for, after clamp_arch
  double seconds = 0;
  std::filesystem::path source_file, log_file;  // with a workdir
};

struct CubinResult {
  bool ok = false;
  std::string cubin, log;
  int arch = 0;
  double seconds = 0;
};

bool nvrtc_available();

// `name` names the program in diagnostics (and the workdir files: <name>.cu, <name>.log,
// <name>.sm_XX.ptx). With a workdir a failure's source and log are retained. Thread-safe.
PtxResult compile_ptx(const std::string& source, const std::string& name, int sm_arch,
                      Workdir* workdir = nullptr);
CubinResult compile_cubin(const std::string& source, const std::string& name, int sm_arch);

// The largest arch NVRTC supports that is <= requested, else the smallest it supports:
// asking an older NVRTC for a newer GPU's arch fails with "invalid --gpu-architecture"
// (MXNet's bug); PTX for an older virtual arch is JIT-compiled by the driver. Without
// NVRTC: `requested`.
int clamp_arch(int requested);
std::vector<int> nvrtc_supported_archs();  // ascending; empty without NVRTC

// "NVRTC <major>.<minor>", for cache keys; "NVRTC unavailable" without it.
std::string nvrtc_identity();
// The options compile_ptx passes besides the arch, for cache keys.
const std::vector<std::string>& nvrtc_options();

}  // namespace hf::fusion
