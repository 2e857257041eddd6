#include "profiler/table_text.h"

#include <cstdio>

namespace hf {

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

std::string count_of(long long n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string row_op(const Node& n) {
  std::string op(op_type_name(n.op));
  if (n.op == OpType::Elemwise) op += std::string(" ") + mode_info(n.mode).name;
  return op;
}

}  // namespace hf
