// The host C++ compiler for generated CPU kernels: source -> shared object -> dlopen.
// The compiler is the one CMake found (HF_HOST_CXX), or $HOTFUSE_CXX; it runs without a
// shell, with a timeout. A failed compile is a result (ok = false, log kept), not an error:
// the caller runs the region unfused.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "fusion/workdir.h"

namespace hf::fusion {

struct HostCompileResult {
  bool ok = false;
  std::filesystem::path library;  // <workdir>/<name>.so when ok
  std::string log;                // the command line, then the compiler's output
  std::filesystem::path log_file, source_file;
  double seconds = 0;
};

// Writes <name>.cpp and <name>.log into the workdir and compiles <name>.so with
//   <cxx> -std=c++20 -O3 -march=native -fno-math-errno -fno-trapping-math [-fno-tree-pre
//   -fno-loop-unroll-and-jam] -ffp-contract=off -fPIC -shared -I<include_dir> ...
// (the bracketed flags with GCC only: clang has no such options; docs/math.md "Kernel flags").
// `name`: letters, digits, '_', '-', '.', not starting with '.'. A failure's source and log
// are retained in the workdir even without MGB_JIT_KEEP_INTERM. Thread-safe.
HostCompileResult compile_host_library(const std::string& source, const std::string& name,
                                       Workdir& workdir);

// $HOTFUSE_CXX when set and non-empty, else the compiler CMake found.
std::string host_compiler_path();
// The flags above without paths, for the current host compiler (cache keys use them too).
std::vector<std::string> host_compile_flags();
// "<compiler path>|<first line of --version>", computed once per compiler path.
std::string host_compiler_identity();
// What a cache key for a host-compiled object needs besides the source and hotfuse's
// version: compiler identity, flags, this CPU (-march=native code may not run on another
// machine sharing the cache directory) and a digest of the embedded headers the code
// includes (math and ABI).
std::string host_cache_identity();

// A dlopen'ed shared object (RTLD_NOW | RTLD_LOCAL), closed on destruction. dlopen returns
// the object already loaded for a path it has seen, so give each content its own file name.
class HostLibrary {
 public:
  explicit HostLibrary(const std::filesystem::path& file);  // hf::Error naming the file
  ~HostLibrary();
  HostLibrary(HostLibrary&& o) noexcept;
  HostLibrary& operator=(HostLibrary&& o) noexcept;
  HostLibrary(const HostLibrary&) = delete;
  HostLibrary& operator=(const HostLibrary&) = delete;

  // hf::Error naming the symbol and the file when it is missing.
  void* symbol(const std::string& name) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  void* handle_ = nullptr;
  std::filesystem::path path_;
};

}  // namespace hf::fusion
