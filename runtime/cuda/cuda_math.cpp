#include "runtime/cuda/cuda_math.h"

namespace hf::cuda {

CudaMath cuda_math(DType storage, F32Precision precision) {
  CudaMath m;
  if (storage != DType::F32) {
    m.conv = CUDNN_DEFAULT_MATH;  // each algorithm then runs with the math cuDNN rated it for
    return m;
  }
  if (precision == F32Precision::High) {
    m.conv = CUDNN_DEFAULT_MATH;  // TF32 allowed on sm_80 and later
    m.gemm = CUBLAS_COMPUTE_32F_FAST_TF32;
    m.tf32 = true;
  }
  return m;
}

bool conv_math_allowed(const CudaMath& m, DType storage, cudnnMathType_t rated) {
  if (storage != DType::F32) return true;
  if (rated == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) return false;  // f32 -> f16
  return m.tf32 || rated == CUDNN_FMA_MATH || rated == CUDNN_DEFAULT_MATH;
}

}  // namespace hf::cuda
