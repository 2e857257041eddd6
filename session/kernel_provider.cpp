#include "session/kernel_provider.h"

#include "fusion/codegen_cpp.h"

namespace hf {

KernelProvider cpu_kernel_provider(fusion::CpuKernelCache& cache) {
  KernelProvider k;
  k.ensure = [&cache](const fusion::KernelSpec& spec, const std::string& origin) {
    return cache.ensure(spec, origin);
  };
  k.cached = [&cache](const fusion::KernelSpec& spec) { return cache.cached(spec); };
  k.keep_source = [&cache](const fusion::KernelSpec& spec, const std::string& origin) {
    const std::string name = fusion::CpuKernelCache::kernel_name(spec);
    const std::string file = name + ".cpp";
    auto path = cache.workdir().write_file(file, fusion::generate_cpp(spec, name, origin));
    cache.workdir().retain(file);
    return path;
  };
  return k;
}

}  // namespace hf
