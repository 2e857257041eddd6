// The CUDA backend's ResultStore (runtime/cuda/result_store.h) over the kernel cache's disk
// directory: measured results (cuDNN's algorithm choices) live there under the disk cache's
// rules, each under a digest of its key. CUDA builds only.
#pragma once
#if HF_HAVE_CUDA_BACKEND
#include <memory>

#include "fusion/disk_cache.h"
#include "runtime/cuda/result_store.h"

namespace hf {

class DiskResultStore final : public cuda::ResultStore {
 public:
  explicit DiskResultStore(std::shared_ptr<fusion::DiskCache> disk) : disk_(std::move(disk)) {}
  std::optional<std::string> get(const std::string& key) override;
  void put(const std::string& key, const std::string& value) override;

 private:
  std::shared_ptr<fusion::DiskCache> disk_;
};

// Over the process's kernel cache's disk (fusion::KernelCache::host()'s), or null when it
// has none (HOTFUSE_CACHE_DIR=off, or a directory it refused).
std::shared_ptr<cuda::ResultStore> default_result_store();

}  // namespace hf
#endif
