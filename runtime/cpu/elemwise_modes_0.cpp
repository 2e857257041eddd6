// Block kernels for modes [0, 14) of elemwise_modes.def (see elemwise_modes.h).
#include "runtime/cpu/elemwise_modes.h"

namespace hf::cpu {

void fill_modes_part0(ModeTable& t) {
  fill_mode_range<0, 14>(t);
}

}  // namespace hf::cpu
