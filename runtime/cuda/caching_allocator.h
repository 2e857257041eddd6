// Device memory for plans: cudaMalloc only on a miss, freed blocks kept for reuse.
//
// Sizes are rounded up to a bucket (512 B granularity below 1 MiB, then 1/8 of the power of
// two below), so a plan rebuilt with the same shapes (a re-plan after fusion, another
// Executor on the same graph) gets its blocks back without calling cudaMalloc. Blocks go
// back to the driver only in release_all() and the destructor. Thread-safe.
#pragma once
#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_map>

namespace hf::cuda {

class CachingAllocator {
 public:
  CachingAllocator() = default;
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  void* alloc(size_t bytes);  // throws hf::Error when the device is out of memory
  void free(void* p);         // hf::Error for a pointer this allocator did not hand out
  void release_all();         // cudaFree every cached (not live) block

  static size_t bucket(size_t bytes);
  size_t malloc_calls() const { return malloc_calls_; }  // cudaMalloc calls so far
  size_t live_bytes() const { return live_bytes_; }

 private:
  std::mutex mu_;
  std::multimap<size_t, void*> cached_;     // bucket bytes -> free block
  std::unordered_map<void*, size_t> live_;  // handed out -> bucket bytes
  size_t malloc_calls_ = 0, live_bytes_ = 0;
};

}  // namespace hf::cuda
