#include "fusion/cpu_kernel_cache.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "fusion/codegen_cpp.h"
#include "runtime/ir/error.h"

namespace hf::fusion {

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::optional<std::string> read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

CpuKernelCache::CpuKernelCache(std::shared_ptr<Workdir> workdir, std::shared_ptr<DiskCache> disk)
    : workdir_(std::move(workdir)), disk_(std::move(disk)) {}

CpuKernelCache& CpuKernelCache::process() {
  auto disk = []() -> std::shared_ptr<DiskCache> {
    auto dir = DiskCache::default_dir();
    if (!dir) return nullptr;
    try {
      return std::make_shared<DiskCache>(*dir);
    } catch (const Error& e) {
      std::cerr << "hotfuse: disk kernel cache disabled: " << e.what() << "\n";
      return nullptr;
    }
  };
  static CpuKernelCache cache(Workdir::from_env(), disk());
  return cache;
}

HostKernelFn CpuKernelCache::find(uint64_t spec_hash) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = loaded_.find(spec_hash);
  return it == loaded_.end() ? nullptr : it->second.fn;
}

int CpuKernelCache::compiles() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compiles_;
}

// The key names the code, not where it came from: the origin comment is left out so the
// same kernel from two graphs is one entry.
std::string CpuKernelCache::disk_key(const KernelSpec& spec) {
  return DiskCache::make_key(
      {generate_cpp(spec, kernel_name(spec), ""), "cpu", host_cache_identity()});
}

bool CpuKernelCache::cached(const KernelSpec& spec) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (loaded_.count(spec.hash())) return true;
  }
  if (!disk_) return false;
  std::error_code ec;
  return std::filesystem::is_regular_file(disk_->entry_path(disk_key(spec)), ec);
}

CompileOutcome CpuKernelCache::ensure(const KernelSpec& spec, const std::string& origin) {
  auto t0 = std::chrono::steady_clock::now();
  const uint64_t hash = spec.hash();
  const std::string name = kernel_name(spec);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (loaded_.count(hash)) return {true, CompileOutcome::Memory, ms_since(t0), ""};
  }

  // The lock is not held while compiling or loading: the executor looks kernels up
  // between iterations and must never wait for a compiler. Two threads ensuring the same
  // spec at once both build it; the first one loaded is kept.
  auto load = [&](const std::filesystem::path& lib) {
    Loaded l;
    l.library = std::make_shared<HostLibrary>(lib);
    l.fn = reinterpret_cast<HostKernelFn>(l.library->symbol(name));
    std::lock_guard<std::mutex> lock(mu_);
    loaded_.emplace(hash, l);
  };

  std::string key;
  if (disk_) {
    key = disk_key(spec);
    if (auto bytes = disk_->get(key)) {
      try {
        load(workdir_->write_file(name + ".so", *bytes));
        return {true, CompileOutcome::Disk, ms_since(t0), ""};
      } catch (const Error& e) {
        std::cerr << "hotfuse: cached kernel " << name << " did not load (" << e.what()
                  << "); compiling it again\n";
      }
    }
  }

  std::string source = generate_cpp(spec, name, origin);
  HostCompileResult r = compile_host_library(source, name, *workdir_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++compiles_;
  }
  if (!r.ok) {
    // Without a log file (the work directory cannot be written), the reason itself.
    std::string where = r.log_file.empty()
                            ? r.log.substr(0, r.log.find('\n'))
                            : "source " + r.source_file.string() + ", log " + r.log_file.string();
    return {false, CompileOutcome::Failed, ms_since(t0),
            "kernel " + name + " failed to compile; its region runs unfused (" + where + ")"};
  }
  try {
    load(r.library);
  } catch (const Error& e) {
    return {false, CompileOutcome::Failed, ms_since(t0),
            "kernel " + name + " compiled but did not load (" + e.what() +
                "); its region runs unfused"};
  }
  if (disk_) {
    if (auto bytes = read_file(r.library)) disk_->put(key, *bytes);  // failure is harmless
  }
  return {true, CompileOutcome::Compiled, ms_since(t0), ""};
}

}  // namespace hf::fusion
