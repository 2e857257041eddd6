#include "profiler/resident_memory.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <string>

namespace hf {

namespace {

// The peak before the excluded stretches, which resetting the kernel's high-water mark
// forgot.
std::atomic<int64_t> g_floor{0};

int64_t high_water_mark() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      int64_t kib = 0;
      if (status >> kib) return kib * 1024;
      break;
    }
    status.ignore(1 << 12, '\n');
  }
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<int64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace

int64_t peak_resident_bytes() {
  return std::max(g_floor.load(), high_water_mark());
}

void exclude_from_peak(const std::function<void()>& f) {
  const int64_t before = peak_resident_bytes();
  f();
  // "5" sets VmHWM to the current resident set (Linux 4.0 on); where it cannot be written
  // the peak keeps f's share.
  std::ofstream clear("/proc/self/clear_refs");
  if (!(clear << "5" << std::flush)) return;
  int64_t floor = g_floor.load();
  while (floor < before && !g_floor.compare_exchange_weak(floor, before)) {
  }
}

}  // namespace hf
