// libFuzzer target: the ONNX importer on arbitrary bytes. Any hf::Error is a clean
// rejection; a crash, sanitizer report, hang or out-of-memory is a bug (docs/reliability.md).
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/io/onnx_import.h"
#include "runtime/ir/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    // Empty model_dir: external data is refused, so nothing outside the input is read.
    hf::parse_graph_onnx(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx");
  } catch (const hf::Error&) {
  }
  return 0;
}
