#include "runtime/cuda/conv_layout.h"

#include "runtime/ir/env_switch.h"

namespace hf::cuda {

bool nhwc_conv_chains_enabled() {
  return env_switch("HOTFUSE_CUDA_LAYOUT", "nhwc", "nchw");
}

}  // namespace hf::cuda
