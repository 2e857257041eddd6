// NVRTC, opened on first use instead of linked: libnvrtc's static constructors and
// relocations cost every process about 27 MB resident, CPU-only runs included, which is a
// quarter of what a small CNN needs in all. The compiler calls these entry points through
// one table; the library is opened when the first CUDA kernel is compiled (or NVRTC's
// version or archs are asked for). Built only with HF_HAVE_NVRTC (the toolkit's headers).
#pragma once
#include <nvrtc.h>

#include <string>

namespace hf::fusion {

struct NvrtcApi {
  decltype(&nvrtcCreateProgram) create_program = nullptr;
  decltype(&nvrtcCompileProgram) compile_program = nullptr;
  decltype(&nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&nvrtcGetProgramLogSize) program_log_size = nullptr;
  decltype(&nvrtcGetProgramLog) program_log = nullptr;
  decltype(&nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&nvrtcGetPTX) ptx = nullptr;
  decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
  decltype(&nvrtcGetNumSupportedArchs) num_supported_archs = nullptr;
  decltype(&nvrtcGetSupportedArchs) supported_archs = nullptr;
  decltype(&nvrtcVersion) version = nullptr;
  decltype(&nvrtcGetErrorString) error_string = nullptr;
};

// Opens libnvrtc.so.<the toolkit's major> (the library search path, then the toolkit's
// directory) once. Null when it cannot, and then `why` (when given) says why, naming the
// library.
const NvrtcApi* nvrtc_api(std::string* why = nullptr);

}  // namespace hf::fusion
