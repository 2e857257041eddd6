// Unfused elementwise kernels for modes [22, 44) of elemwise_modes.def.
#include "runtime/cuda/elemwise_kernels.cuh"

namespace hf::cuda {

void fill_part1(EwTable& t) {
  fill_mode_range<22, 44>(t);
}

}  // namespace hf::cuda
