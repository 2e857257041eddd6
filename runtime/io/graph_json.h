// The native graph format: JSON, documented in docs/graph-format.md.
#pragma once
#include <string>

#include "runtime/ir/graph.h"

namespace hf {

// Parses and verifies a graph. Throws hf::Error whose message starts with `origin` (the
// file name) and names the node or key at fault. Unknown keys are errors, so a typo is
// never silently ignored.
Graph parse_graph_json(const std::string& text, const std::string& origin);
Graph read_graph_json(const std::string& path);

// Canonical form: parse_graph_json(write_graph_json(g)) rebuilds an identical graph.
std::string write_graph_json(const Graph& g);

}  // namespace hf
