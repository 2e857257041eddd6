#include "fusion/host_compiler.h"

#include <dlfcn.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <utility>

#include "fusion/embedded_headers.h"
#include "fusion/sha256_util.h"
#include "fusion/subprocess_util.h"
#include "runtime/io/secure_fs.h"
#include "runtime/ir/error.h"

#ifndef HF_HOST_CXX
#define HF_HOST_CXX "c++"
#endif

namespace hf::fusion {

namespace {

// Generous: a TU of many fused kernels at -O3 takes seconds; a hung compiler must not
// hang the process.
constexpr std::chrono::seconds kCompileTimeout{120};

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 200 || name[0] == '.') return false;
  for (char c : name)
    if (!(std::isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string s = "$";
  for (const std::string& a : argv) s += " " + a;
  return s + "\n";
}

// Lines of /proc/cpuinfo that decide which instructions -march=native may use.
std::string cpu_fingerprint() {
  std::ifstream f("/proc/cpuinfo");
  std::string line, out;
  while (std::getline(f, line)) {
    if (line.empty()) break;  // the first processor is enough
    if (line.rfind("vendor_id", 0) == 0 || line.rfind("model name", 0) == 0 ||
        line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0 ||
        line.rfind("CPU part", 0) == 0)
      out += line + "\n";
  }
  return out.empty() ? "unknown-cpu" : sha256_hex(out).substr(0, 32);
}

}  // namespace

std::string host_compiler_path() {
  const char* v = std::getenv("HOTFUSE_CXX");
  return v && *v ? v : HF_HOST_CXX;
}

namespace {

struct CompilerInfo {
  std::string identity;  // "<path>|<first line of --version>"
  bool gcc = false;
};

// `cxx --version`, once per compiler path.
CompilerInfo compiler_info(const std::string& cxx) {
  static std::mutex mu;
  static std::map<std::string, CompilerInfo> cache;
  std::lock_guard lock(mu);
  auto it = cache.find(cxx);
  if (it != cache.end()) return it->second;
  ProcessResult r = run_process({cxx, "--version"}, std::chrono::seconds(30));
  CompilerInfo info;
  info.identity =
      cxx + "|" + (r.ok() ? r.output.substr(0, r.output.find('\n')) : "unknown version");
  info.gcc = r.ok() && r.output.find("Free Software Foundation") != std::string::npos &&
             r.output.find("clang") == std::string::npos;
  return cache[cxx] = info;
}

}  // namespace

std::vector<std::string> host_compile_flags() {
  std::vector<std::string> flags = {
      "-std=c++20", "-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math",
      "-ffp-contract=off", "-fPIC", "-shared",
      // Kernels call nothing from libstdc++ or libm (at most memset/memmove, which the loader
      // finds in the process's libc): the link skips searching them, a tenth of a compile.
      "-nodefaultlibs",
      // The assembly streams to the assembler rather than through a file.
      "-pipe"};
  // GCC only (clang has neither option; docs/math.md "Kernel flags"): PRE would leave selects
  // unvectorisable; unroll-and-jam copies a row kernel's lane loop, costing compile time and,
  // on short rows, speed.
  if (compiler_info(host_compiler_path()).gcc)
    flags.insert(flags.begin() + 5, {"-fno-tree-pre", "-fno-loop-unroll-and-jam"});
  return flags;
}

std::string host_compiler_identity() {
  return compiler_info(host_compiler_path()).identity;
}

const std::string& embedded_headers_digest() {
  static const std::string digest = [] {
    std::string all;
    for (const EmbeddedHeader& h : embedded_headers())
      all += std::string(h.path) + '\0' + std::string(h.contents) + '\0';
    return sha256_hex(all);
  }();
  return digest;
}

std::string host_cache_identity() {
  static const std::string cpu = cpu_fingerprint();
  const std::string& headers = embedded_headers_digest();
  std::string s = host_compiler_identity();
  for (const std::string& f : host_compile_flags()) s += " " + f;
  return s + "|cpu=" + cpu + "|headers=" + headers;
}

HostCompileResult compile_host_library(const std::string& source, const std::string& name,
                                       Workdir& workdir) {
  auto t0 = std::chrono::steady_clock::now();
  HostCompileResult r;
  auto finish = [&](bool ok) {
    r.ok = ok;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!ok) {
      workdir.retain(name + ".cpp");
      workdir.retain(name + ".log");
    }
    return r;
  };
  if (!valid_name(name)) {
    r.log = "invalid kernel name '" + name + "'\n";
    return finish(false);
  }
  std::string so = name + ".so";
  // The compiler writes a private name that is renamed into place once complete: another
  // process sharing the workdir never loads a half-written object, and a library of the
  // same name that is already mapped is not truncated under it.
  std::string tmp_so = fsutil::unique_temp_name("." + name + ".so.tmp-");
  std::vector<std::string> argv;
  try {
    r.source_file = workdir.write_file(name + ".cpp", source);
    std::filesystem::path include = workdir.include_dir();
    argv.push_back(host_compiler_path());
    for (const std::string& f : host_compile_flags()) argv.push_back(f);
    argv.push_back("-I" + include.string());
    argv.push_back("-o");
    argv.push_back((workdir.path() / tmp_so).string());
    argv.push_back(r.source_file.string());
    workdir.track(tmp_so);
  } catch (const Error& e) {
    r.log = std::string(e.what()) + "\n";
    return finish(false);
  }
  ProcessResult p = run_process(argv, kCompileTimeout);
  r.log = command_line(argv) + p.output;
  bool ok = p.ok();
  if (!ok) r.log += (r.log.empty() || r.log.back() == '\n' ? "" : "\n") + p.status() + "\n";
  if (ok) {
    std::error_code ec;
    // The compiler creates its output with the umask's mode (often 0755); everything in the
    // work directory is private (0600: dlopen needs no execute bit).
    std::filesystem::permissions(
        workdir.path() / tmp_so,
        std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ec);
    if (!ec) std::filesystem::rename(workdir.path() / tmp_so, workdir.path() / so, ec);
    if (ec) {
      r.log += "cannot rename the output to " + so + ": " + ec.message() + "\n";
      ok = false;
    } else {
      workdir.track(so);
      r.library = workdir.path() / so;
    }
  }
  try {
    r.log_file = workdir.write_file(name + ".log", r.log);
  } catch (const Error& e) {
    r.log += std::string(e.what()) + "\n";
  }
  return finish(ok);
}

HostLibrary::HostLibrary(const std::filesystem::path& file) : path_(file) {
  handle_ = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* e = ::dlerror();
    throw Error("cannot load compiled kernel library " + file.string() + ": " +
                (e ? e : "dlopen failed"));
  }
}

HostLibrary::~HostLibrary() {
  if (handle_) ::dlclose(handle_);
}

HostLibrary::HostLibrary(HostLibrary&& o) noexcept
    : handle_(std::exchange(o.handle_, nullptr)), path_(std::move(o.path_)) {}

HostLibrary& HostLibrary::operator=(HostLibrary&& o) noexcept {
  if (this != &o) {
    if (handle_) ::dlclose(handle_);
    handle_ = std::exchange(o.handle_, nullptr);
    path_ = std::move(o.path_);
  }
  return *this;
}

void* HostLibrary::symbol(const std::string& name) const {
  ::dlerror();
  void* p = handle_ ? ::dlsym(handle_, name.c_str()) : nullptr;
  if (!p) throw Error("symbol " + name + " not found in " + path_.string());
  return p;
}

}  // namespace hf::fusion
