// Where results measured on a device outlive the process: the session layer gives the CUDA
// backend one over the kernel cache's disk directory (session/result_store_disk.h), so a
// second process plans without measuring again. No CUDA header. Internal to runtime/cuda/
// and its owner.
#pragma once
#include <optional>
#include <string>

namespace hf::cuda {

class ResultStore {
 public:
  virtual ~ResultStore() = default;
  // The value kept under `key`, or nullopt. Thread-safe.
  virtual std::optional<std::string> get(const std::string& key) = 0;
  // Keeps `value` under `key`; a failure is silent (the next process measures again).
  virtual void put(const std::string& key, const std::string& value) = 0;
};

}  // namespace hf::cuda
