// The text of the profiler's op table cells (step_times.h), which the dumps print too.
#pragma once
#include <string>

#include "runtime/ir/graph.h"

namespace hf {

std::string printf_double(const char* format, double v);
std::string human_time(double seconds);  // "12.3 us", "1.514 ms", "2.000 s"
std::string human_bytes(double bytes);   // "412 B", "8.4 kB", "12.58 MB"
std::string row_op(const Node& n);       // the op column: "Elemwise MUL", "Fused"
// "1 kernel", "2 kernels", "0 kernels": a count and its noun, plural when not one.
std::string count_of(long long n, const std::string& noun);

}  // namespace hf
