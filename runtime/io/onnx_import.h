// ONNX import: an ONNX ModelProto (opsets 1-28) read into a hotfuse Graph.
//
// Only what the op table expresses is imported: element-wise math, reductions, layout ops
// on static shapes, MatMul, 2-D Conv and pooling, Concat/Slice/Gather and constants;
// compound ops (Softmax, LayerNormalization,
// BatchNormalization, Gemm, ...) are decomposed into them, and shape subgraphs (Shape,
// Gather, Concat, ...) are folded to constants. docs/onnx.md lists every op and what it
// becomes. Everything else is an hf::Error naming the file and the node, e.g.
//   "model.onnx: node 12 'up1' (Resize): unsupported op"
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "runtime/ir/graph.h"
#include "runtime/ir/tensor.h"

namespace hf {

struct OnnxImportOptions {
  // Sizes for symbolic input dimensions (ONNX dim_param), e.g. {{"batch", 8}}. A graph input
  // with a symbolic dimension not listed here is an error: hotfuse plans static shapes.
  std::map<std::string, int64_t> dims;
  // Shapes of graph inputs, by name, for the dimensions the model leaves symbolic (and not
  // in `dims`) or unsized, where the rank is the model's; sized dimensions keep their size.
  std::map<std::string, Shape> input_shapes;
  // Whether every input_shapes entry must name a graph input and have its rank (a user's
  // explicit shapes, hotfuse-run --shape); otherwise entries that fit no input are ignored.
  bool input_shapes_strict = false;
  // Values of graph inputs (any numeric type, in the input's own type), used only where the
  // importer needs a constant and the model gives a run-time value: a Reshape's shape,
  // Squeeze's or ReduceSum's axes, Resize's scales, OneHot's depth, Range's bounds, a window
  // function's size, Dropout's training_mode, ... The graph is specialised to them and lists
  // them in Graph::specialised_inputs; the input stays a graph input. `hotfuse-run --check`
  // and `--inputs` take them from the data files (docs/onnx.md, "Values given as inputs").
  std::map<std::string, HostTensor> input_values;
};

// Reads and verifies a model. Graph inputs are the model's inputs that are not
// initializers, in the model's order, with the model's names; graph outputs are the model's
// outputs in order (a value keeps its ONNX name where it has one). Initializers, including
// external data next to the model, become Constant nodes. Throws hf::Error whose message
// starts with the file's path and names the node, input, output or initializer at fault.
Graph read_graph_onnx(const std::filesystem::path& file, const OnnxImportOptions& options = {});

// The same, from the bytes of a ModelProto already in memory. `origin` names the model in
// messages; external data is looked up in `model_dir` (empty: external data is an error).
Graph parse_graph_onnx(const std::string& bytes, const std::string& origin,
                       const std::filesystem::path& model_dir = {},
                       const OnnxImportOptions& options = {});

// True if the file's name ends in ".onnx" (what a launcher dispatches on).
bool is_onnx_path(const std::filesystem::path& file);

}  // namespace hf
