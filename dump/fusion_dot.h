// before.dot and after.dot for `--fusion off|static|all` (fuse_graph, no Session): node
// times come from the per-op tables (profiler/step_times.h, matched to nodes by name and
// op), without a roofline class, so no hotspots are marked.
//
// all: every region whose kernel compiled is a filled cluster around its Fused node with
// the summed unfused time of its ops, the kernel's time and the speedup; a region whose
// kernel failed is a dashed cluster around its original nodes. static: the rewritten
// graph (FUSE_* modes), no clusters.
#pragma once
#include <string>
#include <vector>

#include "dump/dot_graph.h"
#include "profiler/step_times.h"
#include "session/fuse_graph.h"

namespace hf::dump {

// `g` coloured by `rows` (one per step, as op_rows returns them).
Drawing timed_drawing(const Graph& g, const std::vector<OpRow>& rows, std::string title);

// The fused graph of `r` (from `original`), coloured by after_rows, with a cluster per
// region when r.detection has regions.
Drawing fused_drawing(const Graph& original, const FusionResult& r,
                      const std::vector<OpRow>& before_rows, const std::vector<OpRow>& after_rows,
                      std::string title);

}  // namespace hf::dump
