// Compiled host kernels by spec hash: in memory for this process, on disk across processes.
//
// ensure() is the only way code gets loaded: a memory hit costs nothing; a disk hit writes
// the verified library into the work directory and dlopens it; a miss generates C++,
// compiles it and stores the library on disk. Thread-safe: the adaptive session compiles
// on a worker thread while iterations look kernels up.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "fusion/disk_cache.h"
#include "fusion/host_compiler.h"
#include "fusion/kernel_abi.h"
#include "fusion/spec.h"
#include "fusion/workdir.h"

namespace hf::fusion {

struct CompileOutcome {
  bool ok = false;
  enum Source { Memory, Disk, Compiled, Failed } source = Failed;
  double ms = 0;        // time spent here, compile or load
  std::string message;  // on failure: one line naming the kernel and where its log is
};

class CpuKernelCache {
 public:
  // disk: nullptr disables the disk cache.
  CpuKernelCache(std::shared_ptr<Workdir> workdir, std::shared_ptr<DiskCache> disk);

  // The process-wide cache: MGB_JIT_WORKDIR, MGB_JIT_KEEP_INTERM and DiskCache::default_dir().
  // A refused cache directory disables the disk cache with a warning on stderr.
  static CpuKernelCache& process();

  // origin: the graph nodes the kernel came from (sanitised into a comment by codegen).
  CompileOutcome ensure(const KernelSpec& spec, const std::string& origin);
  // Whether ensure() would find the kernel in memory or on disk (no compile). A cheap
  // look, not a verification: a corrupt entry found later is still rebuilt.
  bool cached(const KernelSpec& spec) const;
  // The loaded kernel for a spec hash, or nullptr.
  HostKernelFn find(uint64_t spec_hash) const;
  static std::string kernel_name(const KernelSpec& spec) { return "hf_" + spec.hash_hex(); }

  int compiles() const;
  Workdir& workdir() { return *workdir_; }

 private:
  static std::string disk_key(const KernelSpec& spec);
  struct Loaded {
    std::shared_ptr<HostLibrary> library;
    HostKernelFn fn = nullptr;
  };
  std::shared_ptr<Workdir> workdir_;
  std::shared_ptr<DiskCache> disk_;
  mutable std::mutex mu_;
  std::map<uint64_t, Loaded> loaded_;
  int compiles_ = 0;
};

}  // namespace hf::fusion
