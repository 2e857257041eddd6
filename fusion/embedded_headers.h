// The headers generated kernels include, embedded at build time (cmake/embed_headers.cmake).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace hf::fusion {

struct EmbeddedHeader {
  std::string_view path;  // relative to the repository root, as in #include "..."
  std::string_view contents;
};

const std::vector<EmbeddedHeader>& embedded_headers();
// SHA-256 over every embedded header's path and contents: part of every disk cache key
// (host libraries and PTX), so a changed header never loads code built against the old one.
const std::string& embedded_headers_digest();

}  // namespace hf::fusion
