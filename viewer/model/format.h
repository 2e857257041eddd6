// Numbers as the viewer shows them: times, bytes, rates, shares.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace hf::viewer {

// 0.000845 ms -> "845 ns", 0.845 -> "845 us", 9.42 -> "9.42 ms", 2562 -> "2.56 s".
std::string format_ms(double ms);
// Microseconds (trace time) -> the same.
inline std::string format_us(double us) { return format_ms(us * 1e-3); }
// 29360128 -> "29.4 MB" (decimal, like the dump's DOT tooltips).
std::string format_bytes(double bytes);
// 20971552 -> "20.0 MiB" (memory sizes).
std::string format_mib(int64_t bytes);
// 0.433 -> "43.3%".
std::string format_share(double share);
// 41.9 -> "41.9 GB/s".
std::string format_gbps(double gbps);
// printf into a std::string.
std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// "-" for a missing value.
std::string or_dash(const std::optional<double>& v, std::string (*f)(double));

}  // namespace hf::viewer
