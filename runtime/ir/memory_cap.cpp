#include "runtime/ir/memory_cap.h"

#include <unistd.h>

#include <cstdlib>
#include <limits>

#include "runtime/ir/error.h"

namespace hf {

namespace {

size_t half_physical_memory() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return size_t{8} << 30;  // unknown: a conservative 8 GiB
  return static_cast<size_t>(pages) / 2 * static_cast<size_t>(page);
}

}  // namespace

size_t parse_byte_count(const std::string& text, const std::string& variable) {
  auto bad = [&] {
    return Error(variable + "='" + text +
                 "': expected a positive byte count such as 4000000000 or 8G");
  };
  size_t i = 0;
  unsigned long long n = 0;
  if (text.empty() || text[0] < '0' || text[0] > '9') throw bad();
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (n > (std::numeric_limits<unsigned long long>::max() - 9) / 10) throw bad();
    n = n * 10 + static_cast<unsigned>(text[i] - '0');
  }
  int shift = 0;
  if (i + 1 == text.size()) {
    switch (text[i]) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      case 'T':
      case 't':
        shift = 40;
        break;
      default:
        throw bad();
    }
  } else if (i != text.size()) {
    throw bad();
  }
  if (n == 0 || n > (std::numeric_limits<size_t>::max() >> shift)) throw bad();
  return static_cast<size_t>(n) << shift;
}

size_t memory_cap_bytes() {
  const char* v = std::getenv("HOTFUSE_MAX_BYTES");
  if (v && *v) return parse_byte_count(v, "HOTFUSE_MAX_BYTES");
  static const size_t half = half_physical_memory();
  return half;
}

void check_memory_cap(size_t bytes, const std::string& what) {
  size_t cap = memory_cap_bytes();
  if (bytes > cap)
    throw Error(what + " needs " + std::to_string(bytes) + " bytes, more than the limit of " +
                std::to_string(cap) + " bytes (HOTFUSE_MAX_BYTES)");
}

}  // namespace hf
