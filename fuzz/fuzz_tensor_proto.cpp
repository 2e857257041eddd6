// libFuzzer target: the TensorProto decoder (initializers, Constant values) on arbitrary
// bytes parsed as a TensorProto. Any hf::Error is a clean rejection; a crash, sanitizer
// report, hang or out-of-memory is a bug (docs/reliability.md).
#include <cstddef>
#include <cstdint>

#include "runtime/io/onnx_internal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hf::onnx_detail::pb::TensorProto t;
  if (size > static_cast<size_t>(INT32_MAX) || !t.ParseFromArray(data, static_cast<int>(size)))
    return 0;
  try {
    // Empty model_dir: external data is refused, so nothing outside the input is read.
    hf::onnx_detail::decode_tensor(t, {});
  } catch (const hf::Error&) {
  }
  return 0;
}
