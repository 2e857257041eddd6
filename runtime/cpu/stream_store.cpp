#include "runtime/cpu/stream_store.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace hf::cpu {

namespace {

// Size of the last-level cache this CPU shares, from sysfs. sysconf(_SC_LEVEL3_CACHE_SIZE)
// is no good: under KVM on EPYC it reports the whole package (256 MiB for 8 x 32 MiB).
size_t llc_bytes() {
  size_t best = 0;
  for (int i = 0; i < 8; ++i) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream size_file(dir + "size"), type_file(dir + "type");
    std::string size, type;
    if (!(size_file >> size) || !(type_file >> type) || type == "Instruction") continue;
    size_t v = std::strtoull(size.c_str(), nullptr, 10);
    if (size.back() == 'K') v <<= 10;
    if (size.back() == 'M') v <<= 20;
    best = std::max(best, v);
  }
  return best > 0 ? best : size_t{32} << 20;
}

}  // namespace

size_t stream_threshold_bytes() {
  static const size_t threshold = std::max(llc_bytes(), size_t{8} << 20);
  return threshold;
}

bool should_stream(size_t bytes, double flops) {
  // The data must exceed the LLC: below it, the next op would find this output cached.
  const size_t threshold = stream_threshold_bytes();
  // And the kernel must be memory-bound (under a flop per byte; a transcendental counts 10):
  // a compute-bound one (GELU: 1.75) lost ~10% to the detour through a scratch buffer and
  // the streaming stores, and gained nothing, as it is not waiting on memory.
  return bytes > threshold && flops < static_cast<double>(bytes);
}

void stream_copy(void* dst, const void* src, size_t bytes) {
#if defined(__AVX__)
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  const size_t head = std::min(bytes, (32 - reinterpret_cast<uintptr_t>(d) % 32) % 32);
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  size_t i = 0;
  for (; i + 128 <= bytes; i += 128) {
    __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 32));
    __m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 64));
    __m256i v3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), v0);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 32), v1);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 64), v2);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 96), v3);
  }
  for (; i + 32 <= bytes; i += 32)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
  std::memcpy(d + i, s + i, bytes - i);
#else
  std::memcpy(dst, src, bytes);
#endif
}

void stream_fence() {
#if defined(__AVX__)
  _mm_sfence();
#endif
}

}  // namespace hf::cpu
