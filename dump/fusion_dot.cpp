#include "dump/fusion_dot.h"

#include <set>

#include "dump/session_dot.h"
#include "dump/text.h"
#include "fusion/kernel_cache.h"
#include "fusion/region_spec.h"

namespace hf::dump {

namespace {

// Node -> its row: the first live node, in execution order, with the row's name and op.
std::map<NodeId, const OpRow*> match_rows(const Graph& g, const std::vector<OpRow>& rows) {
  std::map<NodeId, const OpRow*> out;
  std::vector<NodeId> order = g.topo_order();
  for (const OpRow& r : rows)
    for (NodeId id : order)
      if (!out.count(id) && g.node(id).name == r.node && row_op(g.node(id)) == r.op) {
        out[id] = &r;
        break;
      }
  return out;
}

void add_times(Drawing& d, const std::map<NodeId, const OpRow*>& rows) {
  double total = 0;
  for (const auto& [id, r] : rows) total += r->seconds;
  for (const auto& [id, r] : rows)
    d.times[id] = {r->seconds, r->bytes, total > 0 ? r->seconds / total : 0, ""};
}

}  // namespace

Drawing timed_drawing(const Graph& g, const std::vector<OpRow>& rows, std::string title) {
  Drawing d;
  d.graph = &g;
  d.title = std::move(title);
  add_times(d, match_rows(g, rows));
  return d;
}

Drawing fused_drawing(const Graph& original, const FusionResult& r,
                      const std::vector<OpRow>& before_rows, const std::vector<OpRow>& after_rows,
                      std::string title) {
  Drawing d = timed_drawing(r.graph, after_rows, std::move(title));
  const auto before = match_rows(original, before_rows);
  std::vector<std::vector<NodeId>> region_nodes;
  for (const fusion::Region& reg : r.detection.regions) region_nodes.push_back(reg.nodes);
  std::map<int, NodeId> fused_node;
  for (const auto& [node, region] : fused_regions(r.graph, region_nodes)) fused_node[region] = node;

  for (size_t i = 0; i < r.detection.regions.size(); ++i) {
    const fusion::Region& reg = r.detection.regions[i];
    const int id = static_cast<int>(i);
    std::string kernel;
    try {
      kernel = fusion::KernelCache::kernel_name(fusion::build_region_kernel(original, reg).spec);
    } catch (const std::exception&) {
      kernel = "(no kernel)";
    }
    Cluster c;
    c.region = id;
    const std::string all_nodes = node_list(original, reg.nodes, 100000);
    if (auto f = fused_node.find(id); f != fused_node.end()) {
      double before_s = 0;
      int ops = 0;
      for (NodeId n : reg.nodes) {
        ops += original.node(n).op != OpType::Constant;
        if (auto b = before.find(n); b != before.end()) before_s += b->second->seconds;
      }
      auto t = d.times.find(f->second);
      c.kind = ClusterKind::Kept;
      c.nodes = {f->second};
      c.label = kept_label(kernel, id, ops, before_s, t != d.times.end() ? t->second.seconds : 0,
                           "fused: " + node_list(original, reg.nodes, 60));
      c.tooltip = kernel + " (region " + std::to_string(id) + ")\nnodes: " + all_nodes;
      d.notes[f->second] = "region " + std::to_string(id) + ": " + all_nodes;
      d.clusters.push_back(std::move(c));
      continue;
    }
    for (NodeId n : reg.nodes)
      if (n < static_cast<NodeId>(r.graph.nodes().size()) && !r.graph.node(n).dead)
        c.nodes.push_back(n);
    if (c.nodes.empty()) continue;
    std::string why = "dead code: nothing reads its results";
    for (const std::string& f : r.failures)
      if (f.find(kernel) != std::string::npos) why = f;
    c.kind = why.rfind("dead code", 0) == 0 ? ClusterKind::Rejected : ClusterKind::Failed;
    c.label = {(c.kind == ClusterKind::Failed ? "compile failed: " : "not fused: ") + kernel +
               " (region " + std::to_string(id) + ")"};
    for (std::string& line : wrap(why, 60, 3)) c.label.push_back(std::move(line));
    c.tooltip = why + "\nnodes: " + all_nodes;
    d.clusters.push_back(std::move(c));
  }
  return d;
}

}  // namespace hf::dump
