// Every Elemwise mode (ModeFn<Mode::X>::apply in runtime/ops/scalar_math.h) against an
// independent reference, for every dtype its kind admits:
// - float: long double <cmath> evaluated on a grid of ordinary values and the edge cases
//   (NaN, +-inf, +-0 with the sign of a zero result checked, subnormals, huge and tiny
//   magnitudes, domain errors); the error is measured in f32 ULPs of the reference.
// - i32, i64, u8, bool: exact 128-bit integer arithmetic reduced modulo 2^bits (the wrap
//   convention), on grids that include INT_MIN, INT_MAX, -1, 0, division by zero, shift
//   counts < 0 and >= the bit width; plus hand-computed values.
//
// Each mode has its own test, generated from elemwise_modes.def: a mode added there without
// a check_<MODE>() here fails to link, and a check that does not exercise every dtype of the
// mode's kind fails its test.
//
// Float math goes through vmath.h, whose host versions are polynomial approximations, so
// transcendental modes are allowed a few ULPs (see FTol in each check); the arithmetic modes
// must be correctly rounded or exact.
#include <gtest/gtest.h>

#include <array>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "runtime/ops/mode.h"
#include "runtime/ops/scalar_math.h"

namespace hf {
namespace {

using LD = long double;
using I128 = __int128;
using U128 = unsigned __int128;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr LD kLInf = std::numeric_limits<LD>::infinity();
constexpr LD kLNaN = std::numeric_limits<LD>::quiet_NaN();
constexpr LD kSqrtPiOver2 = 0.886226925452758013649083741671L;
constexpr LD kInvSqrt2Pi = 0.398942280401432677939946059934L;
constexpr LD kLn2 = 0.693147180559945309417232121458L;

template <Mode M, class... A>
auto call(A... a) {
  return ModeFn<M>::apply(a...);
}

// ------------------------------------------------------------------------------------------
// Dtype coverage: each harness call records its dtype; every test checks the record against
// the dtypes its mode's kind admits.

enum : unsigned { kF32 = 1, kI32 = 2, kI64 = 4, kU8 = 8, kBool = 16 };
unsigned g_covered = 0;

template <class T>
constexpr unsigned dtype_bit() {
  if constexpr (std::is_same_v<T, float>) return kF32;
  if constexpr (std::is_same_v<T, i32>) return kI32;
  if constexpr (std::is_same_v<T, i64>) return kI64;
  if constexpr (std::is_same_v<T, u8>) return kU8;
  if constexpr (std::is_same_v<T, bool>) return kBool;
  return 0;
}

template <class T>
const char* dtype_text() {
  if constexpr (std::is_same_v<T, i32>) return "i32";
  if constexpr (std::is_same_v<T, i64>) return "i64";
  if constexpr (std::is_same_v<T, u8>) return "u8";
  if constexpr (std::is_same_v<T, bool>) return "bool";
  return "f32";
}

unsigned admitted_dtypes(ModeKind k) {
  switch (k) {
    case ModeKind::Float:
      return kF32;
    case ModeKind::Numeric:
      return kF32 | kI32 | kI64 | kU8;
    case ModeKind::Int:
      return kI32 | kI64 | kU8;
    case ModeKind::Logic:
      return kBool | kI32 | kI64 | kU8;
    case ModeKind::Compare:
      return kF32 | kI32 | kI64 | kU8;
    case ModeKind::Predicate:
      return kF32;
  }
  return 0;
}

// ------------------------------------------------------------------------------------------
// Formatting for failure messages.

std::string fmt(float v) {
  std::ostringstream s;
  s.precision(9);
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  s << v << " [0x" << std::hex << bits << "]";
  return s.str();
}
std::string fmt(LD v) {
  std::ostringstream s;
  s.precision(21);
  s << v;
  return s.str();
}
std::string fmt(I128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  U128 u = neg ? (U128)0 - (U128)v : (U128)v;
  std::string d;
  while (u) d.insert(d.begin(), char('0' + int(u % 10))), u /= 10;
  return neg ? "-" + d : d;
}
template <class T>
std::string fmt_arg(T v) {
  if constexpr (std::is_same_v<T, float>)
    return fmt(v);
  else if constexpr (std::is_same_v<T, bool>)
    return v ? "true" : "false";
  else
    return fmt((I128)v);
}
template <class T, size_t N>
std::string call_text(Mode m, const std::array<T, N>& p) {
  std::string s = std::string(mode_info(m).name) + "(";
  for (size_t i = 0; i < N; ++i) s += (i ? ", " : "") + fmt_arg(p[i]);
  return s + ")";
}

// ------------------------------------------------------------------------------------------
// Float checks.

// The reference value at one point, and what error it tolerates there.
struct Ref {
  LD v;
  LD scale = 0;         // errors are measured in ULPs of max(|v|, scale): the size of the terms
                        // that cancel in the mode's formula, where it has cancellation
  double ulps = 0;      // extra ULPs allowed at this point, on top of the mode's FTol
  LD abs = 0;           // absolute error allowed at this point (e.g. y * an underflowed factor)
  bool nan_ok = false;  // NaN is acceptable too (inf * a factor that underflows)
  bool any_zero_sign = false;  // a zero result may have either sign
  Ref(LD value) : v(value) {}  // NOLINT(google-explicit-constructor)
  Ref(LD value, LD s, double u = 0, LD a = 0) : v(value), scale(s), ulps(u), abs(a) {}
};

struct FTol {
  double ulps = 0;        // 0: exact; 0.5: correctly rounded
  LD abs = 0;             // absolute error always allowed (FLT_MIN: the subnormal range)
  bool zero_sign = true;  // a zero result must have the reference's sign
};
// Tolerances used below.
constexpr FTol kExact{0, 0, true};
constexpr FTol kRounded{0.5, 0, true};
constexpr FTol ulps(double u) {
  return FTol{u, FLT_MIN, true};
}

// The spacing of f32 numbers at magnitude r (2^-149 in the subnormal range).
LD f32_ulp(LD r) {
  r = std::fabs(r);
  if (!(r >= FLT_MIN)) return 0x1p-149L;
  return std::ldexp(1.0L, std::ilogb(r) - 23);
}

// A reference intermediate evaluated with f32's range: beyond it, it overflows to +-inf as
// the f32 computation does (used where the mode's formula has such an intermediate).
LD f32_range(LD v) {
  float f = (float)v;
  return std::isinf(f) ? (LD)f : v;
}

// The reference for a _GRAD mode y * g(x), g(x) computed in f32 first: g is measured against
// `g_scale` (the size of its terms) with `extra_ulps`; where g underflows f32 (|g| < 1e-35),
// the product is only checked to |y| * 1e-35; there and near a root of g, where f32 may
// give g = +-0, y = inf may give NaN and the sign of a zero product is noise.
Ref grad_ref(LD g, LD y, LD g_scale = 0, double extra_ulps = 0) {
  Ref r(g * y, std::fmax(std::fabs(g), g_scale) * std::fabs(y), extra_ulps, std::fabs(y) * 1e-35L);
  bool maybe_zero = std::fabs(g) < 1e-35L || std::fabs(g) < 1e-4L * g_scale;
  r.nan_ok = maybe_zero && std::isinf(y);
  r.any_zero_sign = maybe_zero;
  return r;
}

// "" if `got` is acceptable for `r`, else why not.
std::string float_mismatch(float got, const Ref& r, const FTol& tol) {
  const LD want = r.v;
  if (std::isnan(want)) return std::isnan(got) ? "" : "expected NaN";
  if (std::isnan(got)) return r.nan_ok ? "" : "unexpected NaN";
  const double u = tol.ulps + r.ulps;
  if (std::isinf(got)) {
    if (std::isinf(want)) return (got > 0) == (want > 0) ? "" : "infinity of the wrong sign";
    // A finite reference at or past FLT_MAX (within the tolerance) may round to infinity.
    if ((got > 0) == (want > 0) && std::fabs(want) >= (LD)FLT_MAX * (1 - u * 0x1p-24L)) return "";
    return "unexpected infinity";
  }
  if (std::isinf(want)) return "expected infinity";
  if (want == 0 && got == 0) {
    if (tol.zero_sign && !r.any_zero_sign && std::signbit(got) != std::signbit(want))
      return "zero of the wrong sign";
    return "";
  }
  const LD err = std::fabs((LD)got - want);
  LD allowed = u * f32_ulp(std::fmax(std::fabs(want), r.scale));
  allowed = std::fmax(allowed, std::fmax(tol.abs, r.abs));
  if (err <= allowed) return "";
  std::ostringstream s;
  s.precision(3);
  s << "off by " << (double)(err / f32_ulp(std::fmax(std::fabs(want), r.scale))) << " ulp";
  return s.str();
}

template <size_t N>
using FPt = std::array<float, N>;

// The failing points of one check are reported (the first few in full) as one failure.
struct Failures {
  int count = 0;
  size_t total = 0;
  std::string text;
  void add(const std::string& line) {
    if (++count <= 8) text += "  " + line + "\n";
  }
  void report(Mode m, const char* dtype) const {
    EXPECT_EQ(count, 0) << mode_info(m).name << " (" << dtype << "): " << count << " of " << total
                        << " points wrong, e.g.\n"
                        << text;
  }
};

// Float -> float: got vs. the long double reference `ref(x...)`, which returns LD or Ref.
template <Mode M, size_t N, class RefFn>
void check_f32(const std::vector<FPt<N>>& pts, FTol tol, RefFn ref) {
  g_covered |= kF32;
  Failures f;
  f.total = pts.size();
  for (const FPt<N>& p : pts) {
    float got = std::apply([](auto... a) { return ModeFn<M>::apply(a...); }, p);
    static_assert(std::is_same_v<decltype(got), float>);
    std::array<LD, N> lp;
    for (size_t i = 0; i < N; ++i) lp[i] = p[i];
    Ref r = std::apply(ref, lp);
    std::string why = float_mismatch(got, r, tol);
    if (!why.empty())
      f.add(call_text(M, p) + " = " + fmt(got) + ", reference " + fmt(r.v) + ": " + why);
  }
  f.report(M, "f32");
}

// T -> bool (Compare and Predicate modes): exact. The reference gets long double for float
// and 128-bit integers for integer types.
template <Mode M, class T, size_t N, class RefFn>
void check_bool_result(const std::vector<std::array<T, N>>& pts, RefFn ref) {
  g_covered |= dtype_bit<T>();
  Failures f;
  f.total = pts.size();
  using W = std::conditional_t<std::is_same_v<T, float>, LD, I128>;
  for (const auto& p : pts) {
    auto got = std::apply([](auto... a) { return ModeFn<M>::apply(a...); }, p);
    static_assert(std::is_same_v<decltype(got), bool>);
    bool want = std::apply([&](auto... a) { return (bool)ref((W)a...); }, p);
    if (got != want) f.add(call_text(M, p) + " = " + fmt_arg(got) + ", reference " + fmt_arg(want));
  }
  f.report(M, dtype_text<T>());
}

// ------------------------------------------------------------------------------------------
// Integer and bool checks: the reference computes in 128-bit integers; the result is reduced
// modulo 2^bits into T's range (bool: 1 bit, so 0/1).

struct IntCtx {
  int bits;
  bool is_signed;
  I128 wrap(I128 v) const {
    U128 m = (U128)1 << bits;
    U128 r = (U128)v & (m - 1);
    if (is_signed && r >= m / 2) return (I128)r - (I128)m;
    return (I128)r;
  }
  I128 min() const { return is_signed ? -((I128)1 << (bits - 1)) : 0; }
  I128 max() const { return is_signed ? ((I128)1 << (bits - 1)) - 1 : ((I128)1 << bits) - 1; }
};
template <class T>
constexpr IntCtx int_ctx() {
  if constexpr (std::is_same_v<T, bool>)
    return {1, false};
  else
    return {(int)sizeof(T) * 8, std::is_signed_v<T>};
}

// floor(a / b) for b != 0, in 128 bits.
I128 floor_div128(I128 a, I128 b) {
  I128 q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}

template <Mode M, class T, size_t N, class RefFn>
void check_int(const std::vector<std::array<T, N>>& pts, RefFn ref) {
  g_covered |= dtype_bit<T>();
  const IntCtx c = int_ctx<T>();
  Failures f;
  f.total = pts.size();
  for (const auto& p : pts) {
    auto got = std::apply([](auto... a) { return ModeFn<M>::apply(a...); }, p);
    static_assert(std::is_same_v<decltype(got), T>, "integer modes return their input type");
    I128 want = c.wrap(std::apply([&](auto... a) { return (I128)ref(c, (I128)a...); }, p));
    if ((I128)got != want)
      f.add(call_text(M, p) + " = " + fmt_arg(got) + ", reference " + fmt(want));
  }
  f.report(M, dtype_text<T>());
}

// ------------------------------------------------------------------------------------------
// Input grids.

std::vector<float> float_specials() {
  return {0.0f,    -0.0f,   1,           -1,         0.5f,         -0.5f,      2,        -2,
          3,       -3,      1.5f,        -1.5f,      2.5f,         -2.5f,      0.1f,     -0.1f,
          0.25f,   0.75f,   -0.75f,      1e-3f,      -1e-3f,       1e-7f,      -1e-7f,   1e-20f,
          -1e-20f, FLT_MIN, -FLT_MIN,    1e-40f,     -1e-40f,      4,          6,        -6,
          7,       10,      -10,         15,         20,           -20,        30,       50,
          -50,     88,      -88,         89,         -89,          100,        -100,     1e4f,
          -1e4f,   1e10f,   -1e10f,      1e30f,      -1e30f,       FLT_MAX,    -FLT_MAX, kInf,
          -kInf,   kNaN,    0.99999994f, 1.0000001f, -0.99999994f, -1.0000001f};
}

// Unary points: the specials, a dense grid over [-12, 12] and the mode's own extras.
std::vector<FPt<1>> unary_points(std::initializer_list<float> extra = {}) {
  std::vector<FPt<1>> v;
  for (float x : float_specials()) v.push_back({x});
  for (int i = -480; i <= 480; ++i) v.push_back({(float)i / 40.0f});
  for (float x : extra) v.push_back({x});
  return v;
}
// Points of [lo, hi] (inclusive), n of them.
std::vector<FPt<1>> linspace(float lo, float hi, int n) {
  std::vector<FPt<1>> v;
  for (int i = 0; i < n; ++i) v.push_back({lo + (hi - lo) * (float)i / (float)(n - 1)});
  return v;
}

const std::vector<float>& binary_set() {
  static const std::vector<float> s = {0.0f, -0.0f, 1,      -1,      0.5f,     -2,   3,     -3.5f,
                                       2.5f, 0.75f, 1e-3f,  -1e-30f, 1e-40f,   7,    -10,   100,
                                       -100, 1e30f, -1e30f, FLT_MAX, -FLT_MAX, kInf, -kInf, kNaN};
  return s;
}
// Binary points: all pairs of binary_set(), a dense grid over [-5, 5]^2 and extras.
std::vector<FPt<2>> binary_points(std::initializer_list<FPt<2>> extra = {}) {
  std::vector<FPt<2>> v;
  for (float x : binary_set())
    for (float y : binary_set()) v.push_back({x, y});
  for (int i = -20; i <= 20; ++i)
    for (int j = -20; j <= 20; ++j) v.push_back({(float)i / 4.0f, (float)j * 0.3f - 0.05f});
  for (const auto& p : extra) v.push_back(p);
  return v;
}
// Pairs (x, y) with x from `xs` (a unary grid) and y from a few scales: for the _GRAD modes.
std::vector<FPt<2>> grad_points(const std::vector<FPt<1>>& xs) {
  std::vector<FPt<2>> v;
  for (const auto& x : xs)
    for (float y : {1.0f, -2.5f, 0.0f, -0.0f, 1e30f, 1e-30f, kInf, kNaN}) v.push_back({x[0], y});
  return v;
}

template <size_t N>
std::vector<FPt<N>> cube(const std::vector<float>& s) {
  std::vector<FPt<N>> v;
  size_t total = 1;
  for (size_t i = 0; i < N; ++i) total *= s.size();
  for (size_t k = 0; k < total; ++k) {
    FPt<N> p;
    size_t r = k;
    for (size_t i = 0; i < N; ++i) p[i] = s[r % s.size()], r /= s.size();
    v.push_back(p);
  }
  return v;
}
std::vector<FPt<3>> ternary_points() {
  auto v = cube<3>({0.0f, -0.0f, 1, -1, 0.5f, 2.5f, -3, 1e15f, -1e15f, kInf, -kInf, kNaN});
  auto d = cube<3>({-2.5f, -2, -1.5f, -1, -0.5f, 0, 0.5f, 1, 1.5f, 2, 2.5f});
  v.insert(v.end(), d.begin(), d.end());
  return v;
}
std::vector<FPt<4>> quaternary_points() {
  auto v = cube<4>({0.0f, -0.0f, 1, -1, 2.5f, -3, 1e15f, kInf, -kInf, kNaN});
  auto d = cube<4>({-2, -1.5f, -0.5f, 0.25f, 1, 3});
  v.insert(v.end(), d.begin(), d.end());
  return v;
}

template <class T>
std::vector<T> int_values() {
  if constexpr (std::is_same_v<T, bool>) {
    return {false, true};
  } else if constexpr (std::is_same_v<T, u8>) {
    std::vector<T> v;
    for (int i = 0; i < 256; ++i) v.push_back((T)i);
    return v;
  } else if constexpr (std::is_same_v<T, i32>) {
    return {0,      1,     -1,      2,          -2,      3,       -3,          5,
            -7,     6,     7,       31,         32,      100,     -100,        12345,
            -98765, 46341, 1 << 30, -(1 << 30), INT_MAX, INT_MIN, INT_MAX - 1, INT_MIN + 1};
  } else {
    return {0,
            1,
            -1,
            2,
            -2,
            3,
            -3,
            5,
            -7,
            6,
            7,
            63,
            64,
            100,
            -100,
            1ll << 31,
            -(1ll << 31) - 1,
            3037000500ll,
            1ll << 62,
            -(1ll << 62),
            0x123456789abcdefll,
            LLONG_MAX,
            LLONG_MIN,
            LLONG_MAX - 1,
            LLONG_MIN + 1};
  }
}
// A smaller set for the ternary and 4-ary modes.
template <class T>
std::vector<T> few_int_values() {
  if constexpr (std::is_same_v<T, bool>)
    return {false, true};
  else if constexpr (std::is_same_v<T, u8>)
    return {0, 1, 2, 3, 6, 7, 100, 128, 254, 255};
  else
    return {0,
            1,
            -1,
            2,
            -3,
            7,
            100,
            std::numeric_limits<T>::max(),
            std::numeric_limits<T>::min(),
            (T)1 << 30};
}
template <class T, size_t N>
std::vector<std::array<T, N>> int_points() {
  std::vector<T> s = N <= 2 ? int_values<T>() : few_int_values<T>();
  std::vector<std::array<T, N>> v;
  size_t total = 1;
  for (size_t i = 0; i < N; ++i) total *= s.size();
  for (size_t k = 0; k < total; ++k) {
    std::array<T, N> p;
    size_t r = k;
    for (size_t i = 0; i < N; ++i) p[i] = s[r % s.size()], r /= s.size();
    v.push_back(p);
  }
  return v;
}

// The numeric integer types, each on its grid.
template <Mode M, size_t N, class RefFn>
void check_ints(RefFn ref) {
  check_int<M, i32>(int_points<i32, N>(), ref);
  check_int<M, i64>(int_points<i64, N>(), ref);
  check_int<M, u8>(int_points<u8, N>(), ref);
}
// Compare modes on every numeric type.
template <Mode M, class RefFn>
void check_compare(RefFn ref) {
  check_bool_result<M, float, 2>(binary_points(), ref);
  check_bool_result<M, i32, 2>(int_points<i32, 2>(), ref);
  check_bool_result<M, i64, 2>(int_points<i64, 2>(), ref);
  check_bool_result<M, u8, 2>(int_points<u8, 2>(), ref);
}

// ------------------------------------------------------------------------------------------
// Long double references that <cmath> lacks.

LD erfcinv_ref(LD q);
// Newton on erf(y) = x for |x| <= 1/2; through erfcinv (1 -+ x is exact) beyond.
LD erfinv_ref(LD x) {
  if (std::isnan(x) || x < -1 || x > 1) return kLNaN;
  if (x == 1) return kLInf;
  if (x == -1) return -kLInf;
  if (x == 0) return x;
  if (std::fabs(x) > 0.5L) return x > 0 ? erfcinv_ref(1 - x) : -erfcinv_ref(1 + x);
  LD y = x * kSqrtPiOver2;
  for (int i = 0; i < 100; ++i) {
    LD d = (std::erf(y) - x) * kSqrtPiOver2 * std::exp(y * y);
    y -= d;
    if (std::fabs(d) <= std::fabs(y) * 1e-20L) break;
  }
  return y;
}
// Bisection on erfc (decreasing) for q < 1/2, where erfinv(1 - q) would lose q's digits.
LD erfcinv_ref(LD q) {
  if (std::isnan(q) || q < 0 || q > 2) return kLNaN;
  if (q == 0) return kLInf;
  if (q == 2) return -kLInf;
  if (q > 1.5L) return -erfcinv_ref(2 - q);
  if (q >= 0.5L) return erfinv_ref(1 - q);
  LD lo = 0, hi = 30;  // erfc(lo) > q > erfc(hi)
  for (int i = 0; i < 200; ++i) {
    LD mid = (lo + hi) / 2;
    if (mid == lo || mid == hi) break;
    (std::erfc(mid) > q ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

LD sigmoid_ref(LD x) {
  return 1 / (1 + std::exp(-x));
}
// log(1 + e^x), by the series beyond long double's exp range.
LD softplus_ref(LD x) {
  if (std::isnan(x)) return x;
  if (x > 1000) return x + std::exp(-x);
  return std::log1p(std::exp(x));
}
LD h_swish_ref(LD x) {
  if (std::isnan(x)) return x;
  if (x <= -3) return -0.0L;  // x * 0 with x < 0
  if (x >= 3) return x;
  return x * (x + 3) / 6;
}
LD fast_tanh_ref(LD x) {
  LD c = std::isnan(x) ? x : std::fmin(std::fmax(x, -3.0L), 3.0L);
  return c * (27 + c * c) / (27 + 9 * c * c);
}
LD normcdf_ref(LD x) {
  return std::erfc(-x / std::sqrt(2.0L)) / 2;
}
// log(e^x + e^y), directly where long double's exp does not overflow.
LD log_sum_exp_ref(LD x, LD y) {
  if (std::isnan(x) || std::isnan(y)) return kLNaN;
  if (x == kLInf || y == kLInf) return kLInf;
  if (x == -kLInf) return y + 0.0L;  // log(e^y); log(e^-0) = log(1) = +0
  if (y == -kLInf) return x + 0.0L;
  if (std::fabs(x) < 10000 && std::fabs(y) < 10000) return std::log(std::exp(x) + std::exp(y));
  LD m = std::fmax(x, y);
  return m + std::log1p(std::exp(-std::fabs(x - y)));
}

// ------------------------------------------------------------------------------------------
// One check per mode. X-macro: each mode's TEST runs check_<MODE>() and then requires that
// every dtype its kind admits was exercised.

#define X(NAME, ARITY, KIND, FLOPS) void check_##NAME();
#include "runtime/ops/elemwise_modes.def"
#undef X

#define X(NAME, ARITY, KIND, FLOPS)                                           \
  TEST(Modes, NAME) {                                                         \
    g_covered = 0;                                                            \
    check_##NAME();                                                           \
    EXPECT_EQ(g_covered, admitted_dtypes(ModeKind::KIND))                     \
        << #NAME ": the checks must cover exactly the dtypes of kind " #KIND; \
  }
#include "runtime/ops/elemwise_modes.def"
#undef X

// ---- unary ----------------------------------------------------------------------------

void check_RELU() {
  check_f32<Mode::RELU, 1>(unary_points(), kExact, [](LD x) -> LD {
    if (std::isnan(x)) return x;  // NaN propagates
    return x > 0 ? x : 0.0L;      // -0 -> +0
  });
  check_ints<Mode::RELU, 1>([](IntCtx, I128 x) { return x > 0 ? x : 0; });
  EXPECT_TRUE(std::isnan(call<Mode::RELU>(kNaN)));
  EXPECT_FALSE(std::signbit(call<Mode::RELU>(-0.0f)));
  EXPECT_EQ(call<Mode::RELU>(INT_MIN), 0);
}

void check_ABS() {
  check_f32<Mode::ABS, 1>(unary_points(), kExact, [](LD x) { return std::fabs(x); });
  check_ints<Mode::ABS, 1>([](IntCtx, I128 x) { return x < 0 ? -x : x; });
  EXPECT_EQ(call<Mode::ABS>(INT_MIN), INT_MIN);  // wraps
  EXPECT_EQ(call<Mode::ABS>(LLONG_MIN), LLONG_MIN);
  EXPECT_EQ(call<Mode::ABS>((u8)200), 200);
}

void check_ACOS() {
  check_f32<Mode::ACOS, 1>(unary_points({-0.99999994f, 0.70710677f, -0.3f}), ulps(4),
                           [](LD x) { return std::acos(x); });
  EXPECT_TRUE(std::isnan(call<Mode::ACOS>(2.0f)));  // domain error
  EXPECT_TRUE(std::isnan(call<Mode::ACOS>(-1.0000001f)));
}

void check_ASIN() {
  check_f32<Mode::ASIN, 1>(unary_points({0.70710677f, -0.3f}), ulps(4),
                           [](LD x) { return std::asin(x); });
  EXPECT_TRUE(std::isnan(call<Mode::ASIN>(-2.0f)));
}

void check_CEIL() {
  check_f32<Mode::CEIL, 1>(unary_points({8388607.5f, -8388607.5f, 16777217.0f, -0.25f}), kExact,
                           [](LD x) { return std::ceil(x); });
  EXPECT_TRUE(std::signbit(call<Mode::CEIL>(-0.5f)));  // ceil(-0.5) = -0
}

void check_COS() {
  check_f32<Mode::COS, 1>(unary_points({1.5707964f, 3.1415927f, 1e6f, -12345.678f}), ulps(4),
                          [](LD x) { return std::cos(x); });
}

void check_EXP() {
  check_f32<Mode::EXP, 1>(unary_points({88.7f, -87.3f, -103.0f, -104.0f, 1e-8f, -1e-8f}), ulps(4),
                          [](LD x) { return std::exp(x); });
  EXPECT_EQ(call<Mode::EXP>(-kInf), 0.0f);
  EXPECT_EQ(call<Mode::EXP>(0.0f), 1.0f);
}

void check_EXPM1() {
  check_f32<Mode::EXPM1, 1>(unary_points({1e-8f, -1e-8f, 88.7f, 3e-5f, -3e-5f}), ulps(4),
                            [](LD x) { return std::expm1(x); });
  EXPECT_TRUE(std::signbit(call<Mode::EXPM1>(-0.0f)));
}

void check_FLOOR() {
  check_f32<Mode::FLOOR, 1>(unary_points({8388607.5f, -8388607.5f, -0.25f}), kExact,
                            [](LD x) { return std::floor(x); });
  EXPECT_EQ(call<Mode::FLOOR>(-0.5f), -1.0f);
}

void check_LOG() {
  check_f32<Mode::LOG, 1>(unary_points({1.0000001f, 0.99999994f, 1e-45f, 2.7182817f}), ulps(4),
                          [](LD x) { return std::log(x); });
  EXPECT_EQ(call<Mode::LOG>(0.0f), -kInf);
  EXPECT_EQ(call<Mode::LOG>(-0.0f), -kInf);
  EXPECT_TRUE(std::isnan(call<Mode::LOG>(-1.0f)));  // domain error
  EXPECT_EQ(call<Mode::LOG>(1.0f), 0.0f);
}

void check_LOG1P() {
  check_f32<Mode::LOG1P, 1>(unary_points({-0.99999994f, 1e-8f, -1e-8f, 3e-5f}), ulps(4),
                            [](LD x) { return std::log1p(x); });
  EXPECT_EQ(call<Mode::LOG1P>(-1.0f), -kInf);
  EXPECT_TRUE(std::isnan(call<Mode::LOG1P>(-2.0f)));
  EXPECT_TRUE(std::signbit(call<Mode::LOG1P>(-0.0f)));
}

void check_NEGATE() {
  check_f32<Mode::NEGATE, 1>(unary_points(), kExact, [](LD x) { return -x; });
  check_ints<Mode::NEGATE, 1>([](IntCtx, I128 x) { return -x; });
  EXPECT_TRUE(std::signbit(call<Mode::NEGATE>(0.0f)));  // -(+0) = -0
  EXPECT_EQ(call<Mode::NEGATE>(INT_MIN), INT_MIN);
  EXPECT_EQ(call<Mode::NEGATE>((u8)1), 255);
}

void check_SIGMOID() {
  // 1 / (1 + e^-x): e^-x overflows f32 below x = -88.7, where the result (< 1e-38) is 0.
  check_f32<Mode::SIGMOID, 1>(unary_points({-88.0f, -87.0f, 17.0f, 16.6f}), ulps(6),
                              [](LD x) { return Ref(sigmoid_ref(x), 0, 0, 1e-35L); });
  EXPECT_EQ(call<Mode::SIGMOID>(kInf), 1.0f);
  EXPECT_EQ(call<Mode::SIGMOID>(-kInf), 0.0f);
}

void check_SIN() {
  check_f32<Mode::SIN, 1>(unary_points({3.1415927f, 1.5707964f, 1e6f, -12345.678f}), ulps(4),
                          [](LD x) { return std::sin(x); });
  EXPECT_TRUE(std::signbit(call<Mode::SIN>(-0.0f)));
  EXPECT_TRUE(std::isnan(call<Mode::SIN>(kInf)));
}

void check_TANH() {
  check_f32<Mode::TANH, 1>(unary_points({1e-4f, -0.55f, 0.55f, 9.0f}), ulps(4),
                           [](LD x) { return std::tanh(x); });
  EXPECT_EQ(call<Mode::TANH>(-kInf), -1.0f);
}

void check_FAST_TANH() {
  check_f32<Mode::FAST_TANH, 1>(unary_points({2.999f, 3.001f, -2.999f}), ulps(4),
                                [](LD x) { return fast_tanh_ref(x); });
  EXPECT_EQ(call<Mode::FAST_TANH>(3.0f), 1.0f);
  EXPECT_EQ(call<Mode::FAST_TANH>(-kInf), -1.0f);
  EXPECT_EQ(call<Mode::FAST_TANH>(1e30f), 1.0f);  // clamped, not x/9
  // The documented approximation error against tanh: at most 2.4e-2, reached near 1.57.
  float worst = 0, worst_x = 0;
  for (int i = -40000; i <= 40000; ++i) {
    float x = (float)i * 2.5e-4f;
    float e = std::fabs(call<Mode::FAST_TANH>(x) - (float)std::tanh((LD)x));
    if (e > worst) worst = e, worst_x = x;
  }
  EXPECT_LE(worst, 2.4e-2f);
  EXPECT_GE(worst, 2.3e-2f);
  EXPECT_NEAR(std::fabs(worst_x), 1.57f, 0.01f);
}

void check_ROUND() {
  // Half away from zero, and no floor(x + 0.5) double rounding (0.49999997 -> 0).
  check_f32<Mode::ROUND, 1>(unary_points({0.49999997f, -0.49999997f, 8388609.0f, 8388607.5f,
                                          -8388607.5f, 3.5f, -3.5f, 1e7f + 0.5f}),
                            kExact, [](LD x) { return std::round(x); });
  EXPECT_EQ(call<Mode::ROUND>(0.5f), 1.0f);
  EXPECT_EQ(call<Mode::ROUND>(-2.5f), -3.0f);
  EXPECT_EQ(call<Mode::ROUND>(0.49999997f), 0.0f);
  EXPECT_TRUE(std::signbit(call<Mode::ROUND>(-0.25f)));
}

void check_ERF() {
  check_f32<Mode::ERF, 1>(unary_points({1e-30f, 3.9f, -3.9f, 5.0f}), ulps(4),
                          [](LD x) { return std::erf(x); });
}

void check_ERFINV() {
  auto pts = linspace(-1, 1, 801);
  for (float x : {0.99999994f, -0.99999994f, 0.9999f, 0.999999f, 1e-30f, -1e-7f, 0.5f, 1.0f, -1.0f,
                  1.0000001f, -2.0f, 0.0f, -0.0f, kInf, -kInf, kNaN, 1e-40f})
    pts.push_back({x});
  check_f32<Mode::ERFINV, 1>(pts, ulps(8), [](LD x) { return erfinv_ref(x); });
  EXPECT_EQ(call<Mode::ERFINV>(1.0f), kInf);
  EXPECT_EQ(call<Mode::ERFINV>(-1.0f), -kInf);
  EXPECT_TRUE(std::isnan(call<Mode::ERFINV>(1.5f)));
}

void check_ERFC() {
  check_f32<Mode::ERFC, 1>(unary_points({9.0f, 9.19f, -5.0f, 0.47f, 26.0f}), ulps(4),
                           [](LD x) { return std::erfc(x); });
  EXPECT_EQ(call<Mode::ERFC>(-kInf), 2.0f);
}

void check_ERFCINV() {
  auto pts = linspace(0, 2, 801);
  for (float x : {1e-10f, 1e-20f, 1e-30f, 1e-38f, 1e-45f, 5.9604645e-8f, 0.01f, 1.99f, 1.9999999f,
                  2.0000002f, -1e-30f, 1.0f, kInf, -kInf, kNaN})
    pts.push_back({x});
  check_f32<Mode::ERFCINV, 1>(pts, ulps(8), [](LD x) { return erfcinv_ref(x); });
  EXPECT_EQ(call<Mode::ERFCINV>(0.0f), kInf);
  EXPECT_EQ(call<Mode::ERFCINV>(2.0f), -kInf);
  EXPECT_TRUE(std::isnan(call<Mode::ERFCINV>(-0.5f)));
}

void check_H_SWISH() {
  check_f32<Mode::H_SWISH, 1>(unary_points({2.9999998f, 3.0000002f, -2.9999998f}), ulps(2),
                              [](LD x) { return h_swish_ref(x); });
  EXPECT_EQ(call<Mode::H_SWISH>(FLT_MAX), FLT_MAX);  // no overflow in x * 6
  EXPECT_EQ(call<Mode::H_SWISH>(3.0f), 3.0f);
  EXPECT_EQ(call<Mode::H_SWISH>(-kInf), 0.0f);
}

void check_NOT() {
  // ~x = -x - 1 (bitwise); on bool, logical.
  auto ref = [](IntCtx, I128 x) { return -x - 1; };
  check_int<Mode::NOT, bool>(int_points<bool, 1>(), ref);
  check_int<Mode::NOT, i32>(int_points<i32, 1>(), ref);
  check_int<Mode::NOT, i64>(int_points<i64, 1>(), ref);
  check_int<Mode::NOT, u8>(int_points<u8, 1>(), ref);
  EXPECT_EQ(call<Mode::NOT>(true), false);
  EXPECT_EQ(call<Mode::NOT>(false), true);
  EXPECT_EQ(call<Mode::NOT>((u8)0x0f), 0xf0);
  EXPECT_EQ(call<Mode::NOT>(0), -1);
}

void check_SILU() {
  check_f32<Mode::SILU, 1>(unary_points({-87.0f, -1.2784645f, 17.0f}), ulps(6), [](LD x) {
    if (x == -kLInf) return Ref(-0.0L);  // the limit, x e^x -> -0
    return Ref(x / (1 + std::exp(-x)), 0, 0, 1e-35L);
  });
  EXPECT_EQ(call<Mode::SILU>(-kInf), 0.0f);
  EXPECT_EQ(call<Mode::SILU>(kInf), kInf);
}

void check_GELU() {
  // x Phi(x). The f32 argument x / sqrt(2) carries a relative error of ~0.6 ULP, which the
  // lower tail of erfc amplifies by x^2: allow that.
  check_f32<Mode::GELU, 1>(unary_points({-5.5f, -7.0f, -13.0f, -0.75f}), ulps(6), [](LD x) {
    if (x == -kLInf) return Ref(-0.0L);
    return Ref(x * normcdf_ref(x), 0, x < 0 ? (double)(x * x) : 0);
  });
  EXPECT_EQ(call<Mode::GELU>(-kInf), 0.0f);
  EXPECT_EQ(call<Mode::GELU>(kInf), kInf);
  // The lower tail does not cancel to 0 (1 + erf would, below -5.9).
  EXPECT_NEAR(call<Mode::GELU>(-7.0f) / (float)(-7.0L * normcdf_ref(-7.0L)), 1.0f, 1e-4f);
}

void check_ISNAN() {
  auto pts = unary_points({-kNaN, std::numeric_limits<float>::signaling_NaN()});
  check_bool_result<Mode::ISNAN, float, 1>(pts, [](LD x) { return std::isnan(x); });
}

void check_ISINF() {
  check_bool_result<Mode::ISINF, float, 1>(unary_points(), [](LD x) { return std::isinf(x); });
  EXPECT_FALSE(call<Mode::ISINF>(FLT_MAX));
  EXPECT_TRUE(call<Mode::ISINF>(-kInf));
}

void check_SINH() {
  check_f32<Mode::SINH, 1>(unary_points({89.4f, -89.4f, 1e-4f, 0.3f}), ulps(4),
                           [](LD x) { return std::sinh(x); });
}

void check_COSH() {
  check_f32<Mode::COSH, 1>(unary_points({89.4f, -89.4f, 1e-4f}), ulps(4),
                           [](LD x) { return std::cosh(x); });
}

void check_ASINH() {
  check_f32<Mode::ASINH, 1>(unary_points({1e-4f, 1e19f, -1e19f}), ulps(4),
                            [](LD x) { return std::asinh(x); });
}

void check_ACOSH() {
  check_f32<Mode::ACOSH, 1>(unary_points({1.0000001f, 1.0001f, 1e19f}), ulps(4),
                            [](LD x) { return std::acosh(x); });
  EXPECT_EQ(call<Mode::ACOSH>(1.0f), 0.0f);
  EXPECT_TRUE(std::isnan(call<Mode::ACOSH>(0.5f)));  // domain error
}

void check_ATANH() {
  check_f32<Mode::ATANH, 1>(unary_points({0.99999994f, -0.99999994f, 1e-4f, 0.6f}), ulps(4),
                            [](LD x) { return std::atanh(x); });
  EXPECT_EQ(call<Mode::ATANH>(1.0f), kInf);
  EXPECT_EQ(call<Mode::ATANH>(-1.0f), -kInf);
  EXPECT_TRUE(std::isnan(call<Mode::ATANH>(2.0f)));
}

void check_TAN() {
  check_f32<Mode::TAN, 1>(unary_points({1.5707964f, -1.5707964f, 1.5707963f, 1e6f}), ulps(4),
                          [](LD x) { return std::tan(x); });
}

void check_SOFTPLUS() {
  check_f32<Mode::SOFTPLUS, 1>(unary_points({-87.0f, -104.0f, 16.0f, 17.0f}), ulps(6),
                               [](LD x) { return softplus_ref(x); });
  EXPECT_EQ(call<Mode::SOFTPLUS>(kInf), kInf);
  EXPECT_EQ(call<Mode::SOFTPLUS>(-kInf), 0.0f);
  EXPECT_EQ(call<Mode::SOFTPLUS>(1e30f), 1e30f);
}

void check_RELU6() {
  check_f32<Mode::RELU6, 1>(unary_points({5.9999995f, 6.0000005f}), kExact, [](LD x) -> LD {
    if (std::isnan(x)) return x;
    return x <= 0 ? 0.0L : (x >= 6 ? 6.0L : x);
  });
  check_ints<Mode::RELU6, 1>([](IntCtx, I128 x) -> I128 { return x < 0 ? 0 : (x > 6 ? 6 : x); });
  EXPECT_TRUE(std::isnan(call<Mode::RELU6>(kNaN)));
  EXPECT_EQ(call<Mode::RELU6>((u8)255), 6);
}

void check_HSIGMOID() {
  check_f32<Mode::HSIGMOID, 1>(unary_points(), ulps(1.5), [](LD x) -> LD {
    if (std::isnan(x)) return x;
    return x <= -3 ? 0.0L : (x >= 3 ? 1.0L : (x + 3) / 6);
  });
  EXPECT_EQ(call<Mode::HSIGMOID>(3.0f), 1.0f);
  EXPECT_EQ(call<Mode::HSIGMOID>(kInf), 1.0f);
}

void check_LOGSIGMOID() {
  // -log(1 + e^-x); for large x the true value underflows (to -0, or +0 as in MegEngine).
  check_f32<Mode::LOGSIGMOID, 1>(unary_points({-87.0f, 16.0f, 17.0f, 104.0f}),
                                 FTol{6, FLT_MIN, false}, [](LD x) { return -softplus_ref(-x); });
  EXPECT_NEAR(call<Mode::LOGSIGMOID>(0.0f), -(float)kLn2, 1e-7f);
  EXPECT_EQ(call<Mode::LOGSIGMOID>(-kInf), -kInf);
  EXPECT_EQ(call<Mode::LOGSIGMOID>(kInf), 0.0f);
}

void check_SQRT() {
  check_f32<Mode::SQRT, 1>(unary_points({2.0f, 1e-45f, 0.99999994f}), ulps(1),
                           [](LD x) { return std::sqrt(x); });
  EXPECT_TRUE(std::signbit(call<Mode::SQRT>(-0.0f)));
  EXPECT_TRUE(std::isnan(call<Mode::SQRT>(-1.0f)));
}

void check_SQUARE() {
  check_f32<Mode::SQUARE, 1>(unary_points({1.8446743e19f, 1.9e19f}), kRounded,
                             [](LD x) { return x * x; });
  check_ints<Mode::SQUARE, 1>([](IntCtx, I128 x) { return x * x; });
  EXPECT_EQ(call<Mode::SQUARE>(65536), 0);  // 2^32 wraps to 0
  EXPECT_EQ(call<Mode::SQUARE>(46341), -2147479015);
  EXPECT_EQ(call<Mode::SQUARE>((u8)16), 0);
}

void check_SIGN() {
  check_f32<Mode::SIGN, 1>(unary_points(), kExact, [](LD x) -> LD {
    return x > 0 ? 1.0L : (x < 0 ? -1.0L : 0.0L);  // NaN and -0 -> +0
  });
  check_ints<Mode::SIGN, 1>([](IntCtx, I128 x) -> I128 { return x > 0 ? 1 : (x < 0 ? -1 : 0); });
  EXPECT_EQ(call<Mode::SIGN>(kNaN), 0.0f);
  EXPECT_EQ(call<Mode::SIGN>(INT_MIN), -1);
}

// ---- binary ---------------------------------------------------------------------------

void check_ABS_GRAD() {
  check_f32<Mode::ABS_GRAD, 2>(binary_points(), kExact, [](LD x, LD y) { return x > 0 ? y : -y; });
  check_ints<Mode::ABS_GRAD, 2>([](IntCtx, I128 x, I128 y) { return x > 0 ? y : -y; });
  EXPECT_TRUE(std::signbit(call<Mode::ABS_GRAD>(-1.0f, 0.0f)));
  EXPECT_EQ(call<Mode::ABS_GRAD>(0, INT_MIN), INT_MIN);
}

void check_ADD() {
  check_f32<Mode::ADD, 2>(binary_points({{FLT_MAX, FLT_MAX}, {1.0f, 5.9604645e-8f}}), kRounded,
                          [](LD x, LD y) { return x + y; });
  check_ints<Mode::ADD, 2>([](IntCtx, I128 x, I128 y) { return x + y; });
  EXPECT_EQ(call<Mode::ADD>(INT_MAX, 1), INT_MIN);
  EXPECT_EQ(call<Mode::ADD>(LLONG_MAX, 1ll), LLONG_MIN);
  EXPECT_EQ(call<Mode::ADD>((u8)250, (u8)10), 4);
  EXPECT_FALSE(std::signbit(call<Mode::ADD>(-0.0f, 0.0f)));
  EXPECT_TRUE(std::signbit(call<Mode::ADD>(-0.0f, -0.0f)));
}

void check_FLOOR_DIV() {
  // Floats: floor of the rounded f32 quotient, as MegEngine's floorf(x / y).
  check_f32<Mode::FLOOR_DIV, 2>(binary_points({{7, 2}, {-7, 2}, {7, -2}, {1, 0.1f}, {-0.0f, 3}}),
                                kExact, [](LD x, LD y) { return std::floor((LD)(float)(x / y)); });
  // Integers: rounds toward -inf; division by zero gives 0; INT_MIN / -1 wraps.
  check_ints<Mode::FLOOR_DIV, 2>(
      [](IntCtx, I128 x, I128 y) -> I128 { return y == 0 ? 0 : floor_div128(x, y); });
  EXPECT_EQ(call<Mode::FLOOR_DIV>(-7, 2), -4);
  EXPECT_EQ(call<Mode::FLOOR_DIV>(7, -2), -4);
  EXPECT_EQ(call<Mode::FLOOR_DIV>(-7, -2), 3);
  EXPECT_EQ(call<Mode::FLOOR_DIV>(5, 0), 0);
  EXPECT_EQ(call<Mode::FLOOR_DIV>(INT_MIN, -1), INT_MIN);
  EXPECT_EQ(call<Mode::FLOOR_DIV>(LLONG_MIN, -1ll), LLONG_MIN);
  EXPECT_EQ(call<Mode::FLOOR_DIV>((u8)200, (u8)0), 0);
  EXPECT_EQ(call<Mode::FLOOR_DIV>(-7.0f, 2.0f), -4.0f);
  EXPECT_EQ(call<Mode::FLOOR_DIV>(1.0f, 0.0f), kInf);
  EXPECT_TRUE(std::isnan(call<Mode::FLOOR_DIV>(0.0f, 0.0f)));
}

void check_MAX() {
  // NaN from either side propagates; the sign of a zero from MAX(+0, -0) is unspecified.
  auto ref = [](auto x, auto y) {
    if constexpr (std::is_same_v<decltype(x), LD>)
      if (std::isnan(x) || std::isnan(y)) return kLNaN;
    return x > y ? x : y;
  };
  check_f32<Mode::MAX, 2>(binary_points(), FTol{0, 0, false},
                          [&](LD x, LD y) { return ref(x, y); });
  check_ints<Mode::MAX, 2>([&](IntCtx, I128 x, I128 y) { return ref(x, y); });
  EXPECT_TRUE(std::isnan(call<Mode::MAX>(kNaN, 1.0f)));
  EXPECT_TRUE(std::isnan(call<Mode::MAX>(1.0f, kNaN)));
}

void check_MIN() {
  auto ref = [](auto x, auto y) {
    if constexpr (std::is_same_v<decltype(x), LD>)
      if (std::isnan(x) || std::isnan(y)) return kLNaN;
    return x < y ? x : y;
  };
  check_f32<Mode::MIN, 2>(binary_points(), FTol{0, 0, false},
                          [&](LD x, LD y) { return ref(x, y); });
  check_ints<Mode::MIN, 2>([&](IntCtx, I128 x, I128 y) { return ref(x, y); });
  EXPECT_TRUE(std::isnan(call<Mode::MIN>(kNaN, -kInf)));
  EXPECT_TRUE(std::isnan(call<Mode::MIN>(-kInf, kNaN)));
}

void check_MOD() {
  // Floats: fmod (exact; the sign of x). Integers: C's % (the sign of x); % 0 gives 0.
  check_f32<Mode::MOD, 2>(binary_points({{-7, 2}, {7, -2}, {1e30f, 3}, {-0.0f, 5}}), kExact,
                          [](LD x, LD y) { return std::fmod(x, y); });
  check_ints<Mode::MOD, 2>([](IntCtx, I128 x, I128 y) -> I128 { return y == 0 ? 0 : x % y; });
  EXPECT_EQ(call<Mode::MOD>(-7, 2), -1);
  EXPECT_EQ(call<Mode::MOD>(7, -2), 1);
  EXPECT_EQ(call<Mode::MOD>(7, 0), 0);
  EXPECT_EQ(call<Mode::MOD>(INT_MIN, -1), 0);
  EXPECT_EQ(call<Mode::MOD>(-7.0f, 2.0f), -1.0f);
  EXPECT_TRUE(std::isnan(call<Mode::MOD>(1.0f, 0.0f)));
  EXPECT_TRUE(std::isnan(call<Mode::MOD>(kInf, 1.0f)));
  EXPECT_EQ(call<Mode::MOD>(2.5f, kInf), 2.5f);
}

void check_MUL() {
  check_f32<Mode::MUL, 2>(binary_points(), kRounded, [](LD x, LD y) { return x * y; });
  check_ints<Mode::MUL, 2>([](IntCtx, I128 x, I128 y) { return x * y; });
  EXPECT_EQ(call<Mode::MUL>(INT_MIN, -1), INT_MIN);
  EXPECT_EQ(call<Mode::MUL>(65536, 65536), 0);
  EXPECT_EQ(call<Mode::MUL>((u8)16, (u8)17), 16);
  EXPECT_TRUE(std::isnan(call<Mode::MUL>(0.0f, kInf)));
}

void check_POW() {
  check_f32<Mode::POW, 2>(binary_points({{-8, 1.0f / 3},
                                         {2, 0.5f},
                                         {10, 38},
                                         {10, -45},
                                         {2, -149},
                                         {-2, 3},
                                         {-0.0f, -1},
                                         {-0.0f, 3},
                                         {kNaN, 0},
                                         {1, kNaN},
                                         {-1, kInf},
                                         {0.5f, kInf},
                                         {1.0000001f, 1e7f},
                                         {3, 20.5f}}),
                          ulps(4), [](LD x, LD y) { return std::pow(x, y); });
  EXPECT_EQ(call<Mode::POW>(kNaN, 0.0f), 1.0f);
  EXPECT_EQ(call<Mode::POW>(1.0f, kNaN), 1.0f);
  EXPECT_TRUE(std::isnan(call<Mode::POW>(-8.0f, 1.0f / 3)));  // domain error
  EXPECT_EQ(call<Mode::POW>(-0.0f, -1.0f), -kInf);
  EXPECT_EQ(call<Mode::POW>(0.0f, -2.0f), kInf);
}

void check_SIGMOID_GRAD() {
  // x (1 - x) y, x the sigmoid's output.
  check_f32<Mode::SIGMOID_GRAD, 2>(binary_points(), ulps(2),
                                   [](LD x, LD y) { return f32_range(x * f32_range(1 - x)) * y; });
}

void check_SUB() {
  check_f32<Mode::SUB, 2>(binary_points({{1.0f, 0.99999994f}, {-FLT_MAX, FLT_MAX}}), kRounded,
                          [](LD x, LD y) { return x - y; });
  check_ints<Mode::SUB, 2>([](IntCtx, I128 x, I128 y) { return x - y; });
  EXPECT_EQ(call<Mode::SUB>(INT_MIN, 1), INT_MAX);
  EXPECT_EQ(call<Mode::SUB>((u8)0, (u8)1), 255);
  EXPECT_FALSE(std::signbit(call<Mode::SUB>(0.0f, 0.0f)));
}

void check_SWITCH_GT0() {
  check_f32<Mode::SWITCH_GT0, 2>(binary_points(), kExact,
                                 [](LD x, LD y) { return x > 0 ? y : 0.0L; });
  check_ints<Mode::SWITCH_GT0, 2>([](IntCtx, I128 x, I128 y) -> I128 { return x > 0 ? y : 0; });
  EXPECT_EQ(call<Mode::SWITCH_GT0>(kNaN, 5.0f), 0.0f);
  EXPECT_EQ(call<Mode::SWITCH_GT0>(-0.0f, 5.0f), 0.0f);
}

void check_TANH_GRAD() {
  // (1 - x^2) y, x the tanh's output.
  auto pts = binary_points({{0.99999994f, 1}, {0.9997559f, 1}, {-0.9997559f, 3}});
  check_f32<Mode::TANH_GRAD, 2>(pts, ulps(2),
                                [](LD x, LD y) { return f32_range((1 - x) * (1 + x)) * y; });
}

void check_TRUE_DIV() {
  check_f32<Mode::TRUE_DIV, 2>(binary_points({{1, 3}, {1e-40f, 3}, {FLT_MAX, 0.5f}}), kRounded,
                               [](LD x, LD y) { return x / y; });
  EXPECT_EQ(call<Mode::TRUE_DIV>(1.0f, -0.0f), -kInf);
  EXPECT_TRUE(std::isnan(call<Mode::TRUE_DIV>(0.0f, 0.0f)));
}

void check_LOG_SUM_EXP() {
  // log(e^x + e^y). Near a zero result, m + log1p(e^-|x-y|) cancels: errors are measured
  // against the size of the two terms.
  check_f32<Mode::LOG_SUM_EXP, 2>(
      binary_points({{-0.5f, -0.9f}, {88, 88}, {1e30f, 1e30f}, {100, -100}, {-1e30f, -1e30f}}),
      ulps(6), [](LD x, LD y) {
        LD v = log_sum_exp_ref(x, y);
        LD m = std::fmax(x, y);
        return Ref(v, std::isfinite(m) ? std::fabs(m) + kLn2 : 0);
      });
  EXPECT_EQ(call<Mode::LOG_SUM_EXP>(kInf, kInf), kInf);
  EXPECT_EQ(call<Mode::LOG_SUM_EXP>(-kInf, -kInf), -kInf);
  EXPECT_EQ(call<Mode::LOG_SUM_EXP>(1e30f, 1e30f), 1e30f);
}

void check_LT() {
  check_compare<Mode::LT>([](auto x, auto y) { return x < y; });
  EXPECT_FALSE(call<Mode::LT>(kNaN, 1.0f));
  EXPECT_FALSE(call<Mode::LT>(-0.0f, 0.0f));
}

void check_LEQ() {
  check_compare<Mode::LEQ>([](auto x, auto y) { return x <= y; });
  EXPECT_TRUE(call<Mode::LEQ>(-0.0f, 0.0f));
  EXPECT_FALSE(call<Mode::LEQ>(kNaN, kNaN));
}

void check_EQ() {
  check_compare<Mode::EQ>([](auto x, auto y) { return x == y; });
  EXPECT_TRUE(call<Mode::EQ>(-0.0f, 0.0f));
  EXPECT_FALSE(call<Mode::EQ>(kNaN, kNaN));
}

void check_NEQ() {
  check_compare<Mode::NEQ>([](auto x, auto y) { return x != y; });
  EXPECT_TRUE(call<Mode::NEQ>(kNaN, kNaN));
  EXPECT_FALSE(call<Mode::NEQ>((u8)7, (u8)7));
}

// Shift counts: in range, negative, and at or past the width.
template <class T>
std::vector<std::array<T, 2>> shift_points() {
  std::vector<T> counts;
  if constexpr (std::is_same_v<T, u8>) {
    for (int i = 0; i < 256; ++i) counts.push_back((T)i);
  } else {
    counts = {std::numeric_limits<T>::min(),
              -100,
              -1,
              0,
              1,
              2,
              7,
              8,
              15,
              16,
              30,
              31,
              32,
              33,
              62,
              63,
              64,
              65,
              1000,
              std::numeric_limits<T>::max()};
  }
  std::vector<std::array<T, 2>> v;
  for (T x : int_values<T>())
    for (T n : counts) v.push_back({x, n});
  return v;
}

void check_SHL() {
  // x * 2^n modulo 2^bits for 0 <= n < bits; 0 for any other count.
  auto ref = [](IntCtx c, I128 x, I128 n) -> I128 {
    if (n < 0 || n >= c.bits) return 0;
    return (I128)((U128)x << (int)n);
  };
  check_int<Mode::SHL, i32>(shift_points<i32>(), ref);
  check_int<Mode::SHL, i64>(shift_points<i64>(), ref);
  check_int<Mode::SHL, u8>(shift_points<u8>(), ref);
  EXPECT_EQ(call<Mode::SHL>(1, 31), INT_MIN);
  EXPECT_EQ(call<Mode::SHL>(1, 32), 0);
  EXPECT_EQ(call<Mode::SHL>(1, -1), 0);
  EXPECT_EQ(call<Mode::SHL>(-1ll, 63ll), LLONG_MIN);
  EXPECT_EQ(call<Mode::SHL>((u8)0x81, (u8)1), 2);
  EXPECT_EQ(call<Mode::SHL>((u8)1, (u8)8), 0);
}

void check_SHR() {
  // floor(x / 2^n) for n >= 0 (arithmetic: the sign fills), which is 0 or -1 once n >= bits;
  // the sign fill for n < 0.
  auto ref = [](IntCtx c, I128 x, I128 n) -> I128 {
    if (n < 0) return x < 0 ? -1 : 0;
    if (n > 100) n = 100;
    return floor_div128(x, (I128)1 << (int)n);
  };
  check_int<Mode::SHR, i32>(shift_points<i32>(), ref);
  check_int<Mode::SHR, i64>(shift_points<i64>(), ref);
  check_int<Mode::SHR, u8>(shift_points<u8>(), ref);
  EXPECT_EQ(call<Mode::SHR>(-8, 1), -4);
  EXPECT_EQ(call<Mode::SHR>(-7, 1), -4);
  EXPECT_EQ(call<Mode::SHR>(-1, 40), -1);
  EXPECT_EQ(call<Mode::SHR>(INT_MAX, 40), 0);
  EXPECT_EQ(call<Mode::SHR>(-5, -1), -1);
  EXPECT_EQ(call<Mode::SHR>((u8)0x80, (u8)7), 1);  // u8 shifts are logical
}

void check_FAST_TANH_GRAD() {
  // The derivative of FAST_TANH: (9 - c^2)^2 / (9 (3 + c^2)^2) with c = clamp(x, -3, 3).
  auto pts = grad_points(unary_points({2.999f, -2.9999998f, 3.0000002f}));
  check_f32<Mode::FAST_TANH_GRAD, 2>(pts, ulps(8), [](LD x, LD y) {
    LD c = std::isnan(x) ? x : std::fmin(std::fmax(x, -3.0L), 3.0L);
    LD u = 9 - c * c, w = 3 + c * c;
    return u * u / (9 * w * w) * y;
  });
  // ... which is FAST_TANH's slope (central differences in long double).
  for (float x : {-2.5f, -1.0f, 0.0f, 0.3f, 1.57f, 2.9f}) {
    LD h = 1e-6L;
    LD slope = (fast_tanh_ref((LD)x + h) - fast_tanh_ref((LD)x - h)) / (2 * h);
    EXPECT_NEAR(call<Mode::FAST_TANH_GRAD>(x, 1.0f), (float)slope, 1e-6f) << x;
  }
}

void check_RMULH() {
  // floor(a*b / 2^(bits-1) + 1/2) for i32/i64, floor(a*b / 2^8 + 1/2) for u8; the only
  // overflow, INT_MIN * INT_MIN, saturates to INT_MAX.
  auto ref = [](IntCtx c, I128 a, I128 b) -> I128 {
    int k = c.is_signed ? c.bits - 1 : c.bits;
    I128 r = floor_div128(a * b + ((I128)1 << (k - 1)), (I128)1 << k);
    return r > c.max() ? c.max() : r;
  };
  check_ints<Mode::RMULH, 2>(ref);
  EXPECT_EQ(call<Mode::RMULH>(INT_MIN, INT_MIN), INT_MAX);
  EXPECT_EQ(call<Mode::RMULH>(LLONG_MIN, LLONG_MIN), LLONG_MAX);
  EXPECT_EQ(call<Mode::RMULH>(1 << 30, 1 << 30), 1 << 29);
  EXPECT_EQ(call<Mode::RMULH>(1, 1 << 30), 1);    //  0.5 -> 1
  EXPECT_EQ(call<Mode::RMULH>(-1, 1 << 30), 0);   // -0.5 -> 0 (ties toward +inf)
  EXPECT_EQ(call<Mode::RMULH>(3, 1 << 30), 2);    //  1.5 -> 2
  EXPECT_EQ(call<Mode::RMULH>(-3, 1 << 30), -1);  // -1.5 -> -1
  EXPECT_EQ(call<Mode::RMULH>(INT_MIN, INT_MAX), -INT_MAX);
  EXPECT_EQ(call<Mode::RMULH>(LLONG_MIN, 1ll), -1ll);  // exactly -1
  EXPECT_EQ(call<Mode::RMULH>(-1ll, 1ll << 62), 0ll);  // -0.5 -> 0
  EXPECT_EQ(call<Mode::RMULH>(-3ll, 1ll << 62), -1ll);
  EXPECT_EQ(call<Mode::RMULH>((u8)255, (u8)255), 254);
  EXPECT_EQ(call<Mode::RMULH>((u8)16, (u8)8), 1);  // 0.5 -> 1
  EXPECT_EQ(call<Mode::RMULH>((u8)1, (u8)127), 0);
}

void check_ATAN2() {
  // ATAN2(y, x): the first input is y.
  check_f32<Mode::ATAN2, 2>(binary_points({{1, 1e-30f}, {-0.0f, -1}, {0.0f, -0.0f}}), ulps(4),
                            [](LD y, LD x) { return std::atan2(y, x); });
  EXPECT_NEAR(call<Mode::ATAN2>(1.0f, 0.0f), 1.5707964f, 1e-7f);
  EXPECT_EQ(call<Mode::ATAN2>(0.0f, 1.0f), 0.0f);
  EXPECT_NEAR(call<Mode::ATAN2>(-0.0f, -1.0f), -3.1415927f, 1e-6f);
}

void check_H_SWISH_GRAD() {
  auto pts = grad_points(unary_points({-3.0000002f, -2.9999998f, 2.9999998f, 3.0000002f}));
  check_f32<Mode::H_SWISH_GRAD, 2>(pts, ulps(3), [](LD x, LD y) -> LD {
    if (x < -3) return 0.0L;
    if (x > 3) return y;
    return (2 * x + 3) / 6 * y;  // NaN x gives NaN
  });
  EXPECT_EQ(call<Mode::H_SWISH_GRAD>(-3.0f, 6.0f), -3.0f);
  EXPECT_EQ(call<Mode::H_SWISH_GRAD>(3.0f, 6.0f), 9.0f);
}

template <Mode M>
void check_logic_binary(I128 (*bitwise)(I128, I128)) {
  auto ref = [&](IntCtx, I128 x, I128 y) { return bitwise(x, y); };
  check_int<M, bool>(int_points<bool, 2>(), ref);
  check_int<M, i32>(int_points<i32, 2>(), ref);
  check_int<M, i64>(int_points<i64, 2>(), ref);
  check_int<M, u8>(int_points<u8, 2>(), ref);
}

void check_AND() {
  check_logic_binary<Mode::AND>([](I128 x, I128 y) { return x & y; });
  EXPECT_EQ(call<Mode::AND>(true, false), false);
  EXPECT_EQ(call<Mode::AND>(0x0c, 0x0a), 0x08);
}

void check_OR() {
  check_logic_binary<Mode::OR>([](I128 x, I128 y) { return x | y; });
  EXPECT_EQ(call<Mode::OR>(false, true), true);
  EXPECT_EQ(call<Mode::OR>((u8)0x0c, (u8)0x0a), 0x0e);
}

void check_XOR() {
  check_logic_binary<Mode::XOR>([](I128 x, I128 y) { return x ^ y; });
  EXPECT_EQ(call<Mode::XOR>(true, true), false);
  EXPECT_EQ(call<Mode::XOR>(-1ll, 5ll), -6ll);
}

void check_SILU_GRAD() {
  // y s (1 + x (1 - s)), s = sigmoid(x); the limits at +-inf (y and 0). 1 - s in f32 loses
  // digits as s -> 1: allow |x| ULPs there, measured against the size of the terms.
  auto pts = grad_points(unary_points({-1.2784645f, -87.0f, 16.0f, 17.0f, 40.0f}));
  check_f32<Mode::SILU_GRAD, 2>(pts, ulps(6), [](LD x, LD y) {
    if (x == kLInf) return Ref(y);
    if (x == -kLInf) return Ref(-0.0L * y);
    LD s = sigmoid_ref(x);
    return grad_ref(s * (1 + x * (1 - s)), y, s * (1 + std::fabs(x) * (1 - s)),
                    (double)std::fmin(std::fabs(x), 30.0L));
  });
  EXPECT_EQ(call<Mode::SILU_GRAD>(kInf, 3.0f), 3.0f);
  EXPECT_EQ(call<Mode::SILU_GRAD>(-kInf, 3.0f), 0.0f);
}

void check_GELU_GRAD() {
  // y (Phi(x) + x phi(x)); the limits at +-inf (y and 0). The f32 arguments of erfc and exp
  // carry rounding errors that the tails amplify by ~x^2; near x = -0.75 the two terms cancel.
  auto pts = grad_points(unary_points({-0.7517916f, -5.5f, -13.0f}));
  check_f32<Mode::GELU_GRAD, 2>(pts, ulps(8), [](LD x, LD y) {
    if (x == kLInf) return Ref(y);
    if (x == -kLInf) return Ref(0.0L * y);
    LD phi = kInvSqrt2Pi * std::exp(-x * x / 2);
    return grad_ref(normcdf_ref(x) + x * phi, y, normcdf_ref(x) + std::fabs(x) * phi,
                    std::fmin((double)(x * x), 200.0));
  });
  EXPECT_EQ(call<Mode::GELU_GRAD>(kInf, 3.0f), 3.0f);
  EXPECT_EQ(call<Mode::GELU_GRAD>(-kInf, 3.0f), 0.0f);
}

void check_ASINH_GRAD() {
  auto pts = grad_points(unary_points({1e18f, 2e19f, -3e37f}));
  check_f32<Mode::ASINH_GRAD, 2>(pts, ulps(4), [](LD x, LD y) { return y / std::sqrt(x * x + 1); });
  EXPECT_NEAR(call<Mode::ASINH_GRAD>(1e20f, 1.0f), 1e-20f, 1e-27f);  // no x^2 overflow
}

void check_ACOSH_GRAD() {
  auto pts = grad_points(unary_points({1.0001f, 1.000244f, -1.0001f, 1e18f, 2e19f}));
  check_f32<Mode::ACOSH_GRAD, 2>(pts, ulps(4), [](LD x, LD y) { return y / std::sqrt(x * x - 1); });
  EXPECT_EQ(call<Mode::ACOSH_GRAD>(1.0f, 1.0f), kInf);
  EXPECT_TRUE(std::isnan(call<Mode::ACOSH_GRAD>(0.5f, 1.0f)));  // domain error
  EXPECT_NEAR(call<Mode::ACOSH_GRAD>(1e20f, 1.0f), 1e-20f, 1e-27f);
}

void check_ATANH_GRAD() {
  auto pts = grad_points(unary_points({0.9997559f, -0.9997559f, 0.99999994f}));
  check_f32<Mode::ATANH_GRAD, 2>(pts, ulps(3),
                                 [](LD x, LD y) { return y / f32_range((1 - x) * (1 + x)); });
  EXPECT_EQ(call<Mode::ATANH_GRAD>(1.0f, 1.0f), kInf);
  EXPECT_EQ(call<Mode::ATANH_GRAD>(-1.0f, 1.0f), kInf);
}

void check_PRELU() {
  check_f32<Mode::PRELU, 2>(binary_points(), kRounded,
                            [](LD x, LD s) { return x > 0 ? x : x * s; });
  EXPECT_EQ(call<Mode::PRELU>(-2.0f, 0.25f), -0.5f);
  EXPECT_EQ(call<Mode::PRELU>(2.0f, 0.25f), 2.0f);
}

void check_SOFTPLUS_GRAD() {
  auto pts = grad_points(unary_points({-87.0f, 17.0f}));
  check_f32<Mode::SOFTPLUS_GRAD, 2>(pts, ulps(6),
                                    [](LD x, LD y) { return grad_ref(sigmoid_ref(x), y); });
}

void check_RELU6_GRAD() {
  auto pts = grad_points(unary_points({5.9999995f, 6.0000005f}));
  check_f32<Mode::RELU6_GRAD, 2>(pts, kExact, [](LD x, LD y) -> LD {
    if (std::isnan(x)) return y;  // dy passes through, as in MegEngine
    return x > 0 && x < 6 ? y : 0.0L;
  });
}

void check_HSIGMOID_GRAD() {
  auto pts = grad_points(unary_points({-2.9999998f, 2.9999998f}));
  check_f32<Mode::HSIGMOID_GRAD, 2>(pts, ulps(1.5), [](LD x, LD y) -> LD {
    if (std::isnan(x)) return y / 6;
    return x > -3 && x < 3 ? y / 6 : 0.0L;
  });
}

void check_FUSE_ADD_RELU() {
  check_f32<Mode::FUSE_ADD_RELU, 2>(binary_points(), kRounded, [](LD x, LD y) -> LD {
    LD s = x + y;
    if (std::isnan(s)) return s;
    return s > 0 ? s : 0.0L;
  });
  check_ints<Mode::FUSE_ADD_RELU, 2>([](IntCtx c, I128 x, I128 y) -> I128 {
    I128 s = c.wrap(x + y);  // the sum wraps first
    return s > 0 ? s : 0;
  });
  EXPECT_EQ(call<Mode::FUSE_ADD_RELU>(INT_MAX, 1), 0);
  EXPECT_TRUE(std::isnan(call<Mode::FUSE_ADD_RELU>(kInf, -kInf)));
}

// The FUSE_ADD_ modes apply their function to the f32 sum x + y, as ADD then the unary mode.
LD f32_sum(LD x, LD y) {
  return (LD)(float)(x + y);
}

void check_FUSE_ADD_SIGMOID() {
  check_f32<Mode::FUSE_ADD_SIGMOID, 2>(binary_points(), ulps(6), [](LD x, LD y) {
    return Ref(sigmoid_ref(f32_sum(x, y)), 0, 0, 1e-35L);
  });
}

void check_FUSE_ADD_TANH() {
  check_f32<Mode::FUSE_ADD_TANH, 2>(binary_points(), ulps(4),
                                    [](LD x, LD y) { return std::tanh(f32_sum(x, y)); });
}

void check_FUSE_ADD_H_SWISH() {
  check_f32<Mode::FUSE_ADD_H_SWISH, 2>(binary_points(), ulps(2),
                                       [](LD x, LD y) { return h_swish_ref(f32_sum(x, y)); });
}

// ---- ternary and 4-ary ---------------------------------------------------------------------

void check_COND_LEQ_MOV() {
  check_f32<Mode::COND_LEQ_MOV, 3>(ternary_points(), kExact,
                                   [](LD x, LD y, LD z) { return x <= y ? z : 0.0L; });
  check_ints<Mode::COND_LEQ_MOV, 3>(
      [](IntCtx, I128 x, I128 y, I128 z) -> I128 { return x <= y ? z : 0; });
  EXPECT_EQ(call<Mode::COND_LEQ_MOV>(2, 2, 7), 7);
  EXPECT_EQ(call<Mode::COND_LEQ_MOV>(kNaN, 1.0f, 7.0f), 0.0f);
}

void check_COND_LT_MOV() {
  check_f32<Mode::COND_LT_MOV, 3>(ternary_points(), kExact,
                                  [](LD x, LD y, LD z) { return x < y ? z : 0.0L; });
  check_ints<Mode::COND_LT_MOV, 3>(
      [](IntCtx, I128 x, I128 y, I128 z) -> I128 { return x < y ? z : 0; });
  EXPECT_EQ(call<Mode::COND_LT_MOV>(2, 2, 7), 0);
}

void check_FUSE_MUL_ADD3() {
  // fma(a, b, c): a*b + c rounded once, on every target (no dependence on contraction).
  auto pts = ternary_points();
  for (FPt<3> p : std::initializer_list<FPt<3>>{{1e20f, 1e20f, -kInf},  // unfused: inf - inf
                                                {1e20f, -1e20f, 1e38f},
                                                {1.0000001f, 1.0000001f, -1.0000002f},
                                                {3.0f, 0.33333334f, -1.0f},
                                                {1e-20f, 1e-20f, -1e-40f}})
    pts.push_back(p);
  check_f32<Mode::FUSE_MUL_ADD3, 3>(pts, kRounded, [](LD a, LD b, LD c) { return a * b + c; });
  check_ints<Mode::FUSE_MUL_ADD3, 3>([](IntCtx, I128 a, I128 b, I128 c) { return a * b + c; });
  EXPECT_EQ(call<Mode::FUSE_MUL_ADD3>(INT_MAX, 2, 2), 0);
  EXPECT_EQ(call<Mode::FUSE_MUL_ADD3>(2.0f, 3.0f, 4.0f), 10.0f);
  EXPECT_EQ(call<Mode::FUSE_MUL_ADD3>(1e20f, 1e20f, -kInf), -kInf);
  // (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46, which an unfused product rounds away.
  EXPECT_EQ(call<Mode::FUSE_MUL_ADD3>(1.0000001f, 1.0000001f, -1.0000002f), 0x1p-46f);
}

void check_CLIP() {
  // MIN(MAX(x, lo), hi) without NaN propagation from the bounds: NaN x gives NaN, a NaN bound
  // is ignored, lo > hi gives hi. The sign of a zero result from zeros of both signs is
  // unspecified.
  check_f32<Mode::CLIP, 3>(ternary_points(), FTol{0, 0, false}, [](LD x, LD lo, LD hi) -> LD {
    if (std::isnan(x)) return x;
    LD t = std::isnan(lo) ? x : std::fmax(x, lo);
    return std::isnan(hi) ? t : std::fmin(t, hi);
  });
  check_ints<Mode::CLIP, 3>([](IntCtx, I128 x, I128 lo, I128 hi) {
    I128 t = x > lo ? x : lo;
    return t < hi ? t : hi;
  });
  EXPECT_EQ(call<Mode::CLIP>(5.0f, 0.0f, 3.0f), 3.0f);
  EXPECT_EQ(call<Mode::CLIP>(-5, 0, 3), 0);
  EXPECT_EQ(call<Mode::CLIP>(1, 5, 3), 3);  // lo > hi: hi
  EXPECT_TRUE(std::isnan(call<Mode::CLIP>(kNaN, 0.0f, 1.0f)));
}

void check_PRELU_GRAD() {
  check_f32<Mode::PRELU_GRAD, 3>(ternary_points(), kRounded,
                                 [](LD x, LD dy, LD s) { return x >= 0 ? dy : dy * s; });
  EXPECT_EQ(call<Mode::PRELU_GRAD>(0.0f, 2.0f, 0.5f), 2.0f);  // x = 0: dy
  EXPECT_EQ(call<Mode::PRELU_GRAD>(-1.0f, 2.0f, 0.5f), 1.0f);
}

void check_FUSE_MUL_ADD4() {
  // fma(a, b, c*d): c*d rounds (and may overflow) in f32, then a*b + c*d rounds once.
  auto pts = quaternary_points();
  for (FPt<4> p : std::initializer_list<FPt<4>>{{1e20f, 1e20f, 1e20f, -1e20f},
                                                {1e30f, 1e30f, -1.0f, kInf},
                                                {1.0000001f, 1.0000001f, -1.0000002f, 1.0f}})
    pts.push_back(p);
  check_f32<Mode::FUSE_MUL_ADD4, 4>(pts, ulps(1), [](LD a, LD b, LD c, LD d) {
    LD cd = f32_range(c * d);
    return Ref(a * b + cd, std::fabs(cd));
  });
  check_ints<Mode::FUSE_MUL_ADD4, 4>(
      [](IntCtx c, I128 a, I128 b, I128 x, I128 y) { return c.wrap(a * b) + c.wrap(x * y); });
  EXPECT_EQ(call<Mode::FUSE_MUL_ADD4>(LLONG_MIN, LLONG_MIN, LLONG_MIN, LLONG_MIN), 0ll);
  EXPECT_EQ(call<Mode::FUSE_MUL_ADD4>((u8)16, (u8)16, (u8)1, (u8)3), 3);
  EXPECT_EQ(call<Mode::FUSE_MUL_ADD4>(1e20f, 1e20f, 1e20f, -1e20f), -kInf);
  EXPECT_EQ(call<Mode::FUSE_MUL_ADD4>(1.0000001f, 1.0000001f, -1.0000002f, 1.0f), 0x1p-46f);
}

// ------------------------------------------------------------------------------------------
// The mode table itself.

// How many arguments ModeFn<M>::apply takes (-1: not exactly one of 1..4).
template <Mode M, class T>
constexpr int apply_arity() {
  constexpr bool c1 = requires(T a) {
    ModeFn<M>::apply(a);
  };
  constexpr bool c2 = requires(T a) {
    ModeFn<M>::apply(a, a);
  };
  constexpr bool c3 = requires(T a) {
    ModeFn<M>::apply(a, a, a);
  };
  constexpr bool c4 = requires(T a) {
    ModeFn<M>::apply(a, a, a, a);
  };
  if constexpr (c1 + c2 + c3 + c4 != 1)
    return -1;
  else
    return c1 ? 1 : c2 ? 2 : c3 ? 3 : 4;
}
template <ModeKind K>
using arg_type = std::conditional_t<K == ModeKind::Float || K == ModeKind::Predicate, float, i32>;

struct Signature {
  const char* name;
  int arity;  // of apply()
  bool returns_expected_type;
};
template <Mode M, ModeKind K>
constexpr Signature signature(const char* name) {
  using T = arg_type<K>;
  constexpr int n = apply_arity<M, T>();
  bool ok = false;
  if constexpr (n > 0) {
    auto r = [] {
      if constexpr (n == 1)
        return ModeFn<M>::apply(T{});
      else if constexpr (n == 2)
        return ModeFn<M>::apply(T{}, T{});
      else if constexpr (n == 3)
        return ModeFn<M>::apply(T{}, T{}, T{});
      else
        return ModeFn<M>::apply(T{}, T{}, T{}, T{});
    };
    using R = decltype(r());
    using Want = std::conditional_t<K == ModeKind::Compare || K == ModeKind::Predicate, bool, T>;
    ok = std::is_same_v<R, Want>;
  }
  return {name, n, ok};
}

constexpr Signature kSignatures[] = {
#define X(NAME, ARITY, KIND, FLOPS) signature<Mode::NAME, ModeKind::KIND>(#NAME),
#include "runtime/ops/elemwise_modes.def"
#undef X
};
static_assert(std::size(kSignatures) == kModeCount);

// Compile-time too: a mismatch stops the build here.
#define X(NAME, ARITY, KIND, FLOPS)                                             \
  static_assert(kSignatures[(int)Mode::NAME].arity == ARITY,                    \
                #NAME ": kModeInfo's arity differs from apply()'s parameters"); \
  static_assert(kSignatures[(int)Mode::NAME].returns_expected_type,             \
                #NAME ": apply() returns the wrong type for kind " #KIND);
#include "runtime/ops/elemwise_modes.def"
#undef X

TEST(ModeInfo, ArityMatchesApply) {
  for (int i = 0; i < kModeCount; ++i) {
    EXPECT_STREQ(kModeInfo[i].name, kSignatures[i].name);
    EXPECT_EQ(kModeInfo[i].arity, kSignatures[i].arity) << kModeInfo[i].name;
    EXPECT_TRUE(kSignatures[i].returns_expected_type) << kModeInfo[i].name;
    EXPECT_EQ(std::string(mode_info((Mode)i).name), kModeInfo[i].name);
  }
}

TEST(ModeInfo, Table) {
  int by_arity[5] = {};
  for (const ModeInfo& m : kModeInfo) {
    ASSERT_GE(m.arity, 1) << m.name;
    ASSERT_LE(m.arity, 4) << m.name;
    ++by_arity[m.arity];
    EXPECT_GE(m.flops, 1) << m.name;
    for (const ModeInfo& o : kModeInfo)
      if (&o != &m) {
        EXPECT_STRNE(m.name, o.name);
      }
  }
  // MegEngine's list: 40 unary, 40 binary, 5 ternary, 1 4-ary.
  EXPECT_EQ(by_arity[1], 40);
  EXPECT_EQ(by_arity[2], 40);
  EXPECT_EQ(by_arity[3], 5);
  EXPECT_EQ(by_arity[4], 1);
}

// The harness itself: a wrong value, a wrong zero sign and a wrong NaN are each caught.
TEST(ModeHarness, DetectsErrors) {
  EXPECT_EQ(float_mismatch(1.0f, Ref(1.0L), kExact), "");
  EXPECT_NE(float_mismatch(std::nextafter(1.0f, 2.0f), Ref(1.0L), kExact), "");
  EXPECT_EQ(float_mismatch(std::nextafter(1.0f, 2.0f), Ref(1.0L), ulps(1)), "");
  EXPECT_NE(float_mismatch(0.0f, Ref(-0.0L), kExact), "");
  EXPECT_NE(float_mismatch(0.0f, Ref(kLNaN), ulps(100)), "");
  EXPECT_NE(float_mismatch(kNaN, Ref(0.0L), ulps(100)), "");
  EXPECT_NE(float_mismatch(kInf, Ref(1e30L), ulps(100)), "");
  EXPECT_EQ(float_mismatch(kInf, Ref(1e60L), ulps(1)), "");  // f32 overflow
  EXPECT_NE(float_mismatch(-kInf, Ref(1e60L), ulps(1)), "");
  EXPECT_EQ(int_ctx<i32>().wrap((I128)INT_MAX + 1), INT_MIN);
  EXPECT_EQ(int_ctx<u8>().wrap(-1), 255);
  EXPECT_EQ(int_ctx<bool>().wrap(-2), 0);
  EXPECT_NEAR((double)erfinv_ref(0.5L), 0.476936276204469873, 1e-15);
  EXPECT_NEAR((double)erfcinv_ref(1e-30L), 8.148616223169864, 1e-12);
}

}  // namespace
}  // namespace hf
