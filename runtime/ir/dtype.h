// Element types of tensors, their sizes and names, and the type arithmetic happens in.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hf {

enum class DType : uint8_t { F32, F16, BF16, I32, I64, Bool, U8 };
inline constexpr int kDTypeCount = 7;

constexpr size_t dtype_size(DType t) {
  constexpr size_t sizes[] = {4, 2, 2, 4, 8, 1, 1};
  return sizes[static_cast<int>(t)];
}

constexpr std::string_view dtype_name(DType t) {
  constexpr std::string_view names[] = {"f32", "f16", "bf16", "i32", "i64", "bool", "u8"};
  return names[static_cast<int>(t)];
}

constexpr bool is_float(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }
constexpr bool is_int(DType t) { return t == DType::I32 || t == DType::I64 || t == DType::U8; }

// The type kernels compute in: f16 and bf16 are storage formats computed in f32.
constexpr DType compute_dtype(DType t) { return is_float(t) ? DType::F32 : t; }

// Accepts the short names above and the ONNX-style long ones ("float32", "int64", ...).
std::optional<DType> parse_dtype(std::string_view name);

}  // namespace hf
