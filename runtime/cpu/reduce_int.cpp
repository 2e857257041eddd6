// Reductions of i32, i64, u8 and bool inputs (accumulated in wrapping i64); the other
// integer types go to reduce_int_wide.cpp. See reduce_kernels.h.
#include "runtime/cpu/reduce_kernels.h"

namespace hf::cpu {

void reduce_int(const ReducePlan& p, ThreadPool& pool) {
  using namespace reduce_detail;
  switch (p.dtype) {
    case DType::I32:
      return reduce_typed<i32>(p, pool);
    case DType::I64:
      return reduce_typed<i64>(p, pool);
    case DType::U8:
      return reduce_typed<u8>(p, pool);
    case DType::Bool:
      return reduce_typed<bool>(p, pool);
    default:
      return reduce_int_wide(p, pool);
  }
}

}  // namespace hf::cpu
