#include "fusion/kernel_cache.h"

#include <chrono>
#include <iostream>

#include "fusion/host_toolchain.h"
#include "runtime/ir/error.h"

namespace hf::fusion {

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

KernelCache::KernelCache(std::unique_ptr<KernelToolchain> toolchain,
                         std::shared_ptr<Workdir> workdir, std::shared_ptr<DiskCache> disk)
    : toolchain_(std::move(toolchain)), workdir_(std::move(workdir)), disk_(std::move(disk)) {}

KernelCache::~KernelCache() = default;

std::shared_ptr<DiskCache> KernelCache::default_disk() {
  auto dir = DiskCache::default_dir();
  if (!dir) return nullptr;
  try {
    return std::make_shared<DiskCache>(*dir);
  } catch (const Error& e) {
    std::cerr << "hotfuse: disk kernel cache disabled: " << e.what() << "\n";
    return nullptr;
  }
}

KernelCache& KernelCache::host() {
  static KernelCache cache(host_toolchain(), Workdir::from_env(), default_disk());
  return cache;
}

const LoadedKernel* KernelCache::find(const KernelSpec& spec) const {
  const std::string key = spec.canonical();
  std::lock_guard lock(mu_);
  auto it = loaded_.find(key);
  return it == loaded_.end() ? nullptr : it->second.get();
}

int KernelCache::compiles() const {
  std::lock_guard lock(mu_);
  return compiles_;
}

int KernelCache::disk_hits() const {
  std::lock_guard lock(mu_);
  return disk_hits_;
}

int KernelCache::memory_hits() const {
  std::lock_guard lock(mu_);
  return memory_hits_;
}

std::string KernelCache::source(const KernelSpec& spec, const std::string& origin) const {
  return toolchain_->generate(spec, kernel_name(spec), origin);
}

// The key names the code, not where it came from: the origin comment is left out so the
// same kernel from two graphs is one entry.
std::string KernelCache::disk_key(const KernelSpec& spec) const {
  std::vector<std::string> parts = toolchain_->key_parts();
  parts.insert(parts.begin(), source(spec, ""));
  return DiskCache::make_key(parts);
}

bool KernelCache::cached(const KernelSpec& spec) const {
  const std::string key = spec.canonical();
  {
    std::lock_guard lock(mu_);
    if (loaded_.count(key)) return true;
    auto owner = names_.find(spec.hash());
    if (owner != names_.end() && owner->second != key) return false;  // ensure() refuses it
  }
  if (!disk_) return false;
  std::error_code ec;
  return std::filesystem::is_regular_file(disk_->entry_path(disk_key(spec)), ec);
}

std::filesystem::path KernelCache::keep_source(const KernelSpec& spec, const std::string& origin) {
  const std::string file = kernel_name(spec) + toolchain_->extension();
  std::filesystem::path path = workdir_->write_file(file, source(spec, origin));
  workdir_->retain(file);
  return path;
}

CompileOutcome KernelCache::ensure(const KernelSpec& spec, const std::string& origin) {
  auto t0 = std::chrono::steady_clock::now();
  const std::string spec_key = spec.canonical();
  const std::string name = kernel_name(spec);
  {
    std::unique_lock lock(mu_);
    if (loaded_.count(spec_key)) {
      ++memory_hits_;
      return {true, CompileOutcome::Memory, ms_since(t0), ""};
    }
    // The first spec to ask for a name keeps it, loaded or not (its source and log carry
    // the name too).
    auto [owner, first] = names_.emplace(spec.hash(), spec_key);
    if (!first && owner->second != spec_key)
      return {false, CompileOutcome::Failed, ms_since(t0),
              "kernel " + name +
                  " has the name of a different kernel already built here (a collision of "
                  "the 64-bit spec hash); its region runs unfused"};
    // Two regions often share a kernel: a second compile worker asking for it waits for
    // the first instead of compiling it again.
    built_.wait(lock, [&] { return !building_.count(spec_key); });
    if (loaded_.count(spec_key)) {
      ++memory_hits_;
      return {true, CompileOutcome::Memory, ms_since(t0), ""};
    }
    building_.insert(spec_key);
  }
  struct NoLongerBuilding {  // however this returns
    KernelCache& cache;
    const std::string& key;
    ~NoLongerBuilding() {
      {
        std::lock_guard lock(cache.mu_);
        cache.building_.erase(key);
      }
      cache.built_.notify_all();
    }
  } no_longer_building{*this, spec_key};

  // The lock is not held while compiling or loading: the executor looks kernels up
  // between iterations and must never wait for a compiler.
  auto load = [&](const std::string& artifact) {
    std::unique_ptr<LoadedKernel> k = toolchain_->load(artifact, name, *workdir_);
    std::lock_guard lock(mu_);
    loaded_.emplace(spec_key, std::move(k));
  };

  std::string key;
  if (disk_) {
    key = disk_key(spec);
    if (auto artifact = disk_->get(key)) {
      try {
        load(*artifact);
        std::lock_guard lock(mu_);
        ++disk_hits_;
        return {true, CompileOutcome::Disk, ms_since(t0), ""};
      } catch (const Error& e) {
        std::cerr << "hotfuse: cached kernel " << name << " did not load (" << e.what()
                  << "); compiling it again\n";
      }
    }
  }

  KernelToolchain::Built b =
      toolchain_->compile(toolchain_->generate(spec, name, origin), name, origin, *workdir_);
  {
    std::lock_guard lock(mu_);
    ++compiles_;
  }
  if (!b.ok) return {false, CompileOutcome::Failed, ms_since(t0), b.failure};
  try {
    load(b.artifact);
  } catch (const Error& e) {
    return {false, CompileOutcome::Failed, ms_since(t0),
            "kernel " + name + " compiled but did not load (" + e.what() +
                "); its region runs unfused"};
  }
  if (disk_) disk_->put(key, b.artifact);  // failure is harmless
  return {true, CompileOutcome::Compiled, ms_since(t0), ""};
}

}  // namespace hf::fusion
