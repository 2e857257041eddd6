// The Graph panel: before.dot / after.dot laid out by Graphviz (once, on a background
// thread) and drawn with ImDrawList: fused regions as coloured clusters, nodes coloured by
// their share of the iteration, edges as Graphviz's splines.
//
// Mouse: wheel zooms around the cursor, drag pans, double-click (or F, or the Fit button)
// fits the graph to the panel. Hover shows the node's op, shapes, time and GB/s; a click
// selects a node (or a region's cluster, or nothing on the background). Off-screen nodes,
// edges and clusters are culled and small text is skipped, so graphs of thousands of nodes
// stay interactive.
#pragma once
#include <imgui.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "viewer/model/view_transform.h"
#include "viewer/ui/shared_state.h"

namespace hf::viewer::ui {

// One zoomable drawing of one graph.
class GraphCanvas {
 public:
  void draw(SharedState& st, GraphSlot& slot, bool is_after, ImVec2 size);
  void request_fit() {
    fit_requested_ = true;
    user_moved_ = false;
  }
  float zoom() const { return view_.zoom; }

 private:
  void prepare(SharedState& st, const GraphLayout& g, bool is_after);
  void draw_graph(SharedState& st, const GraphLayout& g, bool is_after, ImDrawList* dl,
                  ImVec2 origin, ImVec2 size);
  void draw_legend(const GraphLayout& g, ImDrawList* dl, ImVec2 origin, ImVec2 size);
  void handle_input(SharedState& st, const GraphLayout& g, ImVec2 origin, ImVec2 size,
                    bool hovered, bool is_after);

  // Fits the drawing (without the DOT's own legend, drawn as an overlay instead) above the
  // legend overlay.
  void fit(ImVec2 size);
  static bool legend_shown(ImVec2 size);

  View2D view_;
  const GraphLayout* prepared_for_ = nullptr;
  Vec2 content_min_, content_max_;  // of what is drawn
  size_t title_lines_ = 0;
  std::vector<ImU32> fills_, texts_;  // per node
  bool fit_requested_ = true;
  ImVec2 last_size_{0, 0};
  int seen_serial_ = -1;
  std::vector<int> highlight_;        // node indices for the current selection
  std::vector<int> hover_highlight_;  // for the hover in another panel
  Selection hover_for_;
  bool panning_ = false;
  bool user_moved_ = false;  // zoomed or panned since the last fit
};

class GraphView {
 public:
  enum class Mode { Before, After, SideBySide };
  void draw(SharedState& st);
  Mode mode = Mode::SideBySide;

 private:
  GraphCanvas before_, after_;
  char search_[128] = {};
  std::vector<int> matches_;
  int match_ = 0;
};

const char* graph_mode_name(GraphView::Mode m);

}  // namespace hf::viewer::ui
