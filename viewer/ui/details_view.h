// The Details panel: everything about the selection (a node: its op and shapes, its rows in
// the unfused and fused profiles, its steps in the trace, its region's decision with the
// reason; a region or a fused kernel: the generated source from kernels/; an event: its args)
// and, with nothing selected, what the dump holds (files, errors, notes).
#pragma once
#include <string>

#include "viewer/ui/shared_state.h"

namespace hf::viewer::ui {

class DetailsView {
 public:
  void draw(SharedState& st);

 private:
  void dump_info(SharedState& st);
  void node_details(SharedState& st, int64_t node);
  void region_details(SharedState& st, int64_t region);
  void event_details(SharedState& st, int event);
  void kernel_source(SharedState& st, const std::string& kernel);

  std::string source_kernel_, source_text_, source_error_;
};

}  // namespace hf::viewer::ui
