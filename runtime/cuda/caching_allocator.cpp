#include "runtime/cuda/caching_allocator.h"

#include "runtime/cuda/cuda_check.h"

namespace hf::cuda {

size_t CachingAllocator::bucket(size_t bytes) {
  if (bytes == 0) bytes = 1;
  constexpr size_t kSmall = 512, kLarge = size_t(1) << 20;
  if (bytes < kLarge) return (bytes + kSmall - 1) / kSmall * kSmall;
  size_t pow2 = kLarge;  // the largest power of two <= bytes: at most 1/8 is wasted
  while (pow2 <= bytes / 2) pow2 <<= 1;
  size_t step = pow2 / 8;
  return (bytes + step - 1) / step * step;
}

CachingAllocator::~CachingAllocator() {
  // Never throw from a destructor; a failing cudaFree at exit (driver shutting down) is moot.
  for (auto& [bytes, p] : cached_) cudaFree(p);
  for (auto& [p, bytes] : live_) cudaFree(p);
}

void* CachingAllocator::alloc(size_t bytes) {
  size_t b = bucket(bytes);
  std::lock_guard lock(mu_);
  void* p = nullptr;
  auto it = cached_.find(b);
  if (it != cached_.end()) {
    p = it->second;
    cached_.erase(it);
  } else {
    cudaError_t e = cudaMalloc(&p, b);
    if (e == cudaErrorMemoryAllocation && !cached_.empty()) {
      // Give the cache back and try once more before failing.
      cudaGetLastError();
      for (auto& [sz, q] : cached_) cudaFree(q);
      cached_.clear();
      e = cudaMalloc(&p, b);
    }
    cuda_check(e, "cudaMalloc(" + std::to_string(b) + " bytes)");
    ++malloc_calls_;
  }
  live_.emplace(p, b);
  live_bytes_ += b;
  return p;
}

void CachingAllocator::free(void* p) {
  if (!p) return;
  std::lock_guard lock(mu_);
  auto it = live_.find(p);
  if (it == live_.end()) throw Error("CUDA allocator: free of a pointer it did not allocate");
  live_bytes_ -= it->second;
  cached_.emplace(it->second, p);
  live_.erase(it);
}

void CachingAllocator::release_all() {
  std::lock_guard lock(mu_);
  for (auto& [bytes, p] : cached_) cuda_check(cudaFree(p), "cudaFree");
  cached_.clear();
}

}  // namespace hf::cuda
