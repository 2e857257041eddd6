// Streaming (non-temporal) stores for generated host kernels whose outputs are far larger
// than the last-level cache: a block is computed into an L1-resident buffer, then copied
// out without the write-allocate read a normal store costs (the same technique as the
// unfused kernels, runtime/cpu/stream_store.h). Embedded in generated C++ only; no
// standard headers beyond the intrinsics.
#pragma once
#include "runtime/ops/hd.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace hf::fusion {

inline void stream_copy(void* dst, const void* src, i64 bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
#if defined(__AVX__)
  while (bytes > 0 && reinterpret_cast<unsigned long long>(d) % 32 != 0) {
    *d++ = *s++;
    --bytes;
  }
  i64 i = 0;
  for (; i + 32 <= bytes; i += 32)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
  d += i;
  s += i;
  bytes -= i;
#endif
  for (i64 i = 0; i < bytes; ++i) d[i] = s[i];
}

// Before other threads read what was streamed.
inline void stream_fence() {
#if defined(__AVX__)
  _mm_sfence();
#endif
}

}  // namespace hf::fusion
