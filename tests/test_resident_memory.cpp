// peak_resident_bytes and exclude_from_peak: the report's footprint counts what the program
// holds, not the machine probe's one-time buffers. The memory comes from mmap directly, so
// that no allocator (ASan's quarantine, say) keeps it resident after it is released.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>

#include "profiler/resident_memory.h"

namespace hf {
namespace {

constexpr size_t kBytes = size_t(96) << 20;

// Maps `bytes`, writes every page (resident), and unmaps them.
void touch_and_release(size_t bytes = kBytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  std::memset(p, 1, bytes);
  munmap(p, bytes);
}

TEST(ResidentMemory, APeakOutsideTheExclusionCounts) {
  const int64_t before = peak_resident_bytes();
  touch_and_release();
  EXPECT_GE(peak_resident_bytes(), before + static_cast<int64_t>(kBytes) / 2);
}

TEST(ResidentMemory, AnExcludedPeakIsForgottenButNotTheOneBefore) {
  touch_and_release();  // a peak of the program's own, before the excluded stretch
  const int64_t before = peak_resident_bytes();
  bool ran = false;
  exclude_from_peak([&] {
    ran = true;
    touch_and_release(3 * kBytes);  // well above the earlier peak
  });
  EXPECT_TRUE(ran);
  // Within a few MB of the earlier peak (the test's own allocations move it a little), far
  // below the excluded stretch's.
  EXPECT_LT(peak_resident_bytes(), before + static_cast<int64_t>(kBytes) / 4);
  EXPECT_GE(peak_resident_bytes(), before);
}

}  // namespace
}  // namespace hf
