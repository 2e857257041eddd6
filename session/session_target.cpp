#include "session/session_target.h"

#include <sched.h>

#include <algorithm>
#include <thread>

#include "runtime/ir/nhwc_layout.h"

namespace hf {

SessionTarget cpu_session_target(cpu::CpuBackend& backend, fusion::KernelCache& cache) {
  SessionTarget t;
  t.backend = &backend;
  t.kernels = &cache;
  t.make_fusing = [&backend, &cache](FusedRunHook hook) -> std::unique_ptr<Backend> {
    return std::make_unique<FusingCpuBackend>(backend, cache, std::move(hook));
  };
  t.lower = nhwc_conv_chains;
  t.host_memory = true;
  t.epilogues = true;   // CpuBackend::make_epilogue_kernel
  t.interprets = true;  // FusingCpuBackend
  cpu_set_t allowed;
  const int cores = sched_getaffinity(0, sizeof allowed, &allowed) == 0
                        ? CPU_COUNT(&allowed)
                        : static_cast<int>(std::thread::hardware_concurrency());
  t.cores = std::max(1, cores);
  t.executor_fills_cores = backend.pool().size() >= t.cores;
  t.rest = [&backend] { backend.pool().rest(); };
  return t;
}

}  // namespace hf
