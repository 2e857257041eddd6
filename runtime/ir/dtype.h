// Element types of tensors, their sizes and names, and the type arithmetic happens in.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hf {

// New types are appended: the numbering is part of kernel tables and cache keys.
enum class DType : uint8_t { F32, F16, BF16, I32, I64, Bool, U8, F64, I8, I16, U16, U32, U64 };
inline constexpr int kDTypeCount = 13;

constexpr size_t dtype_size(DType t) {
  constexpr size_t sizes[] = {4, 2, 2, 4, 8, 1, 1, 8, 1, 2, 2, 4, 8};
  return sizes[static_cast<int>(t)];
}

constexpr std::string_view dtype_name(DType t) {
  constexpr std::string_view names[] = {"f32", "f16", "bf16", "i32", "i64", "bool", "u8",
                                        "f64", "i8",  "i16",  "u16", "u32", "u64"};
  return names[static_cast<int>(t)];
}

constexpr bool is_float(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64;
}
constexpr bool is_int(DType t) {
  return t == DType::I32 || t == DType::I64 || t == DType::U8 || t == DType::I8 ||
         t == DType::I16 || t == DType::U16 || t == DType::U32 || t == DType::U64;
}

constexpr bool is_unsigned(DType t) {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64;
}

// The type kernels compute in: f16 and bf16 are storage formats computed in f32; f64 and
// every integer type compute in themselves.
constexpr DType compute_dtype(DType t) {
  return t == DType::F16 || t == DType::BF16 ? DType::F32 : t;
}

// The types the generated (fused) kernels and the CUDA backend handle: f32 and its storage
// formats, i32, i64, u8 and bool. The others (f64, i8, i16, u16, u32, u64) run in the
// unfused CPU kernels only: the code generators, the interpreter that checks them and the
// CUDA kernels are written for these seven (f32 math, i64 accumulators), and the other types
// are rare in the models that fusion and the GPU pay for.
constexpr bool is_core_dtype(DType t) {
  return static_cast<int>(t) <= static_cast<int>(DType::U8);
}

// Accepts the short names above and the ONNX-style long ones ("float32", "int64", ...).
std::optional<DType> parse_dtype(std::string_view name);

}  // namespace hf
