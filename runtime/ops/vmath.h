// Float math for kernels: on the device, CUDA's math library; on the host, implementations
// the compiler can vectorise.
//
// Why: a loop calling glibc's scalar expf/tanhf/erff is compute-bound (the 10-op chain in
// ../shared/bench/peers: 268 ms scalar vs 25 ms vectorised at 2^24 on 2 cores). Host
// versions here are branch-free and call no library function, so GCC vectorises loops over
// them at -O3 -march=native without -ffast-math. Their accuracy (max ULP over the whole
// float range against long double) is documented next to each and tested in
// tests/test_vmath.cpp.
//
// PLACEHOLDER: host versions still call the libm builtins; they are being replaced.
#pragma once
#include "runtime/ops/hd.h"

namespace hf::vm {

#if HF_DEVICE_CODE
HF_HD float exp(float x) { return ::expf(x); }
HF_HD float expm1(float x) { return ::expm1f(x); }
HF_HD float log(float x) { return ::logf(x); }
HF_HD float log1p(float x) { return ::log1pf(x); }
HF_HD float sin(float x) { return ::sinf(x); }
HF_HD float cos(float x) { return ::cosf(x); }
HF_HD float tan(float x) { return ::tanf(x); }
HF_HD float tanh(float x) { return ::tanhf(x); }
HF_HD float erf(float x) { return ::erff(x); }
HF_HD float erfc(float x) { return ::erfcf(x); }
HF_HD float erfinv(float x) { return ::erfinvf(x); }
HF_HD float erfcinv(float x) { return ::erfcinvf(x); }
HF_HD float asin(float x) { return ::asinf(x); }
HF_HD float acos(float x) { return ::acosf(x); }
HF_HD float atan(float x) { return ::atanf(x); }
HF_HD float atan2(float y, float x) { return ::atan2f(y, x); }
HF_HD float sinh(float x) { return ::sinhf(x); }
HF_HD float cosh(float x) { return ::coshf(x); }
HF_HD float asinh(float x) { return ::asinhf(x); }
HF_HD float acosh(float x) { return ::acoshf(x); }
HF_HD float atanh(float x) { return ::atanhf(x); }
HF_HD float pow(float x, float y) { return ::powf(x, y); }
HF_HD float sqrt(float x) { return ::sqrtf(x); }
HF_HD float floor(float x) { return ::floorf(x); }
HF_HD float ceil(float x) { return ::ceilf(x); }
HF_HD float round(float x) { return ::roundf(x); }  // half away from zero
HF_HD float trunc(float x) { return ::truncf(x); }
HF_HD float fmod(float x, float y) { return ::fmodf(x, y); }
HF_HD float fabs(float x) { return ::fabsf(x); }
#else
HF_HD float exp(float x) { return __builtin_expf(x); }
HF_HD float expm1(float x) { return __builtin_expm1f(x); }
HF_HD float log(float x) { return __builtin_logf(x); }
HF_HD float log1p(float x) { return __builtin_log1pf(x); }
HF_HD float sin(float x) { return __builtin_sinf(x); }
HF_HD float cos(float x) { return __builtin_cosf(x); }
HF_HD float tan(float x) { return __builtin_tanf(x); }
HF_HD float tanh(float x) { return __builtin_tanhf(x); }
HF_HD float erf(float x) { return __builtin_erff(x); }
HF_HD float erfc(float x) { return __builtin_erfcf(x); }
// Giles, "Approximating the erfinv function" (GPU Gems / 2010), single-precision branch.
HF_HD float erfinv(float x) {
  float w = -__builtin_logf((1.0f - x) * (1.0f + x)), p;
  if (w < 5.0f) {
    w = w - 2.5f;
    p = 2.81022636e-08f;
    p = 3.43273939e-07f + p * w; p = -3.5233877e-06f + p * w; p = -4.39150654e-06f + p * w;
    p = 0.00021858087f + p * w; p = -0.00125372503f + p * w; p = -0.00417768164f + p * w;
    p = 0.246640727f + p * w; p = 1.50140941f + p * w;
  } else {
    w = __builtin_sqrtf(w) - 3.0f;
    p = -0.000200214257f;
    p = 0.000100950558f + p * w; p = 0.00134934322f + p * w; p = -0.00367342844f + p * w;
    p = 0.00573950773f + p * w; p = -0.0076224613f + p * w; p = 0.00943887047f + p * w;
    p = 1.00167406f + p * w; p = 2.83297682f + p * w;
  }
  return p * x;
}
HF_HD float erfcinv(float x) { return erfinv(1.0f - x); }
HF_HD float asin(float x) { return __builtin_asinf(x); }
HF_HD float acos(float x) { return __builtin_acosf(x); }
HF_HD float atan(float x) { return __builtin_atanf(x); }
HF_HD float atan2(float y, float x) { return __builtin_atan2f(y, x); }
HF_HD float sinh(float x) { return __builtin_sinhf(x); }
HF_HD float cosh(float x) { return __builtin_coshf(x); }
HF_HD float asinh(float x) { return __builtin_asinhf(x); }
HF_HD float acosh(float x) { return __builtin_acoshf(x); }
HF_HD float atanh(float x) { return __builtin_atanhf(x); }
HF_HD float pow(float x, float y) { return __builtin_powf(x, y); }
HF_HD float sqrt(float x) { return __builtin_sqrtf(x); }
HF_HD float floor(float x) { return __builtin_floorf(x); }
HF_HD float ceil(float x) { return __builtin_ceilf(x); }
HF_HD float round(float x) { return __builtin_roundf(x); }  // half away from zero
HF_HD float trunc(float x) { return __builtin_truncf(x); }
HF_HD float fmod(float x, float y) { return __builtin_fmodf(x, y); }
HF_HD float fabs(float x) { return __builtin_fabsf(x); }
#endif

}  // namespace hf::vm
