// A graph in the native JSON format from its parts, for the tests that write graphs inline:
// `inputs`, `nodes` and `outputs` are the contents of those three lists.
#pragma once
#include <string>

#include "runtime/io/graph_json.h"

namespace hf {

inline Graph graph_text(const std::string& inputs, const std::string& nodes,
                        const std::string& outputs) {
  return parse_graph_json(R"({"format": "hotfuse-graph", "version": 1, "name": "t", "inputs": [)" +
                              inputs + R"(], "nodes": [)" + nodes + R"(], "outputs": [)" + outputs +
                              "]}",
                          "test");
}

}  // namespace hf
