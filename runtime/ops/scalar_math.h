// The scalar semantics of every Elemwise mode: ModeFn<Mode::X>::apply(args...).
//
// One definition serves the unfused CPU and CUDA kernels, the generated (fused) kernels and
// the graph interpreter, so fused and unfused results agree wherever the math allows. It is
// valid C++ for the host compiler, nvcc and NVRTC (see hd.h), and includes no library
// header. Arithmetic types: float (f16/bf16 are computed in f32), i32, i64, u8, bool.
//
// Conventions, where MegEngine leaves something open:
// - Integer arithmetic wraps (two's complement); it is never undefined behaviour.
// - Integer division or modulo by zero gives 0; INT_MIN / -1 wraps to INT_MIN.
// - MAX/MIN propagate NaN from either side. RELU, SIGN and comparisons follow C: NaN > 0 is
//   false, so RELU(NaN) = 0 and SIGN(NaN) = 0 (as in MegEngine).
// - SHL/SHR with a count outside [0, bits): SHL gives 0, SHR gives the sign fill (0 or -1).
// - FAST_TANH is MegEngine's rational approximation x(27+x^2)/(27+9x^2) with the input
//   clamped to [-3, 3], where it reaches exactly +-1 with zero slope; FAST_TANH_GRAD is its
//   exact derivative (0 outside the clamp). Max error against tanh: 2.0e-2 near |x| = 1.9.
// - ATAN2(y, x): the first input is y, as in C's atan2(y, x).
// - PRELU_GRAD(x, dy, slope) = x >= 0 ? dy : dy * slope.
// - RMULH(a, b): MegEngine's round_mulh_saturate: round(a*b / 2^(bits-1)), half away from
//   zero, saturating the one overflowing case (INT_MIN * INT_MIN); u8: round(a*b / 2^8).
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
template <class T>
inline constexpr bool kIsFloat = false;
template <>
inline constexpr bool kIsFloat<float> = true;
template <class T>
inline constexpr bool kIsSigned = T(-1) < T(0);

// Wrapping integer arithmetic, done in the unsigned type to avoid undefined behaviour.
template <class T>
HF_HD T add(T a, T b) {
  if constexpr (kIsFloat<T>) return a + b;
  else return (T)((typename Unsigned<T>::type)a + (typename Unsigned<T>::type)b);
}
template <class T>
HF_HD T sub(T a, T b) {
  if constexpr (kIsFloat<T>) return a - b;
  else return (T)((typename Unsigned<T>::type)a - (typename Unsigned<T>::type)b);
}
template <class T>
HF_HD T mul(T a, T b) {
  if constexpr (kIsFloat<T>) return a * b;
  else return (T)((typename Unsigned<T>::type)a * (typename Unsigned<T>::type)b);
}
template <class T>
HF_HD T neg(T a) {
  return sub(T(0), a);
}
template <class T>
HF_HD T max_nan(T a, T b) {
  if constexpr (kIsFloat<T>) return a != a ? a : (b != b ? b : (a > b ? a : b));
  else return a > b ? a : b;
}
template <class T>
HF_HD T min_nan(T a, T b) {
  if constexpr (kIsFloat<T>) return a != a ? a : (b != b ? b : (a < b ? a : b));
  else return a < b ? a : b;
}
template <class T>
HF_HD T relu(T x) {
  return x > T(0) ? x : T(0);
}
HF_HD float sigmoid(float x) { return 1.0f / (1.0f + vm::exp(-x)); }
HF_HD float clip_f(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }
HF_HD float h_swish(float x) { return x * clip_f(x + 3.0f, 0.0f, 6.0f) * (1.0f / 6.0f); }
HF_HD float fast_tanh(float x) {
  x = clip_f(x, -3.0f, 3.0f);
  return x * (27.0f + x * x) / (27.0f + 9.0f * x * x);
}
HF_HD float normcdf(float x) { return 0.5f * (1.0f + vm::erf(x * 0.70710678118654752f)); }
// log(1 + exp(-|x|)): the shared tail of SOFTPLUS and LOGSIGMOID.
HF_HD float log1p_exp_neg_abs(float x) { return vm::log1p(vm::exp(-vm::fabs(x))); }

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
template <class T>
HF_HD T shl(T x, T n) {
  constexpr int bits = sizeof(T) * 8;
  if (n < T(0) || n >= T(bits)) return T(0);
  return (T)((typename Unsigned<T>::type)x << n);
}
template <class T>
HF_HD T shr(T x, T n) {
  constexpr int bits = sizeof(T) * 8;
  if (n < T(0) || n >= T(bits)) return x < T(0) ? T(-1) : T(0);
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
    __int128 ab = (__int128)a * (__int128)b;
    __int128 nudge = ab >= 0 ? ((__int128)1 << 62) : ((__int128)1 - ((__int128)1 << 62));
    return (T)((ab + nudge) / ((__int128)1 << 63));
  }
}
template <class T>
HF_HD T logic_not(T x) {
  if constexpr (sizeof(T) == 1 && T(2) == T(1)) return !x;  // bool
  else return (T)~x;
}
}  // namespace detail

template <Mode M>
struct ModeFn;

#define HF_MODE_T(NAME, PARAMS, BODY)        \
  template <>                                \
  struct ModeFn<Mode::NAME> {                \
    template <class T>                       \
    HF_HD static auto apply PARAMS { BODY; } \
  };
#define HF_MODE_F(NAME, PARAMS, BODY)   \
  template <>                           \
  struct ModeFn<Mode::NAME> {           \
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
HF_MODE_F(SILU, (float x), return x * sigmoid(x))
HF_MODE_F(GELU, (float x), return x * normcdf(x))
HF_MODE_T(ISNAN, (T x), return x != x)
HF_MODE_T(ISINF, (T x), return vm::fabs(x) == __builtin_huge_valf())
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
HF_MODE_T(SIGN, (T x), return x > T(0) ? T(1) : (x < T(0) ? neg(T(1)) : T(0)))
// binary
HF_MODE_T(ABS_GRAD, (T x, T y), return x > T(0) ? y : neg(y))
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
HF_MODE_F(TANH_GRAD, (float x, float y), return (1.0f - x * x) * y)
HF_MODE_F(TRUE_DIV, (float x, float y), return x / y)
HF_MODE_F(LOG_SUM_EXP, (float x, float y),
          // x == y also covers both infinite with one sign, where x - y would be NaN.
          return x == y ? x + 0.69314718055994531f
                        : max_nan(x, y) + vm::log1p(vm::exp(-vm::fabs(x - y))))
HF_MODE_T(LT, (T x, T y), return x < y)
HF_MODE_T(LEQ, (T x, T y), return x <= y)
HF_MODE_T(EQ, (T x, T y), return x == y)
HF_MODE_T(NEQ, (T x, T y), return x != y)
HF_MODE_T(SHL, (T x, T y), return shl(x, y))
HF_MODE_T(SHR, (T x, T y), return shr(x, y))
HF_MODE_F(FAST_TANH_GRAD, (float x, float y), float c = clip_f(x, -3.0f, 3.0f);
          float x2 = c * c; float deno = 3.0f + x2;
          return ((-48.0f * x2) / deno + 27.0f + x2) / (deno * 9.0f) * y)
HF_MODE_T(RMULH, (T x, T y), return rmulh(x, y))
HF_MODE_F(ATAN2, (float y, float x), return vm::atan2(y, x))
HF_MODE_F(H_SWISH_GRAD, (float x, float y),
          return x < -3.0f ? 0.0f : (x > 3.0f ? y : (2.0f * x + 3.0f) * (1.0f / 6.0f) * y))
HF_MODE_T(AND, (T x, T y), if constexpr (T(2) == T(1)) return x && y; else return (T)(x & y))
HF_MODE_T(OR, (T x, T y), if constexpr (T(2) == T(1)) return x || y; else return (T)(x | y))
HF_MODE_T(XOR, (T x, T y), if constexpr (T(2) == T(1)) return x != y; else return (T)(x ^ y))
HF_MODE_F(SILU_GRAD, (float x, float y), float s = sigmoid(x);
          return y * s * (1.0f + x * (1.0f - s)))
HF_MODE_F(GELU_GRAD, (float x, float y),
          return y * (normcdf(x) + x * 0.39894228040143268f * vm::exp(-0.5f * x * x)))
HF_MODE_F(ASINH_GRAD, (float x, float y), return y / vm::sqrt(x * x + 1.0f))
HF_MODE_F(ACOSH_GRAD, (float x, float y), return y / vm::sqrt(x * x - 1.0f))
HF_MODE_F(ATANH_GRAD, (float x, float y), return y / (1.0f - x * x))
HF_MODE_F(PRELU, (float x, float s), return x > 0.0f ? x : x * s)
HF_MODE_F(SOFTPLUS_GRAD, (float x, float y), return y * sigmoid(x))
HF_MODE_F(RELU6_GRAD, (float x, float y), return (x > 0.0f && x < 6.0f) ? y : 0.0f)
HF_MODE_F(HSIGMOID_GRAD, (float x, float y),
          return (x <= -3.0f || x >= 3.0f) ? 0.0f : y * (1.0f / 6.0f))
HF_MODE_T(FUSE_ADD_RELU, (T x, T y), return relu(add(x, y)))
HF_MODE_F(FUSE_ADD_SIGMOID, (float x, float y), return sigmoid(x + y))
HF_MODE_F(FUSE_ADD_TANH, (float x, float y), return vm::tanh(x + y))
HF_MODE_F(FUSE_ADD_H_SWISH, (float x, float y), return h_swish(x + y))
// ternary
HF_MODE_T(COND_LEQ_MOV, (T x, T y, T z), return x <= y ? z : T(0))
HF_MODE_T(COND_LT_MOV, (T x, T y, T z), return x < y ? z : T(0))
HF_MODE_T(FUSE_MUL_ADD3, (T a, T b, T c), return add(mul(a, b), c))
HF_MODE_T(CLIP, (T x, T lo, T hi), return x < lo ? lo : (x > hi ? hi : x))
HF_MODE_F(PRELU_GRAD, (float x, float dy, float s), return x >= 0.0f ? dy : dy * s)
// 4-ary
HF_MODE_T(FUSE_MUL_ADD4, (T a, T b, T c, T d), return add(mul(a, b), mul(c, d)))

#undef HF_MODE_T
#undef HF_MODE_F

}  // namespace hf
