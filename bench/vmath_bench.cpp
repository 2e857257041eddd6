// hf::vm (runtime/ops/vmath.h) against glibc's scalar float functions: y[i] = f(x[i]) over
// 2^16 floats (in L2), inputs spread over each function's useful domain. Built with the
// kernel flags (-O3 -march=native -fno-math-errno, no -ffast-math): the vm loops vectorise,
// the libm loops stay scalar calls. Results (time / 2^16 = ns per element): bench/VMATH.md.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "runtime/ops/vmath.h"

namespace {
constexpr int kN = 1 << 16;

std::vector<float> uniform(float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(kN);
  for (float& x : v) x = d(rng);
  return v;
}

void per_element(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations() * kN);
}

template <float (*F)(float)>
void unary(benchmark::State& state, float lo, float hi) {
  std::vector<float> x = uniform(lo, hi, 1), y(kN);
  for (auto _ : state) {
    for (int i = 0; i < kN; ++i) y[i] = F(x[i]);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  per_element(state);
}

template <float (*F)(float, float)>
void binary(benchmark::State& state, float lo, float hi, float lo2, float hi2) {
  std::vector<float> x = uniform(lo, hi, 1), y = uniform(lo2, hi2, 2), z(kN);
  for (auto _ : state) {
    for (int i = 0; i < kN; ++i) z[i] = F(x[i], y[i]);
    benchmark::DoNotOptimize(z.data());
    benchmark::ClobberMemory();
  }
  per_element(state);
}

// Registers vm_NAME and, where glibc has it, libm_NAME.
#define HF_BENCH(NAME, LO, HI)                                            \
  benchmark::RegisterBenchmark("vm_" #NAME, unary<hf::vm::NAME>, LO, HI); \
  benchmark::RegisterBenchmark("libm_" #NAME, unary<::NAME##f>, LO, HI)
#define HF_BENCH2(NAME, LO, HI, LO2, HI2)                                            \
  benchmark::RegisterBenchmark("vm_" #NAME, binary<hf::vm::NAME>, LO, HI, LO2, HI2); \
  benchmark::RegisterBenchmark("libm_" #NAME, binary<::NAME##f>, LO, HI, LO2, HI2)
}  // namespace

int main(int argc, char** argv) {
  HF_BENCH(exp, -80, 80);
  HF_BENCH(expm1, -5, 5);
  HF_BENCH(log, 1e-3f, 1e3f);
  HF_BENCH(log1p, -0.9f, 100);
  HF_BENCH(sin, -10, 10);
  HF_BENCH(cos, -10, 10);
  HF_BENCH(tan, -10, 10);
  HF_BENCH(tanh, -5, 5);
  HF_BENCH(erf, -4, 4);
  HF_BENCH(erfc, -4, 4);
  benchmark::RegisterBenchmark("vm_erfinv", unary<hf::vm::erfinv>, -1, 1);  // no glibc erfinvf
  benchmark::RegisterBenchmark("vm_erfcinv", unary<hf::vm::erfcinv>, 0, 2);
  HF_BENCH(asin, -1, 1);
  HF_BENCH(acos, -1, 1);
  HF_BENCH(atan, -10, 10);
  HF_BENCH2(atan2, -10, 10, -10, 10);
  HF_BENCH(sinh, -10, 10);
  HF_BENCH(cosh, -10, 10);
  HF_BENCH(asinh, -100, 100);
  HF_BENCH(acosh, 1, 100);
  HF_BENCH(atanh, -1, 1);
  HF_BENCH2(pow, 0, 10, -5, 5);
  HF_BENCH(sqrt, 0, 100);
  HF_BENCH(floor, -100, 100);
  HF_BENCH(ceil, -100, 100);
  HF_BENCH(round, -100, 100);
  HF_BENCH(trunc, -100, 100);
  HF_BENCH2(fmod, -100, 100, 0.5f, 10);
  HF_BENCH(fabs, -100, 100);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
