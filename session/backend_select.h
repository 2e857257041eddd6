// `--backend auto|cpu|cuda`: which backend a run uses, and the one line that says why.
// docs/cuda.md. The CUDA backend exists only in builds with HF_HAVE_CUDA_BACKEND; the same
// binary starts on machines without a GPU or driver, where auto picks the CPU.
#pragma once
#include <memory>
#include <string>

#include "runtime/exec/backend.h"

namespace hf {

struct BackendChoice {
  std::unique_ptr<Backend> cuda;  // the CUDA backend, or null: run on the CPU
  std::string line;               // for auto: "backend auto: using cpu (<why>)"; else empty
};

// requested: "auto", "cpu" or "cuda"; every --fusion mode, adaptive included, runs on
// either. hf::Error (exit code 2 in the CLI) for `cuda` when it cannot be used:
// "--backend cuda: no CUDA device: <reason>" and the like.
BackendChoice choose_backend(const std::string& requested);

// Why the CUDA backend cannot be used here ("" when it can): no CUDA backend in this
// build, or the runtime's reason for having no usable device.
std::string cuda_unavailable_reason();

}  // namespace hf
