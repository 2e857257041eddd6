// The process's resident memory: what a user compares with another runtime's footprint.
#pragma once
#include <cstdint>
#include <functional>

namespace hf {

// The largest resident set this process has had so far, in bytes (Linux's VmHWM, else
// getrusage's maxrss), leaving out what ran under exclude_from_peak; 0 where the system
// does not say.
int64_t peak_resident_bytes();

// Runs `f`, which must free what it allocates, and then takes the peak back to what it was
// before f where the system allows it (Linux's /proc/self/clear_refs): the machine probe's
// buffers, touched once on a first run, are not the program's footprint.
void exclude_from_peak(const std::function<void()>& f);

}  // namespace hf
