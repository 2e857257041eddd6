// Dtype conversion from f64 and i8/i16/u16/u32/u64 to every type (see type_convert.cpp).
#include "runtime/cpu/type_convert_range.h"

namespace hf::cpu {

void type_convert_wide(const convert_detail::ConvertJob& j, DType from, DType to,
                       ThreadPool& pool) {
  convert_detail::run_convert<true>(j, from, to, pool);
}

}  // namespace hf::cpu
