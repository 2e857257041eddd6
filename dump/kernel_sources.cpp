#include "dump/kernel_sources.h"

#include <map>

#include "fusion/region_spec.h"
#include "session/session.h"

namespace hf::dump {

std::vector<KernelSource> kernel_sources(const Graph& g, const fusion::Detection& d,
                                         const std::vector<int>& regions,
                                         const fusion::KernelCache& cache) {
  std::vector<KernelSource> out;
  std::map<std::string, size_t> by_name;
  for (int r : regions) {
    if (r < 0 || static_cast<size_t>(r) >= d.regions.size()) continue;
    try {
      fusion::RegionKernel k = fusion::build_region_kernel(g, d.regions[r]);
      if (k.outputs.empty() || k.epilogue) continue;  // an epilogue has no generated source
      std::string name = fusion::KernelCache::kernel_name(k.spec);
      if (auto it = by_name.find(name); it != by_name.end()) {
        out[it->second].regions.push_back(r);
        continue;
      }
      by_name[name] = out.size();
      out.push_back({name,
                     "kernels/" + name + cache.toolchain().extension(),
                     cache.source(k.spec, kernel_origin(g, k.nodes)),
                     {r}});
    } catch (const std::exception&) {
      continue;  // the session reported it; nothing ran
    }
  }
  return out;
}

}  // namespace hf::dump
