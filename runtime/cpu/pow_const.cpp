// x ^ c for a constant c: the common exponents become a few multiplications or a sqrt,
// which vectorise and are exact or nearly so; the rest go through ModeFn<POW>.
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "runtime/cpu/elemwise_engine.h"
#include "runtime/cpu/kernels.h"
#include "runtime/ops/scalar_math.h"

namespace hf::cpu {
namespace {

// Largest |integer exponent| done by repeated squaring; beyond it rounding errors of the
// multiplications would exceed powf's.
constexpr int kMaxIntExponent = 16;

template <unsigned E>
inline float ipow(float x) {
  if constexpr (E == 0) {
    return 1.0f;
  } else if constexpr (E == 1) {
    return x;
  } else {
    float h = ipow<E / 2>(x);
    if constexpr (E % 2)
      return h * h * x;
    else
      return h * h;
  }
}

// __restrict on parameters (GCC ignores it on locals) lets in-place calls vectorise.
template <class F>
inline void unary_loop(int64_t n, float* __restrict o, const float* __restrict a, F f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
}

template <int E>
void pow_int_block(const void* const* in, void* out, int64_t n, const void*) {
  const float* a = static_cast<const float*>(in[0]);
  float* o = static_cast<float*>(out);
  if constexpr (E >= 0)
    unary_loop(n, o, a, [](float x) { return ipow<E>(x); });
  else
    unary_loop(n, o, a, [](float x) { return 1.0f / ipow<-E>(x); });
}

void sqrt_block(const void* const* in, void* out, int64_t n, const void*) {
  unary_loop(n, static_cast<float*>(out), static_cast<const float*>(in[0]),
             [](float x) { return ModeFn<Mode::SQRT>::apply(x); });
}

void rsqrt_block(const void* const* in, void* out, int64_t n, const void*) {
  unary_loop(n, static_cast<float*>(out), static_cast<const float*>(in[0]),
             [](float x) { return 1.0f / ModeFn<Mode::SQRT>::apply(x); });
}

void pow_block(const void* const* in, void* out, int64_t n, const void* ctx) {
  const float e = *static_cast<const float*>(ctx);
  unary_loop(n, static_cast<float*>(out), static_cast<const float*>(in[0]),
             [e](float x) { return ModeFn<Mode::POW>::apply(x, e); });
}

template <int... I>
constexpr auto make_int_table(std::integer_sequence<int, I...>) {
  return std::array<BlockFn, sizeof...(I)>{&pow_int_block<I - kMaxIntExponent>...};
}
constexpr auto kIntPow = make_int_table(std::make_integer_sequence<int, 2 * kMaxIntExponent + 1>{});

}  // namespace

void pow_const(const TensorView& in, float exponent, const TensorView& out, ThreadPool& pool) {
  if (!is_float(in.dtype))
    throw std::invalid_argument("pow_const does not support dtype " +
                                std::string(dtype_name(in.dtype)));
  if (out.dtype != in.dtype)
    throw std::invalid_argument("pow_const: output dtype differs from the input's");
  ElemJob job;
  job.compute = DType::F32;
  job.result = DType::F32;
  job.ctx = &exponent;
  int flops = 2;
  if (exponent == 1.0f && in.dtype == out.dtype) {
    copy(in, out, pool);
    return;
  }
  if (exponent == std::trunc(exponent) && std::fabs(exponent) <= kMaxIntExponent) {
    job.fn = kIntPow[static_cast<int>(exponent) + kMaxIntExponent];
  } else if (exponent == 0.5f) {
    job.fn = &sqrt_block;
  } else if (exponent == -0.5f) {
    job.fn = &rsqrt_block;
  } else {
    job.fn = &pow_block;
    flops = 20;
  }
  job.flops = flops + (in.dtype != DType::F32 ? 2 : 0);
  job.grain = grain_for_flops(job.flops);
  run_elemwise(std::span<const TensorView>(&in, 1), out, job, pool);
}

}  // namespace hf::cpu
