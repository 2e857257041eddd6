// Compiled region kernels by spec, for one target: in memory for this process, on
// disk across processes. One cache for every target; a KernelToolchain says what differs
// (the language the kernel is generated in, how it compiles, how it loads).
//
// ensure() is the only way code gets loaded: a memory hit costs nothing; a disk hit loads
// the verified artifact; a miss generates the source, compiles it and stores the artifact
// on disk. In memory a kernel is found by its spec's full encoding, never by the 64-bit
// hash in its name: collisions of that hash can be built offline. A spec whose name
// hf_<hash> another spec already holds here is refused (its region runs unfused): its
// files would overwrite the other's in the work directory, and dlopen of the same path
// would hand back the other's library. Thread-safe: the adaptive session compiles on a worker
// thread while iterations look kernels up with find().
#pragma once
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "fusion/disk_cache.h"
#include "fusion/spec.h"
#include "fusion/workdir.h"

namespace hf::fusion {

struct CompileOutcome {
  bool ok = false;
  enum Source { Memory, Disk, Compiled, Failed } source = Failed;
  double ms = 0;        // time spent here, compile or load
  std::string message;  // on failure: one line naming the kernel and where its log is
};

// A kernel ready to run: a dlopen'ed host function, a loaded CUDA module function. The
// backend that runs Fused nodes of this target knows the concrete type.
class LoadedKernel {
 public:
  virtual ~LoadedKernel() = default;
};

// What one target's kernels are made of. Implementations are stateless or thread-safe:
// the cache calls them from the compile worker and the session's thread at once.
class KernelToolchain {
 public:
  virtual ~KernelToolchain() = default;
  // For messages and the disk key: "cpu", "cuda sm_90".
  virtual std::string target() const = 0;
  // The generated source's file extension: ".cpp", ".cu".
  virtual std::string extension() const = 0;
  // The kernel's source; `origin` only feeds a comment (it is left out of cache keys).
  virtual std::string generate(const KernelSpec& spec, const std::string& name,
                               const std::string& origin) const = 0;
  // Everything besides the source that decides the artifact: compiler identity, options,
  // arch, digest of the embedded headers. The first part is the artifact's kind ("cpu",
  // "ptx"): disk_key() is make_key({source, key_parts()...}), the key the per-target caches
  // before this one computed, so their disk entries still hit.
  virtual std::vector<std::string> key_parts() const = 0;

  struct Built {
    bool ok = false;
    std::string artifact;  // shared object bytes, PTX text...
    std::string failure;   // when !ok: the one-line message (names the kernel and its log)
  };
  virtual Built compile(const std::string& source, const std::string& name,
                        const std::string& origin, Workdir& workdir) const = 0;
  // hf::Error when the artifact does not load.
  virtual std::unique_ptr<LoadedKernel> load(const std::string& artifact, const std::string& name,
                                             Workdir& workdir) const = 0;
};

class KernelCache {
 public:
  // disk: nullptr disables the disk cache.
  KernelCache(std::unique_ptr<KernelToolchain> toolchain, std::shared_ptr<Workdir> workdir,
              std::shared_ptr<DiskCache> disk);
  ~KernelCache();

  // DiskCache::default_dir() (HOTFUSE_CACHE_DIR...); a refused directory: one warning on
  // stderr, no disk cache.
  static std::shared_ptr<DiskCache> default_disk();
  // The process-wide cache of host-compiled C++ kernels: MGB_JIT_WORKDIR,
  // MGB_JIT_KEEP_INTERM and default_disk().
  static KernelCache& host();

  static std::string kernel_name(const KernelSpec& spec) { return "hf_" + spec.hash_hex(); }

  // origin: the graph nodes the kernel came from (sanitised into a comment by codegen).
  CompileOutcome ensure(const KernelSpec& spec, const std::string& origin);
  // Whether ensure() would find the kernel in memory or on disk (no compile). A cheap
  // look, not a verification: a corrupt entry found later is still rebuilt.
  bool cached(const KernelSpec& spec) const;
  // The loaded kernel for this very spec (compared in full), or nullptr.
  const LoadedKernel* find(const KernelSpec& spec) const;
  // The source ensure() compiles for this spec and origin: what a dump shows.
  std::string source(const KernelSpec& spec, const std::string& origin) const;
  // Writes the source into the work directory where it outlives the process and returns
  // its path (hf::Error when it cannot): a kernel validation caught computing wrong
  // results is kept for the bug report.
  std::filesystem::path keep_source(const KernelSpec& spec, const std::string& origin);
  std::string disk_key(const KernelSpec& spec) const;

  const KernelToolchain& toolchain() const { return *toolchain_; }
  Workdir& workdir() { return *workdir_; }
  // For another target's cache that keeps its sources in the same directory.
  std::shared_ptr<Workdir> shared_workdir() const { return workdir_; }
  // The disk cache (null when disabled or refused): other cached results, such as the
  // machine probe, live there under the same rules.
  const std::shared_ptr<DiskCache>& disk() const { return disk_; }
  int compiles() const;
  int disk_hits() const;
  int memory_hits() const;

 private:
  std::unique_ptr<KernelToolchain> toolchain_;
  std::shared_ptr<Workdir> workdir_;
  std::shared_ptr<DiskCache> disk_;
  mutable std::mutex mu_;
  // Keyed by KernelSpec::canonical().
  std::map<std::string, std::unique_ptr<LoadedKernel>> loaded_;
  std::set<std::string> building_;  // specs some thread is generating, compiling or loading
  std::condition_variable built_;   // one of them is done
  // Which spec (canonical()) each kernel name's hash belongs to in this process.
  std::map<uint64_t, std::string> names_;
  int compiles_ = 0, disk_hits_ = 0, memory_hits_ = 0;
};

}  // namespace hf::fusion
