// Lays a DOT text out in-process with Graphviz (libgvc, the `dot` engine) and reads the
// result back as a GraphLayout (viewer/model/graph_layout.h): agmemread, gvLayout(gvc, g,
// "dot"), node positions and sizes (ND_coord, ND_width, ND_height), edge splines (ED_spl),
// cluster boxes (GD_bb) and label lines, then agclose (not gvFreeLayout: see layout_dot).
//
// Graphviz keeps global state and is not thread-safe: calls are serialised on one mutex, so
// a layout may run on a background thread while the UI draws. Costs grow roughly with the
// square of the node count for `dot`: ~20 ms for the examples, seconds for thousands of nodes.
#pragma once
#include <stdexcept>
#include <string>

#include "viewer/model/graph_layout.h"

namespace hf::viewer {

class LayoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws LayoutError with Graphviz's own message for text it cannot parse or lay out.
GraphLayout layout_dot(const std::string& dot_text);

}  // namespace hf::viewer
