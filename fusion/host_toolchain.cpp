#include "fusion/host_toolchain.h"

#include <fstream>
#include <optional>
#include <sstream>

#include "fusion/codegen_cpp.h"
#include "runtime/ir/error.h"

namespace hf::fusion {

namespace {

std::optional<std::string> read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class HostToolchain final : public KernelToolchain {
 public:
  std::string target() const override { return "cpu"; }
  std::string extension() const override { return ".cpp"; }
  std::string generate(const KernelSpec& spec, const std::string& name,
                       const std::string& origin) const override {
    return generate_cpp(spec, name, origin);
  }
  std::vector<std::string> key_parts() const override { return {"cpu", host_cache_identity()}; }

  Built compile(const std::string& source, const std::string& name, const std::string&,
                Workdir& workdir) const override {
    HostCompileResult r = compile_host_library(source, name, workdir);
    if (!r.ok) {
      // Without a log file (the work directory cannot be written), the reason itself.
      std::string where = r.log_file.empty()
                              ? r.log.substr(0, r.log.find('\n'))
                              : "source " + r.source_file.string() + ", log " + r.log_file.string();
      return {false, "",
              "kernel " + name + " failed to compile; its region runs unfused (" + where + ")"};
    }
    std::optional<std::string> bytes = read_file(r.library);
    if (!bytes)
      return {false, "",
              "kernel " + name + " compiled but " + r.library.string() +
                  " could not be read; its region runs unfused"};
    return {true, std::move(*bytes), ""};
  }

  // A fresh compile left exactly these bytes in <name>.so: that file is loaded as it is. A
  // disk hit writes them there first.
  std::unique_ptr<LoadedKernel> load(const std::string& artifact, const std::string& name,
                                     Workdir& workdir) const override {
    const std::string file = name + ".so";
    std::filesystem::path path = workdir.path() / file;
    if (read_file(path) != artifact) path = workdir.write_file(file, artifact);
    HostLibrary lib(path);
    auto fn = reinterpret_cast<HostKernelFn>(lib.symbol(name));
    return std::make_unique<HostKernel>(std::move(lib), fn);
  }
};

}  // namespace

std::unique_ptr<KernelToolchain> host_toolchain() {
  return std::make_unique<HostToolchain>();
}

}  // namespace hf::fusion
