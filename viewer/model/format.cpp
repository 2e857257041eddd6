#include "viewer/model/format.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace hf::viewer {

std::string strf(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return {};
  if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, n);
  std::string s(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(s.data(), s.size(), fmt, ap);
  va_end(ap);
  s.resize(n);
  return s;
}

namespace {
// Three significant digits.
std::string sig3(double v, const char* unit) {
  const double a = std::fabs(v);
  // Beyond 1e5 (hostile or broken input: a trace spanning ages) an exponent, not 300 digits.
  const char* fmt = a >= 1e5 ? "%.3g %s" : a >= 100 ? "%.0f %s" : a >= 10 ? "%.1f %s" : "%.2f %s";
  return strf(fmt, v, unit);
}
}  // namespace

std::string format_ms(double ms) {
  if (!std::isfinite(ms)) return "-";
  const double a = std::fabs(ms);
  if (a == 0) return "0 ms";
  if (a < 1e-3) return sig3(ms * 1e6, "ns");
  if (a < 1) return sig3(ms * 1e3, "us");
  if (a < 1000) return sig3(ms, "ms");
  return sig3(ms * 1e-3, "s");
}

std::string format_bytes(double bytes) {
  if (!std::isfinite(bytes)) return "-";
  const double a = std::fabs(bytes);
  if (a < 1e3) return strf("%.0f B", bytes);
  if (a < 1e6) return sig3(bytes * 1e-3, "kB");
  if (a < 1e9) return sig3(bytes * 1e-6, "MB");
  return sig3(bytes * 1e-9, "GB");
}

std::string format_mib(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) return strf("%lld B", static_cast<long long>(bytes));
  if (bytes < (int64_t{1} << 20)) return strf("%.1f KiB", b / 1024);
  if (bytes < (int64_t{1} << 30)) return strf("%.1f MiB", b / (1 << 20));
  return strf("%.2f GiB", b / (1 << 30));
}

std::string format_share(double share) {
  if (!std::isfinite(share)) return "-";
  return strf(share * 100 >= 10 || share == 0 ? "%.1f%%" : "%.2f%%", share * 100);
}

std::string format_gbps(double gbps) {
  if (!std::isfinite(gbps)) return "-";
  const double a = std::fabs(gbps);
  if (a == 0) return "0 GB/s";
  if (a < 1) return strf("%.2g GB/s", gbps);
  return strf(a >= 100 ? "%.0f GB/s" : "%.1f GB/s", gbps);
}

std::string format_speedup(double speedup) {
  if (!std::isfinite(speedup)) return "-";
  return strf("%.2fx", speedup);
}

namespace {
bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}
}  // namespace

std::string format_arg(const std::string& key, const nlohmann::json& value, size_t max_chars) {
  std::string out;
  if (value.is_null()) {
    out = "none";
  } else if (value.is_boolean()) {
    out = value.get<bool>() ? "yes" : "no";
  } else if (value.is_number()) {
    const double v = value.get<double>();
    if (key == "bytes" || ends_with(key, "_bytes"))
      out = format_bytes(v);
    else if (key == "gbps" || ends_with(key, "_gbps"))
      out = format_gbps(v);
    else if (key == "ms" || ends_with(key, "_ms"))
      out = format_ms(v);
    else if (key == "speedup")
      out = format_speedup(v);
    else if (value.is_number_integer() || value.is_number_unsigned())
      out = value.dump();
    else
      out = strf("%.4g", v);
  } else if (value.is_string()) {
    out = value.get<std::string>();
  } else {
    out = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  if (out.size() > max_chars) out = out.substr(0, max_chars) + "...";
  return out;
}

std::string or_dash(const std::optional<double>& v, std::string (*f)(double)) {
  return v ? f(*v) : std::string("-");
}

}  // namespace hf::viewer
