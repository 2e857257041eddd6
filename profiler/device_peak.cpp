#include "profiler/device_peak.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "runtime/cuda/caching_allocator.h"
#include "runtime/cuda/copy_probe.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_check.h"

namespace hf::cuda {

int fp32_lanes_per_sm(int arch) {
  return arch <= 80 ? 64 : 128;
}

double fp32_peak_gflops(int arch, int sm_count, double clock_khz) {
  return double(sm_count) * fp32_lanes_per_sm(arch) * 2.0 * clock_khz * 1e-6;
}

namespace {

double launch_floor_us(CudaBackend& b) {
  cudaStream_t s = static_cast<cudaStream_t>(b.stream());
  void* p = b.alloc(4);
  std::vector<double> us;
  try {
    for (int i = 0; i <= 50; ++i) {  // the first is a warm-up
      auto t0 = std::chrono::steady_clock::now();
      cuda_check(cudaMemsetAsync(p, 0, 4, s), "cudaMemsetAsync");
      cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
      if (i > 0)
        us.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count());
    }
  } catch (...) {
    b.free(p);
    throw;
  }
  b.free(p);
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

}  // namespace

MachinePeak device_peak(CudaBackend& b) {
  const DeviceStatus& dev = b.device();
  int khz = 0;
  // cudaDeviceProp::clockRate is gone in CUDA 13; the attribute is not.
  cuda_check(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev.device),
             "cudaDeviceGetAttribute(cudaDevAttrClockRate)");
  MachinePeak m;
  // The probe's two buffers stay within a HOTFUSE_CUDA_MAX_BYTES cap (a quarter of it
  // each), so that the cap is met, or refused with its own message, by the graph's plan
  // and not by the yardstick; a small cap makes a launch-bound, lower figure.
  size_t probe_bytes = size_t(256) << 20;
  if (size_t cap = b.allocator().cap(); cap != 0)
    probe_bytes = std::min(probe_bytes, std::max<size_t>(cap / 4, 256));
  m.bandwidth_gbps = d2d_copy_gbps(b, probe_bytes);
  m.gflops = fp32_peak_gflops(dev.arch, dev.sm_count, khz);
  m.launch_us = launch_floor_us(b);
  m.threads = dev.sm_count;
  m.cpu = dev.name + ", sm_" + std::to_string(dev.arch);
  m.source = "measured on the device";  // each run: ~0.1 s, nothing to cache
  return m;
}

}  // namespace hf::cuda
