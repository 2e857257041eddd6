// A graph as Graphviz DOT: one box per live node (name, op, short output type, time),
// one edge per input (dtype and shape), graph inputs and outputs as ellipses, nodes
// coloured by their share of the iteration time on a 9-step heat scale with a legend,
// memory-bound hotspots with a double red border, and clusters around fused regions
// (kept: filled green; reverted, failed, not selected, still queued: dashed or dotted
// outlines around the original nodes, the reason in the label and tooltip).
//
// Every text from the model goes through dot_quote (dump/dot_escape.h). The legend is the
// only HTML-like label and holds only fixed text.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/ir/graph.h"

namespace hf::dump {

struct NodeTime {
  double seconds = 0;  // median per iteration
  double bytes = 0;    // ideal bytes moved
  double share = 0;    // of the iteration, 0..1
  std::string cls;     // "memory-bound", "compute-bound", "launch-bound", or "" (unknown)
};

enum class ClusterKind { Kept, Reverted, Failed, Rejected, Queued };
std::string_view cluster_kind_name(ClusterKind k);  // "kept", "reverted", ...

// DOT subgraph names are "cluster_<kind>_<region>", e.g. cluster_kept_0.
struct Cluster {
  ClusterKind kind = ClusterKind::Kept;
  int region = -1;
  std::vector<NodeId> nodes;       // live nodes of the drawn graph
  std::vector<std::string> label;  // lines, shown above the cluster
  std::string tooltip;
};

struct Drawing {
  const Graph* graph = nullptr;
  std::string title;                    // may have several lines
  std::map<NodeId, NodeTime> times;     // nodes without one are drawn white ("not timed")
  std::map<NodeId, std::string> notes;  // an extra tooltip line per node
  std::vector<Cluster> clusters;        // disjoint node sets
  double hotspot_share = 0.05;          // memory-bound and at least this share: a hotspot
};

std::string to_dot(const Drawing& d);

// Heat-scale step (0..8) of a share of the iteration, and its fill colour.
int heat_step(double share);
const char* heat_color(int step);

// 1048576 -> "1Mi", 3072 -> "3Ki", 1000 -> "1000".
std::string short_count(int64_t n);
// "f32[1Mi]", "f16[32,4Ki]", "f32[]".
std::string short_type(const Value& v);
// "Elemwise MUL", "Reduce", "Fused hf_0123abcd..." (the kernel, when the payload has one).
std::string op_label(const Node& n);

}  // namespace hf::dump
