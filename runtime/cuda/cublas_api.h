// cuBLAS, opened on first use instead of linked: linking libcublas (and the libcublasLt it
// pulls in) costs every process about 150 MB of resident memory for their relocations, on a
// machine without a GPU too, which is more than the weights of most CPU models. The backend
// calls these few entry points through one table; the library is opened when the first CUDA
// backend is made.
#pragma once
#include <cublas_v2.h>

namespace hf::cuda {

struct CublasApi {
  cublasStatus_t (*create)(cublasHandle_t*);
  cublasStatus_t (*destroy)(cublasHandle_t);
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
  cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                            int, int, int, const void*, const void*, cudaDataType,
                                            int, long long, const void*, cudaDataType, int,
                                            long long, const void*, void*, cudaDataType, int,
                                            long long, int, cublasComputeType_t, cublasGemmAlgo_t);
  const char* (*status_name)(cublasStatus_t);
  const char* (*status_string)(cublasStatus_t);
};

// Opens libcublas.so.<major> (the library search path, then the toolkit's directory) once;
// throws hf::Error naming the library and dlerror()'s reason when it cannot.
const CublasApi& cublas();

}  // namespace hf::cuda
