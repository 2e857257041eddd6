// Non-temporal (streaming) stores for outputs much larger than the last-level cache.
//
// A normal store first reads the line it writes (write-allocate), so y = a + b moves four
// arrays' worth of DRAM traffic, not three; streaming stores skip that read (+25-40%
// measured on ADD at 2^24 here). They also bypass the cache, so they are used only when the
// kernel's data cannot stay cached for the next op anyway.
#pragma once
#include <cstddef>

namespace hf::cpu {

// True when a kernel moving `bytes` in total and computing `flops` (the op table's count; 0
// for a copy) should stream its output: past the LLC, and memory-bound.
bool should_stream(size_t bytes, double flops = 0);

// The bytes a kernel must move before should_stream says yes: the last-level cache's size
// (from sysfs), at least 8 MiB.
size_t stream_threshold_bytes();

// memcpy with streaming stores for the 32-byte aligned middle. Call stream_fence() before
// other threads may read dst.
void stream_copy(void* dst, const void* src, size_t bytes);
void stream_fence();

}  // namespace hf::cpu
