// Numbers as the viewer shows them: times, bytes, rates, shares.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
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
// 41.9 -> "41.9 GB/s", 0.0319921 -> "0.032 GB/s" (three significant digits below 1).
std::string format_gbps(double gbps);
// 0.684 -> "0.68x": a speedup (unfused time over fused time); below 1 is a slowdown.
std::string format_speedup(double speedup);
inline bool is_slowdown(double speedup) { return speedup < 1.0; }
// One value of a trace event's args (or any JSON leaf) with the unit its key implies, as the
// tables show it: "bytes" 4014080 -> "4.01 MB", "gbps" -> GB/s, "ms" / "*_ms" -> a time,
// "speedup" -> "0.68x"; null -> "none" (never the raw "null"), booleans "yes" / "no",
// integers as integers, other numbers with four significant digits; long texts cut at
// `max_chars`.
std::string format_arg(const std::string& key, const nlohmann::json& value,
                       size_t max_chars = 300);
// printf into a std::string.
std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// "-" for a missing value.
std::string or_dash(const std::optional<double>& v, std::string (*f)(double));

}  // namespace hf::viewer
