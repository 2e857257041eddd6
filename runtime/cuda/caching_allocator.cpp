#include "runtime/cuda/caching_allocator.h"

#include <cstdlib>
#include <string>

#include "runtime/cuda/cuda_check.h"
#include "runtime/ir/memory_cap.h"

namespace hf::cuda {

RawDeviceMemory RawDeviceMemory::cuda() {
  return {[](void** p, size_t bytes) {
            cudaError_t e = cudaMalloc(p, bytes);
            if (e == cudaErrorMemoryAllocation) {
              cudaGetLastError();  // not sticky: clear it so later calls do not see it
              return false;
            }
            cuda_check(e, "cudaMalloc(" + std::to_string(bytes) + " bytes)");
            return true;
          },
          [](void* p) { cudaFree(p); }};
}

size_t CachingAllocator::bucket(size_t bytes) {
  if (bytes == 0) bytes = 1;
  constexpr size_t kSmall = 512, kLarge = size_t(1) << 20;
  if (bytes < kLarge) return (bytes + kSmall - 1) / kSmall * kSmall;
  size_t pow2 = kLarge;  // the largest power of two <= bytes: at most 1/8 is wasted
  while (pow2 <= bytes / 2) pow2 <<= 1;
  size_t step = pow2 / 8;
  return (bytes + step - 1) / step * step;
}

size_t CachingAllocator::cap_from_env() {
  const char* v = std::getenv("HOTFUSE_CUDA_MAX_BYTES");
  return v && *v ? parse_byte_count(v, "HOTFUSE_CUDA_MAX_BYTES") : 0;
}

CachingAllocator::CachingAllocator() : CachingAllocator(RawDeviceMemory::cuda(), cap_from_env()) {}

CachingAllocator::CachingAllocator(RawDeviceMemory raw, size_t cap)
    : raw_(std::move(raw)), cap_(cap) {}

CachingAllocator::~CachingAllocator() {
  // Never throw from a destructor; a failing cudaFree at exit (driver shutting down) is moot.
  for (auto& [bytes, p] : cached_) raw_.free(p);
  for (auto& [p, bytes] : live_) raw_.free(p);
}

void CachingAllocator::release_cache_locked() {
  for (auto& [sz, q] : cached_) raw_.free(q);
  cached_.clear();
  cached_bytes_ = 0;
}

void* CachingAllocator::take(size_t bytes, std::string* why) {
  const size_t b = bucket(bytes);
  std::lock_guard lock(mu_);
  void* p = nullptr;
  auto it = cached_.find(b);
  if (it != cached_.end()) {
    p = it->second;
    cached_.erase(it);
    cached_bytes_ -= b;
  } else {
    // Over the cap, or the device says no: give the cache back and try once more.
    auto fits = [&] { return cap_ == 0 || live_bytes_ + cached_bytes_ + b <= cap_; };
    if (!fits()) release_cache_locked();
    bool ok = fits() && raw_.malloc(&p, b);
    if (!ok && cap_ != 0 && !fits()) {
      *why = "HOTFUSE_CUDA_MAX_BYTES=" + std::to_string(cap_) + " allows no more";
    } else if (!ok && !cached_.empty()) {
      release_cache_locked();
      ok = raw_.malloc(&p, b);
    }
    if (!ok) {
      if (why->empty()) *why = "the device has no more";
      *why = "out of device memory: " + std::to_string(b) + " bytes wanted, " +
             std::to_string(live_bytes_) + " in use (" + *why + ")";
      return nullptr;
    }
    ++malloc_calls_;
  }
  live_.emplace(p, b);
  live_bytes_ += b;
  return p;
}

void* CachingAllocator::alloc(size_t bytes) {
  std::string why;
  void* p = take(bytes, &why);
  if (!p) throw DeviceOutOfMemory("CUDA: " + why);
  return p;
}

void* CachingAllocator::try_alloc(size_t bytes) {
  std::string why;
  return take(bytes, &why);
}

void CachingAllocator::free(void* p) {
  if (!p) return;
  std::lock_guard lock(mu_);
  auto it = live_.find(p);
  if (it == live_.end()) throw Error("CUDA allocator: free of a pointer it did not allocate");
  live_bytes_ -= it->second;
  cached_bytes_ += it->second;
  cached_.emplace(it->second, p);
  live_.erase(it);
}

void CachingAllocator::release_all() {
  std::lock_guard lock(mu_);
  release_cache_locked();
}

}  // namespace hf::cuda
