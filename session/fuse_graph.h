// `--fusion off|static|all` as one function: a rewritten copy of the graph, and what it cost.
//
// static: MegEngine's graph_opt_level 2 pattern rewrites into FUSE_* modes, run by the
// existing unfused kernels. all: every region the detector finds is generated, compiled
// (or taken from the caches) and replaces its nodes; a region whose kernel fails to
// compile stays unfused, and the failure is reported, never fatal.
#pragma once
#include <string>
#include <vector>

#include "fusion/detect.h"
#include "fusion/kernel_cache.h"
#include "runtime/ir/graph.h"

namespace hf {

struct FusionResult {
  Graph graph;
  fusion::Detection detection;  // on the input graph (empty below level all)
  int static_rewrites = 0;
  int regions_fused = 0;
  double compile_ms_total = 0;        // generate + compile or load, all regions
  int cache_hits = 0;                 // regions whose kernel came from memory or disk
  int compiled = 0;                   // regions compiled now
  std::vector<std::string> failures;  // one line per region left unfused by a failure
};

// The kernels come from `cache`, whichever target it compiles for.
FusionResult fuse_graph(const Graph& g, fusion::FusionLevel level, fusion::KernelCache& cache);

// Steps one iteration runs: live nodes except Constants (computed when the plan is built).
int kernel_count(const Graph& g);

}  // namespace hf
