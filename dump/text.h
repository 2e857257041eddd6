// Small text helpers shared by the dump writers: wrapping, lists; and the profiler's
// (profiler/table_text.h: printf_double, human_time, human_bytes, row_op).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "profiler/table_text.h"
#include "runtime/ir/graph.h"

namespace hf::dump {

// Lines of at most `width` bytes, broken at spaces (a longer word stays whole); at most
// max_lines, the last one ending in "..." when text was left out.
std::vector<std::string> wrap(std::string_view text, size_t width, size_t max_lines);

// "a, b, c (+4 more)": the names of `nodes` until `max_chars` would be passed.
std::string node_list(const Graph& g, const std::vector<NodeId>& nodes, size_t max_chars);

}  // namespace hf::dump
