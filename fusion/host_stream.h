// Streaming (non-temporal) stores for generated host kernels whose outputs are far larger
// than the last-level cache: a block is computed into an L1-resident buffer, then copied
// out without the write-allocate read a normal store costs (the same technique as the
// unfused kernels, runtime/cpu/stream_store.h). Embedded in generated C++ only.
//
// Written with a vector type and one instruction of inline assembly rather than
// <immintrin.h>: that header is tens of thousands of lines, and parsing it was most of a
// small kernel's compile time.
#pragma once
#include "runtime/ops/hd.h"

namespace hf::fusion {

inline void stream_copy(void* dst, const void* src, i64 bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
#if defined(__AVX__)
  typedef long long Lanes __attribute__((vector_size(32), aligned(1)));
  while (bytes > 0 && reinterpret_cast<unsigned long long>(d) % 32 != 0) {
    *d++ = *s++;
    --bytes;
  }
  i64 i = 0;
  for (; i + 32 <= bytes; i += 32) {
    const Lanes v = *reinterpret_cast<const Lanes*>(s + i);  // unaligned load
    asm volatile("vmovntdq %1, %0" : "=m"(*reinterpret_cast<Lanes*>(d + i)) : "x"(v));
  }
  d += i;
  s += i;
  bytes -= i;
#endif
  for (i64 i = 0; i < bytes; ++i) d[i] = s[i];
}

// Before other threads read what was streamed.
inline void stream_fence() {
#if defined(__AVX__)
  asm volatile("sfence" ::: "memory");
#endif
}

}  // namespace hf::fusion
