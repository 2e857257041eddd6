// One device-profiling pass over a graph on a CUDA backend: device time per op, and what
// profiling itself costs. CUPTI when it can be used, else CUDA events around every step
// (why_not says why CUPTI could not). The launcher runs it after the timed iterations.
#pragma once
#include <string>
#include <vector>

#include "profiler/device_launch.h"
#include "profiler/step_times.h"
#include "runtime/exec/backend.h"

namespace hf::cuda {

class CudaBackend;

struct CuptiProfile {
  bool cupti = false;       // the rows come from CUPTI; else from CUDA events
  std::string why_not;      // when !cupti: why CUPTI could not be used (the caller warns once)
  std::vector<OpRow> rows;  // per step: median device seconds of its kernels and copies
  double plain_ms = 0;      // median iteration, no tracing, no per-step sync
  double traced_ms = 0;     // the same with CUPTI (or the events) recording
  size_t records = 0, uncorrelated = 0, dropped = 0;  // CUPTI's, in the traced iterations
  // CUPTI only: the traced iterations' kernels with their launch calls (at most
  // kMaxLaunches), and the clocks read together to place them (trace.json's device tracks).
  DeviceLaunchWindow launches;
  double overhead() const { return plain_ms > 0 ? traced_ms / plain_ms - 1 : 0; }
};

// Runs `iters` iterations of `g` plain and then `iters` traced (after one warm-up each),
// flushing CUPTI's buffers once, after the traced ones. `backend` runs on `cuda`'s stream
// (the CUDA backend itself or a FusingCudaBackend over it). Never throws for CUPTI's sake;
// hf::Error for CUDA failures.
CuptiProfile profile_with_cupti(const Graph& g, Backend& backend, const CudaBackend& cuda,
                                const std::vector<TensorView>& inputs, int iters);

}  // namespace hf::cuda
