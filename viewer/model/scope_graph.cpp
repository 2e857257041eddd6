#include "viewer/model/scope_graph.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "viewer/model/color.h"
#include "viewer/model/format.h"
#include "viewer/model/name_elide.h"

namespace hf::viewer {

namespace {

// The longest name a node's or box's label line is laid out with; the UI shortens it
// further to the box's width on screen.
constexpr float kLabelChars = 16;

std::string dot_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string color_text(Rgba c) {
  return strf("#%02x%02x%02x%02x", red(c), green(c), blue(c), alpha(c));
}

std::string lines_text(const std::vector<TextLine>& lines) {
  std::string s;
  for (size_t i = 0; i < lines.size(); ++i) s += (i ? "\n" : "") + lines[i].text;
  return s;
}

std::string style_of(const LayoutCluster& c) {
  std::string s;
  auto add = [&](bool on, const char* w) {
    if (on) s += (s.empty() ? "" : ",") + std::string(w);
  };
  add(c.rounded, "rounded");
  add(c.filled, "filled");
  add(c.bold, "bold");
  add(c.dashed, "dashed");
  add(c.dotted, "dotted");
  return s;
}

void node_line(std::string& out, const LayoutNode& n) {
  // Laid out with its name and op only: the panel draws the other lines (shapes, time) in
  // the same box when zoomed in (viewer/ui/graph_labels.h), so the overview stays compact.
  std::vector<TextLine> lines(n.lines.begin(),
                              n.lines.begin() + std::min<size_t>(2, n.lines.size()));
  if (!lines.empty()) lines[0].text = elide_middle(lines[0].text, kLabelChars);
  out += "  " + dot_quoted(n.name) + " [label=" + dot_quoted(lines_text(lines));
  out += n.shape == NodeShape::Ellipse ? ", shape=ellipse"
         : n.shape == NodeShape::Plain ? ", shape=plaintext"
                                       : "";
  std::string style = n.rounded ? "rounded" : "";
  if (n.filled) style += style.empty() ? "filled" : ",filled";
  if (n.dashed) style += style.empty() ? "dashed" : ",dashed";
  out += ", style=" + dot_quoted(style);
  if (n.explicit_fill || n.kind != NodeKind::Op)
    out += ", fillcolor=" + dot_quoted(color_text(n.fill));
  out += ", color=" + dot_quoted(color_text(n.border));
  if (n.text != rgba(0, 0, 0)) out += ", fontcolor=" + dot_quoted(color_text(n.text));
  // A larger font than the dump's: the boxes are sized for text that stays readable at the
  // zoom a fitted model graph gets.
  out += strf(", fontsize=%g, peripheries=%d, penwidth=%g", n.font_size * 1.4f, n.peripheries,
              n.penwidth);
  if (!n.tooltip.empty()) out += ", tooltip=" + dot_quoted(n.tooltip);
  out += "];\n";
}

}  // namespace

const char* rankdir_name(RankDir d) {
  return d == RankDir::LeftRight ? "LR" : "TB";
}

float fit_zoom(Vec2 content, Vec2 panel) {
  if (!(content.x > 0) || !(content.y > 0) || !(panel.x > 0) || !(panel.y > 0)) return 0;
  return std::min(panel.x / content.x, panel.y / content.y);
}

RankDir choose_rank_dir(Vec2 tb_size, Vec2 lr_size, Vec2 panel) {
  if (lr_size.x <= 0 || lr_size.y <= 0) lr_size = {tb_size.y, tb_size.x};
  return fit_zoom(lr_size, panel) > 1.1f * fit_zoom(tb_size, panel) ? RankDir::LeftRight
                                                                    : RankDir::TopBottom;
}

std::unordered_map<int64_t, double> node_shares(const Report* report, bool is_after) {
  std::unordered_map<int64_t, double> share;
  if (!report) return share;
  const std::vector<OpRow>& rows =
      is_after && !report->ops_after.empty() ? report->ops_after : report->ops;
  double total = 0;
  for (const OpRow& o : rows)
    if (std::isfinite(o.time_ms) && o.time_ms > 0) total += o.time_ms;
  if (total > 0)
    for (const OpRow& o : rows)
      if (o.node_id >= 0 && std::isfinite(o.time_ms) && o.time_ms > 0)
        share[o.node_id] = o.time_ms / total;
  return share;
}

int scope_of_dot_name(const std::string& name) {
  if (name.size() <= 5 || name.rfind("scope", 0) != 0) return -1;
  int v = 0;
  for (size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || v > 100000000) return -1;
    v = v * 10 + (name[i] - '0');
  }
  return v;
}

std::string box_tooltip(const Scope& s) {
  std::string tip =
      s.path + strf("\n%d nodes, %s of the iteration", s.item_count, format_share(s.share).c_str());
  for (const auto& [kind, count] : s.fused) tip += strf("\n%d in %s regions", count, kind.c_str());
  return tip + "\n(click to expand)";
}

std::string main_fused_kind(const Scope& s) {
  for (const char* k : {"kept", "reverted", "failed", "rejected", "queued"})
    if (s.fused.count(k)) return k;
  return s.fused.empty() ? std::string() : s.fused.begin()->first;
}

ScopeGraph ScopeGraph::of(const GraphLayout& g, const std::unordered_map<int64_t, double>& shares) {
  ScopeGraph sg;
  std::vector<ScopeItem> items(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const LayoutNode& n = g.nodes[i];
    ScopeItem& it = items[i];
    if (n.html) continue;  // the legend: no name, never grouped
    it.name = n.lines.empty() ? n.name : n.lines[0].text;
    if (auto s = shares.find(n.node_id); s != shares.end()) it.share = s->second;
    if (n.cluster >= 0 && n.cluster < static_cast<int>(g.clusters.size()))
      it.fused_kind = g.clusters[n.cluster].kind;
    it.adoptable = n.kind == NodeKind::Op && n.in_edges.empty();
  }
  for (size_t e = 0; e < g.edges.size(); ++e)
    if (g.edges[e].from >= 0 && g.edges[e].to >= 0) {
      sg.edges.emplace_back(g.edges[e].from, g.edges[e].to);
      sg.layout_edge.push_back(static_cast<int>(e));
    }
  sg.tree = ScopeTree::build(items, sg.edges);
  return sg;
}

std::string ScopeGraph::to_dot(const GraphLayout& g, RankDir dir) const {
  std::string out = "digraph scopes {\n";
  out += strf("  graph [rankdir=%s, fontname=\"Helvetica\", nodesep=0.15, ranksep=0.2];\n",
              rankdir_name(dir));
  // Top to bottom, width is cheap: wide margins leave room for names drawn larger than the
  // zoom would draw them (viewer/ui/graph_labels.h). Left to right, width is the chain's length.
  out += strf(
      "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", "
      "fontsize=14, height=0.3, margin=\"%s,0.03\"];\n",
      dir == RankDir::TopBottom ? "0.3" : "0.08");
  out += "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#616161\", fontcolor=\"#424242\"];\n";

  // The border of a box with fused nodes: the colour of that kind's clusters.
  std::map<std::string, Rgba> kind_color;
  for (const LayoutCluster& c : g.clusters) kind_color.emplace(c.kind, c.border);

  const std::vector<Visible> visible = tree.visible();
  const std::vector<Scope>& scopes = tree.scopes();
  std::map<std::string, int> box_names;  // how many boxes show each scope name
  for (const Visible& v : visible)
    if (v.box) ++box_names[scopes[v.index].name];

  // Expanded scopes are outlined: a Graphviz cluster "cluster_scope<index>" around what is
  // visible inside them, so the layout keeps them together and the panel draws the outline
  // with the scope's name. Only scopes with two or more things directly inside (visible
  // items, boxes, outlined scopes) are outlined: a chain of single scopes is one outline.
  std::vector<int> home(visible.size());  // the scope each visible thing sits in
  std::vector<int> entries(scopes.size(), 0);
  for (size_t k = 0; k < visible.size(); ++k) {
    const Visible& v = visible[k];
    home[k] = v.box ? scopes[v.index].parent : tree.item_scope(v.index);
    if (home[k] >= 0) ++entries[home[k]];
  }
  std::vector<bool> outlined(scopes.size(), false);
  // Children have larger indices than their parents (scope_tree.h builds top-down), so one
  // pass from the end sees every child before its parent.
  for (size_t si = scopes.size(); si-- > 1;) {
    outlined[si] = scopes[si].expanded && entries[si] >= 2;
    if (scopes[si].expanded && entries[si] > 0 && scopes[si].parent >= 0)
      entries[scopes[si].parent] += outlined[si] ? 1 : entries[si];
  }
  auto outline_of = [&](int scope) {  // the innermost outlined scope at or above; 0: none
    while (scope > 0 && !outlined[scope]) scope = scopes[scope].parent;
    return std::max(scope, 0);
  };
  auto chain = [&](int scope) {  // outlined scopes from the root down to `scope`
    std::vector<int> c;
    for (int x = outline_of(scope); x > 0; x = outline_of(scopes[x].parent)) c.push_back(x);
    std::reverse(c.begin(), c.end());
    return c;
  };

  std::map<int, std::vector<size_t>> direct;       // outlined scope -> visible things in it
  std::map<int, std::vector<int>> region_home;     // outlined scope -> fused-region clusters
  std::map<int, std::vector<int>> by_cluster;      // cluster -> visible items in it
  for (size_t k = 0; k < visible.size(); ++k) {
    const Visible& v = visible[k];
    if (!v.box) {
      const LayoutNode& n = g.nodes[v.index];
      if (n.html) continue;
      if (n.cluster >= 0 && n.cluster < static_cast<int>(g.clusters.size())) {
        by_cluster[n.cluster].push_back(v.index);
        continue;
      }
    }
    direct[outline_of(home[k])].push_back(k);
  }
  // A fused region's cluster goes into the innermost outline holding all of its nodes.
  for (const auto& [ci, members] : by_cluster) {
    std::vector<int> common;
    bool first = true;
    for (int i : members) {
      const std::vector<int> c = chain(tree.item_scope(i));
      if (first) {
        common = c;
        first = false;
        continue;
      }
      size_t n = 0;
      while (n < common.size() && n < c.size() && common[n] == c[n]) ++n;
      common.resize(n);
    }
    region_home[common.empty() ? 0 : common.back()].push_back(ci);
  }

  auto thing_line = [&](const Visible& v) {
    if (!v.box) {
      node_line(out, g.nodes[v.index]);
      return;
    }
    const Scope& s = scopes[v.index];
    const Rgba fill = heat_color(heat_step(s.share));
    // Its name ("features.3"), or its path shortened in the middle when another box has
    // the same name: expanded parents have no box of their own, so two boxes "MatMul"
    // would not say whose ("/q/MatMul", "/k/MatMul").
    std::string label = elide_middle(box_names[s.name] > 1 ? s.path : s.name, kLabelChars) +
                        "\n" + strf("%d ops, %s", s.item_count, format_share(s.share).c_str());
    const std::string tip = box_tooltip(s);
    const std::string kind = main_fused_kind(s);
    if (!kind.empty()) label += "\n" + strf("%d fused (%s)", s.fused.at(kind), kind.c_str());
    auto kc = kind_color.find(kind);
    const Rgba border = kc != kind_color.end() ? kc->second : rgba(0x42, 0x42, 0x42);
    out += strf(
        "  scope%d [label=%s, style=\"filled,bold\", fillcolor=%s, color=%s, "
        "fontcolor=%s, fontsize=14, penwidth=%d, tooltip=%s];\n",
        v.index, dot_quoted(label).c_str(), dot_quoted(color_text(fill)).c_str(),
        dot_quoted(color_text(border)).c_str(), dot_quoted(color_text(text_on(fill))).c_str(),
        kind.empty() ? 1 : 3, dot_quoted(tip).c_str());
  };
  // Fused regions whose nodes are shown: their clusters, as the dump drew them.
  auto region_cluster = [&](int ci) {
    const LayoutCluster& c = g.clusters[ci];
    out += "  subgraph " + dot_quoted(c.name) + " {\n";
    out += "  graph [style=" + dot_quoted(style_of(c)) +
           ", color=" + dot_quoted(color_text(c.border)) +
           ", fillcolor=" + dot_quoted(color_text(c.fill)) +
           ", fontcolor=" + dot_quoted(color_text(c.text)) + strf(", fontsize=%g", c.font_size) +
           ", labeljust=l, label=" +
           dot_quoted(c.label.empty() ? "" : elide_middle(c.label[0].text, 2 * kLabelChars)) +
           ", tooltip=" + dot_quoted(c.tooltip) + "];\n";
    for (int i : by_cluster.at(ci)) node_line(out, g.nodes[i]);
    out += "  }\n";
  };
  std::map<int, std::vector<int>> outlined_children;  // outlined scope -> outlined below it
  for (size_t si = 1; si < scopes.size(); ++si)
    if (outlined[si]) outlined_children[outline_of(scopes[si].parent)].push_back(static_cast<int>(si));
  // An outline whose nodes all went into a fused region placed further out would be empty:
  // it is left out.
  std::map<int, bool> non_empty;
  std::function<bool(int)> has_content = [&](int scope) {
    auto it = non_empty.find(scope);
    if (it != non_empty.end()) return it->second;
    bool any = !direct[scope].empty() || !region_home[scope].empty();
    for (int child : outlined_children[scope]) any = has_content(child) || any;
    return non_empty[scope] = any;
  };
  std::function<void(int)> contents = [&](int scope) {
    for (size_t k : direct[scope]) thing_line(visible[k]);
    for (int ci : region_home[scope]) region_cluster(ci);
    for (int child : outlined_children[scope]) {
      if (!has_content(child)) continue;
      const Scope& s = scopes[child];
      // Its path below the enclosing outline's ("classifier/classifier.1/Gemm" for a chain
      // of single scopes), so that it says where it is.
      const std::string& outer = scopes[scope].path;
      std::string name = s.path.substr(std::min(outer.size(), s.path.size()));
      if (!name.empty() && name[0] == '/') name.erase(0, 1);
      out += strf("  subgraph cluster_scope%d {\n", child);
      out += "  graph [style=\"rounded\", color=\"#9e9e9e\", fontcolor=\"#616161\", "
             "fontsize=9, margin=4, labeljust=l, label=" +
             dot_quoted(elide_middle(name, 2 * kLabelChars)) + ", tooltip=" +
             dot_quoted(s.path + strf("\n%d nodes, %s of the iteration\n(double-click a node "
                                      "to collapse)",
                                      s.item_count, format_share(s.share).c_str())) +
             "];\n";
      contents(child);
      out += "  }\n";
    }
  };
  contents(0);

  auto dot_name = [&](const Visible& v) {
    return v.box ? strf("scope%d", v.index) : dot_quoted(g.nodes[v.index].name);
  };
  for (const MergedEdge& e : merge_edges(tree, edges)) {
    if ((!e.from.box && g.nodes[e.from.index].html) || (!e.to.box && g.nodes[e.to.index].html))
      continue;
    out += "  " + dot_name(e.from) + " -> " + dot_name(e.to);
    // One edge between two nodes keeps its label (the tensor's shape); merged ones say how many.
    const size_t li = e.first >= 0 && e.first < static_cast<int>(layout_edge.size())
                          ? static_cast<size_t>(layout_edge[e.first])
                          : g.edges.size();
    const LayoutEdge* first = li < g.edges.size() ? &g.edges[li] : nullptr;
    if (e.count > 1)
      out += strf(" [label=\"%d edges\", penwidth=%g]", e.count,
                  std::min(4.0, 1 + std::log2(static_cast<double>(e.count))));
    else if (first && first->has_label && !e.from.box && !e.to.box)
      out += " [label=" + dot_quoted(first->label) + "]";
    out += ";\n";
  }
  out += "}\n";
  return out;
}

}  // namespace hf::viewer
