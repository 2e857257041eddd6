// Where a test reads the project's tracked files (traces/, tests/data/): $HOTFUSE_SOURCE_DIR
// when set, so that binaries carried to another machine (tools/gpu-pack.sh) read the tree
// carried with them; else the source tree they were configured from.
#pragma once
#include <cstdlib>
#include <string>

namespace hf {

inline std::string source_dir() {
  const char* env = std::getenv("HOTFUSE_SOURCE_DIR");
  return env && *env ? env : HF_SOURCE_DIR;
}

}  // namespace hf
