// ONNX backend-test data sets: DIR/model.onnx with DIR/test_data_set_*/input_*.pb and
// output_*.pb (TensorProto files, runtime/io/tensor_file.h), and input files bound to a
// graph's inputs. Used by `hotfuse-run --check` and `--inputs` (docs/onnx.md).
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "runtime/io/onnx_import.h"
#include "runtime/io/tensor_file.h"
#include "runtime/ir/graph.h"

namespace hf {

// DIR/test_data_set_<N> directories, by N; none is an error naming DIR.
std::vector<std::filesystem::path> test_data_sets(const std::filesystem::path& dir);

// What the data sets tell the importer about the inputs, from the named, readable input
// files that every data set gives alike (by TensorProto.name): their shapes
// (OnnxImportOptions::input_shapes, for symbolic dimensions) and the values of those of at
// most kMaxGivenValue elements (input_values: a Reshape's shape or Resize's scales given as
// an input, ...; the importer uses only those it needs as constants).
inline constexpr int64_t kMaxGivenValue = 4096;
OnnxImportOptions import_options_from(const std::vector<std::filesystem::path>& sets);

// Whether two tensors hold the same dtype, shape and bytes.
bool same_value(const HostTensor& a, const HostTensor& b);

// Data sets grouped by what each tells the importer alone (import_options_from({set})):
// sets whose named inputs have the same shapes and small values share a group, in the
// order of each group's first set. hotfuse plans static shapes, so a model with a symbolic
// batch dimension checked at batch 1, 4 and 16 is three groups, three imports.
struct DataSetGroup {
  OnnxImportOptions options;
  std::vector<std::filesystem::path> sets;
};
std::vector<DataSetGroup> group_data_sets(const std::vector<std::filesystem::path>& sets);

// Whether a graph imported with options `a`, specialised to the values of the inputs
// `specialised` (Graph::specialised_inputs), is also the import for options `b`: the same
// input shapes and the same values of those inputs (the other values were not used).
bool same_import(const OnnxImportOptions& a, const OnnxImportOptions& b,
                 const std::vector<std::string>& specialised);

// DIR/input_0.pb, input_1.pb, ... bound to g's inputs. When every file names a distinct
// graph input (TensorProto.name), files go to the inputs of those names, in whatever order
// they are numbered; otherwise (names empty or not the graph's) input_k.pb goes to input k.
// The count, element types and shapes must match the graph's; errors name the file.
std::vector<HostTensor> read_graph_inputs(const Graph& g, const std::filesystem::path& dir);

}  // namespace hf
