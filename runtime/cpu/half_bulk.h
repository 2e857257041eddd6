// Bulk f16/bf16 <-> f32 conversion of contiguous arrays.
//
// GCC 12 does not vectorise half.h's branch-free f16 routines ("control flow in loop":
// it sinks the float ops of the subnormal path into a branch), which leaves f16 kernels at
// ~1.4 ns/element. With F16C (any x86 since 2012; enabled by -march=native) one instruction
// converts 8 elements, rounding to nearest even like half.h; NaNs stay NaN (payload bits
// may differ from half.h's canonical 0x7e00). bf16 is plain integer code that vectorises.
#pragma once
#include <cstdint>

#include "runtime/ops/half.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace hf::cpu {

inline void to_f32_n(const f16* in, float* out, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
#endif
  for (; i < n; ++i) out[i] = to_f32(in[i]);
}

inline void to_f16_n(const float* in, f16* out, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(
        reinterpret_cast<__m128i*>(out + i),
        _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  for (; i < n; ++i) out[i] = to_f16(in[i]);
}

inline void to_f32_n(const bf16* __restrict in, float* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = to_f32(in[i]);
}

inline void to_bf16_n(const float* __restrict in, bf16* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = to_bf16(in[i]);
}

}  // namespace hf::cpu
