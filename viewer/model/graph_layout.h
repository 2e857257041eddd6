// A laid-out graph, as the Graph panel draws it: what viewer/layout/dot_layout.h reads back
// from Graphviz after `dot` placed a DOT file (before.dot / after.dot, docs/dumps.md).
//
// Coordinates are Graphviz points (1/72 inch) with y pointing down (Graphviz's y is flipped
// once, when the layout is read back), the origin at the graph's top-left corner.
//
// The dump names op nodes "n<node id>" (the runtime's NodeId, shared by before.dot,
// after.dot, report.json ops[].node_id and trace.json args.node), graph inputs "in<value>",
// graph outputs "out<i>", and clusters "cluster_<kind>_<region>" (kind: kept, reverted,
// failed, rejected, queued).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "viewer/model/color.h"

namespace hf::viewer {

struct Vec2 {
  float x = 0, y = 0;
};

struct TextLine {
  std::string text;
  char just = 'n';  // 'l', 'r' or 'n' (centred)
};

enum class NodeKind { Op, Input, Output, Other };
enum class NodeShape { Box, Ellipse, Plain };

struct LayoutNode {
  std::string name;          // the DOT name: "n12", "in0", "out1", ...
  NodeKind kind = NodeKind::Other;
  int64_t node_id = -1;      // 12 for "n12"; -1 for others
  Vec2 center, size;         // points
  NodeShape shape = NodeShape::Box;
  bool rounded = false, dashed = false, html = false;
  std::vector<TextLine> lines;  // the label, one entry per line
  float font_size = 14;
  std::string tooltip;
  Rgba fill = rgba(255, 255, 255), border = rgba(0, 0, 0), text = rgba(0, 0, 0);
  bool filled = true;
  bool explicit_fill = false;  // the DOT set a fill colour (else: ours, from the report)
  int peripheries = 1;
  float penwidth = 1;
  int cluster = -1;          // index into GraphLayout::clusters (innermost)
  std::vector<int> out_edges, in_edges;
};

struct LayoutEdge {
  int from = -1, to = -1;     // node indices
  std::vector<Vec2> points;   // cubic Bezier control points: p0, then 3 per segment
  bool arrow_end = false, arrow_start = false;
  Vec2 end_tip, start_tip;    // where the arrowheads point
  std::string label, tooltip;
  Vec2 label_pos;
  bool has_label = false;
  float font_size = 10;
  Rgba color = rgba(0x61, 0x61, 0x61), text = rgba(0x42, 0x42, 0x42);
  Vec2 min, max;              // bounding box of points and label
};

struct LayoutCluster {
  std::string name;           // "cluster_kept_0"
  std::string kind;           // "kept", "reverted", ... (the name's middle part)
  int64_t region = -1;        // the name's number
  int scope = -1;             // "cluster_scope<N>": the outline of expanded name scope N
  Vec2 min, max;              // bounding box
  std::vector<TextLine> label;
  Vec2 label_pos;             // centre of the label block
  Vec2 label_size;
  float font_size = 14;
  std::string tooltip;
  Rgba fill = rgba(0, 0, 0, 0), border = rgba(0, 0, 0), text = rgba(0, 0, 0);
  bool filled = false, dashed = false, dotted = false, bold = false, rounded = false;
  std::vector<int> nodes;     // node indices directly or indirectly inside
};

struct GraphLayout {
  std::vector<TextLine> title;  // the graph's label
  Vec2 title_pos, title_size;
  float title_font_size = 14;
  Vec2 size;                    // the bounding box's extent; everything lies in [0, size]
  std::vector<LayoutNode> nodes;
  std::vector<LayoutEdge> edges;
  std::vector<LayoutCluster> clusters;
  std::map<int64_t, int> by_node_id;  // node id -> index into nodes
  std::map<std::string, int> by_name;
  double layout_seconds = 0;    // time Graphviz took

  bool empty() const { return nodes.empty(); }
  // Index of the op node with this id, or -1.
  int find_node_id(int64_t node_id) const;
  int find_name(const std::string& name) const;
  // The topmost node containing p (points), or -1.
  int node_at(Vec2 p, float slack = 0) const;
  // The innermost cluster containing p, or -1.
  int cluster_at(Vec2 p) const;
  // The cluster of a region (any kind), or -1.
  int cluster_of_region(int64_t region) const;
  // Nodes whose name, label or tooltip contains `text` (case-insensitive), in index order.
  std::vector<int> search(const std::string& text) const;
};

// Derived fields: node name -> kind / id, cluster name -> kind / region, by_* maps, edge
// bounding boxes, node <-> edge lists. The Graphviz reader calls it; tests building a
// layout by hand can too.
void index_layout(GraphLayout& g);

// "n12" -> 12, "in3" -> -1 (kind Input), ...
NodeKind node_kind_of(const std::string& dot_name, int64_t* node_id);

// DOT label escapes: "\n", "\l", "\r" end a line (centred, left-, right-justified); "\N" is
// the node's name, "\G" the graph's; "\\" and "\"" are the characters.
std::vector<TextLine> split_label(const std::string& label, const std::string& node_name = {},
                                  const std::string& graph_name = {});

}  // namespace hf::viewer
