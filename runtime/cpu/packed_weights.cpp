#include "runtime/cpu/packed_weights.h"

#include <map>
#include <mutex>
#include <utility>

namespace hf::cpu {

std::shared_ptr<const std::vector<float>> shared_packed_weights(
    const std::shared_ptr<const void>& owner, const std::string& layout, size_t floats,
    const std::function<void(float*)>& pack) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, std::string>, std::weak_ptr<const std::vector<float>>>
      cache;
  std::lock_guard<std::mutex> lock(mutex);
  for (auto it = cache.begin(); it != cache.end();)  // entries nobody holds any more
    it = it->second.expired() ? cache.erase(it) : std::next(it);
  auto key = std::make_pair(owner.get(), layout);
  if (auto hit = cache[key].lock()) return hit;
  auto packed = std::make_shared<std::vector<float>>(floats);
  pack(packed->data());
  cache[key] = packed;
  return packed;
}

}  // namespace hf::cpu
