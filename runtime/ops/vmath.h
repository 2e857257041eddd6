// Float math for kernels: on the device, CUDA's math library; on the host, implementations
// the compiler can vectorise.
//
// Why: a loop calling glibc's scalar expf/tanhf/erff is compute-bound (the 10-op chain in
// ../shared/bench/peers: 268 ms scalar vs 25 ms vectorised at 2^24 on 2 cores). Host
// versions here are branch-free and call no library function, so GCC vectorises loops over
// them at -O3 -march=native without -ffast-math. Their accuracy (max ULP over the whole
// float range against long double) is documented next to each and tested in
// tests/test_vmath.cpp.
#pragma once
#include "runtime/ops/hd.h"

namespace hf::vm {

// a * b + c rounded once where the target has FMA. Kernels are compiled with
// -ffp-contract=off (docs/math.md): the compiler fuses nothing on its own, so a loop's
// vector body and its scalar remainder round alike, and these are the only fused products.
HF_HD float fmadd(float a, float b, float c) {
#if HF_DEVICE_CODE
  return ::fmaf(a, b, c);
#elif defined(__FMA__)
  return __builtin_fmaf(a, b, c);
#else
  return a * b + c;
#endif
}
HF_HD double fmadd(double a, double b, double c) {
#if HF_DEVICE_CODE
  return ::fma(a, b, c);
#elif defined(__FMA__)
  return __builtin_fma(a, b, c);
#else
  return a * b + c;
#endif
}

#if HF_DEVICE_CODE
HF_HD float exp(float x) { return ::expf(x); }
HF_HD float expm1(float x) { return ::expm1f(x); }
HF_HD float log(float x) { return ::logf(x); }
HF_HD float log1p(float x) { return ::log1pf(x); }
HF_HD float sin(float x) { return ::sinf(x); }
HF_HD float cos(float x) { return ::cosf(x); }
HF_HD float tan(float x) { return ::tanf(x); }
HF_HD float tanh(float x) { return ::tanhf(x); }
HF_HD float sigmoid(float x) { return 1.0f / (1.0f + ::expf(-x)); }
HF_HD float erf(float x) { return ::erff(x); }
HF_HD float erfc(float x) { return ::erfcf(x); }
HF_HD float erfinv(float x) { return ::erfinvf(x); }
HF_HD float erfcinv(float x) { return ::erfcinvf(x); }
HF_HD float asin(float x) { return ::asinf(x); }
HF_HD float acos(float x) { return ::acosf(x); }
HF_HD float atan(float x) { return ::atanf(x); }
HF_HD float atan2(float y, float x) { return ::atan2f(y, x); }
HF_HD float sinh(float x) { return ::sinhf(x); }
HF_HD float cosh(float x) { return ::coshf(x); }
HF_HD float asinh(float x) { return ::asinhf(x); }
HF_HD float acosh(float x) { return ::acoshf(x); }
HF_HD float atanh(float x) { return ::atanhf(x); }
HF_HD float pow(float x, float y) { return ::powf(x, y); }
HF_HD float sqrt(float x) { return ::sqrtf(x); }
HF_HD float floor(float x) { return ::floorf(x); }
HF_HD float ceil(float x) { return ::ceilf(x); }
HF_HD float round(float x) { return ::roundf(x); }  // half away from zero
HF_HD float trunc(float x) { return ::truncf(x); }
HF_HD float fmod(float x, float y) { return ::fmodf(x, y); }
HF_HD float fabs(float x) { return ::fabsf(x); }
#else
// Host versions. Each is branch-free (selects become blends) and calls nothing, so GCC
// vectorises a loop over it at -O3 -march=native -fno-math-errno -fno-trapping-math, without
// -ffast-math. Where
// a float formulation would need error-free products (which FMA contraction breaks, and which
// vary with -march), the work is done in double: products of floats are exact there, and the
// one final conversion rounds once, into the subnormal range too. Coefficients are minimax
// fits (mpmath Remez) of the stated relative error on the stated interval.
//
// Each comment gives the max error in ULP (the float spacing at the exact result) over the
// whole float range, as measured by tests/test_vmath.cpp (every 2039th bit pattern plus dense
// ranges, against long double; built with and without -march=native, i.e. FMA contraction),
// which also asserts it. "0.5 ULP" means correctly rounded except within 2^-9 ULP of a
// halfway case (asserted: <= 0.51). Special values follow C99 Annex F: NaN in gives NaN out,
// signed zeros are kept, overflow gives inf, subnormal results are rounded, not flushed.
namespace detail {
HF_HD u32 bits(float x) {
  return __builtin_bit_cast(u32, x);
}
HF_HD u64 bits(double x) {
  return __builtin_bit_cast(u64, x);
}
HF_HD float as_f32(u32 u) {
  return __builtin_bit_cast(float, u);
}
HF_HD double as_f64(u64 u) {
  return __builtin_bit_cast(double, u);
}
HF_HD bool sign_bit(float x) {
  return (i32)bits(x) < 0;
}
// m (not negative) with the sign of s.
HF_HD float with_sign(float m, float s) {
  return as_f32(bits(m) | (bits(s) & 0x80000000u));
}
// c ? a : b, one vector blend when the loop is vectorised. The kernel flags include
// -fno-trapping-math: without it GCC keeps a ?: as a branch and the loop scalar (docs/math.md).
HF_HD float sel(bool c, float a, float b) {
  return c ? a : b;
}
HF_HD double sel(bool c, double a, double b) {
  return c ? a : b;
}
// (q & 1) ? a : b; a bool made of q & 1 would be a 1-bit type, which GCC does not vectorise.
HF_HD double sel_odd(u32 q, double a, double b) {
  u64 m = -(u64)(q & 1);
  return as_f64((bits(a) & m) | (bits(b) & ~m));
}
HF_HD u32 sel(bool c, u32 a, u32 b) {
  return (a & -(u32)c) | (b & ~-(u32)c);
}
inline constexpr float kInf = __builtin_huge_valf();
inline constexpr float kNaN = __builtin_nanf("");
inline constexpr double kPi = 0x1.921fb54442d18p+1, kPi2 = kPi / 2, kPi4 = kPi / 4;

// c0 + x * (c1 + x * (c2 + ...)).
template <class T, class... C>
HF_HD T poly(T x, T c0, C... c) {
  if constexpr (sizeof...(c) == 0)
    return c0;
  else
    return fmadd(x, poly(x, T(c)...), c0);
}

// The float exp core: x = n ln2 + r with |r| <= ln2/2 (two-part ln2, n ln2_hi exact), where
// t = x/ln2 + 1.5 2^23 holds n = round(x/ln2) in its low mantissa bits (|x| < 2^21). Returns
// e^r - 1, to 2^-28 relative to e^r. The polynomial is evaluated in Estrin's scheme (depth 3
// instead of Horner's 5): exp sits on the dependency chain of every fused chain that calls it.
HF_HD float expm1_red(float x, float t) {
  float n = t - 0x1.8p+23f;
  float r = fmadd(n, -0x1.7f7d1cp-20f, fmadd(n, -0x1.62e4p-1f, x)), r2 = r * r;
  float p01 = fmadd(r, 0.166665211f, 0.49999994f), p23 = fmadd(r, 0.00836871006f, 0.041668389f);
  return fmadd(r2, fmadd(r2, fmadd(r2, 0.00138146128f, p23), p01), r);
}
HF_HD i32 exp_n(float t) {
  return (i32)(bits(t) - bits(0x1.8p+23f));
}
HF_HD float pow2_f(i32 n) {  // 2^n for n in [-126, 127]; garbage, not UB, elsewhere
  return as_f32(((u32)n + 127u) << 23);
}

// e^x in float: 2^n (1 + e) with e = expm1_red, 2^n applied in two factors so that subnormal
// results round once more only (s1 (1 + e) as s1 e + s1: one fma where the target has it).
// The range is handled at the end, not by clamping x first: that keeps the clamps off the
// dependency chain, and a fused kernel that chains exps (sigmoid, tanh, exp) is bound by its
// latency. Outside [-104, 89] (results 0 or inf) the arithmetic is garbage and replaced; NaN
// passes through it.
HF_HD float exp_f(float x) {
  float t = fmadd(x, 0x1.715476p+0f, 0x1.8p+23f);
  float e = expm1_red(x, t);
  i32 ni = exp_n(t), n1 = ni >> 1;
  float s1 = pow2_f(n1), s2 = pow2_f(ni - n1);
  float r = fmadd(s1, e, s1) * s2;
  return sel((x < -104.0f) | (x > 89.0f), sel(x > 0.0f, kInf, 0.0f), r);  // one blend on the chain
}

// log(u) + c for u > 0 finite (c: a small correction added before the last rounding).
// u = 2^k m, m in [sqrt(1/2), sqrt(2)); log(m) = f - f^2/2 + f^3 P(f), f = m - 1, to 2^-27.
HF_HD float log_f(float u, float c) {
  bool sub = u < 0x1p-126f;
  float us = u * 0x1p23f;
  u32 iu = bits(sel(sub, us, u)) - 0x3f3504f3u;  // 0x3f3504f3: sqrt(1/2)
  float k = (float)((i32)iu >> 23) - sel(sub, 23.0f, 0.0f);
  float f = as_f32((iu & 0x7fffffu) + 0x3f3504f3u) - 1.0f, z = f * f;
  float p = poly(f, 0.333333313f, -0.250008196f, 0.200012267f, -0.166233569f, 0.142017573f,
                 -0.13160187f, 0.127615809f, -0.0763449147f);
  float y = fmadd(-0.5f, z, fmadd(f * z, p, fmadd(k, -0x1.bd0106p-13f, c)));  // ln2 = 0x1.63p-1
  return fmadd(k, 0x1.63p-1f, f + y);                                        //  - 0x1.bd0106p-13
}

// (e^r - 1 - r)/r^2 for |r| <= ln2/2, to 2^-51 relative to e^r.
HF_HD double exp_poly(double r) {
  return poly(r, 0.49999999999998324, 0.16666666666611554, 0.041666666668136468,
              0.0083333333708701645, 0.0013888888516233081, 0.00019841185236139605,
              2.4801931710633814e-05, 2.7634990807400336e-06, 2.7476799749795585e-07);
}

// e^v in double for |v| <= 700 (callers clamp; NaN passes): relative error 2^-51.
HF_HD double exp_d(double v) {
  double t = fmadd(v, 0x1.71547652b82fep+0, 0x1.8p+52);
  double n = t - 0x1.8p+52;
  double r = fmadd(n, -0x1.a39ef35793c76p-33, fmadd(n, -0x1.62e42feep-1, v));
  return (1.0 + fmadd(r * r, exp_poly(r), r)) * as_f64((bits(t) - bits(0x1.8p+52) + 1023) << 52);
}

// log(u) in double for u > 0 finite: u = 2^k m, m in [sqrt(1/2), sqrt(2)), s = (m-1)/(m+1),
// log(m) = 2s + s^3 P(s^2) to 2^-55. Integer work stays unsigned: AVX2 has no 64-bit sra.
HF_HD double log_d(double u) {
  u64 iu = bits(u) + (0x3ff0000000000000ull - 0x3fe6a09e667f3bcdull);
  double k = as_f64((iu >> 52) | 0x4330000000000000ull) - (0x1p52 + 1023);
  double f = as_f64((iu & 0xfffffffffffffull) + 0x3fe6a09e667f3bcdull) - 1.0;
  double s = f / (2.0 + f), s2 = s * s;
  double p =
      poly(s2, 0.66666666666666663, 0.39999999999997543, 0.2857142858411918, 0.22222216344539322,
           0.18182626727308518, 0.15337313632592989, 0.14576459281008439);
  return fmadd(k, 0x1.62e42feep-1, fmadd(k, 0x1.a39ef35793c76p-33, fmadd(s * s2, p, 2.0 * s)));
}

// Bits of 2/pi: kTwoOverPi[i] = floor(2^(8i) * 2/pi) mod 2^32.
inline constexpr u32 kTwoOverPi[25] = {0x00000000, 0x000000a2, 0x0000a2f9, 0x00a2f983, 0xa2f9836e,
                                       0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529, 0x441529fc,
                                       0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534,
                                       0xd1f534dd, 0xf534ddc0, 0x34ddc0db, 0xddc0db62, 0xc0db6295,
                                       0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041};

// Payne-Hanek: |x| = q pi/2 + r, |r| <= pi/4, for |x| >= pi/4 given as bits. |x| = m 2^(8j-22)
// with m < 2^31, so |x| 2/pi mod 4 = 4 frac(m W), W the 96 bits of 2/pi from bit 8j-23 on
// (three gathers); the 32x96-bit product gives it in 2.62 fixed point. Close to a multiple of
// pi/2 a float keeps at least 33 significant bits of r.
HF_HD double reduce_pio2(u32 ax, u32& q) {
  u32 e = ax >> 23;
  i32 j = (i32)(e >> 3) - 15;
  j = (i32)sel(j < 0, 0u, (u32)j);
  u32 m = ((ax & 0x7fffffu) | 0x800000u) << (e & 7);
  u64 f = ((u64)(m * kTwoOverPi[j]) << 32) + (u64)m * kTwoOverPi[j + 4] +
          ((u64)m * kTwoOverPi[j + 8] >> 32);
  f += 1ull << 61;  // round to the nearest quadrant
  q = (u32)(f >> 62);
  f &= (1ull << 62) - 1;  // r / (pi/2) + 1/2, in 2^-62 units
  double hi = (double)(i32)(u32)(f >> 32) * 0x1p32 - 0x1p61;
  double lo = as_f64(0x4330000000000000ull | (f & 0xffffffffull)) - 0x1p52;
  return (hi + lo) * (kPi2 * 0x1p-62);
}

// sin(r) and cos(r) of the reduced |x| (relative error 2^-34), and the quadrant q.
HF_HD void sincos_d(float x, double& s, double& c, u32& q) {
  u32 ax = bits(x) & 0x7fffffffu, qb;
  double rb = reduce_pio2(ax, qb);
  bool small = ax < 0x3f490fdbu;  // |x| < pi/4
  double r = sel(small, (double)as_f32(ax), rb), r2 = r * r;
  q = sel(small, 0u, qb);
  s = fmadd(r,
            r2 * poly(r2, -0.16666666666448379, 0.0083333320002572132, -0.00019839964836110705,
                      2.7226776477869691e-06),
            r);
  c = fmadd(r2,
            poly(r2, -0.5, 0.041666666666484539, -0.0013888887776642514, 2.480049857679197e-05,
                 -2.7281632079231776e-07),
            1.0);
}

// atan(a/b) for a, b >= 0, not both 0 or both inf. Reduced to |t| <= tan(pi/8) with one
// division: t = a/b, or (a-b)/(a+b) + pi/4; atan(t) = t + t^3 P(t^2) to 2^-35.
HF_HD double atan2_pos(double a, double b) {
  double mn = sel(a < b, a, b), mx = sel(a < b, b, a);
  bool mid = mn > 0x1.a827999fcef32p-2 * mx;  // mn/mx > tan(pi/8) = sqrt(2) - 1
  double d = mn - mx, s = mn + mx;
  double t = sel(mid, d, mn) / sel(mid, s, mx), t2 = t * t;
  double p =
      poly(t2, -0.33333333333333165, 0.19999999973003238, -0.14285690319471814, 0.11109183881244246,
           -0.090440054242089382, 0.071930105437973402, -0.041206716841053426);
  double r = sel(mid, kPi4, 0.0) + fmadd(t * t2, p, t);
  return sel(a > b, kPi2 - r, r);
}

// erf(x) = x P(x^2) for |x| <= 0.75, to 2^-35 (erfc).
HF_HD double erf_small(double x) {
  double x2 = x * x;
  return x * poly(x2, 1.1283791670678005, -0.37612638427558648, 0.11283778252387656,
                  -0.026864742516922863, 0.0052166899699419237, -0.0008355366338379846,
                  9.4612612285549364e-05);
}

// erf in float lanes, two pieces split at a = 0.875, both computed and blended (one division
// in all). Each ends in one rounding of a sum whose larger term is exact or nearly so, which is
// what keeps the error near 1 ULP: a rational x P(x^2)/Q(x^2) in float (four roundings of
// relative 2^-24, each worth up to 1 ULP where erf is near the top of a binade) measured 5.1
// ULP. Coefficients: Lawson-weighted linearised (Loeb) rational/polynomial minimax fits, mpmath
// references (bench/fit_erf.py), rounded to float and checked over every float
// (bench/vmath_exhaustive.cpp).
//
// erf(a) for 0 <= a <= 0.875: a c0 + a W(a^2), c0 = float(2/sqrt(pi)) and W(s) = erf(a)/a - c0
// (W(0) is c0's rounding error), to 2^-26.8 relative to erf; the sum rounds once (fmadd), and
// a W is at most 0.3 of it.
HF_HD float erf_small_f(float a) {
  float w = poly(a * a, -6.823805165e-08f, -3.761255145e-01f, 1.128245518e-01f, -2.679146267e-02f,
                 5.032181274e-03f, -6.203253870e-04f);
  return fmadd(a, 0x1.20dd76p+0f, a * w);
}
// erfc(a) for 0.875 <= a <= 4: N(v)/D(v), v = a - 0.875 (exact for every float a >= 0.875),
// to 2^-26.8 (1 - 2.5 erfc(a)) absolute: tighter near 0.875, where erfc (<= 0.22) is largest
// and its own rounding errors (relative) reach the result 1 - erfc least scaled down. Larger
// a (inf too) are held at 4 by an unsigned min on the bits (one instruction, where a float
// clamp is a compare and a blend: 5% of a GELU loop on AVX2): erf(4) rounds to 1, erfc(4) =
// 1.5e-8 < 2^-25 with room for the fit's error. A NaN would become 4 too: erf sends NaN to
// the other piece.
HF_HD float erfc_mid_f(float a) {
  u32 b = bits(a), four = 0x40800000u;  // 4.0f
  float v = as_f32(b < four ? b : four) - 0.875f;
  float n = poly(v, 2.159249336e-01f, -4.394142628e-01f, 3.774591684e-01f, -1.750166714e-01f,
                 4.614878073e-02f, -6.553754210e-03f, 3.911497188e-04f);
  float d = poly(v, 1.0f, 3.951838911e-01f, 5.821426511e-01f, 1.931585222e-01f, 1.414649189e-01f,
                 3.049689904e-02f, 2.203582041e-02f);
  return n / d;
}

// erfc(a) for a >= 0.75: e^(-a^2) R(2/(2+a)), R to 2^-37 on [0.75, 10.1]; a^2 is exact.
HF_HD double erfc_tail(double a) {
  a = sel(a > 11.0, 11.0, a);  // erfc(11) underflows float; NaN passes
  double t = 2.0 / (2.0 + a);
  double r =
      poly(t, -2.3591039194681839e-07, 0.2821040759404525, 0.28193094561388743, 0.24854652708672537,
           0.16449282521812281, 0.14022989284891993, -0.19550461146842565, 0.40021346041178452,
           -0.80470195626367891, 0.78332110942467403, -0.37241162298108177, 0.071791263033514741);
  return exp_d(-a * a) * r;
}

// erfinv(a)/a as a function of w = -log((1-a)(1+a)) (Giles' variable, which keeps the
// accuracy near |a| = 1): a polynomial in w on [0, 5] (2^-27), in sqrt(w) on [5, 16.5]
// (2^-29, the rest of erfinv's float range) and, with tail, on [16, 104] (2^-28, erfcinv).
HF_HD double erfinv_ratio(double w, bool tail) {
  double s = __builtin_sqrt(w) - 3.0;
  double p1 = poly(w - 2.5, 1.5014093592823168, 0.24664028615513339, -0.004177386780262967,
                   -0.0012527418827847385, 0.00021834443866443809, -4.9633451633442257e-06,
                   -3.462704544194612e-06, 4.6617006561740562e-07, 2.3232626124197976e-08,
                   -8.79101277088445e-09);
  double p2 = poly(s, 2.8329768010310348, 1.0016752355215284, 0.009445331693592296,
                   -0.0076427183769827477, 0.0056874049001992208, -0.0035674360961554432,
                   0.0014761779665195889, -0.00011920961588033294, -0.0002791335426137316,
                   0.00015992211026844754, -2.8583151703954683e-05);
  if (tail) {
    double p3 = poly(s, 2.832777219762681, 1.0027918715215458, 0.0065757614707462192,
                     -0.0031609413996736059, 0.00099766798852014772, -0.00023351480517755786,
                     4.0266637916633664e-05, -4.9274416155130194e-06, 4.0205156404571499e-07,
                     -1.9516349734116513e-08, 4.2481626846820111e-10);
    p2 = sel(w < 16.0, p2, p3);
  }
  return sel(w < 5.0, p1, p2);
}

// trunc(a) for a >= 0 (NaN passes). Vector floor/ceil/trunc instructions are used by GCC only
// with -fno-trapping-math; this is exact in any rounding mode: t is a or a neighbour integer.
HF_HD float trunc_pos(float a) {
  float t = (a + 0x1p23f) - 0x1p23f;
  return sel(a < 0x1p23f, sel(t > a, t - 1.0f, t), a);
}
HF_HD float ceil_pos(float a) {
  float t = (a + 0x1p23f) - 0x1p23f;
  return sel(a < 0x1p23f, sel(t < a, t + 1.0f, t), a);
}
HF_HD double trunc_pos(double a) {  // a < 2^52
  double t = (a + 0x1p52) - 0x1p52;
  return sel(t > a, t - 1.0, t);
}
}  // namespace detail

// exp: float, see exp_f. Max 0.96 ULP (over every float: 0.99, and 1.014 at x = 0x1.2e3aa8p+5
// with FMA contraction: the rounding of r, up to 2^-26 of e^r, is not compensated).
// exp(-inf) = +0, exp(inf) = inf; overflow above 88.7228, subnormal results below -87.3365.
HF_HD float exp(float x) {
  return detail::exp_f(x);
}

// expm1: double; x = n ln2 + r as in exp_d, then 2^n expm1(r) + (2^n - 1), both terms exact.
// Max 0.5 ULP. expm1(+-0) = +-0, expm1(-inf) = -1, expm1(inf) = inf.
HF_HD float expm1(float x) {
  using namespace detail;
  double v = sel(x < -20.0f, -20.0f, x);  // expm1(-20) rounds to -1; NaN passes
  v = sel(v > 89.0, 89.0, v);
  double t = fmadd(v, 0x1.71547652b82fep+0, 0x1.8p+52);
  double n = t - 0x1.8p+52;
  double r = fmadd(n, -0x1.a39ef35793c76p-33, fmadd(n, -0x1.62e42feep-1, v));
  double e = fmadd(r * r, exp_poly(r), r), s = as_f64((bits(t) - bits(0x1.8p+52) + 1023) << 52);
  return sel(__builtin_fabsf(x) < 0x1p-24f, x, (float)fmadd(s, e, s - 1.0));  // keeps -0
}

// log: float, see log_f. Max 0.81 ULP. log(+-0) = -inf, log(x < 0) = NaN, log(inf) = inf.
HF_HD float log(float x) {
  using namespace detail;
  float r = log_f(x, 0.0f);
  r = sel(x < 0, kNaN, r);
  r = sel(x == 0, -kInf, r);
  return sel((x == kInf) | (x != x), x, r);
}

// log1p: float; log(1 + x) with the rounding error of 1 + x added back: log1p(x) =
// log(u) + (x - (u - 1))/u, u = 1 + x (exact terms for u < 2^24). Max 0.83 ULP.
// log1p(+-0) = +-0, log1p(-1) = -inf, log1p(x < -1) = NaN, log1p(inf) = inf.
HF_HD float log1p(float x) {
  using namespace detail;
  float u = 1.0f + x, c = (x - (u - 1.0f)) / u;
  float r = log_f(u, sel(u < 0x1p24f, c, 0.0f));
  r = sel(x < -1, kNaN, r);
  r = sel(x == -1, -kInf, r);
  r = sel((x == kInf) | (x != x), x, r);
  return sel(__builtin_fabsf(x) < 0x1p-24f, x, r);  // x - x^2/2 rounds to x; keeps -0
}

// sin, cos, tan: Payne-Hanek reduction over the whole float range (see reduce_pio2), then
// double polynomials and, for tan, a double division. Max 0.5 ULP, huge arguments included.
// sin(+-0) = +-0, tan(+-0) = +-0, cos(+-0) = 1; +-inf gives NaN.
HF_HD float sin(float x) {
  using namespace detail;
  double s, c;
  u32 q;
  sincos_d(x, s, c, q);
  float r = (float)sel_odd(q, c, s);
  r = as_f32(bits(r) ^ ((((q >> 1) ^ (bits(x) >> 31)) & 1) << 31));
  return sel((bits(x) & 0x7fffffffu) < 0x7f800000u, r, x - x);
}
HF_HD float cos(float x) {
  using namespace detail;
  double s, c;
  u32 q;
  sincos_d(x, s, c, q);
  float r = (float)sel_odd(q, s, c);
  r = as_f32(bits(r) ^ ((((q + 1) >> 1) & 1) << 31));
  return sel((bits(x) & 0x7fffffffu) < 0x7f800000u, r, x - x);
}
HF_HD float tan(float x) {
  using namespace detail;
  double s, c;
  u32 q;
  sincos_d(x, s, c, q);
  double num = sel_odd(q, -c, s), den = sel_odd(q, s, c);
  float r = (float)(num / den);
  r = as_f32(bits(r) ^ (bits(x) & 0x80000000u));
  return sel((bits(x) & 0x7fffffffu) < 0x7f800000u, r, x - x);
}

// tanh: float; x + x^3 P(x^2) (2^-29) for |x| < 0.625, else 1 - 2/(e^(2|x|) + 1), with
// e^(2|x|) = s (1 + e) from the exp core (s = 2^n, n in [2, 26]) and its + 1 folded into one
// fma, s e + (s + 1), which rounds once. Max 1.18 ULP (over every float: 1.20; asserted: 1.5),
// where the exp form starts. Beyond |x| = 9.1 the result rounds to +-1 (the exp form is
// replaced there).
// tanh(+-0) = +-0, tanh(+-inf) = +-1.
HF_HD float tanh(float x) {
  using namespace detail;
  float ax = __builtin_fabsf(x), x2 = x * x;
  float small = fmadd(x,
                      x2 * poly(x2, -0.333333343f, 0.133333296f, -0.0539637394f, 0.0217904579f,
                                -0.00838016346f, 0.00230807532f),
                      x);
  float t = fmadd(ax, 0x1.715476p+1f, 0x1.8p+23f);  // 2|x| / ln2, rounded as in exp_f
  float e = expm1_red(ax + ax, t), s = pow2_f(exp_n(t));
  float one = with_sign(1.0f, x), two = one + one;  // the sign off the chain
  float big = one - two / fmadd(s, e, s + 1.0f);
  float other = sel(ax < 0.625f, sel(ax < 0x1p-13f, x, small), one);  // x: keeps -0
  return sel((ax < 0.625f) | (ax > 9.1f), other, big);  // one blend on the chain; NaN: big
}

// sigmoid: float; 1 / (1 + e^-x) with e^-x = s (1 + e) from the exp core in one factor
// (s = 2^n, n in [-127, 127]) and the 1 + folded into one fma, s e + (s + 1): the exp's own
// rounding and its range blend stay off the dependency chain (sigmoid feeds the next op in
// most fused activations). Max 2.44 ULP (asserted: 2.5; 1/(1 + exp(-x)) had 2.48) down to
// x = -88.375, the worst below x = -16.6, where s + 1 rounds; below -88.375, where the exact
// result is subnormal and below 4.2e-39, 0. sigmoid(-inf) = +0, sigmoid(inf) = 1.
HF_HD float sigmoid(float x) {
  using namespace detail;
  float z = -x, t = fmadd(z, 0x1.715476p+0f, 0x1.8p+23f);
  float e = expm1_red(z, t), s = pow2_f(exp_n(t));
  float q = 1.0f / fmadd(s, e, s + 1.0f);
  return sel(__builtin_fabsf(z) > 88.375f, sel(z > 0.0f, 0.0f, 1.0f), q);  // NaN: q
}

// erf: float (8 lanes with AVX2); erf_small_f below 0.875, else 1 - erfc_mid_f (which rounds
// to 1 from 3.92 on). Max 1.095 ULP over every float with FMA (every AVX2 target, and the
// kernels, which are built with -march=native), at x = 0x1.bf01acp-1, where the small piece
// ends; 1.82 ULP without FMA (HOTFUSE_NATIVE=OFF), where fmadd rounds twice. The double form
// it replaces (|x| P(x^2)/Q(x^2), 0.503 ULP) took 1.7x as long in a GELU loop on AVX2
// (docs/math.md, bench/VMATH.md). erf(+-0) = +-0, erf(+-inf) = +-1.
HF_HD float erf(float x) {
  using namespace detail;
  float a = __builtin_fabsf(x);
  float r = sel(!(a >= 0.875f), erf_small_f(a), 1.0f - erfc_mid_f(a));  // NaN: the first
  return with_sign(r, x);
}
// erfc: double; 1 - erf_small for |x| <= 0.75, erfc_tail beyond (erfc(-x) = 2 - erfc(x)).
// Max 0.5 ULP. erfc(-inf) = 2, erfc(inf) = 0, subnormal results for x in (9.19, 10.06).
HF_HD float erfc(float x) {
  using namespace detail;
  double a = __builtin_fabsf(x), tail = erfc_tail(a), neg = 2.0 - tail, small = 1.0 - erf_small(x);
  return (float)sel(a < 0.75, small, sel(sign_bit(x), neg, tail));
}

// erfinv: double; x erfinv_ratio(-log((1-x)(1+x))), the product exact in double. Max 0.59
// ULP (asserted: 0.7).
// erfinv(+-0) = +-0, erfinv(+-1) = +-inf, NaN for |x| > 1.
HF_HD float erfinv(float x) {
  using namespace detail;
  double a = x, r = a * erfinv_ratio(-log_d((1.0 - a) * (1.0 + a)), false);
  float ax = __builtin_fabsf(x), res = (float)r;
  res = sel(ax > 1, kNaN, res);
  return sel(ax == 1, with_sign(kInf, x), res);
}
// erfcinv(y) = erfinv(1 - y), computed from y: 1 - (1-y)^2 = y (2 - y), so tiny y keep
// their accuracy. Max 0.59 ULP (asserted: 0.7). erfcinv(0) = inf, erfcinv(1) = 0,
// erfcinv(2) = -inf, NaN outside [0, 2].
HF_HD float erfcinv(float y) {
  using namespace detail;
  double b = y, r = (1.0 - b) * erfinv_ratio(-log_d(b * (2.0 - b)), true);
  float res = (float)r;
  res = sel((y < 0) | (y > 2), kNaN, res);
  res = sel(y == 0, kInf, res);
  return sel(y == 2, -kInf, res);
}

// asin, acos, atan, atan2: double, through atan2_pos: asin(x) = atan(x / sqrt((1-x)(1+x))),
// acos(x) = atan(sqrt((1-x)(1+x)) / x), the product exact in double. Max 0.5 ULP.
// asin(+-0) = +-0, atan(+-0) = +-0, atan(+-inf) = +-pi/2, NaN for |x| > 1 in asin/acos.
HF_HD float asin(float x) {
  using namespace detail;
  double a = __builtin_fabsf(x), r = atan2_pos(a, __builtin_sqrt((1.0 - a) * (1.0 + a)));
  return sel(a > 1, kNaN, with_sign((float)r, x));
}
HF_HD float acos(float x) {
  using namespace detail;
  double a = __builtin_fabsf(x), r = atan2_pos(__builtin_sqrt((1.0 - a) * (1.0 + a)), a);
  return sel(a > 1, kNaN, (float)sel(sign_bit(x), kPi - r, r));
}
HF_HD float atan(float x) {
  using namespace detail;
  float r = (float)atan2_pos(__builtin_fabsf(x), 1.0);
  return sel(x != x, x, with_sign(r, x));
}
// atan2(y, x): Annex F special cases: atan2(+-0, +0) = +-0, atan2(+-0, -0) = +-pi,
// atan2(+-inf, +inf) = +-pi/4, atan2(+-inf, -inf) = +-3pi/4, atan2(+-y, -inf) = +-pi, ...
HF_HD float atan2(float y, float x) {
  using namespace detail;
  double a = __builtin_fabsf(y), b = __builtin_fabsf(x);
  bool same = (a == b) & ((a == 0) | (a == kInf));  // atan(0/0) := 0, atan(inf/inf) := pi/4
  double r = atan2_pos(sel(same & (a != 0), 1.0, a), sel(same, 1.0, b));
  float res = with_sign((float)sel(sign_bit(x), kPi - r, r), y);
  return sel((x != x) | (y != y), x + y, res);
}

// sinh, cosh: double, from e = e^|x|: (e - 1/e)/2 (a series below 2^-5, where that cancels)
// and (e + 1/e)/2. Max 0.5 ULP. sinh(+-0) = +-0, sinh(+-inf) = +-inf, cosh(+-inf) = inf, overflow
// for |x| > 89.4159.
HF_HD float sinh(float x) {
  using namespace detail;
  double a = __builtin_fabsf(x), a2 = a * a;
  double e = exp_d(sel(a > 100.0, 100.0, a)), big = 0.5 * (e - 1.0 / e);
  double small = fmadd(a * a2, poly(a2, 1.0 / 6, 1.0 / 120, 1.0 / 5040), a);
  return with_sign((float)sel(a < 0x1p-5, small, big), x);
}
HF_HD float cosh(float x) {
  using namespace detail;
  double a = __builtin_fabsf(x), e = exp_d(sel(a > 100.0, 100.0, a));
  return (float)(0.5 * (e + 1.0 / e));
}

// asinh, acosh, atanh: double, through log_d (series below 2^-5 for asinh and atanh).
// Max 0.5 ULP. asinh(+-0) = +-0, asinh(+-inf) = +-inf; acosh(1) = +0, acosh(inf) = inf, NaN for
// x < 1; atanh(+-0) = +-0, atanh(+-1) = +-inf, NaN for |x| > 1.
HF_HD float asinh(float x) {
  using namespace detail;
  double a = __builtin_fabsf(x), a2 = a * a, big = log_d(a + __builtin_sqrt(a2 + 1.0));
  double small = fmadd(a * a2, poly(a2, -1.0 / 6, 3.0 / 40, -5.0 / 112), a);
  float r = with_sign((float)sel(a < 0x1p-5, small, big), x);
  return sel((a == kInf) | (x != x), x, r);
}
HF_HD float acosh(float x) {
  using namespace detail;
  double a = x;
  float r = (float)log_d(a + __builtin_sqrt((a - 1.0) * (a + 1.0)));
  r = sel(x < 1, kNaN, r);
  return sel((x == kInf) | (x != x), x, r);
}
HF_HD float atanh(float x) {
  using namespace detail;
  double a = __builtin_fabsf(x), a2 = a * a, big = 0.5 * log_d((1.0 + a) / (1.0 - a));
  double small = fmadd(a * a2, poly(a2, 1.0 / 3, 1.0 / 5, 1.0 / 7), a);
  float r = with_sign((float)sel(a < 0x1p-5, small, big), x);
  r = sel(a > 1, kNaN, r);
  r = sel(a == 1, with_sign(kInf, x), r);
  return sel(x != x, x, r);
}

// pow: double, e^(y log|x|) with log_d and exp_d (y log|x| has an absolute error below
// 2^-45). Max 0.5 ULP over the whole range of x and y. Annex F: pow(x, +-0) = 1 and pow(1, y) = 1
// even for NaN, pow(-1, +-inf) = 1, pow(x < 0, non-integer y) = NaN, pow(+-0, y < 0) = inf (-inf
// for odd y and -0), ...
HF_HD float pow(float x, float y) {
  using namespace detail;
  float ax = __builtin_fabsf(x);
  double l = log_d(ax);
  l = sel(ax == 0, -(double)kInf, l);
  l = sel(ax == kInf, (double)kInf, l);
  double v = y * l;
  v = sel(v < -200.0, -200.0, v);  // NaN passes
  v = sel(v > 200.0, 200.0, v);
  float r = (float)exp_d(v), h = 0.5f * y;
  bool y_int = trunc_pos(__builtin_fabsf(y)) == __builtin_fabsf(y);
  bool y_odd = y_int & (trunc_pos(__builtin_fabsf(h)) != __builtin_fabsf(h));
  r = sel(sign_bit(x) & y_odd, -r, r);
  r = sel((x < 0) & (ax < kInf) & !y_int, kNaN, r);
  r = sel((x != x) | (y != y), x + y, r);
  return sel((y == 0) | (x == 1) | ((x == -1) & (__builtin_fabsf(y) == kInf)), 1.0f, r);
}

// Exact. sqrt and fabs are instructions; the rounding functions keep the sign of x (so
// ceil(-0.5) = -0) and return inf and NaN as they are.
HF_HD float sqrt(float x) {
  return __builtin_sqrtf(x);
}
HF_HD float fabs(float x) {
  return __builtin_fabsf(x);
}
HF_HD float trunc(float x) {
  return detail::with_sign(detail::trunc_pos(__builtin_fabsf(x)), x);
}
HF_HD float floor(float x) {
  using namespace detail;
  float a = __builtin_fabsf(x);
  return with_sign(sel(sign_bit(x), ceil_pos(a), trunc_pos(a)), x);
}
HF_HD float ceil(float x) {
  using namespace detail;
  float a = __builtin_fabsf(x);
  return with_sign(sel(sign_bit(x), trunc_pos(a), ceil_pos(a)), x);
}
// round: half away from zero; a - trunc(a) is exact, so 0.49999997 rounds to 0.
HF_HD float round(float x) {
  using namespace detail;
  float a = __builtin_fabsf(x), t = trunc_pos(a);
  return with_sign(t + sel(a - t >= 0.5f, 1.0f, 0.0f), x);
}
// fmod: exact, in double. Each of 10 steps removes a multiple q b 2^k of b from r, with k
// chosen so that q < 2^29 and q b 2^k is exact; 10 x 28 bits cover the widest exponent gap
// of two floats (277). A rounded-up quotient is corrected by adding b 2^k back.
// fmod(+-0, y) = +-0, fmod(x, +-inf) = x, NaN for y = 0 or x = +-inf. The sign is x's.
HF_HD float fmod(float x, float y) {
  using namespace detail;
  double b = __builtin_fabsf(y), r = __builtin_fabsf(x);
#pragma GCC unroll 10
  for (int i = 0; i < 10; ++i) {
    i64 k = (i64)(bits(r) >> 52) - (i64)(bits(b) >> 52) - 28;
    double bk = b * as_f64((u64)(sel(k < 0, 0u, (u32)k) + 1023) << 52);
    r -= trunc_pos(r / bk) * bk;
    r = sel(r < 0, r + bk, r);
  }
  float res = with_sign((float)r, x);
  res = sel(__builtin_fabsf(y) == kInf, x, res);
  return sel((y == 0) | (__builtin_fabsf(x) == kInf) | (x != x) | (y != y), kNaN, res);
}
#endif

}  // namespace hf::vm
