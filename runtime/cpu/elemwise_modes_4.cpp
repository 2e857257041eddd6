// Block kernels for modes [54, 68) of elemwise_modes.def (see elemwise_modes.h).
#include "runtime/cpu/elemwise_modes.h"

namespace hf::cpu {

void fill_modes_part4(ModeTable& t) {
  fill_mode_range<54, 68>(t);
}

}  // namespace hf::cpu
