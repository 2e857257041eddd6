// One CUPTI profiling pass over a graph on a CUDA backend: device time per op, and what
// profiling itself costs. The launcher runs it after the timed iterations (docs/cuda.md).
#pragma once
#include <string>
#include <vector>

#include "profiler/step_times.h"
#include "runtime/exec/backend.h"

namespace hf::cuda {

struct CuptiProfile {
  bool ok = false;
  std::string why_not;      // when !ok: why CUPTI could not be used (the caller warns once)
  std::vector<OpRow> rows;  // per step: median device seconds of its kernels and copies
  double plain_ms = 0;      // median iteration, no tracing, no per-step sync
  double traced_ms = 0;     // the same with CUPTI recording and correlating
  size_t records = 0, uncorrelated = 0, dropped = 0;
  double overhead() const { return plain_ms > 0 ? traced_ms / plain_ms - 1 : 0; }
};

// Runs `iters` iterations of `g` plain and then `iters` with CUPTI (after one warm-up each),
// flushing CUPTI's buffers at every iteration boundary. Never throws for CUPTI's sake: a
// CUPTI that cannot start gives ok = false and why_not. hf::Error for CUDA failures.
CuptiProfile profile_with_cupti(const Graph& g, Backend& backend,
                                const std::vector<TensorView>& inputs, int iters);

}  // namespace hf::cuda
