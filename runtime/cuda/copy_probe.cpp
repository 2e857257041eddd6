#include "runtime/cuda/copy_probe.h"

#include <algorithm>
#include <vector>

#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_check.h"

namespace hf::cuda {

double d2d_copy_gbps(CudaBackend& b, size_t bytes, int reps) {
  cudaStream_t s = static_cast<cudaStream_t>(b.stream());
  void* src = b.alloc(bytes);
  void* dst = b.alloc(bytes);
  cudaEvent_t start = nullptr, stop = nullptr;
  std::vector<float> ms;
  try {
    cuda_check(cudaEventCreate(&start), "cudaEventCreate");
    cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
    cuda_check(cudaMemsetAsync(src, 0, bytes, s), "cudaMemsetAsync");
    for (int i = 0; i <= reps; ++i) {  // the first copy is a warm-up
      cuda_check(cudaEventRecord(start, s), "cudaEventRecord");
      cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
      cuda_check(cudaEventRecord(stop, s), "cudaEventRecord");
      cuda_check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float t = 0;
      cuda_check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
      if (i > 0) ms.push_back(t);
    }
  } catch (...) {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    b.free(src);
    b.free(dst);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  b.free(src);
  b.free(dst);
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  double median_s = ms[ms.size() / 2] * 1e-3;
  return median_s > 0 ? 2.0 * static_cast<double>(bytes) / median_s * 1e-9 : 0;
}

}  // namespace hf::cuda
