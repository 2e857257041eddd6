#include "dump/text.h"

#include <cstdio>

#include "dump/dot_escape.h"

namespace hf::dump {

std::string printf_double(const char* format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

std::string human_time(double s) {
  if (s >= 1) return printf_double("%.3f s", s);
  if (s >= 1e-3) return printf_double("%.3f ms", s * 1e3);
  return printf_double("%.1f us", s * 1e6);
}

std::string human_bytes(double b) {
  if (b >= 1e9) return printf_double("%.2f GB", b * 1e-9);
  if (b >= 1e6) return printf_double("%.2f MB", b * 1e-6);
  if (b >= 1e3) return printf_double("%.1f kB", b * 1e-3);
  return printf_double("%.0f B", b);
}

std::vector<std::string> wrap(std::string_view text, size_t width, size_t max_lines) {
  std::vector<std::string> lines;
  std::string line;
  size_t i = 0;
  bool cut = false;
  while (i < text.size()) {
    size_t end = text.find(' ', i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(i, end - i);
    i = end + 1;
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      if (lines.size() + 1 == max_lines) {
        cut = true;
        break;
      }
      lines.push_back(std::move(line));
      line.clear();
    }
    line += (line.empty() ? "" : " ") + std::string(word);
  }
  if (!line.empty()) lines.push_back(std::move(line));
  if (cut && !lines.empty()) lines.back() = ellipsize(lines.back(), width) + " ...";
  return lines;
}

std::string node_list(const Graph& g, const std::vector<NodeId>& nodes, size_t max_chars) {
  std::string s;
  size_t shown = 0;
  for (NodeId n : nodes) {
    const std::string& name = g.node(n).name;
    if (shown > 0 && s.size() + 2 + name.size() > max_chars) break;
    s += (shown ? ", " : "") + name;
    ++shown;
  }
  if (shown < nodes.size()) s += " (+" + std::to_string(nodes.size() - shown) + " more)";
  return s;
}

std::string row_op(const Node& n) {
  std::string op(op_type_name(n.op));
  if (n.op == OpType::Elemwise) op += std::string(" ") + mode_info(n.mode).name;
  return op;
}

}  // namespace hf::dump
