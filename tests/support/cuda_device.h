// What the GPU tests share: skipping with the runtime's reason when there is no usable
// CUDA device, and one backend per test binary (creating a stream and cuBLAS/cuDNN handles
// per test would dominate their run time).
#pragma once
#include <gtest/gtest.h>

#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/device.h"
#include "runtime/exec/device_inputs.h"

#define REQUIRE_CUDA_DEVICE()                                                   \
  do {                                                                          \
    if (!::hf::cuda::device_status().usable)                                    \
      GTEST_SKIP() << "no CUDA device: " << ::hf::cuda::device_status().reason; \
  } while (0)

namespace hf {

// Never destroyed: a static's destructor runs after the CUDA runtime may have torn its
// context down at exit, and cuBLAS's and cuDNN's handles must not be destroyed then.
inline cuda::CudaBackend& gpu() {
  static cuda::CudaBackend* b = new cuda::CudaBackend;
  return *b;
}

}  // namespace hf
