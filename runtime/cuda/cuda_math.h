// The math CUDA's f32 Convs and MatMuls may use: HOTFUSE_F32_PRECISION
// (runtime/ir/f32_precision.h) read as PyTorch's TF32 switches are.
//
//   high (default)  TF32 tensor cores: each input rounded to a 10-bit mantissa, products
//                   summed in f32 (cuDNN's default math on sm_80 and later, cuBLAS's
//                   CUBLAS_COMPUTE_32F_FAST_TF32); docs/math.md states the bound.
//   highest         FMA math only: each output a sum of f32 products in f32.
//
// f16/bf16 storage runs whatever cuDNN rates best (tensor cores) at either setting; all of
// it accumulates in f32. Pure: planning code asks once per kernel. Internal to runtime/cuda/.
#pragma once
#include <cublas_v2.h>
#include <cudnn.h>

#include "runtime/ir/dtype.h"
#include "runtime/ir/f32_precision.h"

namespace hf::cuda {

struct CudaMath {
  cudnnMathType_t conv = CUDNN_FMA_MATH;  // the convolution descriptor's, to start with
  cublasComputeType_t gemm = CUBLAS_COMPUTE_32F;
  bool tf32 = false;  // f32 data rounded to TF32 inside Convs and MatMuls
};

CudaMath cuda_math(DType storage, F32Precision precision);

// Whether an algorithm cuDNN rated with math type `rated` (heuristics or measurement) may
// run under `m`, for data of type `storage`. Never a down-conversion of f32 to a half type.
bool conv_math_allowed(const CudaMath& m, DType storage, cudnnMathType_t rated);

}  // namespace hf::cuda
