// Whether this process can use a CUDA device, and which one. No CUDA header: the launcher
// and the tests call this to decide between the CUDA and the CPU backend.
#pragma once
#include <string>

namespace hf::cuda {

struct DeviceStatus {
  bool usable = false;
  std::string reason;      // why not (empty when usable): the runtime's error, or "0 devices"
  bool no_driver = false;  // the reason is that libcuda.so.1 cannot be loaded at all
  int device = 0;          // the device used: 0
  std::string name;        // "NVIDIA H100 80GB HBM3"
  int arch = 0;            // 90 for sm_90
  int sm_count = 0;
  size_t memory_bytes = 0;
};

// Asks the runtime once (cudaGetDeviceCount loads the driver lazily; without a driver or a
// device it fails cleanly) and remembers the answer. Never throws.
const DeviceStatus& device_status();

}  // namespace hf::cuda
