// The layout the Graph panel shows for a dump graph with name scopes: which scopes to
// collapse and which direction to lay it out in, chosen so that the graph is readable when
// fitted to the panel, then laid out by Graphviz (viewer/layout/dot_layout.h) from the
// collapsed graph's DOT (viewer/model/scope_graph.h). Runs on a background thread: a few
// small layouts, tens of milliseconds each.
#pragma once
#include <string>

#include "viewer/model/graph_layout.h"
#include "viewer/model/scope_graph.h"

namespace hf::viewer {

// The fitted zoom below which text is too small to read: a 0.3 inch node holds one line of
// 7 px or more (viewer/ui/graph_labels.h). Expanding scopes stops before it.
constexpr float kReadableZoom = 0.4f;

enum class DirectionChoice { Auto, TopBottom, LeftRight };

struct ScopeLayoutRequest {
  ScopeGraph graph;      // the tree as the user left it (auto_expand: replaced)
  Vec2 panel{800, 600};  // the free area of the canvas, pixels
  DirectionChoice direction = DirectionChoice::Auto;
  bool auto_expand = true;  // choose how far to expand for the panel
  float readable_zoom = kReadableZoom;
};

struct ScopeLayout {
  ScopeGraph graph;    // with the expansion chosen
  GraphLayout layout;  // of what is visible
  RankDir dir = RankDir::TopBottom;
  bool whole = false;  // no box: the dump's own graph (laid out in `dir`)
  std::string error;   // Graphviz failed: layout is empty
};

// `full`: the dump graph's own layout (its nodes are the tree's items).
ScopeLayout layout_scopes(const GraphLayout& full, ScopeLayoutRequest request);

}  // namespace hf::viewer
