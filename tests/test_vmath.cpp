// Accuracy of hf::vm (runtime/ops/vmath.h) against long double references over the whole
// float range: every 2039th bit pattern (2.1M samples, specials included), dense samples of
// the ranges where each function is delicate, and the C99 Annex F special values. The max
// error of each function must stay within the bound documented next to it in vmath.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "runtime/ops/vmath.h"

namespace {
namespace vm = hf::vm;
using u32 = uint32_t;
using u64 = uint64_t;
using ld = long double;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
float from_bits(u32 b) {
  return std::bit_cast<float>(b);
}
u32 to_bits(float f) {
  return std::bit_cast<u32>(f);
}

// Error of got in ULP of the exact result ref: |got - ref| over the float spacing at |ref|
// (2^-149 in the subnormal range; an infinity counts as 2^128). A NaN must meet a NaN, and
// a zero result must carry the sign of the exact one.
double ulp_error(float got, ld ref) {
  if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got) ? 0 : INFINITY;
  float rf = (float)ref;
  if (got == rf) return got != 0 || std::signbit(got) == std::signbit(ref) ? 0 : INFINITY;
  ld g = std::isinf(got) ? std::copysign(0x1p128L, (ld)got) : (ld)got;
  ld r = std::isinf(ref) ? std::copysign(0x1p128L, ref) : ref;
  int e = r == 0 ? -126 : std::clamp(std::ilogb(r), -126, 127);
  return (double)(std::fabs(g - r) / std::ldexp(1.0L, e - 23));
}

struct Worst {
  double ulp = 0;
  float x = 0, y = 0;
  ld ref = 0;
  float got = 0;
  void add(const Worst& o) {
    if (o.ulp > ulp) *this = o;
  }
};

// Runs body(begin, end, worst) over [0, n) on two threads (the CI machine has two cores).
template <class Body>
Worst parallel_max(size_t n, Body body) {
  Worst w[2];
  std::thread t([&] { body(n / 2, n, w[1]); });
  body(0, n / 2, w[0]);
  t.join();
  w[0].add(w[1]);
  return w[0];
}

// The function under test is a template argument, so a loop over an array calls it inline
// (and, built with -march=native, vectorised, as in the kernels).
template <float (*F)(float)>
void apply(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = F(x[i]);
}
template <float (*F)(float, float)>
void apply2(const float* x, const float* y, float* z, size_t n) {
  for (size_t i = 0; i < n; ++i) z[i] = F(x[i], y[i]);
}

// Inputs of a unary function: the strided sweep over all bit patterns, plus n samples evenly
// spaced in bit pattern over each dense range [lo, hi] (same sign at both ends) and its mirror.
std::vector<float> inputs(std::initializer_list<std::pair<float, float>> dense, u32 n = 1 << 17) {
  std::vector<float> v;
  for (u64 b = 0; b < (1ull << 32); b += 2039) v.push_back(from_bits((u32)b));
  for (auto [lo, hi] : dense) {
    u32 a = to_bits(lo), b = to_bits(hi);
    if (a > b) std::swap(a, b);
    for (u32 i = 0; i < n; ++i) {
      float f = from_bits(a + (u32)((u64)(b - a) * i / (n - 1)));
      v.push_back(f);
      v.push_back(-f);
    }
  }
  return v;
}

template <float (*F)(float), class Ref>
Worst max_error(const std::vector<float>& xs, Ref ref) {
  std::vector<float> ys(xs.size());
  apply<F>(xs.data(), ys.data(), xs.size());
  return parallel_max(xs.size(), [&](size_t b, size_t e, Worst& w) {
    for (size_t i = b; i < e; ++i) {
      ld r = ref((ld)xs[i]);
      w.add({ulp_error(ys[i], r), xs[i], 0, r, ys[i]});
    }
  });
}

template <float (*F)(float, float), class Ref>
Worst max_error2(const std::vector<float>& xs, const std::vector<float>& ys, Ref ref) {
  std::vector<float> zs(xs.size());
  apply2<F>(xs.data(), ys.data(), zs.data(), xs.size());
  return parallel_max(xs.size(), [&](size_t b, size_t e, Worst& w) {
    for (size_t i = b; i < e; ++i) {
      ld r = ref((ld)xs[i], (ld)ys[i]);
      w.add({ulp_error(zs[i], r), xs[i], ys[i], r, zs[i]});
    }
  });
}

void report(const char* name, const Worst& w, double bound) {
  std::printf("%-8s max %.3f ULP at x=%a y=%a (got %a, exact %La)\n", name, w.ulp, w.x, w.y, w.got,
              w.ref);
  EXPECT_LE(w.ulp, bound) << name << " at x=" << w.x << " y=" << w.y;
}

#define HF_UNARY(NAME, BOUND, REF, ...)                                    \
  TEST(VmathAccuracy, NAME) {                                              \
    report(#NAME, max_error<vm::NAME>(inputs({__VA_ARGS__}), REF), BOUND); \
  }
constexpr float kPi4 = 0.785398163f;
HF_UNARY(exp, 1, expl, {-104.f, 89.f}, {-0.5f, 0.5f})
HF_UNARY(expm1, 0.51, expm1l, {-20.f, 89.f}, {0x1p-26f, 1.f})
HF_UNARY(log, 1, logl, {0.5f, 2.f}, {0x1p-149f, 0x1p-120f}, {1e30f, 3e38f})
HF_UNARY(log1p, 1, log1pl, {-1.f, -0.25f}, {0x1p-26f, 1.f}, {1.f, 1e30f})
HF_UNARY(sin, 0.51, sinl, {0x1p-20f, 8.f}, {8.f, 1e5f}, {1e5f, 3e38f}, {3.1415f, 3.1417f})
HF_UNARY(cos, 0.51, cosl, {0x1p-20f, 8.f}, {8.f, 1e5f}, {1e5f, 3e38f}, {1.5707f, 1.5709f})
HF_UNARY(tan, 0.51, tanl, {0x1p-20f, 8.f}, {8.f, 1e5f}, {1e5f, 3e38f}, {kPi4 - 1e-3f, kPi4 + 1e-3f})
HF_UNARY(tanh, 1.5, tanhl, {0x1p-20f, 10.f}, {0.6f, 0.65f})
// erf is float (vmath.h): 1.095 ULP over every float with FMA, 1.82 without (fmadd rounds
// twice); dense: subnormal inputs, the split at 0.875, and the approach to 1 up to the cutoff.
#ifdef __FMA__
constexpr double kErfBound = 1.1;
#else
constexpr double kErfBound = 1.85;
#endif
HF_UNARY(erf, kErfBound, erfl, {0x1p-149f, 0x1p-120f}, {0x1p-20f, 4.f}, {0.8f, 0.95f}, {3.f, 3.95f})
// sigmoid flushes below -88.375 (exact results under 4.2e-39; VmathSpecial.ExpLog pins that).
TEST(VmathAccuracy, sigmoid) {
  std::vector<float> xs;
  for (float x : inputs({{0x1p-20f, 90.f}, {20.f, 30.f}}))
    if (!(x < -88.375f)) xs.push_back(x);
  report("sigmoid", max_error<vm::sigmoid>(xs, [](ld x) { return 1 / (1 + expl(-x)); }), 2.5);
}
HF_UNARY(erfc, 0.51, erfcl, {0x1p-20f, 10.1f}, {0.7f, 0.8f})
HF_UNARY(asin, 0.51, asinl, {0x1p-20f, 1.f}, {0.99f, 1.f})
HF_UNARY(acos, 0.51, acosl, {0x1p-20f, 1.f}, {0.99f, 1.f})
HF_UNARY(atan, 0.51, atanl, {0x1p-20f, 1e4f}, {0.4f, 0.43f})
HF_UNARY(sinh, 0.51, sinhl, {0x1p-20f, 90.f}, {0.02f, 0.04f})
HF_UNARY(cosh, 0.51, coshl, {0x1p-20f, 90.f})
HF_UNARY(asinh, 0.51, asinhl, {0x1p-20f, 1e4f}, {0.02f, 0.04f})
HF_UNARY(acosh, 0.51, acoshl, {1.f, 1e4f}, {1.f, 1.01f})
HF_UNARY(atanh, 0.51, atanhl, {0x1p-20f, 1.f}, {0.99f, 1.f}, {0.02f, 0.04f})
HF_UNARY(sqrt, 0, sqrtl, {0x1p-149f, 4.f})
HF_UNARY(floor, 0, floorl, {0x1p-20f, 0x1p24f}, {0.f, 4.f})
HF_UNARY(ceil, 0, ceill, {0x1p-20f, 0x1p24f}, {0.f, 4.f})
HF_UNARY(trunc, 0, truncl, {0x1p-20f, 0x1p24f}, {0.f, 4.f})
HF_UNARY(round, 0, roundl, {0x1p-20f, 0x1p24f}, {0.f, 4.f})
HF_UNARY(fabs, 0, fabsl, {0.f, 1.f})

// erfinv has no libm reference: Newton's method on erfl (erfcl for erfcinv, which keeps the
// accuracy of tiny arguments) in long double, from the value under test.
ld erfinv_ref(ld x) {
  if (!(std::fabs(x) < 1)) return std::fabs(x) == 1 ? std::copysign((ld)INFINITY, x) : NAN;
  ld y = vm::erfinv((float)x);
  for (int i = 0; i < 6; ++i) y -= (std::erf(y) - x) / (1.1283791670955125739L * std::exp(-y * y));
  return y;
}
ld erfcinv_ref(ld x) {
  if (!(x > 0 && x < 2)) return x == 0 ? INFINITY : (x == 2 ? -INFINITY : NAN);
  ld y = vm::erfcinv((float)x);
  for (int i = 0; i < 6; ++i) y += (std::erfc(y) - x) / (1.1283791670955125739L * std::exp(-y * y));
  return y;
}
HF_UNARY(erfinv, 0.7, erfinv_ref, {0x1p-20f, 1.f}, {0.99f, 1.f})
HF_UNARY(erfcinv, 0.7, erfcinv_ref, {0x1p-149f, 2.f}, {0.99f, 1.01f}, {1.99f, 2.f})

// Two-argument functions: random bit patterns over the whole range, plus the ranges where
// the result is neither trivially 0, inf nor NaN.
struct Pairs {
  std::vector<float> x, y;
  void add(float a, float b) { x.push_back(a), y.push_back(b); }
};
Pairs random_pairs(size_t n) {
  Pairs p;
  std::mt19937 rng(1);
  for (size_t i = 0; i < n; ++i) p.add(from_bits(rng()), from_bits(rng()));
  return p;
}

TEST(VmathAccuracy, atan2) {
  Pairs p = random_pairs(1 << 20);
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> ratio(-4, 4);
  for (int i = 0; i < (1 << 20); ++i) {  // comparable magnitudes, all quadrants
    float x = from_bits(rng());
    p.add(x * ratio(rng), x);
  }
  report("atan2", max_error2<vm::atan2>(p.x, p.y, [](ld y, ld x) { return std::atan2(y, x); }),
         0.51);
}

TEST(VmathAccuracy, pow) {
  Pairs p = random_pairs(1 << 20);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> expo(-150, 128), small(-1, 1);
  for (int i = 0; i < (1 << 21); ++i) {  // |y log2 x| up to 150: results across the range
    float x = from_bits(rng() & 0x7fffffffu);
    float l = std::log2(x);
    if (!std::isfinite(l) || l == 0) continue;
    p.add(x, expo(rng) / l);
  }
  for (int i = 0; i < (1 << 19); ++i) {  // negative x, integer y; x near 1, large y
    p.add(-std::exp2(8 * small(rng)), std::round(40 * small(rng)));
    p.add(1 + small(rng) * 0x1p-10f, small(rng) * 1e6f);
  }
  report("pow", max_error2<vm::pow>(p.x, p.y, [](ld x, ld y) { return std::pow(x, y); }), 0.51);
}

TEST(VmathAccuracy, fmod) {
  Pairs p = random_pairs(1 << 20);
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-1000, 1000);
  for (int i = 0; i < (1 << 20); ++i) p.add(u(rng), u(rng) * 1e-3f);
  report("fmod", max_error2<vm::fmod>(p.x, p.y, [](ld x, ld y) { return std::fmod(x, y); }), 0);
}

// Annex F special values, sign of zero included (EXPECT_EQ on bits).
#define HF_EXPECT_SAME(got, want) \
  EXPECT_EQ(to_bits(got), to_bits(want)) << #got << " = " << (got) << ", want " << (want)
#define HF_EXPECT_NAN(got) EXPECT_TRUE(std::isnan(got)) << #got << " = " << (got)

TEST(VmathSpecial, ExpLog) {
  HF_EXPECT_SAME(vm::exp(-kInf), 0.0f);
  HF_EXPECT_SAME(vm::exp(kInf), kInf);
  HF_EXPECT_SAME(vm::exp(-0.0f), 1.0f);
  HF_EXPECT_SAME(vm::exp(89.0f), kInf);
  HF_EXPECT_SAME(vm::exp(-104.0f), 0.0f);
  HF_EXPECT_SAME(vm::exp(-0x1.9fe368p6f), 0x1p-149f);  // the smallest subnormal
  HF_EXPECT_NAN(vm::exp(kNaN));
  HF_EXPECT_NAN(vm::exp(-kNaN));
  for (float x : {104.00001f, 0x1p21f, 1e30f, 3e38f}) {  // past the ranges: replaced results
    HF_EXPECT_SAME(vm::exp(x), kInf);
    HF_EXPECT_SAME(vm::exp(-x), 0.0f);
    HF_EXPECT_SAME(vm::tanh(x), 1.0f);
    HF_EXPECT_SAME(vm::tanh(-x), -1.0f);
    HF_EXPECT_SAME(vm::erf(x), 1.0f);
    HF_EXPECT_SAME(vm::erf(-x), -1.0f);
  }
  HF_EXPECT_SAME(vm::exp(89.00001f), kInf);
  HF_EXPECT_SAME(vm::tanh(-9.5f), -1.0f);
  HF_EXPECT_SAME(vm::sigmoid(-kInf), 0.0f);
  HF_EXPECT_SAME(vm::sigmoid(kInf), 1.0f);
  HF_EXPECT_SAME(vm::sigmoid(0.0f), 0.5f);
  HF_EXPECT_SAME(vm::sigmoid(-0.0f), 0.5f);
  HF_EXPECT_SAME(vm::sigmoid(88.375f), 1.0f);
  HF_EXPECT_SAME(vm::sigmoid(100.0f), 1.0f);
  for (float x : {-88.37501f, -88.5f, -100.0f, -3e38f}) HF_EXPECT_SAME(vm::sigmoid(x), 0.0f);
  HF_EXPECT_NAN(vm::sigmoid(kNaN));
  HF_EXPECT_SAME(vm::erf(4.00001f), 1.0f);
  HF_EXPECT_SAME(vm::erf(-0x1.f5c292p+1f), -1.0f);  // just above the cutoff, 3.92
  HF_EXPECT_SAME(vm::erf(0x1p-149f), 0x1p-149f);    // 1.128 2^-149 rounds to 2^-149
  HF_EXPECT_SAME(vm::expm1(-0.0f), -0.0f);
  HF_EXPECT_SAME(vm::expm1(-kInf), -1.0f);
  HF_EXPECT_SAME(vm::expm1(kInf), kInf);
  HF_EXPECT_SAME(vm::expm1(0x1p-149f), 0x1p-149f);
  HF_EXPECT_NAN(vm::expm1(kNaN));
  HF_EXPECT_SAME(vm::log(0.0f), -kInf);
  HF_EXPECT_SAME(vm::log(-0.0f), -kInf);
  HF_EXPECT_SAME(vm::log(1.0f), 0.0f);
  HF_EXPECT_SAME(vm::log(kInf), kInf);
  HF_EXPECT_NAN(vm::log(-1.0f));
  HF_EXPECT_NAN(vm::log(-kInf));
  HF_EXPECT_NAN(vm::log(kNaN));
  HF_EXPECT_SAME(vm::log1p(-0.0f), -0.0f);
  HF_EXPECT_SAME(vm::log1p(0.0f), 0.0f);
  HF_EXPECT_SAME(vm::log1p(-1.0f), -kInf);
  HF_EXPECT_SAME(vm::log1p(kInf), kInf);
  HF_EXPECT_SAME(vm::log1p(-0x1p-149f), -0x1p-149f);
  HF_EXPECT_NAN(vm::log1p(-2.0f));
  HF_EXPECT_NAN(vm::log1p(kNaN));
}

TEST(VmathSpecial, Trig) {
  for (auto f : {vm::sin, vm::tan, vm::asin, vm::atan, vm::tanh, vm::erf, vm::sinh, vm::asinh,
                 vm::atanh, vm::erfinv}) {
    HF_EXPECT_SAME(f(-0.0f), -0.0f);
    HF_EXPECT_SAME(f(0.0f), 0.0f);
    HF_EXPECT_SAME(f(-0x1p-149f), -f(0x1p-149f));
    HF_EXPECT_NAN(f(kNaN));
  }
  for (auto f : {vm::sin, vm::cos, vm::tan}) {
    HF_EXPECT_NAN(f(kInf));
    HF_EXPECT_NAN(f(-kInf));
  }
  HF_EXPECT_SAME(vm::cos(-0.0f), 1.0f);
  HF_EXPECT_SAME(vm::tanh(kInf), 1.0f);
  HF_EXPECT_SAME(vm::tanh(-kInf), -1.0f);
  HF_EXPECT_SAME(vm::atan(-kInf), -(float)M_PI_2);
  HF_EXPECT_SAME(vm::asin(1.0f), (float)M_PI_2);
  HF_EXPECT_SAME(vm::acos(1.0f), 0.0f);
  HF_EXPECT_SAME(vm::acos(-1.0f), (float)M_PI);
  for (float x : {1.0000001f, -1.0000001f, kInf, -kInf}) {
    HF_EXPECT_NAN(vm::asin(x));
    HF_EXPECT_NAN(vm::acos(x));
    HF_EXPECT_NAN(vm::erfinv(x));
  }
  HF_EXPECT_NAN(vm::atanh(2.0f));
  HF_EXPECT_SAME(vm::atanh(-1.0f), -kInf);
  HF_EXPECT_SAME(vm::acosh(1.0f), 0.0f);
  HF_EXPECT_SAME(vm::acosh(kInf), kInf);
  HF_EXPECT_NAN(vm::acosh(0.5f));
  HF_EXPECT_SAME(vm::asinh(-kInf), -kInf);
  HF_EXPECT_SAME(vm::sinh(-kInf), -kInf);
  HF_EXPECT_SAME(vm::sinh(90.0f), kInf);
  HF_EXPECT_SAME(vm::cosh(-kInf), kInf);
  HF_EXPECT_SAME(vm::cosh(-0.0f), 1.0f);
}

TEST(VmathSpecial, Erf) {
  HF_EXPECT_SAME(vm::erf(kInf), 1.0f);
  HF_EXPECT_SAME(vm::erf(-kInf), -1.0f);
  HF_EXPECT_SAME(vm::erfc(kInf), 0.0f);
  HF_EXPECT_SAME(vm::erfc(-kInf), 2.0f);
  HF_EXPECT_SAME(vm::erfc(0.0f), 1.0f);
  HF_EXPECT_NAN(vm::erfc(kNaN));
  HF_EXPECT_SAME(vm::erfinv(1.0f), kInf);
  HF_EXPECT_SAME(vm::erfinv(-1.0f), -kInf);
  HF_EXPECT_SAME(vm::erfcinv(0.0f), kInf);
  HF_EXPECT_SAME(vm::erfcinv(2.0f), -kInf);
  HF_EXPECT_SAME(vm::erfcinv(1.0f), 0.0f);
  HF_EXPECT_NAN(vm::erfcinv(-0x1p-149f));
  HF_EXPECT_NAN(vm::erfcinv(2.0000002f));
  HF_EXPECT_NAN(vm::erfcinv(kNaN));
}

TEST(VmathSpecial, Atan2) {
  const float pi = (float)M_PI, pi2 = (float)M_PI_2, pi4 = (float)M_PI_4;
  for (float s : {1.0f, -1.0f}) {
    HF_EXPECT_SAME(vm::atan2(s * 0.0f, 0.0f), s * 0.0f);
    HF_EXPECT_SAME(vm::atan2(s * 0.0f, -0.0f), s * pi);
    HF_EXPECT_SAME(vm::atan2(s * 0.0f, -3.0f), s * pi);
    HF_EXPECT_SAME(vm::atan2(s * 0.0f, 3.0f), s * 0.0f);
    HF_EXPECT_SAME(vm::atan2(s * 3.0f, 0.0f), s * pi2);
    HF_EXPECT_SAME(vm::atan2(s * 3.0f, -0.0f), s * pi2);
    HF_EXPECT_SAME(vm::atan2(s * 3.0f, kInf), s * 0.0f);
    HF_EXPECT_SAME(vm::atan2(s * 3.0f, -kInf), s * pi);
    HF_EXPECT_SAME(vm::atan2(s * kInf, 3.0f), s * pi2);
    HF_EXPECT_SAME(vm::atan2(s * kInf, kInf), s * pi4);
    HF_EXPECT_SAME(vm::atan2(s * kInf, -kInf), s * 2.3561945f);
    HF_EXPECT_NAN(vm::atan2(s, kNaN));
    HF_EXPECT_NAN(vm::atan2(kNaN, s));
  }
}

TEST(VmathSpecial, Pow) {
  for (float x : {0.0f, -0.0f, 2.0f, -2.0f, kInf, -kInf, kNaN}) {
    HF_EXPECT_SAME(vm::pow(x, 0.0f), 1.0f);
    HF_EXPECT_SAME(vm::pow(x, -0.0f), 1.0f);
  }
  for (float y : {kNaN, kInf, -kInf, 3.0f, -0.5f}) HF_EXPECT_SAME(vm::pow(1.0f, y), 1.0f);
  HF_EXPECT_SAME(vm::pow(-1.0f, kInf), 1.0f);
  HF_EXPECT_SAME(vm::pow(-1.0f, -kInf), 1.0f);
  HF_EXPECT_SAME(vm::pow(-0.0f, -3.0f), -kInf);
  HF_EXPECT_SAME(vm::pow(-0.0f, -2.0f), kInf);
  HF_EXPECT_SAME(vm::pow(0.0f, -0.5f), kInf);
  HF_EXPECT_SAME(vm::pow(-0.0f, 3.0f), -0.0f);
  HF_EXPECT_SAME(vm::pow(-0.0f, 0.5f), 0.0f);
  HF_EXPECT_SAME(vm::pow(0.5f, kInf), 0.0f);
  HF_EXPECT_SAME(vm::pow(0.5f, -kInf), kInf);
  HF_EXPECT_SAME(vm::pow(-2.0f, kInf), kInf);
  HF_EXPECT_SAME(vm::pow(-2.0f, -kInf), 0.0f);
  HF_EXPECT_SAME(vm::pow(-kInf, 3.0f), -kInf);
  HF_EXPECT_SAME(vm::pow(-kInf, -3.0f), -0.0f);
  HF_EXPECT_SAME(vm::pow(-kInf, 0.5f), kInf);
  HF_EXPECT_SAME(vm::pow(kInf, -0.5f), 0.0f);
  HF_EXPECT_SAME(vm::pow(-2.0f, 3.0f), -8.0f);
  HF_EXPECT_SAME(vm::pow(2.0f, 128.0f), kInf);
  HF_EXPECT_SAME(vm::pow(2.0f, -149.0f), 0x1p-149f);
  HF_EXPECT_SAME(vm::pow(2.0f, -151.0f), 0.0f);
  HF_EXPECT_NAN(vm::pow(-2.0f, 0.5f));
  HF_EXPECT_NAN(vm::pow(kNaN, 1.0f));
  HF_EXPECT_NAN(vm::pow(2.0f, kNaN));
}

TEST(VmathSpecial, Rounding) {
  HF_EXPECT_SAME(vm::round(0.49999997f), 0.0f);
  HF_EXPECT_SAME(vm::round(0.5f), 1.0f);
  HF_EXPECT_SAME(vm::round(-0.5f), -1.0f);
  HF_EXPECT_SAME(vm::round(2.5f), 3.0f);
  HF_EXPECT_SAME(vm::round(-0.3f), -0.0f);
  HF_EXPECT_SAME(vm::round(8388609.0f), 8388609.0f);
  HF_EXPECT_SAME(vm::ceil(-0.5f), -0.0f);
  HF_EXPECT_SAME(vm::floor(-0.5f), -1.0f);
  HF_EXPECT_SAME(vm::floor(-0.0f), -0.0f);
  HF_EXPECT_SAME(vm::trunc(-0.7f), -0.0f);
  for (auto f : {vm::floor, vm::ceil, vm::trunc, vm::round}) {
    HF_EXPECT_SAME(f(-kInf), -kInf);
    HF_EXPECT_NAN(f(kNaN));
  }
  HF_EXPECT_SAME(vm::fmod(-4.0f, 2.0f), -0.0f);
  HF_EXPECT_SAME(vm::fmod(5.5f, kInf), 5.5f);
  HF_EXPECT_SAME(vm::fmod(3e38f, 0x1p-149f), 0.0f);
  HF_EXPECT_SAME(vm::fmod(-3e38f, 3.0f), std::fmod(-3e38f, 3.0f));
  HF_EXPECT_NAN(vm::fmod(1.0f, 0.0f));
  HF_EXPECT_NAN(vm::fmod(kInf, 1.0f));
  HF_EXPECT_NAN(vm::fmod(kNaN, 1.0f));
  HF_EXPECT_NAN(vm::fmod(1.0f, kNaN));
}
}  // namespace
