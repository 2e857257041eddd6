// hotfuse-run's GRAPH: the file read as ONNX or JSON, with the input shapes that --shape
// and --inputs give a model whose dimensions are symbolic (docs/onnx.md, "Input shapes").
#pragma once
#include <map>
#include <string>
#include <vector>

#include "runtime/ir/graph.h"
#include "session/shape_sessions.h"

namespace hf {

// --shape NAME=D0xD1x... (repeatable): input NAME's shape, e.g. "input=4x3x224x224";
// "NAME=" is a scalar. Naming an input again starts another signature: the k-th shape
// given for an input is its shape in signature k, and an input named fewer times keeps its
// last one (`--shape x=1x64 --shape x=4x64`: two signatures, run in turn). At least one
// signature, empty without --shape. Throws hf::Error naming the option on a malformed
// entry or a signature that repeats an earlier one.
std::vector<std::map<std::string, Shape>> parse_shape_options(
    const std::vector<std::string>& entries);

// The graph, by its name (*.onnx: ONNX, *.json: a JSON graph) or else by its content (a
// JSON graph starts with '{'); an error then says how the format was chosen. An ONNX
// model's symbolic input dimensions take their sizes from `inputs_dir`'s named input files
// (empty: none) and then from `shapes`, which win; each of `shapes` must name an input and
// end up as its shape (a dimension the model sizes cannot be changed), else hf::Error
// naming --shape. A JSON graph takes no shapes.
Graph read_graph_file(const std::string& path, const std::map<std::string, Shape>& shapes = {},
                      const std::string& inputs_dir = "");

// ShapeSessions' graphs for `path`, whose inputs are `g`'s (read_graph_file's graph at
// another signature): an ONNX model imported again with the inputs' shapes and small values
// (those an import may need as constants); a JSON graph only at its own shapes.
GraphForInputs graph_file_for_inputs(const std::string& path, const Graph& g);

}  // namespace hf
