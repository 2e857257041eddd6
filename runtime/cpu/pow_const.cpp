// x ^ c for a constant c: one vectorised loop per case of runtime/ops/pow_const.h.
#include <array>
#include <string>
#include <utility>

#include "runtime/cpu/elemwise_engine.h"
#include "runtime/cpu/kernels.h"
#include "runtime/ops/pow_const.h"

namespace hf::cpu {
namespace {

// One loop per case and integer exponent, compiled for them as constants. __restrict on
// parameters (GCC ignores it on locals) lets in-place calls vectorise.
template <PowCase C, int N>
void pow_loop(int64_t n, float* __restrict o, const float* __restrict a, float e) {
  if constexpr (C == PowCase::Int) e = N;
  for (int64_t i = 0; i < n; ++i) o[i] = powc(a[i], e, C);
}

template <PowCase C, int N>
void pow_block(const void* const* in, void* out, int64_t n, const void* ctx) {
  pow_loop<C, N>(n, static_cast<float*>(out), static_cast<const float*>(in[0]),
                 *static_cast<const float*>(ctx));
}

template <int... I>
constexpr auto make_int_table(std::integer_sequence<int, I...>) {
  return std::array<BlockFn, sizeof...(I)>{&pow_block<PowCase::Int, I - kMaxPowIntExponent>...};
}
constexpr auto kIntPow =
    make_int_table(std::make_integer_sequence<int, 2 * kMaxPowIntExponent + 1>{});

}  // namespace

BlockFn pow_block_fn(float exponent) {
  switch (pow_case(exponent)) {
    case PowCase::Int:
      return kIntPow[static_cast<int>(exponent) + kMaxPowIntExponent];
    case PowCase::Sqrt:
      return &pow_block<PowCase::Sqrt, 0>;
    case PowCase::RSqrt:
      return &pow_block<PowCase::RSqrt, 0>;
    case PowCase::Pow:
      break;
  }
  return &pow_block<PowCase::Pow, 0>;
}

void pow_const(const TensorView& in, float exponent, const TensorView& out, ThreadPool& pool) {
  if (!is_float(in.dtype) || in.dtype == DType::F64)  // computes in f32 only
    throw std::invalid_argument("pow_const does not support dtype " +
                                std::string(dtype_name(in.dtype)));
  if (out.dtype != in.dtype)
    throw std::invalid_argument("pow_const: output dtype differs from the input's");
  if (exponent == 1.0f) return copy(in, out, pool);
  ElemJob job;
  job.compute = DType::F32;
  job.result = DType::F32;
  job.ctx = &exponent;
  job.fn = pow_block_fn(exponent);
  const int flops = pow_case(exponent) == PowCase::Pow ? 20 : 2;
  job.flops = flops + (in.dtype != DType::F32 ? 2 : 0);
  job.grain = grain_for_flops(job.flops);
  run_elemwise(std::span<const TensorView>(&in, 1), out, job, pool);
}

}  // namespace hf::cpu
