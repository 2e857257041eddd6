// Block kernels for modes [68, 86) of elemwise_modes.def (see elemwise_modes.h).
#include "runtime/cpu/elemwise_modes.h"

namespace hf::cpu {

void fill_modes_part5(ModeTable& t) {
  fill_mode_range<68, 86>(t);
}

}  // namespace hf::cpu
