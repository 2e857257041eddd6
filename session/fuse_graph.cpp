#include "session/fuse_graph.h"

#include "fusion/region_spec.h"
#include "fusion/static_patterns.h"
#include "session/session.h"

namespace hf {

int kernel_count(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes()) n += !node.dead && node.op != OpType::Constant;
  return n;
}

FusionResult fuse_graph(const Graph& g, fusion::FusionLevel level, fusion::KernelCache& cache) {
  FusionResult r{g, {}, 0, 0, 0, 0, 0, {}};
  if (level == fusion::FusionLevel::Off) return r;
  if (level == fusion::FusionLevel::Static) {
    r.static_rewrites = fusion::apply_static_patterns(r.graph);
    verify(r.graph);
    return r;
  }
  r.detection = fusion::detect_regions(g);
  for (const fusion::Region& region : r.detection.regions) {
    fusion::RegionKernel k = fusion::build_region_kernel(g, region);
    if (k.outputs.empty()) continue;  // dead code: nothing reads it, nothing to fuse
    const std::string origin = kernel_origin(g, k.nodes);
    fusion::CompileOutcome c;
    try {
      c = cache.ensure(k.spec, origin);
    } catch (const std::exception& e) {  // a generator or loader bug must not stop the run
      c.message = "kernel " + fusion::KernelCache::kernel_name(k.spec) + " (" + origin +
                  ") could not be generated: " + e.what() + "; its region runs unfused";
    }
    r.compile_ms_total += c.ms;
    if (!c.ok) {
      r.failures.push_back(c.message);
      continue;
    }
    r.cache_hits +=
        c.source == fusion::CompileOutcome::Memory || c.source == fusion::CompileOutcome::Disk;
    r.compiled += c.source == fusion::CompileOutcome::Compiled;
    fusion::fuse_region(r.graph, region);  // regions of one detection fuse in any order
    ++r.regions_fused;
  }
  verify(r.graph);
  return r;
}

}  // namespace hf
