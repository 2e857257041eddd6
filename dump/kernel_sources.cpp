#include "dump/kernel_sources.h"

#include <map>

#include "fusion/codegen_cpp.h"
#include "fusion/kernel_cache.h"
#include "fusion/region_spec.h"

namespace hf::dump {

std::string kernel_origin(const Graph& g, const std::vector<NodeId>& kernel_nodes) {
  std::string origin = "graph '" + g.name + "', nodes:";
  for (NodeId n : kernel_nodes) origin += " " + std::to_string(n) + ":" + g.node(n).name;
  return origin;
}

std::vector<KernelSource> kernel_sources(const Graph& g, const fusion::Detection& d,
                                         const std::vector<int>& regions) {
  std::vector<KernelSource> out;
  std::map<std::string, size_t> by_name;
  for (int r : regions) {
    if (r < 0 || static_cast<size_t>(r) >= d.regions.size()) continue;
    try {
      fusion::RegionKernel k = fusion::build_region_kernel(g, d.regions[r]);
      if (k.outputs.empty()) continue;
      std::string name = fusion::KernelCache::kernel_name(k.spec);
      if (auto it = by_name.find(name); it != by_name.end()) {
        out[it->second].regions.push_back(r);
        continue;
      }
      by_name[name] = out.size();
      out.push_back({name, fusion::generate_cpp(k.spec, name, kernel_origin(g, k.nodes)), {r}});
    } catch (const std::exception&) {
      continue;  // the session or fuse_graph reported it; nothing ran
    }
  }
  return out;
}

}  // namespace hf::dump
