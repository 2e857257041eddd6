// IEEE binary16 (f16) and bfloat16 (bf16) storage types and their conversions to f32.
//
// Storage only: arithmetic always happens in f32 (see ModeFn in scalar_math.h). The
// conversions are branch-free integer code so that host loops over them vectorise, and the
// same code runs on the device (generated CUDA may use cuda_fp16 intrinsics instead).
#pragma once
#include "runtime/ops/hd.h"

namespace hf {

struct f16 {
  u16 bits;
};
struct bf16 {
  u16 bits;
};

HF_HD u32 f32_bits(float f) {
#if HF_DEVICE_CODE
  return __float_as_uint(f);
#else
  return __builtin_bit_cast(u32, f);
#endif
}
HF_HD float f32_from_bits(u32 u) {
#if HF_DEVICE_CODE
  return __uint_as_float(u);
#else
  return __builtin_bit_cast(float, u);
#endif
}

// f16 -> f32, exact, including subnormals, infinities and NaN payloads. Integer and
// normal-range float arithmetic only, so it is also exact under flush-to-zero modes.
HF_HD float to_f32(f16 h) {
  const u32 shifted_exp = 0x7c00u << 13;
  u32 o = (u32)(h.bits & 0x7fffu) << 13;
  u32 exp = o & shifted_exp;
  o += (127u - 15u) << 23;
  u32 inf_nan = o + ((128u - 16u) << 23);
  // Subnormal f16: bump the exponent and subtract the implicit one (2^-14) again.
  float sub = f32_from_bits(o + (1u << 23)) - f32_from_bits(113u << 23);
  u32 out = exp == shifted_exp ? inf_nan : (exp == 0 ? f32_bits(sub) : o);
  return f32_from_bits(out | (u32)(h.bits & 0x8000u) << 16);
}

// f32 -> f16 with round-to-nearest-even; overflow gives infinity, NaN becomes a quiet NaN.
// Results that are f16 subnormals are rounded once, by an f32 addition of 0.5 that aligns
// the ten mantissa bits at the bottom of the float.
HF_HD f16 to_f16(float f) {
  u32 x = f32_bits(f);
  u32 sign = (x >> 16) & 0x8000u;
  u32 ax = x & 0x7fffffffu;
  const u32 f16max = (127u + 16u) << 23;
  const u32 denorm_magic = 126u << 23;  // 0.5f
  u32 special = ax > 0x7f800000u ? 0x7e00u : 0x7c00u;
  u32 sub = f32_bits(f32_from_bits(ax) + f32_from_bits(denorm_magic)) - denorm_magic;
  u32 norm = (ax + ((u32)(15 - 127) << 23) + 0xfffu + ((ax >> 13) & 1u)) >> 13;
  u32 h = ax >= f16max ? special : (ax < (113u << 23) ? sub : norm);
  return f16{(u16)(sign | h)};
}

HF_HD float to_f32(bf16 b) { return f32_from_bits((u32)b.bits << 16); }

// f32 -> bf16 with round-to-nearest-even; NaN stays NaN (quiet).
HF_HD bf16 to_bf16(float f) {
  u32 x = f32_bits(f);
  u32 rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  u32 nan = (x >> 16) | 0x40u;
  return bf16{(u16)((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded)};
}

}  // namespace hf
