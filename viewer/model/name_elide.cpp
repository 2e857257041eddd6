#include "viewer/model/name_elide.h"

#include <vector>

namespace hf::viewer {

namespace {

constexpr std::string_view kEllipsis = "\xe2\x80\xa6";  // "…"

bool continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xc0) == 0x80;
}

// Byte offsets where code points start, and the end.
std::vector<size_t> boundaries(std::string_view s) {
  std::vector<size_t> out;
  for (size_t i = 0; i < s.size(); ++i)
    if (!continuation(s[i])) out.push_back(i);
  out.push_back(s.size());
  return out;
}

std::string join(std::string_view head, std::string_view tail) {
  std::string s(head);
  s += kEllipsis;
  s += tail;
  return s;
}

}  // namespace

float utf8_length(std::string_view s) {
  float n = 0;
  for (char c : s) n += continuation(c) ? 0 : 1;
  return n;
}

std::string elide_middle(std::string_view name, float max_width, const TextWidth& width) {
  if (width(name) <= max_width) return std::string(name);
  if (width(kEllipsis) > max_width) return {};
  const std::vector<size_t> cps = boundaries(name);

  // A path: keep its first component, then the longest tail of whole components.
  const size_t second =
      name.size() > 1 && name[0] == '/' ? name.find('/', 1) : std::string_view::npos;
  if (second != std::string_view::npos) {
    const std::string_view head = name.substr(0, second + 1);  // "/features/"
    for (size_t p = name.find('/', second + 1); p != std::string_view::npos;
         p = name.find('/', p + 1)) {
      const std::string s = join(head, name.substr(p));
      if (width(s) <= max_width) return s;
    }
    // Without the head: "…/Conv".
    const size_t last = name.rfind('/');
    if (last != std::string_view::npos && last > 0) {
      const std::string s = join({}, name.substr(last));
      if (width(s) <= max_width) return s;
    }
  }

  // Characters: a third from the start, the rest from the end, as many as fit.
  std::string best(kEllipsis);
  const size_t count = cps.size() - 1;
  for (size_t keep = 1; keep < count; ++keep) {
    const size_t head = second != std::string_view::npos ? 0 : keep / 3;
    const size_t tail = keep - head;
    const std::string s = join(name.substr(0, cps[head]), name.substr(cps[count - tail]));
    if (width(s) > max_width) break;
    best = s;
  }
  return best;
}

}  // namespace hf::viewer
