// Region detection: which nodes of a graph become one JIT-compiled kernel, and, for every
// node that does not, why not.
//
// The algorithm (MegEngine's JIT fusion order, plus a merge step MegEngine lacks):
//
//  1. Grow. Visit nodes in reverse topological order. A node joins the region of its
//     consumers only if every consumer of its output is already in that one region, so a
//     region never feeds a value out and back in (no cycle) and nothing computed inside
//     escapes except through the region's root or a graph output. Otherwise the node
//     starts a region of its own, rooted at itself.
//
//         x ──► relu ──► exp ──► MatMul ──┐        reverse order: add, MatMul, exp, relu
//                 │                       ▼        add:  root of R1
//                 └────────────────────► add       exp:  its consumer MatMul is opaque: R2
//                                                  relu: consumers in R1 and R2: R3
//
//  2. Merge. Regions of the same iteration shape that are producer and consumer (first)
//     or read a common value (then) are merged when no path between them leaves both
//     (checked on the graph with every region contracted to one node, which stays a DAG).
//     This is what lets a value with consumers in two regions still fuse, and lets several
//     live-outs come out of one pass. Above: R3 + R2 merge (relu -> exp is direct); R1
//     cannot join them, because relu+exp -> MatMul -> add leaves and re-enters.
//
//  3. Absorb. Scalar Constants become literals and Broadcast/Reshape/Dimshuffle nodes
//     become strided views of the region's inputs, when every consumer is in one region.
//
//  4. Drop regions with fewer than two non-Constant nodes (nothing to fuse), unless
//     DetectOptions::single_nodes.
//
// A region's iteration shape is its root's output shape, or the input shape of its trailing
// Reduce. A node joins only if its output has exactly that shape (its inputs may
// broadcast); per-channel or per-row math stays outside with a reason. docs/fusion.md has
// the rules per op kind, the limits and the list of reasons.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fusion/spec.h"
#include "runtime/ir/graph.h"

namespace hf::fusion {

// MegEngine's graph_opt_level: Off runs the graph as given; Static rewrites fixed patterns
// into the existing FUSE_* modes (apply_static_patterns); All JIT-compiles regions.
enum class FusionLevel { Off, Static, All };
std::string_view fusion_level_name(FusionLevel l);  // "off", "static", "all"
std::optional<FusionLevel> parse_fusion_level(std::string_view s);

struct Region;

struct DetectOptions {
  FusionLevel level = FusionLevel::All;  // Off and Static give no regions
  bool fuse_reduce = true;  // one trailing Reduce per region (MegEngine's graph_opt.jit = 2)
  int max_inputs = kMaxFusedInputs;  // the kernel's parameter space is finite
  int max_outputs = 16;              // kAbiMaxOutputs
  int max_exprs = 256;               // bounds the compile time of one kernel
  bool single_nodes = false;         // also compile regions of a single node
  // Also fuse elementwise chains into the MatMul/Conv they consume (epilogue_detect.h):
  // for targets whose backend runs a HeavyEpilogue. Their nodes are then not in JIT regions.
  bool epilogues = false;
  // With epilogues: whether the target's backend runs the epilogue region given (build_epilogue
  // makes its HeavyEpilogue); null: every one. A refused chain is left to the JIT regions.
  std::function<bool(const Graph&, const Region&)> epilogue_runs;
};

struct Region {
  std::vector<NodeId> nodes;     // topological order; includes absorbed Constant/view nodes
  Shape shape;                   // the iteration shape
  std::optional<NodeId> reduce;  // the trailing Reduce, if any
  // >= 0: a multi-stage row region. Its Reduces over axes [row_axis, rank) (keepdims) are
  // read inside it, and nodes of the row shape (the iteration shape with those axes 1)
  // compute per-row values that the rest of the region reads broadcast over the row.
  int row_axis = -1;
  // An epilogue region: the MatMul/Conv whose library call runs the other nodes (a
  // HeavyEpilogue, not a compiled kernel).
  std::optional<NodeId> heavy;
};

// One entry per region (fused) and one per live node left outside every region; together
// they cover each live node exactly once.
struct Decision {
  std::vector<NodeId> nodes;
  bool fused = false;
  // Unfused: why. Fused: a summary, then where the region stopped growing and why, so a
  // viewer can answer "why is this not in the kernel?" from either side.
  std::string reason;
};

struct Detection {
  std::vector<Region> regions;
  std::vector<Decision> decisions;
  // The decision covering `n` (nullptr for a dead node).
  const Decision* decision_of(NodeId n) const;
};

// Pure: reads the graph, changes nothing.
Detection detect_regions(const Graph& g, const DetectOptions& opts = {});

// Kernels one iteration launches once the regions are fused: one per region plus one per
// live node outside them, except Constants (computed once, when the plan is built).
int kernel_count(const Graph& g, const Detection& d);

}  // namespace hf::fusion
