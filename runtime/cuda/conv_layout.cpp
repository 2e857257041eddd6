#include "runtime/cuda/conv_layout.h"

#include <cstdlib>
#include <string>

#include "runtime/ir/error.h"

namespace hf::cuda {

bool nhwc_conv_chains_enabled() {
  const char* v = std::getenv("HOTFUSE_CUDA_LAYOUT");
  const std::string value = v ? v : "";
  if (value.empty() || value == "nhwc") return true;
  if (value == "nchw") return false;
  throw Error("HOTFUSE_CUDA_LAYOUT='" + value + "': expected nhwc or nchw");
}

}  // namespace hf::cuda
