// What the viewer knows about one node, gathered from every file of the dump: its DOT label
// (name, op, output type), its rows in report.json (unfused profile, fused plan), its region
// and the region's decision, and its steps in trace.json. Shared by the graph's hover
// tooltip and the Details panel.
#pragma once
#include <string>

#include "viewer/model/graph_layout.h"
#include "viewer/model/report.h"
#include "viewer/ui/shared_state.h"

namespace hf::viewer::ui {

struct NodeInfo {
  int64_t id = -1;
  std::string name, op, type;  // from the report, else the DOT label
  const OpRow* before = nullptr;  // ops[]
  const OpRow* after = nullptr;   // ops_after[]
  const Region* region = nullptr;
  StepStats steps;
  bool fused = false;
};

// `drawn` (may be null): the node as a graph draws it, for its label.
NodeInfo node_info(SharedState& st, int64_t node_id, const LayoutNode* drawn);

// Multi-line text for a hover tooltip.
std::string node_tooltip(const NodeInfo& n, const Report* report);
// One line about a node that is not an op (graph input / output, legend).
std::string other_node_tooltip(const LayoutNode& n);

// The share of a node's time in its table (ops / ops_after): for colouring nodes the DOT
// left white. NaN when unknown.
double node_share(const Report* report, int64_t node_id, bool after);

}  // namespace hf::viewer::ui
