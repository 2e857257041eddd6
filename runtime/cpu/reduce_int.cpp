// Reductions of integer and bool inputs (accumulated in wrapping i64); see
// reduce_kernels.h.
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
    case DType::I8:
      return reduce_typed<i8>(p, pool);
    case DType::I16:
      return reduce_typed<i16>(p, pool);
    case DType::U16:
      return reduce_typed<u16>(p, pool);
    case DType::U32:
      return reduce_typed<u32>(p, pool);
    case DType::U64:
      return reduce_typed<u64>(p, pool);
    default:
      throw std::invalid_argument("reduce_int: not an integer dtype");
  }
}

}  // namespace hf::cpu
