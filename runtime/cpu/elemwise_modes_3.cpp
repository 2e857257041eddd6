// Block kernels for modes [40, 54) of elemwise_modes.def (see elemwise_modes.h).
#include "runtime/cpu/elemwise_modes.h"

namespace hf::cpu {

void fill_modes_part3(ModeTable& t) {
  fill_mode_range<40, 54>(t);
}

}  // namespace hf::cpu
