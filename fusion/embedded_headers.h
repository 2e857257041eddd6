// The headers generated kernels include, embedded at build time (cmake/embed_headers.cmake).
#pragma once
#include <string_view>
#include <vector>

namespace hf::fusion {

struct EmbeddedHeader {
  std::string_view path;      // relative to the repository root, as in #include "..."
  std::string_view contents;
};

const std::vector<EmbeddedHeader>& embedded_headers();

}  // namespace hf::fusion
