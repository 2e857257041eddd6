// The device's copy bandwidth, the yardstick for memory-bound kernels: a fused kernel's
// achieved GB/s is reported as a fraction of it (hotfuse-run's machine line).
#pragma once
#include <cstddef>

namespace hf::cuda {

class CudaBackend;

// Median GB/s (bytes read + bytes written, like the op table's ideal bytes) of
// cudaMemcpyAsync device-to-device over `bytes` (default 256 MiB), timed with CUDA events
// on the backend's stream. hf::Error on a CUDA failure.
double d2d_copy_gbps(CudaBackend& b, size_t bytes = size_t(256) << 20, int reps = 10);

}  // namespace hf::cuda
