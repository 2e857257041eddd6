// Every CUDA runtime call goes through cuda_check: a failure becomes an hf::Error that says
// which call failed, on what, and the runtime's own name and text for the error.
// Internal to runtime/cuda/ (it includes cuda_runtime.h, which no public header does).
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "runtime/ir/error.h"

namespace hf::cuda {

inline void cuda_check(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear the sticky copy of a non-sticky error
  throw Error("CUDA: " + what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

// After a kernel launch: launch-configuration errors are reported here, faults later.
inline void check_launch(const std::string& what) {
  cuda_check(cudaGetLastError(), what);
}

}  // namespace hf::cuda
