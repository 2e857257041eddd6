// Reductions of i8, i16, u16, u32 (accumulated in wrapping i64) and u64 (in u64); see
// reduce_kernels.h. Apart from reduce_int.cpp so that both compile in parallel.
#include "runtime/cpu/reduce_kernels.h"

namespace hf::cpu {

void reduce_int_wide(const ReducePlan& p, ThreadPool& pool) {
  using namespace reduce_detail;
  switch (p.dtype) {
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
