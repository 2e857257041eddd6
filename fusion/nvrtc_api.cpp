// Compiled only where the toolkit was found (HF_HAVE_NVRTC): the headers come from it.
#if HF_HAVE_NVRTC
#include "fusion/nvrtc_api.h"

#include <cuda.h>  // CUDA_VERSION: the major the library's soname carries

#include <mutex>
#include <vector>

#include "runtime/ir/shared_library.h"

namespace hf::fusion {

const NvrtcApi* nvrtc_api(std::string* why) {
  static NvrtcApi api;
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    const std::string name = "libnvrtc.so." + std::to_string(CUDA_VERSION / 1000);
    std::vector<std::string> candidates = {name};
#ifdef HF_CUDA_LIBRARY_DIR
    candidates.push_back(std::string(HF_CUDA_LIBRARY_DIR) + "/" + name);
#endif
    std::string reasons;
    void* lib = open_shared_library(candidates, &reasons);
    if (!lib) {
      failure = "NVRTC: cannot open " + name + ": " + reasons;
      return;
    }
    bool all = true;
    auto bind = [&](auto& fn, const char* symbol) { all = bind_symbol(lib, fn, symbol) && all; };
    bind(api.create_program, "nvrtcCreateProgram");
    bind(api.compile_program, "nvrtcCompileProgram");
    bind(api.destroy_program, "nvrtcDestroyProgram");
    bind(api.program_log_size, "nvrtcGetProgramLogSize");
    bind(api.program_log, "nvrtcGetProgramLog");
    bind(api.ptx_size, "nvrtcGetPTXSize");
    bind(api.ptx, "nvrtcGetPTX");
    bind(api.cubin_size, "nvrtcGetCUBINSize");
    bind(api.cubin, "nvrtcGetCUBIN");
    bind(api.num_supported_archs, "nvrtcGetNumSupportedArchs");
    bind(api.supported_archs, "nvrtcGetSupportedArchs");
    bind(api.version, "nvrtcVersion");
    bind(api.error_string, "nvrtcGetErrorString");
    if (!all) failure = "NVRTC: " + name + " lacks an entry point this build calls";
  });
  if (!failure.empty()) {
    if (why) *why = failure;
    return nullptr;
  }
  return &api;
}

}  // namespace hf::fusion

#endif  // HF_HAVE_NVRTC
