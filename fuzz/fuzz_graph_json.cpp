// libFuzzer target: the JSON graph reader on arbitrary text. Any hf::Error is a clean
// rejection; a crash, sanitizer report, hang or out-of-memory is a bug (docs/reliability.md).
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/io/graph_json.h"
#include "runtime/ir/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    hf::parse_graph_json(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const hf::Error&) {
  }
  return 0;
}
