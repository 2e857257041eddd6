// Float -> integer as type_convert defines it: truncate toward zero, saturate, NaN -> 0.
// Shared by the unfused CPU and CUDA conversions and the generated kernels.
//
// Valid C++ for the host compiler, nvcc and NVRTC, like scalar_math.h (see hd.h).
#pragma once
#include "runtime/ops/hd.h"
#include "runtime/ops/scalar_math.h"

namespace hf {

// I is u8, i32 or i64. Clamping before the conversion keeps it in range, so host loops have
// no UB and vectorise (cvttps2dq + blends).
template <class I>
HF_HD I saturate_cast(float f) {
  if constexpr (sizeof(I) == 1) {
    float c = f > 0.0f ? f : 0.0f;  // NaN -> 0
    c = c < 255.0f ? c : 255.0f;
    return (I)(i32)c;
  } else {
    constexpr float hi = sizeof(I) == 4 ? 2147483648.0f : 9223372036854775808.0f;  // exact
    constexpr float lo = -hi;
    constexpr I max = (I)(sizeof(I) == 4 ? 0x7fffffffll : 0x7fffffffffffffffll);
    float c = f > lo ? f : lo;  // NaN -> lo, fixed below
    c = c < hi ? c : lo;        // >= hi: fixed below, lo keeps the conversion in range
    I r = (I)c;
    r = f >= hi ? max : r;
    return f != f ? I(0) : r;
  }
}

}  // namespace hf
