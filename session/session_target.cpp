#include "session/session_target.h"

#include "runtime/cpu/nhwc_layout.h"

namespace hf {

SessionTarget cpu_session_target(cpu::CpuBackend& backend, fusion::KernelCache& cache) {
  SessionTarget t;
  t.backend = &backend;
  t.kernels = &cache;
  t.make_fusing = [&backend, &cache](FusedRunHook hook) -> std::unique_ptr<Backend> {
    return std::make_unique<FusingCpuBackend>(backend, cache, std::move(hook));
  };
  t.lower = cpu::nhwc_conv_chains;
  t.host_memory = true;
  t.epilogues = true;  // CpuBackend::make_epilogue_kernel
  return t;
}

}  // namespace hf
