#include "runtime/cuda/matmul.h"

#include <string>
#include <vector>

#include "runtime/cuda/cublas_api.h"
#include "runtime/ir/error.h"

namespace hf::cuda {

namespace {

void check(cublasStatus_t s, const std::string& what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error("cuBLAS: " + what + ": " + cublas().status_name(s) + " (" +
                cublas().status_string(s) + ")");
}

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::F32:
      return CUDA_R_32F;
    case DType::F16:
      return CUDA_R_16F;
    case DType::BF16:
      return CUDA_R_16BF;
    default:
      throw Error("MatMul on CUDA: dtype " + std::string(dtype_name(t)) + " unsupported");
  }
}

// Offset (in matrices) of batch `i` of an operand whose batch shape broadcasts to `batch`.
int64_t batch_offset(int64_t i, const Shape& batch, const Shape& own) {
  int64_t off = 0, stride = 1;
  const size_t skip = batch.size() - own.size();
  for (size_t d = batch.size(); d-- > 0;) {
    int64_t idx = i % batch[d];
    i /= batch[d];
    if (d >= skip) {
      int64_t n = own[d - skip];
      if (n != 1) off += idx * stride;
      stride *= n;
    }
  }
  return off;
}

}  // namespace

void matmul(cublasHandle_t h, const TensorView& a, const TensorView& b, const TensorView& out,
            cublasComputeType_t compute) {
  const int ra = a.rank(), rb = b.rank();
  if (ra < 2 || rb < 2) throw Error("MatMul on CUDA needs rank >= 2 operands");
  const int64_t m = a.shape[ra - 2], k = a.shape[ra - 1], n = b.shape[rb - 1];
  Shape batch(out.shape.begin(), out.shape.end() - 2);
  Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  const int64_t batches = numel(batch), na = numel(ba), nb = numel(bb);
  if (batches == 0 || m == 0 || n == 0) return;
  const cudaDataType_t t = cuda_type(a.dtype);
  const size_t es = dtype_size(a.dtype);
  const float alpha = 1.0f, beta = 0.0f;
  // Row-major C = A B is column-major C^T = B^T A^T: swap the operands, no transposes.
  auto gemm_batched = [&](const void* pa, const void* pb, void* pc, int64_t sa, int64_t sb,
                          int64_t count) {
    check(cublas().gemm_strided_batched_ex(
              h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &alpha, pb, t, (int)n, sb, pa, t,
              (int)k, sa, &beta, pc, t, (int)n, m * n, (int)count, compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx " + std::to_string(m) + "x" + std::to_string(k) + "x" +
              std::to_string(n) + " x" + std::to_string(count));
  };
  const bool whole_a = na == batches || na == 1, whole_b = nb == batches || nb == 1;
  // A batch as large as the output's has the same shape (the output's is the broadcast).
  if (whole_a && whole_b) {
    gemm_batched(a.data, b.data, out.data, na == 1 ? 0 : m * k, nb == 1 ? 0 : k * n, batches);
    return;
  }
  for (int64_t i = 0; i < batches; ++i) {
    const char* pa = static_cast<const char*>(a.data) + batch_offset(i, batch, ba) * m * k * es;
    const char* pb = static_cast<const char*>(b.data) + batch_offset(i, batch, bb) * k * n * es;
    char* pc = static_cast<char*>(out.data) + i * m * n * es;
    gemm_batched(pa, pb, pc, 0, 0, 1);
  }
}

}  // namespace hf::cuda
