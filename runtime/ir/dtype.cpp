#include "runtime/ir/dtype.h"

namespace hf {

std::optional<DType> parse_dtype(std::string_view n) {
  struct Alias {
    std::string_view name;
    DType type;
  };
  static constexpr Alias aliases[] = {
      {"f32", DType::F32},      {"float32", DType::F32},  {"float", DType::F32},
      {"f16", DType::F16},      {"float16", DType::F16},  {"half", DType::F16},
      {"bf16", DType::BF16},    {"bfloat16", DType::BF16}, {"i32", DType::I32},
      {"int32", DType::I32},    {"i64", DType::I64},      {"int64", DType::I64},
      {"bool", DType::Bool},    {"u8", DType::U8},        {"uint8", DType::U8},
      {"f64", DType::F64},      {"float64", DType::F64},  {"double", DType::F64},
      {"i8", DType::I8},        {"int8", DType::I8},      {"i16", DType::I16},
      {"int16", DType::I16},    {"u16", DType::U16},      {"uint16", DType::U16},
      {"u32", DType::U32},      {"uint32", DType::U32},   {"u64", DType::U64},
      {"uint64", DType::U64},
  };
  for (const Alias& a : aliases)
    if (a.name == n) return a.type;
  return std::nullopt;
}

}  // namespace hf
