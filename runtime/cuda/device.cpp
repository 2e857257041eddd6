#include "runtime/cuda/device.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

namespace hf::cuda {

namespace {

DeviceStatus probe() {
  DeviceStatus s;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    s.reason = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    // cudart reports a missing driver as "driver version is insufficient", which reads as
    // if a driver were there: say it once, in plain words.
    if (void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
      dlclose(h);
    } else {
      s.no_driver = true;
      s.reason = "no NVIDIA driver on this machine: libcuda.so.1 cannot be loaded";
    }
    return s;
  }
  if (count == 0) {
    s.reason = "cudaGetDeviceCount found 0 devices";
    return s;
  }
  cudaDeviceProp p{};
  e = cudaGetDeviceProperties(&p, 0);
  if (e != cudaSuccess) {
    cudaGetLastError();
    s.reason = std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(e);
    return s;
  }
  if (p.major < 9) {
    s.reason = std::string(p.name) + " is sm_" + std::to_string(p.major * 10 + p.minor) +
               "; the CUDA backend is built for sm_90 (and newer through its PTX)";
    return s;
  }
  s.usable = true;
  s.name = p.name;
  s.arch = p.major * 10 + p.minor;
  s.sm_count = p.multiProcessorCount;
  s.memory_bytes = p.totalGlobalMem;
  return s;
}

}  // namespace

const DeviceStatus& device_status() {
  static const DeviceStatus status = probe();
  return status;
}

}  // namespace hf::cuda
