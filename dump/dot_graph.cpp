#include "dump/dot_graph.h"

#include <cstdio>
#include <set>
#include <sstream>

#include "dump/dot_escape.h"
#include "dump/text.h"
#include "fusion/kernel_cache.h"
#include "fusion/region_spec.h"

namespace hf::dump {

namespace {

// ColorBrewer YlOrRd, 9 classes; the upper bounds of each step in percent of the iteration.
constexpr const char* kHeat[9] = {"#ffffcc", "#ffeda0", "#fed976", "#feb24c", "#fd8d3c",
                                  "#fc4e2a", "#e31a1c", "#bd0026", "#800026"};
constexpr double kHeatUpper[9] = {1, 2.5, 5, 10, 20, 35, 50, 75, 1e300};
constexpr const char* kHeatText[9] = {"&lt;1%", "1-2.5%", "2.5-5%", "5-10%",   "10-20%",
                                      "20-35%", "35-50%", "50-75%", "&gt;=75%"};

std::string node_id(NodeId n) {
  return "n" + std::to_string(n);
}
std::string input_id(ValueId v) {
  return "in" + std::to_string(v);
}

const char* cluster_attrs(ClusterKind k) {
  switch (k) {
    case ClusterKind::Kept:
      return "style=\"rounded,filled,bold\", color=\"#2e7d32\", fillcolor=\"#e8f5e9\", "
             "fontcolor=\"#1b5e20\"";
    case ClusterKind::Reverted:
      return "style=\"dashed,bold\", color=\"#c62828\", fontcolor=\"#b71c1c\"";
    case ClusterKind::Failed:
      return "style=\"dashed,bold\", color=\"#ef6c00\", fontcolor=\"#e65100\"";
    case ClusterKind::Rejected:
      return "style=\"dotted\", color=\"#757575\", fontcolor=\"#616161\"";
    case ClusterKind::Queued:
      return "style=\"dashed\", color=\"#1565c0\", fontcolor=\"#0d47a1\"";
  }
  return "";
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string s;
  for (size_t i = 0; i < lines.size(); ++i) s += (i ? "\n" : "") + lines[i];
  return s;
}

}  // namespace

std::string_view cluster_kind_name(ClusterKind k) {
  switch (k) {
    case ClusterKind::Kept:
      return "kept";
    case ClusterKind::Reverted:
      return "reverted";
    case ClusterKind::Failed:
      return "failed";
    case ClusterKind::Rejected:
      return "rejected";
    case ClusterKind::Queued:
      return "queued";
  }
  return "?";
}

int heat_step(double share) {
  const double pct = share * 100;
  for (int i = 0; i < 9; ++i)
    if (pct < kHeatUpper[i]) return i;
  return 8;
}

const char* heat_color(int step) {
  return kHeat[step < 0 ? 0 : step > 8 ? 8 : step];
}

std::string short_count(int64_t n) {
  if (n != 0 && n % (int64_t{1} << 30) == 0) return std::to_string(n >> 30) + "Gi";
  if (n != 0 && n % (int64_t{1} << 20) == 0) return std::to_string(n >> 20) + "Mi";
  if (n >= 1024 && n % 1024 == 0) return std::to_string(n >> 10) + "Ki";
  return std::to_string(n);
}

std::string short_type(const Value& v) {
  std::string s(dtype_name(v.dtype));
  s += '[';
  for (size_t i = 0; i < v.shape.size(); ++i) s += (i ? "," : "") + short_count(v.shape[i]);
  return s + ']';
}

std::string op_label(const Node& n) {
  std::string op = row_op(n);
  if (auto* f = dynamic_cast<const fusion::FusedRegion*>(n.payload.get()))
    op += " " + fusion::KernelCache::kernel_name(f->kernel.spec);
  else if (auto* e = dynamic_cast<const HeavyEpilogue*>(n.payload.get()))
    op += " " + e->summary();
  return op;
}

std::string to_dot(const Drawing& d) {
  const Graph& g = *d.graph;
  std::ostringstream o;
  o << "digraph hotfuse {\n"
    << "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=12, labelloc=t, labeljust=l, "
       "nodesep=0.25, ranksep=0.35, label="
    << dot_quote(d.title) << "];\n"
    << "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", "
       "fontsize=10];\n"
    << "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#616161\", fontcolor=\"#424242\"];\n";

  // Graph inputs.
  for (ValueId v : g.inputs()) {
    const Value& val = g.value(v);
    o << "  " << input_id(v) << " [shape=ellipse, fillcolor=\"#e3f2fd\", label="
      << dot_quote(val.name + "\n" + short_type(val)) << ", tooltip="
      << dot_quote("graph input '" + val.name + "' (value " + std::to_string(v) + ")") << "];\n";
  }

  // Op nodes: emitted inside their cluster when they have one.
  std::map<NodeId, size_t> cluster_of;
  for (size_t c = 0; c < d.clusters.size(); ++c)
    for (NodeId n : d.clusters[c].nodes) cluster_of.emplace(n, c);
  const bool any_time = !d.times.empty();
  auto print_node = [&](NodeId id, const char* indent) {
    const Node& n = g.node(id);
    std::string label = n.name + "\n" + op_label(n);
    if (!n.outputs.empty()) {
      label += "\n" + short_type(g.value(n.outputs[0]));
      if (n.outputs.size() > 1) label += " +" + std::to_string(n.outputs.size() - 1);
    }
    std::string tip = "node " + std::to_string(id) + " '" + n.name + "': " + op_label(n);
    for (ValueId v : n.outputs)
      tip += "\noutput '" + g.value(v).name + "' " + short_type(g.value(v));
    std::string attrs;
    auto t = d.times.find(id);
    if (n.op == OpType::Constant) {
      attrs = ", fillcolor=\"#eeeeee\", fontsize=8, color=\"#9e9e9e\"";
      tip += "\nconstant: computed once when the plan is built";
    } else if (t != d.times.end()) {
      const NodeTime& nt = t->second;
      const int step = heat_step(nt.share);
      label += "\n" + human_time(nt.seconds) + ", " + printf_double("%.1f%%", nt.share * 100);
      attrs = std::string(", fillcolor=\"") + heat_color(step) + "\"";
      if (step >= 6) attrs += ", fontcolor=white";
      tip += "\n" + human_time(nt.seconds) + " median, " + printf_double("%.1f%%", nt.share * 100) +
             " of the iteration, " + human_bytes(nt.bytes) + " moved";
      if (nt.seconds > 0) tip += ", " + printf_double("%.1f GB/s", nt.bytes / nt.seconds * 1e-9);
      if (!nt.cls.empty()) tip += ", " + nt.cls;
      if (nt.cls == "memory-bound" && nt.share >= d.hotspot_share) {
        label += "\nhotspot (memory-bound)";
        attrs += ", peripheries=2, color=\"#b71c1c\", penwidth=2";
      }
    } else if (any_time) {
      tip += "\nnot timed";
    }
    if (auto note = d.notes.find(id); note != d.notes.end()) tip += "\n" + note->second;
    o << indent << node_id(id) << " [label=" << dot_quote(label) << ", tooltip=" << dot_quote(tip)
      << attrs << "];\n";
  };
  for (size_t c = 0; c < d.clusters.size(); ++c) {
    const Cluster& cl = d.clusters[c];
    o << "  subgraph cluster_" << cluster_kind_name(cl.kind) << "_" << cl.region << " {\n"
      << "    graph [" << cluster_attrs(cl.kind)
      << ", fontsize=10, labeljust=l, label=" << dot_quote(join_lines(cl.label))
      << ", tooltip=" << dot_quote(cl.tooltip) << "];\n";
    for (NodeId n : cl.nodes)
      if (cluster_of.at(n) == c && !g.node(n).dead) print_node(n, "    ");
    o << "  }\n";
  }
  for (NodeId n : g.topo_order())
    if (!cluster_of.count(n)) print_node(n, "  ");

  // Edges: one per input of every live node (x * x is two edges), then the outputs.
  for (NodeId n : g.topo_order()) {
    for (ValueId v : g.node(n).inputs) {
      const Value& val = g.value(v);
      std::string from = val.producer == kNoNode ? input_id(v) : node_id(val.producer);
      o << "  " << from << " -> " << node_id(n) << " [label=" << dot_quote(short_type(val))
        << ", tooltip=" << dot_quote("'" + val.name + "' " + short_type(val)) << "];\n";
    }
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Value& val = g.value(g.outputs()[i]);
    std::string from = val.producer == kNoNode ? input_id(g.outputs()[i]) : node_id(val.producer);
    o << "  out" << i << " [shape=ellipse, style=\"filled,dashed\", fillcolor=\"#f3e5f5\", label="
      << dot_quote("output\n" + val.name)
      << ", tooltip=" << dot_quote("graph output " + std::to_string(i) + " '" + val.name + "'")
      << "];\n"
      << "  " << from << " -> out" << i << " [label=" << dot_quote(short_type(val)) << "];\n";
  }

  // The legend: fixed text only, so an HTML-like label is safe here.
  std::set<ClusterKind> kinds;
  for (const Cluster& c : d.clusters) kinds.insert(c.kind);
  if (any_time || !kinds.empty()) {
    o << "  legend [shape=plaintext, style=\"\", fontsize=9, label=<\n"
      << "    <TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\">\n";
    if (any_time) {
      o << "    <TR><TD COLSPAN=\"9\">share of the iteration's op time (node fill)</TD></TR>\n    "
           "<TR>";
      for (int i = 0; i < 9; ++i)
        o << "<TD BGCOLOR=\"" << kHeat[i] << "\">" << (i >= 6 ? "<FONT COLOR=\"white\">" : "")
          << kHeatText[i] << (i >= 6 ? "</FONT>" : "") << "</TD>";
      o << "</TR>\n";
      bool classified = false;
      for (const auto& [id, t] : d.times) classified |= !t.cls.empty();
      o << "    <TR><TD COLSPAN=\"9\">";
      if (classified)
        o << "double red border: memory-bound hotspot (&gt;= "
          << printf_double("%.1f", d.hotspot_share * 100) << "% of the op time); ";
      o << "grey: constant, computed once</TD></TR>\n";
    }
    const std::pair<ClusterKind, const char*> meanings[] = {
        {ClusterKind::Kept, "green box: fused kernel kept (before -&gt; after, speedup)"},
        {ClusterKind::Reverted, "dashed red: fused, then reverted (reason in the label)"},
        {ClusterKind::Failed, "dashed orange: kernel failed to compile; runs unfused"},
        {ClusterKind::Rejected, "dotted grey: fusible, not worth a kernel (reason)"},
        {ClusterKind::Queued, "dashed blue: kernel still compiling"}};
    for (const auto& [k, text] : meanings)
      if (kinds.count(k)) o << "    <TR><TD COLSPAN=\"9\">" << text << "</TD></TR>\n";
    o << "    </TABLE>>];\n";
  }
  o << "}\n";
  return o.str();
}

}  // namespace hf::dump
