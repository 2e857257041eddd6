// A dump graph with its name scopes (viewer/model/scope_tree.h) partly collapsed, as a new
// DOT text for Graphviz: every visible node keeps its DOT look (label, colours, fused-region
// cluster), every collapsed scope is one box node "scope<index>" carrying its node count,
// summed time share and fused marks, and the edges between them are merged. Laying out what
// is visible, rather than hiding the insides of Graphviz clusters, is what makes a model of
// hundreds of nodes fit a panel: a collapsed box is as small as one node.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "viewer/model/graph_layout.h"
#include "viewer/model/report.h"
#include "viewer/model/scope_tree.h"

namespace hf::viewer {

enum class RankDir { TopBottom, LeftRight };
const char* rankdir_name(RankDir d);  // "TB", "LR"

// The zoom at which `content` (points) fits `panel` (pixels).
float fit_zoom(Vec2 content, Vec2 panel);
// The direction whose layout fits the panel at the larger zoom; top-to-bottom unless
// left-to-right is clearly (10%) better. `lr_size` {0, 0}: not laid out yet, estimated as
// the top-to-bottom layout turned by 90 degrees.
RankDir choose_rank_dir(Vec2 tb_size, Vec2 lr_size, Vec2 panel);

// Each op node's share of the iteration from report.json: the fused plan's rows for the
// after graph (when it has them), else the unfused profile.
std::unordered_map<int64_t, double> node_shares(const Report* report, bool is_after);

// The tree of a laid-out dump graph: one item per node of `g` (same indices), the HTML
// legend excluded from scoping; constants (op nodes without inputs) adoptable.
struct ScopeGraph {
  ScopeTree tree;
  std::vector<std::pair<int, int>> edges;  // node index pairs of g's edges
  std::vector<int> layout_edge;            // per pair: its index into g.edges

  static ScopeGraph of(const GraphLayout& g, const std::unordered_map<int64_t, double>& shares);
  // The DOT text of what is visible. Item labels keep their lines, the name shortened in the
  // middle (the full name stays in the tooltip); boxes say "<path>\n<n> nodes, <share>".
  std::string to_dot(const GraphLayout& g, RankDir dir) const;
};

// What a box's tooltip says: its full path, node count, share and fused marks.
std::string box_tooltip(const Scope& s);
// "scope12" -> 12; -1 for any other DOT name.
int scope_of_dot_name(const std::string& name);
// The most telling fused mark of a box: kept, then reverted, failed, rejected, queued; "".
std::string main_fused_kind(const Scope& s);

}  // namespace hf::viewer
