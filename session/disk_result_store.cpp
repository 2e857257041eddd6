#include "session/disk_result_store.h"

#if HF_HAVE_CUDA_BACKEND
#include "fusion/kernel_cache.h"

namespace hf {

namespace {

// The value's own key goes into the entry too: a digest collision, or a file copied under
// another name, reads as absent instead of as another shape's result.
std::string entry_key(const std::string& key) {
  return fusion::DiskCache::make_key({"cuda result", key});
}

}  // namespace

std::optional<std::string> DiskResultStore::get(const std::string& key) {
  std::optional<std::string> entry = disk_->get(entry_key(key));
  if (!entry || entry->size() <= key.size() || entry->compare(0, key.size(), key) != 0 ||
      (*entry)[key.size()] != '\n')
    return std::nullopt;
  return entry->substr(key.size() + 1);
}

void DiskResultStore::put(const std::string& key, const std::string& value) {
  disk_->put(entry_key(key), key + "\n" + value);  // a failed write: measured again next time
}

std::shared_ptr<cuda::ResultStore> default_result_store() {
  std::shared_ptr<fusion::DiskCache> disk = fusion::KernelCache::host().disk();
  if (!disk) return nullptr;
  return std::make_shared<DiskResultStore>(std::move(disk));
}

}  // namespace hf
#endif
