// x ^ c for a constant c (PowC), as every kernel computes it: the unfused CPU and CUDA
// kernels and the generated ones. The common exponents become a few multiplications or a
// sqrt, which vectorise and are exact or nearly so; the rest go through ModeFn<POW>. The
// case is chosen once per tensor (pow_case): host kernels are compiled for it, so their
// element loops have no branch; the CUDA kernel branches on it, uniformly.
//
// Valid C++ for the host compiler, nvcc and NVRTC, like scalar_math.h (see hd.h).
#pragma once
#include "runtime/ops/hd.h"
#include "runtime/ops/scalar_math.h"

namespace hf {

// Largest |integer exponent| done by repeated squaring; beyond it rounding errors of the
// multiplications would exceed powf's.
inline constexpr int kMaxPowIntExponent = 16;
static_assert(kMaxPowIntExponent < 32, "powi walks 5 bits");

enum class PowCase : unsigned char { Int, Sqrt, RSqrt, Pow };

HF_HD constexpr PowCase pow_case(float e) {
  // Range first: converting an out-of-range float to int is undefined.
  if (e >= -kMaxPowIntExponent && e <= kMaxPowIntExponent && e == (float)(int)e)
    return PowCase::Int;
  if (e == 0.5f) return PowCase::Sqrt;
  if (e == -0.5f) return PowCase::RSqrt;
  return PowCase::Pow;
}

// x^n for |n| <= kMaxPowIntExponent: square-and-multiply from the top bit; 1 / x^-n for a
// negative n. With a constant n the loop unrolls to just n's multiplications.
HF_HD float powi(float x, int n) {
  const int m = n < 0 ? -n : n;
  float r = 1.0f;
  for (int bit = 4; bit >= 0; --bit) {
    r = r * r;
    if ((m >> bit) & 1) r = r * x;
  }
  return n < 0 ? 1.0f / r : r;
}
template <int E>
HF_HD float powi(float x) {
  return powi(x, E);
}

// x^e in case c = pow_case(e).
HF_HD float powc(float x, float e, PowCase c) {
  switch (c) {
    case PowCase::Int:
      return powi(x, (int)e);
    case PowCase::Sqrt:
      return ModeFn<Mode::SQRT>::apply(x);
    case PowCase::RSqrt:
      return 1.0f / ModeFn<Mode::SQRT>::apply(x);
    case PowCase::Pow:
      break;
  }
  return ModeFn<Mode::POW>::apply(x, e);
}

}  // namespace hf
