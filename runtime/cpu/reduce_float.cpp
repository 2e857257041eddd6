// Reductions of f32/f16/bf16 inputs (accumulated in f32) and f64 (in f64); see reduce_kernels.h.
#include "runtime/cpu/reduce_kernels.h"

namespace hf::cpu {

void reduce_float(const ReducePlan& p, ThreadPool& pool) {
  using namespace reduce_detail;
  switch (p.dtype) {
    case DType::F32:
      return reduce_typed<float>(p, pool);
    case DType::F16:
      return reduce_typed<f16>(p, pool);
    case DType::BF16:
      return reduce_typed<bf16>(p, pool);
    case DType::F64:
      return reduce_typed<double>(p, pool);
    default:
      throw std::invalid_argument("reduce_float: not a float dtype");
  }
}

}  // namespace hf::cpu
