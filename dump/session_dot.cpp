#include "dump/session_dot.h"

#include <algorithm>
#include <set>

#include "dump/text.h"
#include "fusion/region_spec.h"
#include "profiler/step_times.h"

namespace hf::dump {

namespace {

NodeTime node_time(const OpRecord& o, double total) {
  return {o.cost.seconds, o.cost.bytes, total > 0 ? o.cost.seconds / total : 0,
          std::string(op_class_name(o.cls))};
}

int op_count(const Graph& g, const std::vector<NodeId>& nodes) {
  int n = 0;
  for (NodeId id : nodes) n += g.node(id).op != OpType::Constant;
  return n;
}

std::string region_title(const RegionRecord& r) {
  return r.kernel + " (region " + std::to_string(r.id) + ")";
}

// Per node of the current graph: the median duration of its steps in the traced steady
// iterations (empty when none were traced).
std::map<NodeId, double> steady_medians(const Session& s) {
  std::map<NodeId, std::vector<double>> durations;
  for (const StepRecord& st : s.traced_steps()) {
    if (s.iterations().at(st.iteration).phase != Phase::Steady) continue;
    durations[s.trace_labels().at(st.label).node].push_back(st.dur_s);
  }
  std::map<NodeId, double> out;
  for (auto& [node, v] : durations) out[node] = median_of(std::move(v));
  return out;
}

// A hotspot takes at least an average op's share, clamped to [5%, 20%].
void hotspot_threshold(Drawing& d) {
  d.hotspot_share = std::clamp(d.times.empty() ? 1.0 : 1.0 / d.times.size(), 0.05, 0.2);
}

// Which region each live Fused node of `g` replaced: the index in `regions` whose node set
// equals its payload's (FusedSignature::replaced_nodes: a kernel's or an epilogue's).
std::map<NodeId, int> fused_regions(const Graph& g,
                                    const std::vector<std::vector<NodeId>>& regions) {
  std::vector<std::set<NodeId>> sets;
  for (const auto& r : regions) sets.emplace_back(r.begin(), r.end());
  std::map<NodeId, int> out;
  for (NodeId id : g.topo_order()) {
    auto* f = dynamic_cast<const FusedSignature*>(g.node(id).payload.get());
    if (!f) continue;
    std::set<NodeId> nodes(f->replaced_nodes().begin(), f->replaced_nodes().end());
    for (size_t r = 0; r < sets.size(); ++r)
      if (sets[r] == nodes) {
        out[id] = static_cast<int>(r);
        break;
      }
  }
  return out;
}

std::vector<std::string> kept_label(const std::string& kernel, int region, int ops, double before_s,
                                    double after_s, const std::string& nodes) {
  std::vector<std::string> label = {kernel + " (region " + std::to_string(region) + ")"};
  std::string times = std::to_string(ops) + " ops: unfused " + human_time(before_s) + " -> fused ";
  if (after_s > 0)
    times += human_time(after_s) + " (" + printf_double("%.2fx", before_s / after_s) + ")";
  else
    times += "not timed";
  label.push_back(times);
  label.push_back(nodes);
  return label;
}

}  // namespace

Drawing session_before(const Session& s) {
  Drawing d;
  const Graph& g = s.graph();
  d.graph = &g;
  double total = 0;
  for (const OpRecord& o : s.unfused_ops()) total += o.cost.seconds;
  for (const OpRecord& o : s.unfused_ops()) d.times[o.node] = node_time(o, total);
  hotspot_threshold(d);
  for (const RegionRecord& r : s.regions())
    for (NodeId n : r.nodes)
      d.notes[n] = "region " + std::to_string(r.id) + " (" + r.kernel + "), " +
                   std::string(region_state_name(r.state)) + ": " + r.reason;
  int profiled = 0;
  for (const IterationRecord& it : s.iterations()) profiled += it.phase == Phase::Profiling;
  d.title = "'" + g.name + "' as imported: " + std::to_string(s.kernels_before()) + " kernels";
  if (profiled > 0)
    d.title += ", " + human_time(s.median_ms(Phase::Profiling) * 1e-3) +
               " per iteration\nunfused profile, median of " + std::to_string(profiled) +
               " iterations";
  return d;
}

Drawing session_after(const Session& s) {
  Drawing d;
  const Graph& g = s.current_graph();
  const Graph& original = s.graph();
  d.graph = &g;

  std::vector<std::vector<NodeId>> region_nodes;
  for (const RegionRecord& r : s.regions()) region_nodes.push_back(r.nodes);
  const std::map<NodeId, int> fused_region = fused_regions(g, region_nodes);
  std::map<int, NodeId> fused_node;
  for (const auto& [node, region] : fused_region) fused_node[region] = node;

  // Times: the last re-profile (a fused node by its region, others by name and op), else
  // the unfused profile (unfused nodes keep their ids).
  std::map<NodeId, const OpRecord*> rec;
  std::set<const OpRecord*> used;
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    auto fr = fused_region.find(id);
    for (const OpRecord& o : s.fused_ops()) {
      bool same = fr != fused_region.end() ? o.fused && o.region == fr->second
                                           : !o.fused && o.name == n.name && o.op == row_op(n);
      if (same && !used.count(&o)) {
        rec[id] = &o;
        used.insert(&o);
        break;
      }
    }
    if (rec.count(id) || n.op == OpType::Fused) continue;
    for (const OpRecord& o : s.unfused_ops())
      if (o.node == id && o.name == n.name) rec[id] = &o;
  }
  // Better still: the steady iterations, when they were traced (they run this graph).
  const std::map<NodeId, double> steady = steady_medians(s);
  double total = 0;
  for (const auto& [id, o] : rec) {
    d.times[id] = node_time(*o, 0);
    if (auto st = steady.find(id); st != steady.end()) {
      d.times[id].seconds = st->second;
      d.notes[id] = "median of the traced steady iterations";
    } else if (used.count(o)) {
      d.notes[id] = "timed in the last re-profile";
    } else {
      d.notes[id] = "timed in the unfused profile";
    }
    total += d.times[id].seconds;
  }
  for (auto& [id, t] : d.times) t.share = total > 0 ? t.seconds / total : 0;
  hotspot_threshold(d);

  for (const RegionRecord& r : s.regions()) {
    Cluster c;
    c.region = r.id;
    const std::string all_nodes = node_list(original, r.nodes, 100000);
    if (r.state == RegionState::Swapped && fused_node.count(r.id)) {
      c.kind = ClusterKind::Kept;
      c.nodes = {fused_node[r.id]};
      const bool interpreted = r.tier == fusion::KernelTier::Interpreted;
      c.label = kept_label(r.kernel + (interpreted ? ", interpreted" : ""), r.id,
                           op_count(original, r.nodes), r.candidate.unfused_s, r.measured_fused_s,
                           "fused: " + node_list(original, r.nodes, 60));
      if (auto st = steady.find(fused_node[r.id]); st != steady.end())
        c.label.insert(c.label.begin() + 2,
                       "(re-profiled; steady: " + human_time(st->second) + ")");
      c.tooltip = region_title(r) + ": " + r.reason +
                  (r.tier_reason.empty() ? "" : "\n" + r.tier_reason) + "\nvalidation " +
                  r.validation + "\ncompile " + printf_double("%.1f ms", r.compile_ms) +
                  (r.cache_hit ? " (cache hit)" : "") + "\nnodes: " + all_nodes;
      std::string& note = d.notes[fused_node[r.id]];
      note += (note.empty() ? "" : "\n") + ("region " + std::to_string(r.id) + ": " + all_nodes);
      d.clusters.push_back(std::move(c));
      continue;
    }
    for (NodeId n : r.nodes)
      if (n < static_cast<NodeId>(g.nodes().size()) && !g.node(n).dead) c.nodes.push_back(n);
    if (c.nodes.empty()) continue;
    std::string head;
    switch (r.state) {
      case RegionState::Reverted:
        c.kind = ClusterKind::Reverted;
        head = "reverted: ";
        break;
      case RegionState::Failed:
        c.kind = ClusterKind::Failed;
        head = "compile failed: ";
        break;
      case RegionState::Queued:
        c.kind = ClusterKind::Queued;
        head = "still compiling: ";
        break;
      default:
        c.kind = ClusterKind::Rejected;
        head = "not fused: ";
        break;
    }
    c.label = {head + region_title(r)};
    for (std::string& line : wrap(r.reason, 60, 3)) c.label.push_back(std::move(line));
    c.tooltip = head + region_title(r) + "\n" + r.reason;
    if (!r.validation.empty()) c.tooltip += "\nvalidation " + r.validation;
    c.tooltip += "\nnodes: " + all_nodes;
    d.clusters.push_back(std::move(c));
  }

  const double before = s.median_ms(Phase::Profiling), after = s.median_ms(Phase::Steady);
  d.title = "'" + original.name + "' as executed: " + std::to_string(s.kernels_before()) + " -> " +
            std::to_string(s.kernels_now()) + " kernels";
  if (before > 0 && after > 0 && s.kernels_now() != s.kernels_before())
    d.title += ", " + human_time(before * 1e-3) + " -> " + human_time(after * 1e-3) +
               " per iteration (" + printf_double("%.2fx", before / after) + ")";
  d.title += "\nphase " + std::string(phase_name(s.phase())) + "; op times: " +
             (!steady.empty()         ? "median of the traced steady iterations"
              : s.fused_ops().empty() ? "the unfused profile"
                                      : "the last re-profile");
  return d;
}

}  // namespace hf::dump
