#include "viewer/layout/scope_layout.h"

#include <optional>
#include <vector>

#include "viewer/layout/dot_layout.h"

namespace hf::viewer {

namespace {

struct Candidate {
  GraphLayout layout;
  RankDir dir = RankDir::TopBottom;
  float zoom = 0;
};

// The dump's label lines back on the nodes that were laid out with a short label.
GraphLayout with_full_labels(GraphLayout g, const GraphLayout& full) {
  for (LayoutNode& n : g.nodes) {
    const int i = full.find_name(n.name);
    if (i >= 0) n.lines = full.nodes[i].lines;
  }
  return g;
}

// The graph as the tree shows it, in the direction asked (Auto: both, the better fit).
Candidate lay_out(const GraphLayout& full, const ScopeGraph& sg, DirectionChoice d, Vec2 panel) {
  Candidate c;
  if (d != DirectionChoice::LeftRight) {
    c.layout = with_full_labels(layout_dot(sg.to_dot(full, RankDir::TopBottom)), full);
    c.dir = RankDir::TopBottom;
    c.zoom = fit_zoom(c.layout.size, panel);
  }
  if (d == DirectionChoice::TopBottom) return c;
  // Auto: left-to-right only when the turned graph is estimated to fit clearly better.
  if (d == DirectionChoice::Auto && choose_rank_dir(c.layout.size, {}, panel) == RankDir::TopBottom)
    return c;
  Candidate lr;
  lr.layout = with_full_labels(layout_dot(sg.to_dot(full, RankDir::LeftRight)), full);
  lr.dir = RankDir::LeftRight;
  lr.zoom = fit_zoom(lr.layout.size, panel);
  if (d == DirectionChoice::LeftRight ||
      choose_rank_dir(c.layout.size, lr.layout.size, panel) == RankDir::LeftRight)
    return lr;
  return c;
}

}  // namespace

ScopeLayout layout_scopes(const GraphLayout& full, ScopeLayoutRequest req) {
  ScopeLayout out;
  out.graph = std::move(req.graph);
  try {
    ScopeTree& tree = out.graph.tree;
    if (!tree.has_scopes() || (!req.auto_expand && tree.all_expanded())) {
      tree.expand_all();
      out.whole = true;
      // The dump's own layout, unless another direction fits better.
      const RankDir want = req.direction == DirectionChoice::LeftRight ? RankDir::LeftRight
                           : req.direction == DirectionChoice::TopBottom
                               ? RankDir::TopBottom
                               : choose_rank_dir(full.size, {}, req.panel);
      if (want == RankDir::TopBottom) {
        out.layout = full;
        out.dir = want;
        return out;
      }
      Candidate c = lay_out(full, out.graph, req.direction, req.panel);
      out.layout = std::move(c.layout);
      out.dir = c.dir;
      return out;
    }
    if (!req.auto_expand) {
      Candidate c = lay_out(full, out.graph, req.direction, req.panel);
      out.layout = std::move(c.layout);
      out.dir = c.dir;
      return out;
    }
    // Expand step by step while the fitted graph stays readable; keep the last one that was
    // (the first, collapsed to the top level, when none is).
    std::optional<Candidate> best;
    std::vector<bool> best_expanded;
    int last_count = -1;
    for (int budget : {6, 9, 13, 18, 25, 30, 35, 42, 50, 60, 70}) {
      const int count = tree.expand_to_fit(budget);
      if (count == last_count) continue;
      last_count = count;
      Candidate c = lay_out(full, out.graph, req.direction, req.panel);
      if (best && c.zoom < req.readable_zoom) break;
      best = std::move(c);
      best_expanded = tree.expansion();
    }
    tree.set_expansion(best_expanded);
    out.layout = std::move(best->layout);
    out.dir = best->dir;
    out.whole = tree.all_expanded();
  } catch (const std::exception& e) {
    out.error = e.what();
    out.layout = GraphLayout{};
  }
  return out;
}

}  // namespace hf::viewer
