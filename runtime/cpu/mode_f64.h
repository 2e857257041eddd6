// The f64 formulas of the Elemwise modes, for the unfused CPU kernels.
//
// scalar_math.h (ModeFn) is shared with the generated and CUDA kernels and computes the Float
// modes in f32 through vmath.h; f64 must never silently drop to f32, so every Float and
// Predicate mode gets its formula here, written with the C library's double functions (the
// unfused path needs no vectorised math). The formulas follow ModeFn's conventions
// (scalar_math.h) with the f32 limits replaced by f64 ones. Numeric and Compare modes whose
// ModeFn is generic and exact in any float type reuse it. ERFINV and ERFCINV have no C
// library function and no f64 kernel (kDefined is false): Elemwise refuses them by name.
#pragma once
#include <cfloat>
#include <cmath>

#include "runtime/ops/scalar_math.h"

namespace hf::cpu {

template <Mode M>
struct ModeFnF64 {
  // Generic ModeFn bodies are exact in double; the Float/Predicate ones are f32-only.
  static constexpr bool kDefined =
      mode_info(M).kind != ModeKind::Float && mode_info(M).kind != ModeKind::Predicate;
  template <class... A>
  static auto apply(A... a) {
    static_assert(kDefined, "a Float mode needs its f64 formula in mode_f64.h");
    return ModeFn<M>::apply(a...);
  }
};

namespace f64 {
inline double sel(bool c, double a, double b) {
  return c ? a : b;
}
inline double clip(double x, double lo, double hi) {
  double t = sel(x < lo, lo, x);
  return sel(t > hi, hi, t);
}
inline double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
inline double clamp_neg_inf(double x) {
  return sel(x < -DBL_MAX, -DBL_MAX, x);
}
inline double clamp_inf(double x) {
  return clip(x, -DBL_MAX, DBL_MAX);
}
inline double h_swish(double x) {
  return sel(x < -3.0, -3.0, x) * (clip(x + 3.0, 0.0, 6.0) * (1.0 / 6.0));
}
inline double fast_tanh(double x) {
  x = clip(x, -3.0, 3.0);
  return x * (27.0 + x * x) / (27.0 + 9.0 * x * x);
}
inline double normcdf(double x) {
  return 0.5 * std::erfc(x * -0.70710678118654752440);
}
inline double log1p_exp_neg_abs(double x) {
  return std::log1p(std::exp(-std::fabs(x)));
}
inline double relu(double x) {
  return sel(x <= 0.0, 0.0, x);
}
}  // namespace f64

#define HF_MODE_D(NAME, PARAMS, BODY)      \
  template <>                              \
  struct ModeFnF64<Mode::NAME> {           \
    static constexpr bool kDefined = true; \
    static auto apply PARAMS { BODY; }     \
  };

// Numeric modes whose generic ModeFn calls f32 library functions.
HF_MODE_D(ABS, (double x), return std::fabs(x))
HF_MODE_D(FLOOR_DIV, (double x, double y), return std::floor(x / y))
HF_MODE_D(MOD, (double x, double y), return std::fmod(x, y))
// Predicates.
HF_MODE_D(ISNAN, (double x), return std::isnan(x))
HF_MODE_D(ISINF, (double x), return std::isinf(x))
// Float modes, unary.
HF_MODE_D(ACOS, (double x), return std::acos(x))
HF_MODE_D(ASIN, (double x), return std::asin(x))
HF_MODE_D(CEIL, (double x), return std::ceil(x))
HF_MODE_D(COS, (double x), return std::cos(x))
HF_MODE_D(EXP, (double x), return std::exp(x))
HF_MODE_D(EXPM1, (double x), return std::expm1(x))
HF_MODE_D(FLOOR, (double x), return std::floor(x))
HF_MODE_D(LOG, (double x), return std::log(x))
HF_MODE_D(LOG1P, (double x), return std::log1p(x))
HF_MODE_D(SIGMOID, (double x), return f64::sigmoid(x))
HF_MODE_D(SIN, (double x), return std::sin(x))
HF_MODE_D(TANH, (double x), return std::tanh(x))
HF_MODE_D(FAST_TANH, (double x), return f64::fast_tanh(x))
HF_MODE_D(ROUND, (double x), return std::round(x))  // half away from zero, as ROUND in f32
HF_MODE_D(ERF, (double x), return std::erf(x))
HF_MODE_D(ERFC, (double x), return std::erfc(x))
HF_MODE_D(H_SWISH, (double x), return f64::h_swish(x))
HF_MODE_D(SILU, (double x), return f64::clamp_neg_inf(x) / (1.0 + std::exp(-x)))
HF_MODE_D(GELU, (double x), return f64::clamp_neg_inf(x) * f64::normcdf(x))
HF_MODE_D(SINH, (double x), return std::sinh(x))
HF_MODE_D(COSH, (double x), return std::cosh(x))
HF_MODE_D(ASINH, (double x), return std::asinh(x))
HF_MODE_D(ACOSH, (double x), return std::acosh(x))
HF_MODE_D(ATANH, (double x), return std::atanh(x))
HF_MODE_D(TAN, (double x), return std::tan(x))
HF_MODE_D(SOFTPLUS, (double x), return f64::log1p_exp_neg_abs(x) + f64::relu(x))
HF_MODE_D(HSIGMOID, (double x), return f64::clip(x + 3.0, 0.0, 6.0) * (1.0 / 6.0))
HF_MODE_D(LOGSIGMOID, (double x), return detail::min_nan(x, 0.0) - f64::log1p_exp_neg_abs(x))
HF_MODE_D(SQRT, (double x), return std::sqrt(x))
// Float modes, binary and ternary.
HF_MODE_D(POW, (double x, double y), return std::pow(x, y))
HF_MODE_D(SIGMOID_GRAD, (double x, double y), return x * (1.0 - x) * y)
HF_MODE_D(TANH_GRAD, (double x, double y), return (1.0 - x) * (1.0 + x) * y)
HF_MODE_D(TRUE_DIV, (double x, double y), return x / y)
HF_MODE_D(LOG_SUM_EXP, (double x, double y),
          double r = detail::max_nan(x, y) + std::log1p(std::exp(-std::fabs(x - y)));
          return f64::sel(x == y, x + 0.69314718055994530942, r))
HF_MODE_D(FAST_TANH_GRAD, (double x, double y), double c = f64::clip(x, -3.0, 3.0);
          double t = (3.0 - c) * (3.0 + c) / (3.0 * (3.0 + c * c)); return t * t * y)
HF_MODE_D(ATAN2, (double y, double x), return std::atan2(y, x))
HF_MODE_D(H_SWISH_GRAD, (double x, double y), double mid = (2.0 * x + 3.0) * (1.0 / 6.0) * y;
          return f64::sel(x < -3.0, 0.0, f64::sel(x > 3.0, y, mid)))
HF_MODE_D(SILU_GRAD, (double x, double y), double c = f64::clamp_inf(x); double s = f64::sigmoid(c);
          return y * s * (1.0 + c * (1.0 - s)))
HF_MODE_D(GELU_GRAD, (double x, double y), double c = f64::clamp_inf(x);
          return y * (f64::normcdf(x) + c * 0.39894228040143267794 * std::exp(-0.5 * c * c)))
HF_MODE_D(ASINH_GRAD, (double x, double y), double a = std::fabs(x);
          double r = std::sqrt(x * x + 1.0); return y / f64::sel(a > 1e150, a, r))
HF_MODE_D(ACOSH_GRAD, (double x, double y), double a = std::fabs(x);
          double r = std::sqrt((a - 1.0) * (a + 1.0)); return y / f64::sel(a > 1e150, a, r))
HF_MODE_D(ATANH_GRAD, (double x, double y), return y / ((1.0 - x) * (1.0 + x)))
HF_MODE_D(PRELU, (double x, double s), return f64::sel(x > 0.0, x, x* s))
HF_MODE_D(SOFTPLUS_GRAD, (double x, double y), return y * f64::sigmoid(x))
HF_MODE_D(RELU6_GRAD, (double x, double y), return f64::sel((x <= 0.0) | (x >= 6.0), 0.0, y))
HF_MODE_D(HSIGMOID_GRAD, (double x, double y),
          return f64::sel((x <= -3.0) | (x >= 3.0), 0.0, y*(1.0 / 6.0)))
HF_MODE_D(FUSE_ADD_SIGMOID, (double x, double y), return f64::sigmoid(x + y))
HF_MODE_D(FUSE_ADD_TANH, (double x, double y), return std::tanh(x + y))
HF_MODE_D(FUSE_ADD_H_SWISH, (double x, double y), return f64::h_swish(x + y))
HF_MODE_D(PRELU_GRAD, (double x, double dy, double s), return f64::sel(x >= 0.0, dy, dy* s))

#undef HF_MODE_D

}  // namespace hf::cpu
