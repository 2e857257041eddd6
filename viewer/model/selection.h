// What is selected, and how a selection made in one panel shows in the others.
//
// Node ids are shared by every file of a dump: before.dot draws node N as "n<N>", after.dot
// keeps the ids of the nodes that were not fused and gives each fused kernel a new id,
// report.json ops[] / ops_after[] carry node_id, trace.json events carry args.node. Regions
// (report.json regions[].id, trace args.region, after.dot cluster_<kind>_<id>) tie the
// original nodes to their fused kernel.
#pragma once
#include <cstdint>
#include <vector>

#include "viewer/model/graph_layout.h"
#include "viewer/model/report.h"
#include "viewer/model/trace.h"

namespace hf::viewer {

struct Selection {
  int64_t node = -1;    // a node id, or -1
  int64_t region = -1;  // the node's region, or the region selected on its own, or -1
  int event = -1;       // the trace event the selection was made from, or -1
  bool empty() const { return node < 0 && region < 0 && event < 0; }
  bool operator==(const Selection&) const = default;
};

// The region of a node id: an original node listed in regions[].node_ids, a fused kernel
// (ops_after[] fused row, or its cluster in `drawn`), else -1.
int64_t region_of(int64_t node_id, const Report* report, const GraphLayout* drawn = nullptr);

Selection select_node(int64_t node_id, const Report* report, const GraphLayout* drawn = nullptr);
Selection select_region(int64_t region);
// An event selects its node and region (a compile event: only its region; an iteration: none).
Selection select_event(const Trace& trace, int event);

// The node ids of a region's fused kernel in a drawn (after) graph: from report.json
// ops_after[] when it lists one, else the nodes of the region's kept cluster.
std::vector<int64_t> fused_nodes_of_region(int64_t region, const Report* report,
                                           const GraphLayout& g);

// Node indices of `g` to highlight for a selection:
//  - the node itself, when `g` draws it;
//  - a node `g` does not draw (fused away): the fused kernel that replaced it;
//  - a fused kernel `g` does not draw (the before graph): every node of its region;
//  - a region alone: its fused kernel if drawn, else its nodes.
std::vector<int> highlighted_nodes(const GraphLayout& g, const Report* report,
                                   const Selection& s);

enum class EventMatch { None, Region, Exact };
// How a trace event relates to a selection: Exact for the selected node's own steps (or the
// selected event), Region for other events of the same region (its fused kernel, its compile).
EventMatch event_match(const TraceEvent& e, int event_index, const Selection& s);

}  // namespace hf::viewer
