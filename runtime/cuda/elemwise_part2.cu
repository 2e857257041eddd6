// Unfused elementwise kernels for modes [44, 66) of elemwise_modes.def.
#include "runtime/cuda/elemwise_kernels.cuh"

namespace hf::cuda {

void fill_part2(EwTable& t) {
  fill_mode_range<44, 66>(t);
}

}  // namespace hf::cuda
