#include "profiler/resident_memory.h"

#include <sys/resource.h>

namespace hf {

int64_t peak_resident_bytes() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<int64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace hf
