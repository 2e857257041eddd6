// The Summary panel: the headline numbers of report.json (iteration time before and after,
// speedup, kernels, compile time, cache hits, peak memory, the regions' fates, the machine)
// and a plot of every iteration's time, coloured by phase, with the swap marked (the drop).
// A click on the plot shows that iteration in the timeline.
#pragma once
#include "viewer/ui/shared_state.h"

namespace hf::viewer::ui {

class SummaryView {
 public:
  void draw(SharedState& st);

 private:
  void headline(SharedState& st);
  void numbers(SharedState& st);
  void plot(SharedState& st, float height);
  bool clip_warmup_ = true;
};

}  // namespace hf::viewer::ui
