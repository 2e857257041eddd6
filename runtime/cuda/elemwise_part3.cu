// Unfused elementwise kernels for modes [66, 86) of elemwise_modes.def.
#include "runtime/cuda/elemwise_kernels.cuh"

namespace hf::cuda {

void fill_part3(EwTable& t) {
  fill_mode_range<66, 86>(t);
}

}  // namespace hf::cuda
