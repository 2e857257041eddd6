// What this machine can do, measured: the yardsticks the adaptive session classifies ops
// against and predicts fused kernels with.
//
// The probe takes ~0.3 s (a STREAM-style triad far beyond the caches, an FMA loop on every
// thread, an empty parallel_for), so its result is cached per machine (CPU model, thread
// count, hotfuse version) as a small JSON entry of the disk kernel cache.
#pragma once
#include <optional>
#include <string>

// The probe runs on the CPU backend's pool, but the yardstick does not need the backend:
// its readers (op_class, the session, the GPU probe) do not include it.
namespace hf::cpu {
class ThreadPool;
}

namespace hf {

struct MachinePeak {
  double bandwidth_gbps = 0;  // triad on 3 x 64 MiB arrays, best of several, all threads
  double gflops = 0;          // f32 fused multiply-add throughput, all threads
  double launch_us = 0;       // the fixed cost of one CPU kernel: an empty parallel_for
  int threads = 0;
  std::string cpu;     // the model name, from /proc/cpuinfo
  std::string source;  // "probed" or "cached in <file>"
  // Machine balance: flops per byte above which an op is compute-bound.
  double balance() const { return bandwidth_gbps > 0 ? gflops / bandwidth_gbps : 0; }
};

// What identifies a probe for its cache entry: the CPU model and thread count (the other
// fields are zero). The entry is kept by the session's disk cache (session/run_target.cpp),
// under the same rules as kernels: private directory, verified entries, no symlinks.
MachinePeak machine_identity(cpu::ThreadPool& pool);
// A probe as the text of its cache entry, and back: nullopt unless the text is a plausible
// probe of `identity`.
std::string machine_entry(const MachinePeak& m);
std::optional<MachinePeak> parse_machine_entry(const std::string& text,
                                               const MachinePeak& identity);

// The measurement itself, uncached.
MachinePeak measure_machine(cpu::ThreadPool& pool);

}  // namespace hf
