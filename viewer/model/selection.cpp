#include "viewer/model/selection.h"

#include <algorithm>

namespace hf::viewer {

int64_t region_of(int64_t node_id, const Report* report, const GraphLayout* drawn) {
  if (node_id < 0) return -1;
  if (report) {
    if (const Region* r = report->region_of_node(node_id)) return r->id;
    if (const OpRow* o = report->op_after(node_id); o && o->fused && o->region >= 0)
      return o->region;
    if (const OpRow* o = report->op_before(node_id); o && o->fused && o->region >= 0)
      return o->region;
  }
  if (drawn) {
    int i = drawn->find_node_id(node_id);
    if (i >= 0 && drawn->nodes[i].cluster >= 0) return drawn->clusters[drawn->nodes[i].cluster].region;
  }
  return -1;
}

Selection select_node(int64_t node_id, const Report* report, const GraphLayout* drawn) {
  Selection s;
  s.node = node_id;
  s.region = region_of(node_id, report, drawn);
  return s;
}

Selection select_region(int64_t region) {
  Selection s;
  s.region = region;
  return s;
}

Selection select_event(const Trace& trace, int event) {
  Selection s;
  if (event < 0 || static_cast<size_t>(event) >= trace.events.size()) return s;
  const TraceEvent& e = trace.events[event];
  s.event = event;
  s.node = e.node;
  s.region = e.region;
  return s;
}

std::vector<int64_t> fused_nodes_of_region(int64_t region, const Report* report,
                                           const GraphLayout& g) {
  std::vector<int64_t> out;
  if (region < 0) return out;
  if (report) {
    for (const OpRow& o : report->ops_after)
      if (o.fused && o.region == region && g.find_node_id(o.node_id) >= 0)
        out.push_back(o.node_id);
    if (!out.empty()) return out;
  }
  for (const LayoutCluster& c : g.clusters) {
    if (c.region != region || c.kind != "kept") continue;
    for (int n : c.nodes)
      if (g.nodes[n].node_id >= 0) out.push_back(g.nodes[n].node_id);
  }
  return out;
}

std::vector<int> highlighted_nodes(const GraphLayout& g, const Report* report,
                                   const Selection& s) {
  std::vector<int> out;
  auto add_id = [&](int64_t id) {
    int i = g.find_node_id(id);
    if (i >= 0 && std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  };
  auto add_region_nodes = [&](int64_t region) {
    if (report)
      if (const Region* r = report->region(region))
        for (int64_t id : r->node_ids) add_id(id);
    if (out.empty()) {
      int c = g.cluster_of_region(region);
      if (c >= 0)
        for (int n : g.clusters[c].nodes) out.push_back(n);
    }
  };
  if (s.node >= 0) {
    if (g.find_node_id(s.node) >= 0) {
      add_id(s.node);
      return out;
    }
    if (s.region >= 0) {
      for (int64_t id : fused_nodes_of_region(s.region, report, g)) add_id(id);
      if (out.empty()) add_region_nodes(s.region);
    }
    return out;
  }
  if (s.region >= 0) {
    for (int64_t id : fused_nodes_of_region(s.region, report, g)) add_id(id);
    if (out.empty()) add_region_nodes(s.region);
  }
  return out;
}

EventMatch event_match(const TraceEvent& e, int event_index, const Selection& s) {
  if (s.event >= 0 && event_index == s.event) return EventMatch::Exact;
  if (s.node >= 0 && e.node == s.node) return EventMatch::Exact;
  if (s.node < 0 && s.event < 0 && s.region >= 0 && e.region == s.region)
    return EventMatch::Exact;
  if (s.region >= 0 && e.region == s.region) return EventMatch::Region;
  return EventMatch::None;
}

}  // namespace hf::viewer
