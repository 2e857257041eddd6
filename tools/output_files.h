// --inputs DIR and --save-outputs DIR: a run's data as TensorProto files (input_<k>.pb,
// output_<k>.pb), the convention of ONNX's backend tests (docs/onnx.md).
#pragma once
#include <filesystem>
#include <span>

#include "dump/dump_dir.h"
#include "runtime/ir/graph.h"
#include "runtime/ir/tensor.h"

namespace hf {

// The --save-outputs directory, checked before anything runs. It follows --dump's rule
// (dump/dump_dir.h): created if missing, refused when not empty unless `force`, and
// nothing but the files written is replaced.
dump::DumpDir save_outputs_dir(const std::filesystem::path& dir, bool force);

// Writes output_<k>.pb into `dir`: TensorProtos named after the graph's outputs.
void save_outputs(dump::DumpDir& dir, const Graph& g, std::span<const HostTensor> outputs);

}  // namespace hf
