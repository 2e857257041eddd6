// Where an adaptive Session runs: a backend, the kernel cache its fused kernels come from,
// and how to make the backend that runs them. cpu_session_target here; the CUDA one is
// cuda_session_target (fusing_cuda_backend.h).
#pragma once
#include <functional>
#include <memory>

#include "fusion/detect.h"
#include "fusion/kernel_cache.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/exec/backend.h"
#include "session/fusing_backend.h"

namespace hf {

struct SessionTarget {
  Backend* backend = nullptr;              // the unfused kernels, memory, copies, sync
  fusion::KernelCache* kernels = nullptr;  // generates, compiles, loads; keeps sources
  // `backend` plus Fused nodes, with kernels from `kernels` (the session makes one). The
  // hook is SessionOptions::after_fused_run's; a target that cannot call it throws
  // hf::Error when given one.
  std::function<std::unique_ptr<Backend>(FusedRunHook hook)> make_fusing;
  // The backend's own rewrite of the graph (CPU: NHWC Conv chains, nhwc_layout.h), applied
  // once by the session before anything runs; every plan, profile and dump is of its result.
  // Null when it changes nothing (the session then keeps the caller's graph, uncopied).
  std::function<std::unique_ptr<Graph>(const Graph&)> lower;
  // Whether plan buffers are host memory. When not, validation downloads the live-outs
  // it compares (Backend::download).
  bool host_memory = true;
  // Whether the backend runs a Fused node carrying a HeavyEpilogue (runtime/ir/epilogue.h):
  // then the session also detects epilogue regions (DetectOptions::epilogues), those that
  // `epilogue_runs` accepts when it is set (DetectOptions::epilogue_runs).
  bool epilogues = false;
  std::function<bool(const Graph&, const fusion::Region&)> epilogue_runs;
  // Whether the fusing backend runs Fused nodes with their spec interpreted
  // (fusion::KernelTier::Interpreted, fusion/spec_interpreter.h).
  bool interprets = false;
  // Whether the executor's threads take every core this process may use: then a background
  // compiler is stopped while an iteration runs (it would share a core with one of them,
  // and a parallel kernel waits for its slowest thread) and runs after it instead.
  bool executor_fills_cores = false;
  // CPU cores this process may use: compile workers when someone waits for the compiles,
  // or when they only run between iterations (executor_fills_cores). Otherwise one.
  int cores = 1;
  // Called after each iteration that background work follows: the executor's threads stop
  // spinning for the next kernel, leaving the cores to that work. May be null.
  std::function<void()> rest;
};

// The CPU backend with host-compiled kernels (a KernelCache over fusion::host_toolchain());
// both must outlive the session.
SessionTarget cpu_session_target(cpu::CpuBackend& backend, fusion::KernelCache& cache);

}  // namespace hf
