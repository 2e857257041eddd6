// The Graph panel: before.dot / after.dot laid out by Graphviz (once, on a background
// thread) and drawn with ImDrawList: fused regions as coloured clusters, nodes coloured by
// their share of the iteration, edges as Graphviz's splines.
//
// Graphs of real models are grouped by their nodes' name scopes (viewer/model/scope_tree.h):
// a collapsed scope is one box with its node count, time share and fused marks, and what is
// visible is laid out again (viewer/layout/scope_layout.h), top-to-bottom or left-to-right,
// whichever fits the panel (or as the toolbar says). At first the scopes are expanded only
// as far as the graph stays readable when fitted. A click on a box expands it; a double-click
// on a node collapses its scope.
//
// Mouse: wheel zooms around the cursor, drag pans, double-click on the background (or Home,
// or the Fit button) fits the graph to the panel; F zooms both graphs to the selection. The
// minimap (bottom right, while zoomed in) jumps where it is clicked. Hover shows the node's
// op, shapes, time and GB/s; a click selects a node (or a region's cluster, or nothing on the
// background). Off-screen nodes, edges and clusters are culled and labels adapt to the zoom
// (viewer/ui/graph_labels.h), so graphs of thousands of nodes stay interactive.
#pragma once
#include <imgui.h>

#include <future>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "viewer/layout/scope_layout.h"
#include "viewer/model/view_transform.h"
#include "viewer/ui/graph_labels.h"
#include "viewer/ui/minimap.h"
#include "viewer/ui/shared_state.h"

namespace hf::viewer::ui {

// What one canvas drew in its last frame: the facts --screenshot-facts writes.
struct CanvasFacts {
  bool drawn = false;  // a graph was drawn (not a message)
  float zoom = 0;
  const char* rankdir = "TB";
  int graph_nodes = 0;  // nodes of the dump's graph
  int shown_nodes = 0;  // nodes of the layout drawn (boxes included)
  int boxes = 0;        // collapsed scopes in it
  int boxes_drawn = 0;  // of them on screen
  int nodes_drawn = 0;  // nodes on screen (boxes included)
  int edge_labels = 0;
  LabelStats labels;       // node and box label lines
  float clip_top = 0;      // window y where the graph's clip rectangle starts
  float title_bottom = 0;  // window y below the caption and title lines
  struct BoxOnScreen {
    std::string path;
    float x0, y0, x1, y1;  // window pixels
  };
  std::vector<BoxOnScreen> box_rects;  // the collapsed scopes drawn, where
  std::vector<BoxOnScreen> outline_rects;  // the expanded scopes' outlines drawn, where
  std::vector<BoxOnScreen> selection_rects;  // the selected nodes (or boxes) drawn, where
  int zooms_to_selection = 0;  // times the canvas zoomed to a selection (F) since it started
  bool minimap = false;        // the minimap was drawn (the view does not show everything)
};

// One zoomable drawing of one graph.
class GraphCanvas {
 public:
  // `sync`: lay out in this frame rather than in the background (screenshots).
  void draw(SharedState& st, GraphSlot& slot, bool is_after, ImVec2 size, DirectionChoice direction,
            bool sync);
  void request_fit() {
    fit_requested_ = true;
    user_moved_ = false;
  }
  // Zooms to the selected nodes (fits everything when nothing here is selected).
  void request_zoom_to_selection() { zoom_to_selection_ = true; }
  // Chooses again how far to expand the scopes, for the panel's size.
  void regroup() { regroup_ = true; }
  void expand_all() { expand_all_ = true; }
  float zoom() const { return view_.zoom; }
  const CanvasFacts& facts() const { return facts_; }
  bool busy() const { return pending_.valid(); }
  // Bumped each time a new layout of the groups is shown.
  int layout_serial() const { return layout_serial_; }
  // The paths of the expanded scopes shown ("/features", ...).
  std::vector<std::string> expanded_paths() const;
  // Shows the scopes with these paths expanded, the others collapsed (the after graph
  // follows the before graph's grouping side by side). False when busy or not laid out yet.
  bool adopt_expansion(const std::vector<std::string>& paths, bool wait);

 private:
  const GraphLayout& shown(const GraphLayout& full) const {
    return shown_ && shown_->error.empty() ? shown_->layout : full;
  }
  void start_layout(const GraphLayout& full, ScopeGraph graph, bool auto_expand, bool wait);
  void poll_layout();
  void prepare(SharedState& st, const GraphLayout& g, bool is_after);
  void draw_graph(SharedState& st, const GraphLayout& g, ImDrawList* dl, ImVec2 origin,
                  ImVec2 size);
  void draw_title(const SharedState& st, const GraphLayout& full, bool is_after, ImDrawList* dl,
                  ImVec2 origin, ImVec2 size);
  void draw_legend(const GraphLayout& g, ImDrawList* dl, ImVec2 origin, ImVec2 size);
  void handle_input(SharedState& st, const GraphLayout& full, const GraphLayout& g, ImVec2 origin,
                    ImVec2 size, bool hovered);
  // Nodes of the drawn layout standing for nodes of the dump's graph (a box for a hidden one).
  std::vector<int> to_shown(const GraphLayout& full, const GraphLayout& g,
                            const std::vector<int>& full_nodes) const;

  // The height of the caption and title band, which the graph never draws over.
  float title_band() const { return 26 + 15.0f * std::min<size_t>(title_lines_, 3); }
  // Fits the drawing (without the DOT's own legend, drawn as an overlay instead) between the
  // title band and the legend; [mn, mx] (world) instead of everything when given.
  void fit(ImVec2 size, const Vec2* mn = nullptr, const Vec2* mx = nullptr);
  ImVec2 free_area(ImVec2 size) const;
  static bool legend_shown(ImVec2 size);

  View2D view_;
  // The dump's graph this canvas was set up for, and the layout of what it shows of it.
  const GraphLayout* full_for_ = nullptr;
  std::optional<ScopeLayout> shown_;
  std::optional<ScopeGraph> initial_;  // before the first layout of the groups is done
  std::future<ScopeLayout> pending_;
  DirectionChoice direction_ = DirectionChoice::Auto;
  bool regroup_ = false, expand_all_ = false;
  // The panel size the automatic grouping was chosen for; false once the user expanded or
  // collapsed a scope (then a resize only refits).
  ImVec2 grouped_for_{0, 0};
  bool auto_grouped_ = true;
  int layout_serial_ = 0;
  bool sync_ = false;

  const GraphLayout* prepared_for_ = nullptr;
  Vec2 content_min_, content_max_;  // of what is drawn
  size_t title_lines_ = 0;
  std::vector<ImU32> fills_, texts_;  // per node
  bool fit_requested_ = true;
  bool zoom_to_selection_ = false;
  int zooms_to_selection_ = 0;
  ImVec2 last_size_{0, 0};
  int seen_serial_ = -1;
  std::vector<int> highlight_;        // node indices for the current selection
  std::vector<int> hover_highlight_;  // for the hover in another panel
  Selection hover_for_;
  bool panning_ = false;
  bool user_moved_ = false;  // zoomed or panned since the last fit
  Minimap minimap_;
  CanvasFacts facts_;
};

class GraphView {
 public:
  enum class Mode { Before, After, SideBySide };
  void draw(SharedState& st);
  // Both graphs zoom to the selection (View > Zoom to selection, F).
  void zoom_to_selection() {
    before_.request_zoom_to_selection();
    after_.request_zoom_to_selection();
  }
  bool busy() const { return before_.busy() || after_.busy(); }
  // The facts of the last frame as JSON (--screenshot-facts).
  nlohmann::json facts() const;
  Mode mode = Mode::SideBySide;
  DirectionChoice direction = DirectionChoice::Auto;
  bool sync_layouts = false;  // screenshots: no layout in the background

 private:
  GraphCanvas before_, after_;
  int synced_serial_ = -1;  // the before layout the after graph's grouping follows
  char search_[128] = {};
  std::vector<int> matches_;
  int match_ = 0;
};

const char* graph_mode_name(GraphView::Mode m);

}  // namespace hf::viewer::ui
