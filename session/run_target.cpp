#include "session/run_target.h"

#include <chrono>
#include <iostream>

#include "fusion/disk_cache.h"
#include "fusion/kernel_cache.h"
#include "fusion/workdir.h"
#include "runtime/cpu/cpu_backend.h"
#include "session/fusing_cuda_backend.h"
#include "session/session.h"
#if HF_HAVE_CUDA_BACKEND
#include "profiler/cupti_profile.h"
#include "profiler/device_peak.h"
#endif

namespace hf {

namespace {

// The machine probe, cached in the kernel cache's disk directory under its rules: none
// when the kernel cache has no disk (disabled, or a directory it refused).
MachinePeak cached_probe(cpu::ThreadPool& pool, fusion::DiskCache* disk) {
  if (!disk) return measure_machine(pool);
  const MachinePeak id = machine_identity(pool);
  const std::string key =
      fusion::DiskCache::make_key({"machine", id.cpu, std::to_string(id.threads)});
  if (std::optional<std::string> text = disk->get(key))
    if (std::optional<MachinePeak> m = parse_machine_entry(*text, id)) {
      m->source = "cached in " + disk->entry_path(key).string();
      return *m;
    }
  MachinePeak m = measure_machine(pool);
  disk->put(key, machine_entry(m));  // a failed write is harmless: the next run probes
  return m;
}

class CpuRunTarget final : public RunTarget {
 public:
  explicit CpuRunTarget(int threads)
      : pool_(threads),
        backend_(&pool_),
        machine_(cached_probe(pool_, fusion::KernelCache::host().disk().get())) {}
  std::string where() const override { return "cpu, " + std::to_string(pool_.size()) + " threads"; }
  Backend& backend() override { return backend_; }
  SessionTarget session_target() override {
    return cpu_session_target(backend_, fusion::KernelCache::host());
  }
  const MachinePeak& machine() const override { return machine_; }

 private:
  cpu::ThreadPool pool_;
  cpu::CpuBackend backend_;
  MachinePeak machine_;
};

#if HF_HAVE_CUDA_BACKEND
class CudaRunTarget final : public RunTarget {
 public:
  explicit CudaRunTarget(cuda::CudaBackend& gpu)
      : gpu_(gpu),
        kernels_(cuda_kernel_cache(gpu.device().arch)),
        machine_(cuda::device_peak(gpu)) {}
  std::string where() const override {
    const cuda::DeviceStatus& d = gpu_.device();
    return "cuda " + d.name + " (sm_" + std::to_string(d.arch) + ")";
  }
  Backend& backend() override { return gpu_; }
  SessionTarget session_target() override { return cuda_session_target(gpu_, *kernels_); }
  const MachinePeak& machine() const override { return machine_; }

  // CUPTI's device time per op, for the unfused graph and the plan the session settled on;
  // without CUPTI one warning and CUDA-event timing around every step instead.
  void print_device_profile(Session& s, std::span<const TensorView> inputs, int iters) override {
    std::vector<TensorView> in(inputs.begin(), inputs.end());
    print(s.graph(), gpu_, in, iters, "unfused");
    if (s.kernels_now() != s.kernels_before())
      print(s.current_graph(), s.fusing_backend(), in, iters, "fused");
  }
  const std::vector<cuda::DeviceLaunchWindow>& device_launches() const override {
    return launches_;
  }

 private:
  void print(const Graph& g, Backend& b, const std::vector<TensorView>& in, int iters,
             const char* what) {
    cuda::CuptiProfile p = cuda::profile_with_cupti(g, b, gpu_, in, iters);
    if (!p.launches.launches.empty()) {
      p.launches.what = what;
      launches_.push_back(std::move(p.launches));
    }
    if (!p.cupti && !warned_) {
      std::cerr << "hotfuse-run: CUPTI unavailable (" << p.why_not
                << "); device times come from CUDA events around each step\n";
      warned_ = true;
    }
    std::cout << "\n" << what << ", device time per op (";
    if (p.cupti)
      std::cout << "CUPTI, " << p.records << " records, " << p.uncorrelated << " without a node, "
                << p.dropped << " dropped";
    else
      std::cout << "CUDA events";
    std::cout << "; profiling overhead " << 100 * p.overhead() << "%: " << p.plain_ms << " -> "
              << p.traced_ms << " ms per iteration):\n";
    print_op_table(std::cout, p.rows);
  }

  cuda::CudaBackend& gpu_;
  std::unique_ptr<fusion::KernelCache> kernels_;
  std::vector<cuda::DeviceLaunchWindow> launches_;
  MachinePeak machine_;
  bool warned_ = false;
};
#endif

}  // namespace

void settle(Session& s, std::span<const TensorView> inputs, SettleBound bound,
            const std::string& then, const std::function<void()>& after_each) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t n = 1; !s.settled(); ++n) {
    s.run(inputs);
    if (after_each) after_each();
    if (s.settled()) return;
    if (std::chrono::steady_clock::now() - t0 > std::chrono::duration<double>(bound.seconds)) {
      std::cerr << "hotfuse-run: still " << phase_name(s.phase()) << " after " << bound.seconds
                << " s (--settle-timeout); " << then << "\n";
      return;
    }
    if (n >= bound.iterations) {
      std::cerr << "hotfuse-run: still " << phase_name(s.phase()) << " after " << n
                << (n == 1 ? " iteration" : " iterations") << " (--settle-iters); " << then << "\n";
      return;
    }
  }
}

std::unique_ptr<RunTarget> make_run_target(Backend* cuda, int threads, bool fusing) {
  // A bad MGB_JIT_BACKEND throws (exit 2); a valid one for the other backend is said once.
  std::optional<std::string> jit = fusing ? fusion::jit_backend_from_env() : std::nullopt;
#if HF_HAVE_CUDA_BACKEND
  if (cuda) {
    if (jit == "CPU")
      std::cerr << "hotfuse-run: MGB_JIT_BACKEND=CPU needs the CPU backend; this run is on "
                   "CUDA, so kernels are generated for NVRTC\n";
    return std::make_unique<CudaRunTarget>(static_cast<cuda::CudaBackend&>(*cuda));
  }
#else
  (void)cuda;
#endif
  if (jit == "NVRTC")
    std::cerr << "hotfuse-run: MGB_JIT_BACKEND=NVRTC needs the CUDA backend; this run is on "
                 "the CPU, so kernels are generated as C++\n";
  return std::make_unique<CpuRunTarget>(threads);
}

}  // namespace hf
