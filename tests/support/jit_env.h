// What JIT tests share: a private work directory and disk cache per test (never the
// user's), and views/copies of tensors.
#pragma once
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "fusion/host_toolchain.h"
#include "fusion/kernel_cache.h"
#include "runtime/ir/tensor.h"

namespace hf {

// A private work directory and disk cache, removed at the end of the test.
struct JitEnv {
  std::filesystem::path root;
  std::shared_ptr<fusion::Workdir> workdir;
  std::shared_ptr<fusion::DiskCache> disk;
  std::unique_ptr<fusion::KernelCache> cache;  // host-compiled C++ kernels
  explicit JitEnv(bool keep = false) {
    root = std::filesystem::temp_directory_path() /
           ("hf-e2e-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::create_directories(root / "cache");
    ::chmod(root.c_str(), 0700);
    ::chmod((root / "cache").c_str(), 0700);
    workdir = fusion::Workdir::open(root / "work", keep);
    disk = std::make_shared<fusion::DiskCache>(root / "cache");
    cache = fresh_process();
  }
  // A second process: same disk cache, empty memory cache.
  std::unique_ptr<fusion::KernelCache> fresh_process() const {
    return std::make_unique<fusion::KernelCache>(fusion::host_toolchain(), workdir, disk);
  }
  ~JitEnv() {
    cache.reset();
    workdir.reset();
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
  static int& counter() {
    static int c = 0;
    return c;
  }
};

inline std::vector<TensorView> views(const std::vector<HostTensor>& ts) {
  std::vector<TensorView> v;
  for (const HostTensor& t : ts) v.push_back(t.view());
  return v;
}

inline std::vector<HostTensor> copies(std::span<const TensorView> out) {
  std::vector<HostTensor> c;
  for (const TensorView& v : out) {
    HostTensor t(v.dtype, v.shape);
    std::memcpy(t.data(), v.data, t.bytes());
    c.push_back(std::move(t));
  }
  return c;
}

}  // namespace hf
