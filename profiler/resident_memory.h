// The process's resident memory: what a user compares with another runtime's footprint.
#pragma once
#include <cstdint>

namespace hf {

// The largest resident set this process has had so far, in bytes (getrusage's maxrss);
// 0 where the system does not say.
int64_t peak_resident_bytes();

}  // namespace hf
