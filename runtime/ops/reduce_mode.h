// Reduce modes (MegEngine's Reduce::Mode). Accumulation happens in f32 for float types
// (f64 is not a storage type here) and in i64 for integer types; MEAN divides at the end.
#pragma once
#include <optional>
#include <string_view>

namespace hf {

#define HF_REDUCE_MODES(X) X(SUM) X(SUM_SQR) X(PRODUCT) X(MIN) X(MAX) X(MEAN)

enum class ReduceMode : unsigned char {
#define X(NAME) NAME,
  HF_REDUCE_MODES(X)
#undef X
};

constexpr std::string_view reduce_mode_name(ReduceMode m) {
  constexpr std::string_view names[] = {
#define X(NAME) #NAME,
      HF_REDUCE_MODES(X)
#undef X
  };
  return names[static_cast<int>(m)];
}

inline std::optional<ReduceMode> parse_reduce_mode(std::string_view s) {
#define X(NAME) \
  if (s == #NAME) return ReduceMode::NAME;
  HF_REDUCE_MODES(X)
#undef X
  return std::nullopt;
}

}  // namespace hf
