// The cap on host memory one tensor or one plan may take, checked before allocating: a
// model file can claim any shape, and a 1e12-element input in a 1 KB file must be a clear
// error, not an out-of-memory kill. docs/reliability.md.
#pragma once
#include <cstddef>
#include <string>

namespace hf {

// $HOTFUSE_MAX_BYTES (a byte count, optionally with a K, M, G or T suffix, powers of 1024),
// else half of the physical memory. hf::Error naming the variable for a bad value.
size_t memory_cap_bytes();

// A positive byte count with an optional K, M, G or T suffix (powers of 1024), as the
// environment variable `variable` holds it; hf::Error naming the variable otherwise.
size_t parse_byte_count(const std::string& text, const std::string& variable);

// hf::Error "<what> needs N bytes, more than the limit of M bytes (HOTFUSE_MAX_BYTES)"
// when bytes > memory_cap_bytes().
void check_memory_cap(size_t bytes, const std::string& what);

}  // namespace hf
