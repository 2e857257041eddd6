// The window's tiled layout: a fixed tree of splits with draggable splitters.
//
//   +------------------------------+----------+
//   | Graph                        | Details  |
//   +------------------------------+          |
//   | Timeline                     |          |
//   +------------------+-----------+          |
//   | Hotspots         | Summary   |          |
//   +------------------+-----------+----------+
//
// A hidden panel gives its space to its neighbour. The split ratios are saved in imgui.ini
// (by the app's settings handler, through ratios()/set_ratio()).
#pragma once
#include <imgui.h>

#include <functional>
#include <string>
#include <vector>

#include "viewer/ui/shared_state.h"

namespace hf::viewer::ui {

class Tiles {
 public:
  Tiles();
  void reset();

  // Places the shown panels inside [min, max] and lets the user drag the splitters (call
  // inside a window covering that area, before the panels' own windows). True when a ratio
  // changed (the caller marks imgui.ini dirty).
  bool layout(ImVec2 min, ImVec2 max, const bool shown[static_cast<int>(Panel::Count)],
              bool interactive);

  bool visible(Panel p) const { return rects_[static_cast<int>(p)].visible; }
  ImVec2 pos(Panel p) const { return rects_[static_cast<int>(p)].min; }
  ImVec2 size(Panel p) const;

  void for_each_ratio(const std::function<void(const std::string&, float)>& f) const;
  bool set_ratio(const std::string& key, float value);

 private:
  struct Node {
    bool leaf = false;
    Panel panel = Panel::Count;
    bool horizontal = false;  // children side by side
    float ratio = 0.5f, default_ratio = 0.5f;
    int a = -1, b = -1;
    std::string key;
  };
  struct Rect {
    bool visible = false;
    ImVec2 min, max;
  };
  bool any_shown(int node, const bool* shown) const;
  bool place(int node, ImVec2 min, ImVec2 max, const bool* shown, bool interactive);

  std::vector<Node> nodes_;
  Rect rects_[static_cast<int>(Panel::Count)];
};

}  // namespace hf::viewer::ui
