// Device memory for plans: cudaMalloc only on a miss, freed blocks kept for reuse.
//
// Sizes are rounded up to a bucket (512 B granularity below 1 MiB, then 1/8 of the power of
// two below), so a plan rebuilt with the same shapes (a re-plan after fusion, another
// Executor on the same graph) gets its blocks back without calling cudaMalloc. Blocks go
// back to the driver in release_all(), the destructor, and when an allocation would not fit
// otherwise. Thread-safe.
//
// Out of memory (the device's, or the cap HOTFUSE_CUDA_MAX_BYTES puts on the bytes this
// allocator holds, to inject the fault; docs/reliability.md) is DeviceOutOfMemory, or
// nullptr from try_alloc for callers that have a leaner plan B (cuDNN's workspace).
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>

#include "runtime/ir/error.h"

namespace hf::cuda {

class DeviceOutOfMemory : public Error {
 public:
  using Error::Error;
};

// Where the blocks come from: cudaMalloc/cudaFree by default; replaceable so the bookkeeping
// (size classes, cap, giving the cache back) is tested on machines without a device.
// `malloc` returns false when the memory is not there; any other failure throws.
struct RawDeviceMemory {
  std::function<bool(void** p, size_t bytes)> malloc;
  std::function<void(void* p)> free;
  static RawDeviceMemory cuda();
};

class CachingAllocator {
 public:
  // cap: the most bytes held at once (live + cached), 0 for no cap; by default
  // HOTFUSE_CUDA_MAX_BYTES (cap_from_env).
  CachingAllocator();
  CachingAllocator(RawDeviceMemory raw, size_t cap);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  void* alloc(size_t bytes);      // throws DeviceOutOfMemory (the one line says how much)
  void* try_alloc(size_t bytes);  // nullptr when out of memory
  void free(void* p);             // hf::Error for a pointer this allocator did not hand out
  void release_all();             // gives every cached (not live) block back to the device

  static size_t bucket(size_t bytes);
  // HOTFUSE_CUDA_MAX_BYTES: unset or empty is 0 (no cap); else a positive byte count with an
  // optional K, M, G or T suffix (as HOTFUSE_MAX_BYTES). hf::Error naming the variable else.
  static size_t cap_from_env();
  size_t malloc_calls() const { return malloc_calls_; }  // cudaMalloc calls so far
  size_t live_bytes() const { return live_bytes_; }
  size_t cached_bytes() const { return cached_bytes_; }
  size_t cap() const { return cap_; }

 private:
  void* take(size_t bytes, std::string* why);  // nullptr + why when out of memory
  void release_cache_locked();

  RawDeviceMemory raw_;
  size_t cap_ = 0;
  std::mutex mu_;
  std::multimap<size_t, void*> cached_;     // bucket bytes -> free block
  std::unordered_map<void*, size_t> live_;  // handed out -> bucket bytes
  size_t malloc_calls_ = 0, live_bytes_ = 0, cached_bytes_ = 0;
};

}  // namespace hf::cuda
