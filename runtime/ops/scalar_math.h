// The scalar semantics of every Elemwise mode: ModeFn<Mode::X>::apply(args...).
//
// One definition serves the unfused CPU and CUDA kernels, the generated (fused) kernels and
// the graph interpreter, so fused and unfused results agree wherever the math allows. It is
// valid C++ for the host compiler, nvcc and NVRTC (see hd.h), and includes no library
// header. Arithmetic types: float (f16/bf16 are computed in f32), i32, i64, u8, bool; the
// unfused CPU kernels also use the generic (template) modes on i8, i16, u16, u32, u64 and
// double, with the f64 Float formulas in runtime/cpu/mode_f64.h.
// docs/ops.md has the table of formulas; tests/test_modes.cpp checks each mode against an
// independent long double / 128-bit integer reference.
//
// Conventions, where MegEngine leaves something open:
// - Integer arithmetic wraps (two's complement); it is never undefined behaviour.
// - Integer division or modulo by zero gives 0; INT_MIN / -1 wraps to INT_MIN. FLOOR_DIV
//   rounds toward -inf; MOD is C's % (the sign of the dividend; fmod for floats).
// - MAX/MIN propagate NaN from either side (the sign of a zero result of MAX(+0, -0) and
//   MIN(+0, -0) is unspecified). RELU, FUSE_ADD_RELU and RELU6 propagate NaN (MegEngine's
//   RELU is x <= 0 ? 0 : x; its RELU6 gives 6 for NaN, an accident of its formula). SIGN,
//   SWITCH_GT0, ABS_GRAD, the _MOV modes and comparisons follow C: NaN > 0 is false, so
//   SIGN(NaN) = 0 (as in MegEngine); RELU6_GRAD(NaN, dy) = dy, HSIGMOID_GRAD(NaN, dy) = dy/6.
// - CLIP(x, lo, hi) = MIN(MAX(x, lo), hi) without the NaN propagation: NaN x gives NaN, a
//   NaN bound is ignored, lo > hi gives hi (as NumPy and PyTorch).
// - SHL/SHR with a count outside [0, bits): SHL gives 0, SHR gives the sign fill (0 or -1).
// - FAST_TANH is MegEngine's rational approximation x(27+x^2)/(27+9x^2) with the input
//   clamped to [-3, 3], where it reaches exactly +-1 with zero slope; FAST_TANH_GRAD is its
//   exact derivative (9-x^2)^2 / (9(3+x^2)^2), 0 outside the clamp. Max error against tanh:
//   2.4e-2 near |x| = 1.57.
// - ATAN2(y, x): the first input is y, as in C's atan2(y, x) (MegEngine: atan2f(x, y) with
//   its own first input named x; the same order).
// - PRELU_GRAD(x, dy, slope) = x >= 0 ? dy : dy * slope.
// - RMULH(a, b): MegEngine's round_mulh_saturate: a*b / 2^(bits-1) rounded to nearest with
//   ties toward +inf (floor(a*b / 2^(bits-1) + 1/2), like ARM's VQRDMULH), saturating the one
//   overflowing case (INT_MIN * INT_MIN -> INT_MAX); u8: floor(a*b / 2^8 + 1/2).
// - FUSE_MUL_ADD3(a, b, c) = fma(a, b, c) and FUSE_MUL_ADD4(a, b, c, d) = fma(a, b, c*d) for
//   floats: one rounding of a*b + c on every target, whatever the compiler contracts.
// - Float modes give their mathematical limits at +-inf (SILU(-inf) = -0, GELU(-inf) = -0,
//   H_SWISH(-inf) = -0, SILU_GRAD/GELU_GRAD(+-inf, y) = y or 0) instead of the inf * 0 = NaN
//   of the literal formula.
#pragma once
#include "runtime/ops/hd.h"
#include "runtime/ops/mode.h"
#include "runtime/ops/vmath.h"

namespace hf {

namespace detail {
template <class T>
struct Unsigned {
  using type = T;
};
template <>
struct Unsigned<i32> {
  using type = u32;
};
template <>
struct Unsigned<i64> {
  using type = u64;
};
// i16 and u16 promote to int, where u16 * u16 overflows (undefined): u32 wraps.
template <>
struct Unsigned<i16> {
  using type = u32;
};
template <>
struct Unsigned<u16> {
  using type = u32;
};
template <class T>
inline constexpr bool kIsFloat = false;
template <>
inline constexpr bool kIsFloat<float> = true;
template <>
inline constexpr bool kIsFloat<double> = true;
template <class T>
inline constexpr bool kIsSigned = T(-1) < T(0);

// Wrapping integer arithmetic, done in the unsigned type to avoid undefined behaviour.
template <class T>
HF_HD T add(T a, T b) {
  if constexpr (kIsFloat<T>)
    return a + b;
  else
    return (T)((typename Unsigned<T>::type)a + (typename Unsigned<T>::type)b);
}
template <class T>
HF_HD T sub(T a, T b) {
  if constexpr (kIsFloat<T>)
    return a - b;
  else
    return (T)((typename Unsigned<T>::type)a - (typename Unsigned<T>::type)b);
}
template <class T>
HF_HD T mul(T a, T b) {
  if constexpr (kIsFloat<T>)
    return a * b;
  else
    return (T)((typename Unsigned<T>::type)a * (typename Unsigned<T>::type)b);
}
template <class T>
HF_HD T neg(T a) {
  if constexpr (kIsFloat<T>)
    return -a;  // not 0 - a: NEGATE(+0) is -0
  else
    return sub(T(0), a);
}
template <class T>
HF_HD T max_nan(T a, T b) {
  if constexpr (kIsFloat<T>)
    return a != a ? a : (b != b ? b : (a > b ? a : b));
  else
    return a > b ? a : b;
}
template <class T>
HF_HD T min_nan(T a, T b) {
  if constexpr (kIsFloat<T>)
    return a != a ? a : (b != b ? b : (a < b ? a : b));
  else
    return a < b ? a : b;
}
// a*b + c. Floats: one rounding (fused multiply-add) on every target. Compilers contract
// a*b + c into an FMA or not depending on flags (-march, nvcc's --fmad), which changes
// results, up to inf vs NaN when a*b overflows; an explicit fma makes the host kernels, the
// interpreter and CUDA agree. (Without hardware FMA the host calls libm's fmaf: correct,
// not vectorised.)
template <class T>
HF_HD T mul_add(T a, T b, T c) {
  if constexpr (kIsFloat<T> && sizeof(T) == 8) {
#if HF_DEVICE_CODE
    return ::fma(a, b, c);
#else
    return __builtin_fma(a, b, c);
#endif
  } else if constexpr (kIsFloat<T>) {
#if HF_DEVICE_CODE
    return ::fmaf(a, b, c);
#else
    return __builtin_fmaf(a, b, c);
#endif
  } else {
    return add(mul(a, b), c);
  }
}
// c ? a : b. Kernels are compiled with -fno-trapping-math, which lets GCC turn it into a
// vector blend (docs/math.md).
template <class T>
HF_HD T sel(bool c, T a, T b) {
  return c ? a : b;
}
// NaN propagates, -0 gives +0 (MegEngine's x <= 0 ? 0 : x).
template <class T>
HF_HD T relu(T x) {
  return sel(x <= T(0), T(0), x);
}
// Clamps to [lo, hi]; NaN x stays NaN, a NaN bound is ignored, lo > hi gives hi.
template <class T>
HF_HD T clip(T x, T lo, T hi) {
  T t = sel(x < lo, lo, x);
  return sel(t > hi, hi, t);
}
inline constexpr float kFltMax = 3.40282347e+38f;
// -inf -> -FLT_MAX, everything else unchanged: where a formula multiplies x by a factor
// that tends to 0, this gives the limit (-0) instead of -inf * 0 = NaN.
HF_HD float clamp_neg_inf(float x) {
  return sel(x < -kFltMax, -kFltMax, x);
}
// +-inf -> +-FLT_MAX, NaN and finite values unchanged.
HF_HD float clamp_inf(float x) {
  return clip(x, -kFltMax, kFltMax);
}
HF_HD float sigmoid(float x) {
  return vm::sigmoid(x);
}
HF_HD float clip_f(float x, float lo, float hi) {
  return clip(x, lo, hi);
}
// x * (clip(x + 3, 0, 6) / 6): the factor first, so that x >= 3 gives x exactly and huge x
// does not overflow; x is held at -3 below -3, where the factor is 0, so that
// H_SWISH(-inf) = -0 rather than NaN.
HF_HD float h_swish(float x) {
  return sel(x < -3.0f, -3.0f, x) * (clip_f(x + 3.0f, 0.0f, 6.0f) * (1.0f / 6.0f));
}
HF_HD float fast_tanh(float x) {
  x = clip_f(x, -3.0f, 3.0f);
  return x * (27.0f + x * x) / (27.0f + 9.0f * x * x);
}
// Phi(x) = erfc(-x / sqrt(2)) / 2: keeps its relative accuracy in the lower tail, where
// (1 + erf(x / sqrt(2))) / 2 cancels to 0 below x = -5.9 (CUDA's normcdff is erfc-based too).
HF_HD float normcdf(float x) {
  return 0.5f * vm::erfc(x * -0.70710678118654752f);
}
// log(1 + exp(-|x|)): the shared tail of SOFTPLUS and LOGSIGMOID.
HF_HD float log1p_exp_neg_abs(float x) {
  return vm::log1p(vm::exp(-vm::fabs(x)));
}

template <class T>
HF_HD T floor_div(T x, T y) {
  if constexpr (kIsFloat<T>) {
    return vm::floor(x / y);
  } else {
    if (y == T(0)) return T(0);
    if constexpr (kIsSigned<T>) {
      if (y == T(-1)) return neg(x);
      T q = x / y;
      return (x % y != T(0) && ((x < T(0)) != (y < T(0)))) ? T(q - 1) : q;
    } else {
      return T(x / y);
    }
  }
}
template <class T>
HF_HD T mod(T x, T y) {
  if constexpr (kIsFloat<T>) {
    return vm::fmod(x, y);
  } else {
    if (y == T(0)) return T(0);
    if constexpr (kIsSigned<T>) {
      if (y == T(-1)) return T(0);
    }
    return T(x % y);
  }
}
// x < 0, without a "comparison of unsigned with zero" warning for u8.
template <class T>
HF_HD bool is_neg(T x) {
  if constexpr (kIsSigned<T>)
    return x < T(0);
  else
    return false;
}
template <class T>
HF_HD T shl(T x, T n) {
  constexpr int bits = sizeof(T) * 8;
  if (is_neg(n) || n >= T(bits)) return T(0);
  return (T)((typename Unsigned<T>::type)x << n);
}
template <class T>
HF_HD T shr(T x, T n) {
  constexpr int bits = sizeof(T) * 8;
  if (is_neg(n) || n >= T(bits)) return is_neg(x) ? T(-1) : T(0);
  return (T)(x >> n);
}
template <class T>
HF_HD T rmulh(T a, T b) {
  if constexpr (sizeof(T) == 1) {
    return (T)(((unsigned)a * (unsigned)b + 128u) >> 8);
  } else if constexpr (sizeof(T) == 4) {
    if (a == b && a == (T)0x80000000u) return (T)0x7fffffff;
    i64 ab = (i64)a * (i64)b;
    i64 nudge = ab >= 0 ? (1ll << 30) : (1ll - (1ll << 30));
    return (T)((ab + nudge) / (1ll << 31));
  } else {
    if (a == b && a == (T)0x8000000000000000ull) return (T)0x7fffffffffffffffll;
    // floor((a*b + 2^62) / 2^63) on the 128-bit product hi:lo, without __int128 on the
    // device (NVRTC accepts it only with -device-int128).
    u64 lo = (u64)a * (u64)b;
#if HF_DEVICE_CODE
    u64 hi = (u64)__mul64hi((long long)a, (long long)b);
#else
    u64 hi = (u64)(i64)(((__int128)a * (__int128)b) >> 64);
#endif
    u64 lo2 = lo + (1ull << 62);
    hi += lo2 < lo ? 1u : 0u;
    return (T)((hi << 1) | (lo2 >> 63));
  }
}
template <class T>
HF_HD T logic_not(T x) {
  if constexpr (sizeof(T) == 1 && T(2) == T(1))
    return !x;  // bool
  else
    return (T)~x;
}
}  // namespace detail

template <Mode M>
struct ModeFn;

#define HF_MODE_T(NAME, PARAMS, BODY) \
  template <>                         \
  struct ModeFn<Mode::NAME> {         \
    template <class T>                \
    HF_HD static auto apply PARAMS {  \
      BODY;                           \
    }                                 \
  };
#define HF_MODE_F(NAME, PARAMS, BODY)         \
  template <>                                 \
  struct ModeFn<Mode::NAME> {                 \
    HF_HD static float apply PARAMS { BODY; } \
  };

using namespace detail;  // NOLINT: keeps the table below readable

// unary
HF_MODE_T(RELU, (T x), return relu(x))
HF_MODE_T(ABS, (T x), if constexpr (kIsFloat<T>) return vm::fabs(x);
          else if constexpr (kIsSigned<T>) return x < T(0) ? neg(x) : x; else return x)
HF_MODE_F(ACOS, (float x), return vm::acos(x))
HF_MODE_F(ASIN, (float x), return vm::asin(x))
HF_MODE_F(CEIL, (float x), return vm::ceil(x))
HF_MODE_F(COS, (float x), return vm::cos(x))
HF_MODE_F(EXP, (float x), return vm::exp(x))
HF_MODE_F(EXPM1, (float x), return vm::expm1(x))
HF_MODE_F(FLOOR, (float x), return vm::floor(x))
HF_MODE_F(LOG, (float x), return vm::log(x))
HF_MODE_F(LOG1P, (float x), return vm::log1p(x))
HF_MODE_T(NEGATE, (T x), return neg(x))
HF_MODE_F(SIGMOID, (float x), return sigmoid(x))
HF_MODE_F(SIN, (float x), return vm::sin(x))
HF_MODE_F(TANH, (float x), return vm::tanh(x))
HF_MODE_F(FAST_TANH, (float x), return fast_tanh(x))
HF_MODE_F(ROUND, (float x), return vm::round(x))
HF_MODE_F(ERF, (float x), return vm::erf(x))
HF_MODE_F(ERFINV, (float x), return vm::erfinv(x))
HF_MODE_F(ERFC, (float x), return vm::erfc(x))
HF_MODE_F(ERFCINV, (float x), return vm::erfcinv(x))
HF_MODE_F(H_SWISH, (float x), return h_swish(x))
HF_MODE_T(NOT, (T x), return logic_not(x))
HF_MODE_F(SILU, (float x), return clamp_neg_inf(x) / (1.0f + vm::exp(-x)))
HF_MODE_F(GELU, (float x), return clamp_neg_inf(x) * normcdf(x))
HF_MODE_T(ISNAN, (T x), return x != x)
HF_MODE_T(ISINF, (T x), return vm::fabs(x) > kFltMax)  // only +-inf exceed FLT_MAX
HF_MODE_F(SINH, (float x), return vm::sinh(x))
HF_MODE_F(COSH, (float x), return vm::cosh(x))
HF_MODE_F(ASINH, (float x), return vm::asinh(x))
HF_MODE_F(ACOSH, (float x), return vm::acosh(x))
HF_MODE_F(ATANH, (float x), return vm::atanh(x))
HF_MODE_F(TAN, (float x), return vm::tan(x))
HF_MODE_F(SOFTPLUS, (float x), return log1p_exp_neg_abs(x) + relu(x))
HF_MODE_T(RELU6, (T x), return min_nan(relu(x), T(6)))
HF_MODE_F(HSIGMOID, (float x), return clip_f(x + 3.0f, 0.0f, 6.0f) * (1.0f / 6.0f))
HF_MODE_F(LOGSIGMOID, (float x), return min_nan(x, 0.0f) - log1p_exp_neg_abs(x))
HF_MODE_F(SQRT, (float x), return vm::sqrt(x))
HF_MODE_T(SQUARE, (T x), return mul(x, x))
HF_MODE_T(SIGN, (T x), return x > T(0) ? T(1) : (is_neg(x) ? neg(T(1)) : T(0)))
// binary
HF_MODE_T(ABS_GRAD, (T x, T y), return sel(x > T(0), y, neg(y)))
HF_MODE_T(ADD, (T x, T y), return add(x, y))
HF_MODE_T(FLOOR_DIV, (T x, T y), return floor_div(x, y))
HF_MODE_T(MAX, (T x, T y), return max_nan(x, y))
HF_MODE_T(MIN, (T x, T y), return min_nan(x, y))
HF_MODE_T(MOD, (T x, T y), return mod(x, y))
HF_MODE_T(MUL, (T x, T y), return mul(x, y))
HF_MODE_F(POW, (float x, float y), return vm::pow(x, y))
HF_MODE_F(SIGMOID_GRAD, (float x, float y), return x * (1.0f - x) * y)
HF_MODE_T(SUB, (T x, T y), return sub(x, y))
HF_MODE_T(SWITCH_GT0, (T x, T y), return x > T(0) ? y : T(0))
// (1 - x)(1 + x) rather than 1 - x*x: no cancellation as |x| -> 1.
HF_MODE_F(TANH_GRAD, (float x, float y), return (1.0f - x) * (1.0f + x) * y)
HF_MODE_F(TRUE_DIV, (float x, float y), return x / y)
HF_MODE_F(LOG_SUM_EXP, (float x, float y),
          // x == y also covers both infinite with one sign, where x - y would be NaN.
          float r = max_nan(x, y) + vm::log1p(vm::exp(-vm::fabs(x - y)));
          return sel(x == y, x + 0.69314718055994531f, r))
HF_MODE_T(LT, (T x, T y), return x < y)
HF_MODE_T(LEQ, (T x, T y), return x <= y)
HF_MODE_T(EQ, (T x, T y), return x == y)
HF_MODE_T(NEQ, (T x, T y), return x != y)
HF_MODE_T(SHL, (T x, T y), return shl(x, y))
HF_MODE_T(SHR, (T x, T y), return shr(x, y))
// (9 - x^2)^2 / (9 (3 + x^2)^2) = MegEngine's ((-48x^2) / (3+x^2) + 27 + x^2) / (9 (3+x^2)),
// written as a square of factors that do not cancel as |x| -> 3.
HF_MODE_F(FAST_TANH_GRAD, (float x, float y), float c = clip_f(x, -3.0f, 3.0f);
          float t = (3.0f - c) * (3.0f + c) / (3.0f * (3.0f + c * c)); return t * t * y)
HF_MODE_T(RMULH, (T x, T y), return rmulh(x, y))
HF_MODE_F(ATAN2, (float y, float x), return vm::atan2(y, x))
HF_MODE_F(H_SWISH_GRAD, (float x, float y), float mid = (2.0f * x + 3.0f) * (1.0f / 6.0f) * y;
          return sel(x < -3.0f, 0.0f, sel(x > 3.0f, y, mid)))
HF_MODE_T(AND, (T x, T y), if constexpr (T(2) == T(1)) return x && y; else return (T)(x & y))
HF_MODE_T(OR, (T x, T y), if constexpr (T(2) == T(1)) return x || y; else return (T)(x | y))
HF_MODE_T(XOR, (T x, T y), if constexpr (T(2) == T(1)) return x != y; else return (T)(x ^ y))
// The _GRAD modes of SILU and GELU evaluate the derivative at +-FLT_MAX for +-inf: its limits
// (1 and 0) instead of inf * 0 = NaN.
HF_MODE_F(SILU_GRAD, (float x, float y), float c = clamp_inf(x); float s = sigmoid(c);
          return y * s * (1.0f + c * (1.0f - s)))
HF_MODE_F(GELU_GRAD, (float x, float y), float c = clamp_inf(x);
          return y * (normcdf(x) + c * 0.39894228040143268f * vm::exp(-0.5f * c * c)))
// 1/sqrt(x^2 +- 1) is 1/|x| to float precision long before x^2 overflows (|x| > 1.8e19).
HF_MODE_F(ASINH_GRAD, (float x, float y), float a = vm::fabs(x); float r = vm::sqrt(x * x + 1.0f);
          return y / sel(a > 1e18f, a, r))
HF_MODE_F(ACOSH_GRAD, (float x, float y), float a = vm::fabs(x);
          float r = vm::sqrt((a - 1.0f) * (a + 1.0f)); return y / sel(a > 1e18f, a, r))
HF_MODE_F(ATANH_GRAD, (float x, float y), return y / ((1.0f - x) * (1.0f + x)))
HF_MODE_F(PRELU, (float x, float s), float xs = x * s; return sel(x > 0.0f, x, xs))
HF_MODE_F(SOFTPLUS_GRAD, (float x, float y), return y * sigmoid(x))
HF_MODE_F(RELU6_GRAD, (float x, float y), return sel((x <= 0.0f) | (x >= 6.0f), 0.0f, y))
HF_MODE_F(HSIGMOID_GRAD, (float x, float y), float d = y * (1.0f / 6.0f);
          return sel((x <= -3.0f) | (x >= 3.0f), 0.0f, d))
HF_MODE_T(FUSE_ADD_RELU, (T x, T y), return relu(add(x, y)))
HF_MODE_F(FUSE_ADD_SIGMOID, (float x, float y), return sigmoid(x + y))
HF_MODE_F(FUSE_ADD_TANH, (float x, float y), return vm::tanh(x + y))
HF_MODE_F(FUSE_ADD_H_SWISH, (float x, float y), return h_swish(x + y))
// ternary
HF_MODE_T(COND_LEQ_MOV, (T x, T y, T z), return x <= y ? z : T(0))
HF_MODE_T(COND_LT_MOV, (T x, T y, T z), return x < y ? z : T(0))
HF_MODE_T(FUSE_MUL_ADD3, (T a, T b, T c), return mul_add(a, b, c))
HF_MODE_T(CLIP, (T x, T lo, T hi), return clip(x, lo, hi))
HF_MODE_F(PRELU_GRAD, (float x, float dy, float s), float ds = dy * s;
          return sel(x >= 0.0f, dy, ds))
// 4-ary
HF_MODE_T(FUSE_MUL_ADD4, (T a, T b, T c, T d), return mul_add(a, b, mul(c, d)))

#undef HF_MODE_T
#undef HF_MODE_F

}  // namespace hf
