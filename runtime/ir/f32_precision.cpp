#include "runtime/ir/f32_precision.h"

#include "runtime/ir/env_switch.h"

namespace hf {

F32Precision f32_precision() {
  return env_switch("HOTFUSE_F32_PRECISION", "high", "highest") ? F32Precision::High
                                                                : F32Precision::Highest;
}

}  // namespace hf
