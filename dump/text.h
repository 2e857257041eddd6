// Small text helpers shared by the dump writers: human-readable numbers, wrapping, lists.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "runtime/ir/graph.h"

namespace hf::dump {

std::string human_time(double seconds);  // "12.3 us", "1.514 ms", "2.000 s"
std::string human_bytes(double bytes);   // "412 B", "8.4 kB", "12.58 MB"
std::string printf_double(const char* format, double v);

// Lines of at most `width` bytes, broken at spaces (a longer word stays whole); at most
// max_lines, the last one ending in "..." when text was left out.
std::vector<std::string> wrap(std::string_view text, size_t width, size_t max_lines);

// "a, b, c (+4 more)": the names of `nodes` until `max_chars` would be passed.
std::string node_list(const Graph& g, const std::vector<NodeId>& nodes, size_t max_chars);

// The op column of the profiler's tables (profiler/step_times.h): "Elemwise MUL", "Fused".
std::string row_op(const Node& n);

}  // namespace hf::dump
