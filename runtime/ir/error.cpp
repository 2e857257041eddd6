#include "runtime/ir/error.h"

#include <cstdint>
#include <cstdio>

namespace hf {

namespace {

// The length of the valid UTF-8 sequence at text[i] and its code point; 0 when invalid
// (truncated, overlong, a surrogate, above U+10FFFF, a stray continuation byte).
size_t utf8_at(std::string_view text, size_t i, uint32_t& cp) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (len == 0 || i + len > text.size()) return 0;
  cp = len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
  for (size_t k = 1; k < len; ++k) {
    const unsigned char b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

// Code points a terminal acts on or that reorder or split what is shown.
bool needs_escape(uint32_t cp) {
  return cp <= 0x9F || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[16];
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\n' || c == '\t' || c == '\r') {
      out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r";
      ++i;
    } else if (c < 0x80) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
    } else {
      uint32_t cp = 0;
      const size_t len = utf8_at(text, i, cp);
      if (len == 0) {
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
        ++i;
      } else if (needs_escape(cp)) {
        std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(cp));
        out += buf;
        i += len;
      } else {
        out.append(text.substr(i, len));
        i += len;
      }
    }
  }
  return out;
}

}  // namespace hf
