// Block kernels for modes [28, 40) of elemwise_modes.def (see elemwise_modes.h).
#include "runtime/cpu/elemwise_modes.h"

namespace hf::cpu {

void fill_modes_part2(ModeTable& t) {
  fill_mode_range<28, 40>(t);
}

}  // namespace hf::cpu
