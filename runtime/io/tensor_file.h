// TensorProto files (`*.pb`): ONNX's serialized TensorProto, the format of the backend
// tests' test_data_set_*/input_*.pb and output_*.pb. Decoding goes through the ONNX
// importer's TensorProto decoder (raw_data and the typed fields), so there is one decoder.
//
// A file is hostile until proven otherwise: its size is bounded before it is read, the
// data's size is checked against the dimensions before anything is allocated, and every
// problem is an hf::Error whose message starts with the file's path.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/ir/tensor.h"

namespace hf {

struct NamedTensor {
  std::string name;  // TensorProto.name; may be empty
  HostTensor tensor;
  // The file held UINT16: `tensor` is U16. ONNX's backend tests also store BFLOAT16 data so
  // (NumPy has no bfloat16); as_uint16_bits() gives the bits the type the model expects.
  bool uint16_bits = false;
};

// Reads one file, raw_data or the typed fields (float_data, double_data, int32_data for the
// types up to 32 bits, int64_data, uint64_data for UINT32 and UINT64). Element types hotfuse
// does not compute in (STRING, COMPLEX64, FLOAT8...), external data and segments are errors;
// UINT16 is read as described above.
NamedTensor read_tensor_file(const std::filesystem::path& file);
// The same from bytes already in memory; `origin` names them in messages.
NamedTensor parse_tensor_file(const std::string& bytes, const std::string& origin);

// A UINT16 file's tensor as `want`: U16 as it is, F16 or BF16 the same bits; anything else
// throws "<origin>: element type UINT16 is not supported". Other tensors are returned as
// they are.
HostTensor as_uint16_bits(const NamedTensor& t, DType want, const std::string& origin);

// A contiguous tensor as TensorProto bytes (dims, data_type, name, little-endian raw_data).
std::string encode_tensor_file(const TensorView& t, const std::string& name);
// Writes encode_tensor_file() to `file`, replacing it (callers decide what may be replaced).
void write_tensor_file(const std::filesystem::path& file, const TensorView& t,
                       const std::string& name);

// DIR/<prefix>_0.pb, DIR/<prefix>_1.pb, ... as the backend tests number them: exactly
// `count` files numbered from 0 (the graph's inputs or outputs). A missing or surplus file
// is an error naming it and `what` ("the model has 2 inputs").
std::vector<std::filesystem::path> numbered_tensor_files(const std::filesystem::path& dir,
                                                         std::string_view prefix, size_t count,
                                                         const std::string& what);

}  // namespace hf
