// Unfused elementwise kernels for modes [0, 22) of elemwise_modes.def.
#include "runtime/cuda/elemwise_kernels.cuh"

namespace hf::cuda {

void fill_part0(EwTable& t) {
  fill_mode_range<0, 22>(t);
}

}  // namespace hf::cuda
