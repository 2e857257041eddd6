#include "profiler/machine_probe.h"

#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "profiler/resident_memory.h"
#include "profiler/step_times.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/ir/tensor.h"

#ifndef HF_VERSION
#define HF_VERSION "dev"
#endif

namespace hf {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "unknown cpu";
}

double probe_bandwidth(cpu::ThreadPool& pool) {
  // 3 x 64 MiB: well beyond any last-level cache, so this is memory, like STREAM's rule.
  const int64_t n = int64_t{1} << 24;
  struct Free {
    void operator()(float* p) const { free_host(p); }
  };
  auto buffer = [&] {
    return std::unique_ptr<float, Free>(static_cast<float*>(alloc_host(n * 4)));
  };
  auto a = buffer(), b = buffer(), c = buffer();
  float *pa = a.get(), *pb = b.get(), *pc = c.get();
  pool.parallel_for(n, 1 << 16, [=](int64_t i0, int64_t i1) {  // first touch, per thread
    for (int64_t i = i0; i < i1; ++i) pa[i] = 0, pb[i] = 1, pc[i] = 2;
  });
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = Clock::now();
    pool.parallel_for(n, 1 << 16, [=](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) pa[i] = pb[i] + 3.0f * pc[i];
    });
    best = std::min(best, seconds_since(t0));
  }
  return 3.0 * 4 * n / best * 1e-9;
}

// The flop peak is what the widest FMA units do: independent chains of fused multiply-adds,
// enough to cover the latency of two pipes, in the widest vectors the CPU has (the kernels
// are built with -ffp-contract=off, so plain `a * m + c` would measure a multiply and an add).
constexpr int kChains = 12;

__attribute__((target("avx512f"))) float fma_chains_avx512(int64_t iters, float seed) {
  __m512 acc[kChains];
  for (int l = 0; l < kChains; ++l) acc[l] = _mm512_set1_ps(seed + l * 1e-3f);
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it)
    for (int l = 0; l < kChains; ++l) acc[l] = _mm512_fmadd_ps(acc[l], m, c);
  __m512 s = acc[0];
  for (int l = 1; l < kChains; ++l) s = _mm512_add_ps(s, acc[l]);
  alignas(64) float v[16];
  _mm512_store_ps(v, s);
  float sum = 0;
  for (float x : v) sum += x;
  return sum;
}

__attribute__((target("avx2,fma"))) float fma_chains_avx2(int64_t iters, float seed) {
  __m256 acc[kChains];
  for (int l = 0; l < kChains; ++l) acc[l] = _mm256_set1_ps(seed + l * 1e-3f);
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it)
    for (int l = 0; l < kChains; ++l) acc[l] = _mm256_fmadd_ps(acc[l], m, c);
  __m256 s = acc[0];
  for (int l = 1; l < kChains; ++l) s = _mm256_add_ps(s, acc[l]);
  alignas(32) float v[8];
  _mm256_store_ps(v, s);
  return v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
}

float mul_add_chains(int64_t iters, float seed) {  // no FMA: a multiply and an add
  float acc[kChains * 4];
  for (int l = 0; l < kChains * 4; ++l) acc[l] = seed + l * 1e-3f;
  for (int64_t it = 0; it < iters; ++it)
    for (int l = 0; l < kChains * 4; ++l) acc[l] = acc[l] * 0.999999f + 1e-7f;
  float s = 0;
  for (float a : acc) s += a;
  return s;
}

double probe_gflops(cpu::ThreadPool& pool) {
  const int threads = pool.size();
  const int64_t iters = 1 << 21;
  int lanes = 4;  // SSE
  float (*fn)(int64_t, float) = &mul_add_chains;
  if (__builtin_cpu_supports("avx512f")) {
    fn = &fma_chains_avx512;
    lanes = 16;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    fn = &fma_chains_avx2;
    lanes = 8;
  }
  std::vector<float> sink(threads * 16, 0);
  float* out = sink.data();
  auto t0 = Clock::now();
  pool.parallel_for(threads, 1, [=](int64_t t0_, int64_t t1_) {
    for (int64_t t = t0_; t < t1_; ++t) out[t * 16] = fn(iters, 1.0f + t);  // a line each
  });
  double s = seconds_since(t0);
  volatile float keep = 0;
  for (int t = 0; t < threads; ++t) keep = keep + out[t * 16];
  const double per_iter = fn == &mul_add_chains ? 2.0 * kChains * 4 : 2.0 * kChains * lanes;
  return per_iter * iters * threads / s * 1e-9;
}

double probe_launch_us(cpu::ThreadPool& pool) {
  std::vector<double> t;
  std::atomic<int64_t> sink{0};  // something for each chunk to do, without a race
  for (int rep = 0; rep < 200; ++rep) {
    auto t0 = Clock::now();
    pool.parallel_for(pool.size() * 1024, 1024,
                      [&](int64_t b, int64_t) { sink.store(b, std::memory_order_relaxed); });
    t.push_back(seconds_since(t0));
  }
  return median_of(t) * 1e6;
}

}  // namespace

MachinePeak measure_machine(cpu::ThreadPool& pool) {
  MachinePeak m;
  m.threads = pool.size();
  m.cpu = cpu_model();
  m.launch_us = probe_launch_us(pool);
  m.gflops = probe_gflops(pool);
  // 192 MiB of buffers, once per machine and thread count (the result is cached on disk).
  exclude_from_peak([&] { m.bandwidth_gbps = probe_bandwidth(pool); });
  m.source = "probed";
  return m;
}

MachinePeak machine_identity(cpu::ThreadPool& pool) {
  MachinePeak id;
  id.threads = pool.size();
  id.cpu = cpu_model();
  return id;
}

// 2: the flop peak in FMAs of the widest vectors (1 measured a multiply and an add, in SSE).
constexpr int kProbeVersion = 2;

std::string machine_entry(const MachinePeak& m) {
  nlohmann::json j = {
      {"cpu", m.cpu},          {"threads", m.threads},     {"bandwidth_gbps", m.bandwidth_gbps},
      {"gflops", m.gflops},    {"launch_us", m.launch_us}, {"hotfuse", HF_VERSION},
      {"probe", kProbeVersion}};
  return j.dump(2) + "\n";
}

std::optional<MachinePeak> parse_machine_entry(const std::string& text,
                                               const MachinePeak& identity) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("probe", 0) != kProbeVersion ||
      j.value("cpu", "") != identity.cpu || j.value("threads", 0) != identity.threads ||
      !(j.value("bandwidth_gbps", 0.0) > 0) || !(j.value("gflops", 0.0) > 0) ||
      !(j.value("launch_us", -1.0) >= 0))
    return std::nullopt;
  MachinePeak m = identity;
  m.bandwidth_gbps = j["bandwidth_gbps"];
  m.gflops = j["gflops"];
  m.launch_us = j["launch_us"];
  return m;
}

}  // namespace hf
