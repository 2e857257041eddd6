// Unfused CPU kernels at 2^20 (cache-resident) and 2^24 (DRAM) f32 elements on 1 and 2
// threads. GB/s counts the bytes a kernel must move: every input read once plus the output
// written once (write-allocate traffic not included, as in STREAM).
//
//   build-cpu/bench/cpu_kernels_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "runtime/cpu/kernels.h"
#include "runtime/ops/half.h"

namespace hf::cpu {
namespace {

ThreadPool& pool_of(int threads) {
  static ThreadPool one(1), two(2);
  return threads == 1 ? one : two;
}

HostTensor filled(DType d, Shape s, float v) {
  HostTensor t(d, std::move(s));
  if (d == DType::F32) {
    for (int64_t i = 0; i < t.numel(); ++i)
      t.as<float>()[i] = v + 1e-6f * static_cast<float>(i % 1000);
  } else {
    std::memset(t.data(), 0, t.bytes());
  }
  return t;
}

void report(benchmark::State& state, double bytes) {
  state.counters["GB/s"] =
      benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
}

template <Mode M>
void BM_Elemwise(benchmark::State& state) {
  const int64_t n = int64_t{1} << state.range(0);
  ThreadPool& pool = pool_of(static_cast<int>(state.range(1)));
  const int arity = mode_info(M).arity;
  std::vector<HostTensor> in;
  std::vector<TensorView> views;
  for (int k = 0; k < arity; ++k) in.push_back(filled(DType::F32, {n}, 0.5f + 0.1f * k));
  for (auto& t : in) views.push_back(t.view());
  HostTensor out = filled(DType::F32, {n}, 0.0f);
  for (auto _ : state) elemwise(M, views, out.view(), pool);
  report(state, 4.0 * n * (arity + 1));
}

void BM_TypeCvtF32ToF16(benchmark::State& state) {
  const int64_t n = int64_t{1} << state.range(0);
  ThreadPool& pool = pool_of(static_cast<int>(state.range(1)));
  HostTensor in = filled(DType::F32, {n}, 0.5f), out = filled(DType::F16, {n}, 0.0f);
  for (auto _ : state) type_convert(in.view(), out.view(), pool);
  report(state, 6.0 * n);
}

void BM_ReduceSumRows1024(benchmark::State& state) {
  const int64_t n = int64_t{1} << state.range(0);
  ThreadPool& pool = pool_of(static_cast<int>(state.range(1)));
  HostTensor in = filled(DType::F32, {n / 1024, 1024}, 0.5f);
  HostTensor out = filled(DType::F32, {n / 1024, 1}, 0.0f);
  const int axes[] = {1};
  for (auto _ : state) reduce(ReduceMode::SUM, in.view(), axes, out.view(), pool);
  report(state, 4.0 * n + 4.0 * (n / 1024));
}

void BM_CopyTranspose(benchmark::State& state) {
  const int64_t n = int64_t{1} << state.range(0);
  ThreadPool& pool = pool_of(static_cast<int>(state.range(1)));
  int64_t rows = int64_t{1} << (state.range(0) / 2);
  int64_t cols = n / rows;
  HostTensor in = filled(DType::F32, {rows, cols}, 0.5f);
  HostTensor out = filled(DType::F32, {cols, rows}, 0.0f);
  TensorView t = in.view();
  t.shape = {cols, rows};
  t.strides = {1, cols};
  for (auto _ : state) copy(t, out.view(), pool);
  report(state, 8.0 * n);
}

// Calibration, not a kernel: STREAM's triad a = b + 3c as a plain loop on the same pool,
// measured in the same run (the machine's bandwidth drifts with its neighbours' load).
void BM_RefTriad(benchmark::State& state) {
  const int64_t n = int64_t{1} << state.range(0);
  ThreadPool& pool = pool_of(static_cast<int>(state.range(1)));
  HostTensor a = filled(DType::F32, {n}, 0.0f), b = filled(DType::F32, {n}, 1.0f),
             c = filled(DType::F32, {n}, 2.0f);
  struct Arrays {
    float* a;
    const float* b;
    const float* c;
  } arr{a.as<float>(), b.as<float>(), c.as<float>()};
  for (auto _ : state) {
    pool.parallel_for(n / 1024, 32, [&arr](int64_t lo, int64_t hi) {
      float* __restrict pa = arr.a;
      const float* __restrict pb = arr.b;
      const float* __restrict pc = arr.c;
      for (int64_t i = lo * 1024; i < hi * 1024; ++i) pa[i] = pb[i] + 3.0f * pc[i];
    });
  }
  report(state, 12.0 * n);
}

void Args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"log2n", "threads"});
  for (int lg : {20, 24})
    for (int t : {1, 2}) b->Args({lg, t});
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_Elemwise<Mode::ADD>)->Name("ADD")->Apply(Args);
BENCHMARK(BM_Elemwise<Mode::MUL>)->Name("MUL")->Apply(Args);
BENCHMARK(BM_Elemwise<Mode::FUSE_MUL_ADD3>)->Name("FUSE_MUL_ADD3")->Apply(Args);
BENCHMARK(BM_Elemwise<Mode::EXP>)->Name("EXP")->Apply(Args);
BENCHMARK(BM_Elemwise<Mode::TANH>)->Name("TANH")->Apply(Args);
BENCHMARK(BM_TypeCvtF32ToF16)->Name("TypeCvt_f32_f16")->Apply(Args);
BENCHMARK(BM_ReduceSumRows1024)->Name("ReduceSum_rows1024")->Apply(Args);
BENCHMARK(BM_CopyTranspose)->Name("CopyTranspose")->Apply(Args);
BENCHMARK(BM_RefTriad)->Name("ref_STREAM_triad")->Apply(Args);

}  // namespace
}  // namespace hf::cpu

BENCHMARK_MAIN();
