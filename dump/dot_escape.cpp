#include "dump/dot_escape.h"

#include <cstdint>

namespace hf::dump {

namespace {

constexpr char32_t kReplacement = 0xFFFD;

// The code point starting at text[i] and its length; kReplacement with length 1 for an
// invalid, overlong or truncated sequence, a surrogate or a value above U+10FFFF.
std::pair<char32_t, size_t> decode(std::string_view text, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return {c, 1};
  size_t len = 0;
  char32_t cp = 0, min = 0;
  if ((c & 0xE0) == 0xC0) {
    len = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return {kReplacement, 1};
  }
  if (i + len > text.size()) return {kReplacement, 1};
  for (size_t k = 1; k < len; ++k) {
    if ((b(k) & 0xC0) != 0x80) return {kReplacement, 1};
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {kReplacement, 1};
  return {cp, len};
}

void encode(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool is_control(char32_t cp) {
  return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F);
}

}  // namespace

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    auto [cp, len] = decode(text, i);
    encode(cp, out);
    i += len;
  }
  return out;
}

std::string dot_quote(std::string_view text) {
  std::string out = "\"";
  out.reserve(text.size() + 8);
  for (size_t i = 0; i < text.size();) {
    auto [cp, len] = decode(text, i);
    i += len;
    switch (cp) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";  // escString: \\ renders one backslash
        break;
      case '&':
        out += "&amp;";  // or Graphviz would turn "&lt;" in a name into "<"
        break;
      case '\r':
        if (i < text.size() && text[i] == '\n') break;  // CR LF: one line break
        [[fallthrough]];
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += ' ';
        break;
      default:
        encode(is_control(cp) ? kReplacement : cp, out);
    }
  }
  out += '"';
  return out;
}

std::string dot_unescape_label(std::string_view attr) {
  std::string lines;
  for (size_t i = 0; i < attr.size(); ++i) {
    if (attr[i] != '\\' || i + 1 == attr.size()) {
      lines += attr[i];
      continue;
    }
    const char e = attr[++i];
    lines += (e == 'n' || e == 'l' || e == 'r') ? '\n' : e;
  }
  // HTML entities, as Graphviz decodes them in plain labels.
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    size_t semi = lines[i] == '&' ? lines.find(';', i) : std::string::npos;
    if (semi == std::string::npos || semi - i > 10) {
      out += lines[i];
      continue;
    }
    std::string_view name(lines.data() + i + 1, semi - i - 1);
    char32_t cp = 0;
    if (name == "amp")
      cp = '&';
    else if (name == "lt")
      cp = '<';
    else if (name == "gt")
      cp = '>';
    else if (name == "quot")
      cp = '"';
    else if (name == "apos")
      cp = '\'';
    else if (name.size() > 1 && name[0] == '#') {
      try {
        cp = name[1] == 'x' ? std::stoul(std::string(name.substr(2)), nullptr, 16)
                            : std::stoul(std::string(name.substr(1)));
      } catch (const std::exception&) {
        cp = 0;
      }
    }
    if (cp == 0) {
      out += lines[i];
      continue;
    }
    encode(cp, out);
    i = semi;
  }
  return out;
}

std::string ellipsize(std::string_view text, size_t max_chars) {
  size_t i = 0, n = 0;
  while (i < text.size() && n < max_chars) {
    i += decode(text, i).second;
    ++n;
  }
  if (i >= text.size()) return std::string(text);
  return std::string(text.substr(0, i)) + "...";
}

}  // namespace hf::dump
