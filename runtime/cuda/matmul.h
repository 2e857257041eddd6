// MatMul through cuBLAS. Internal to runtime/cuda/.
#pragma once
#include <cublas_v2.h>

#include "runtime/ir/tensor.h"

namespace hf::cuda {

// NumPy matmul over the last two axes (rank >= 2) with broadcast batch axes, row-major and
// contiguous operands; f32/f16/bf16 storage, f32 accumulation in `compute` (cuda_math.h:
// TF32 or not for f32). One strided-batched GEMM when each operand's batch is either whole
// or a single matrix, else one GEMM per batch.
void matmul(cublasHandle_t h, const TensorView& a, const TensorView& b, const TensorView& out,
            cublasComputeType_t compute);

}  // namespace hf::cuda
