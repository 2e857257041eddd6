// Kernel names and the comments of generated source (codegen_common.h): model-supplied
// text reaches a kernel only through these, so it can neither inject code nor break the
// build.
#include <set>

#include "fusion/codegen_common.h"

namespace hf::fusion::codegen {

void check_kernel_name(const std::string& name) {
  // Keywords of C++20 and CUDA, and names the generated code itself declares at global scope.
  static const std::set<std::string, std::less<>> reserved = {
      "alignas",       "alignof",     "and",
      "and_eq",        "asm",         "auto",
      "bitand",        "bitor",       "bool",
      "break",         "case",        "catch",
      "char",          "char8_t",     "char16_t",
      "char32_t",      "class",       "compl",
      "concept",       "const",       "consteval",
      "constexpr",     "constinit",   "const_cast",
      "continue",      "co_await",    "co_return",
      "co_yield",      "decltype",    "default",
      "delete",        "do",          "double",
      "dynamic_cast",  "else",        "enum",
      "explicit",      "export",      "extern",
      "false",         "float",       "for",
      "friend",        "goto",        "if",
      "inline",        "int",         "long",
      "mutable",       "namespace",   "new",
      "noexcept",      "not",         "not_eq",
      "nullptr",       "operator",    "or",
      "or_eq",         "private",     "protected",
      "public",        "register",    "reinterpret_cast",
      "requires",      "return",      "short",
      "signed",        "sizeof",      "static",
      "static_assert", "static_cast", "struct",
      "switch",        "template",    "this",
      "thread_local",  "throw",       "true",
      "try",           "typedef",     "typeid",
      "typename",      "union",       "unsigned",
      "using",         "virtual",     "void",
      "volatile",      "wchar_t",     "while",
      "xor",           "xor_eq",      "restrict",
      "main",          "hf",          "hf_generated",
      "linux",         "unix",        "i386",
      "threadIdx",     "blockIdx",    "blockDim",
      "gridDim",       "warpSize"};
  auto bad = [&](const char* why) {
    fail("kernel name \"" + sanitize_comment(name, 80) + "\" " + why);
  };
  if (name.empty() || name.size() > 200) bad("must have 1 to 200 characters");
  const auto alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(name[0])) bad("must start with a letter or '_'");
  for (char c : name)
    if (!alpha(c) && !digit(c)) bad("is not an identifier");
  if (name[0] == '_' && (name.size() == 1 || name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Z')))
    bad("is reserved to the implementation");
  if (name.compare(0, 3, "HF_") == 0) bad("would clash with the project's macros");
  if (reserved.count(name)) bad("is a keyword or a name the generated code uses");
}

std::string sanitize_comment(std::string_view text, size_t max_len) {
  std::string out;
  size_t i = 0;
  for (; i < text.size() && out.size() < max_len; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    char ch = static_cast<char>(c);
    if (c >= 0x80) {  // one '?' per UTF-8 sequence (or stray byte)
      ch = '?';
      if (c >= 0xc0)
        while (i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xc0) == 0x80) ++i;
    } else if (c == '\n' || c == '\r' || c == '\t') {
      ch = ' ';
    } else if (c < 0x20 || c == 0x7f) {
      ch = '?';
    } else if (c == '\\') {
      ch = '/';  // a trailing backslash would splice the next line into the comment
    }
    // No "*/" or "/*", and no "??/" (a backslash where trigraphs are still read).
    const size_t n = out.size();
    if ((ch == '/' && n >= 1 && out[n - 1] == '*') || (ch == '*' && n >= 1 && out[n - 1] == '/') ||
        (ch == '/' && n >= 2 && out[n - 1] == '?' && out[n - 2] == '?'))
      out += ' ';
    out += ch;
  }
  if (i < text.size()) out += "...";
  return out;
}

std::string banner(const KernelSpec& spec, const std::string& kernel_name,
                   const std::string& origin_comment, std::string_view target) {
  SourcePrinter p;
  p.line("// hotfuse fused kernel ", kernel_name, " (", target, "), spec ", spec.hash_hex());
  p.line("// origin: ", sanitize_comment(origin_comment));
  return p.str();
}

}  // namespace hf::fusion::codegen
