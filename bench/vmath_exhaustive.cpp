// Max error of an hf::vm function over every float (all 2^32 bit patterns), against glibc's
// double function (within 1 double ULP, i.e. 2^-29 of a float ULP: exact enough to rank
// float errors to three decimals). tests/test_vmath.cpp samples every 2039th pattern plus
// dense ranges; this is the exhaustive check behind the bounds quoted in vmath.h for the
// float-lane functions. Built twice (bench/CMakeLists.txt): vmath_exhaustive with the kernel
// flags (-march=native: FMA), vmath_exhaustive_portable without -march (no FMA, as with
// HOTFUSE_NATIVE=OFF).
//
// Usage: vmath_exhaustive FUNCTION [THREADS]   (FUNCTION: erf, erfc, exp, log, tanh, sigmoid)
// Prints the max ULP, where, and how many results were wrong in kind (NaN for a number or the
// reverse, the sign of a zero); exits 1 if any was. erf: ~1 min on 2 cores.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "runtime/ops/vmath.h"

namespace {
using u32 = uint32_t;
using u64 = uint64_t;

// Error in ULP of the exact result ref (float spacing at |ref|, 2^-149 below 2^-126; an
// infinity counts as 2^128), as in tests/test_vmath.cpp; -1 for a result wrong in kind.
double ulp_error(float got, double ref) {
  if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got) ? 0 : -1;
  float rf = (float)ref;
  if (got == rf) return got != 0 || std::signbit(got) == std::signbit(ref) ? 0 : -1;
  double g = std::isinf(got) ? std::copysign(0x1p128, (double)got) : (double)got;
  double r = std::isinf(ref) ? std::copysign(0x1p128, ref) : ref;
  int e = r == 0 ? -126 : std::clamp(std::ilogb(r), -126, 127);
  return std::fabs(g - r) / std::ldexp(1.0, e - 23);
}

struct Fn {
  const char* name;
  void (*apply)(const float*, float*, int);  // vectorised, as in the kernels
  double (*ref)(double);
};
template <float (*F)(float)>
void apply(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = F(x[i]);
}
double sigmoid_ref(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
const Fn kFns[] = {
    {"erf", apply<hf::vm::erf>, [](double x) { return std::erf(x); }},
    {"erfc", apply<hf::vm::erfc>, [](double x) { return std::erfc(x); }},
    {"exp", apply<hf::vm::exp>, [](double x) { return std::exp(x); }},
    {"log", apply<hf::vm::log>, [](double x) { return std::log(x); }},
    {"tanh", apply<hf::vm::tanh>, [](double x) { return std::tanh(x); }},
    {"sigmoid", apply<hf::vm::sigmoid>, sigmoid_ref},
};

struct Worst {
  double ulp = 0;
  float x = 0, got = 0;
  double ref = 0;
  u64 wrong_kind = 0;
};

void sweep(const Fn& f, u64 begin, u64 end, Worst& w) {
  constexpr int kBlock = 4096;
  std::vector<float> xs(kBlock), ys(kBlock);
  for (u64 b = begin; b < end; b += kBlock) {
    int n = (int)std::min<u64>(kBlock, end - b);
    for (int i = 0; i < n; ++i) xs[i] = std::bit_cast<float>((u32)(b + i));
    f.apply(xs.data(), ys.data(), n);
    for (int i = 0; i < n; ++i) {
      double r = f.ref((double)xs[i]), e = ulp_error(ys[i], r);
      if (e < 0) {
        if (w.wrong_kind++ == 0)
          std::printf("wrong kind at x=%a: got %a, exact %a\n", xs[i], ys[i], r);
      } else if (e > w.ulp) {
        w = {e, xs[i], ys[i], r, w.wrong_kind};
      }
    }
  }
}
}  // namespace

int main(int argc, char** argv) {
  const Fn* f = nullptr;
  for (const Fn& c : kFns)
    if (argc > 1 && std::strcmp(argv[1], c.name) == 0) f = &c;
  if (!f) {
    std::fprintf(stderr, "usage: vmath_exhaustive erf|erfc|exp|log|tanh|sigmoid [THREADS]\n");
    return 2;
  }
  unsigned nt =
      argc > 2 ? (unsigned)std::atoi(argv[2]) : std::max(1u, std::thread::hardware_concurrency());
  std::vector<Worst> w(nt);
  std::vector<std::thread> th;
  const u64 total = 1ull << 32, chunk = total / nt;
  for (unsigned t = 0; t < nt; ++t)
    th.emplace_back(sweep, std::cref(*f), t * chunk, t + 1 == nt ? total : (t + 1) * chunk,
                    std::ref(w[t]));
  for (std::thread& t : th) t.join();
  Worst all;
  for (const Worst& x : w) {
    all.wrong_kind += x.wrong_kind;
    if (x.ulp > all.ulp) all = {x.ulp, x.x, x.got, x.ref, all.wrong_kind};
  }
#ifdef __FMA__
  const char* fma = "with FMA";
#else
  const char* fma = "without FMA";
#endif
  std::printf(
      "%s over all 2^32 floats (%s): max %.4f ULP at x=%a (got %a, exact %a); %llu wrong in kind\n",
      f->name, fma, all.ulp, all.x, all.got, all.ref, (unsigned long long)all.wrong_kind);
  return all.wrong_kind ? 1 : 0;
}
