#include "dump/text.h"

#include "dump/dot_escape.h"

namespace hf::dump {

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

}  // namespace hf::dump
