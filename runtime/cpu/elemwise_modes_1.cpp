// Block kernels for modes [14, 28) of elemwise_modes.def (see elemwise_modes.h).
#include "runtime/cpu/elemwise_modes.h"

namespace hf::cpu {

void fill_modes_part1(ModeTable& t) {
  fill_mode_range<14, 28>(t);
}

}  // namespace hf::cpu
