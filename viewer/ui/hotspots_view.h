// The Hotspots panel: report.json's ops (the unfused profile, the fused plan) and regions as
// sortable ImGui tables: time, share of the iteration, bytes, GB/s, % of the probed peak,
// roofline class, the region's decision and its reason. A click on a row selects the node
// (or the region); a selection made elsewhere is highlighted and scrolled to.
#pragma once
#include <vector>

#include "viewer/model/hotspots.h"
#include "viewer/ui/shared_state.h"

namespace hf::viewer::ui {

class HotspotsView {
 public:
  void draw(SharedState& st);

 private:
  void table(SharedState& st, HotspotTable which);

  struct Cache {
    std::vector<HotspotRow> rows;
    bool built = false;
  };
  Cache cache_[3];
  int seen_serial_[3] = {-1, -1, -1};
};

}  // namespace hf::viewer::ui
