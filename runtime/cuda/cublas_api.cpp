#include "runtime/cuda/cublas_api.h"

#include <mutex>
#include <string>
#include <vector>

#include "runtime/ir/error.h"
#include "runtime/ir/shared_library.h"

namespace hf::cuda {

namespace {

template <class F>
void bind(void* lib, F& fn, const char* symbol) {
  if (!bind_symbol(lib, fn, symbol))
    throw Error(std::string("cuBLAS: the library has no ") + symbol);
}

}  // namespace

const CublasApi& cublas() {
  static CublasApi api{};
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    std::vector<std::string> candidates = {name};
#ifdef HF_CUDA_LIBRARY_DIR
    candidates.push_back(std::string(HF_CUDA_LIBRARY_DIR) + "/" + name);
#endif
    std::string why;
    void* lib = open_shared_library(candidates, &why);
    if (!lib) {
      failure = "cuBLAS: cannot open " + name + ": " + why;
      return;
    }
    try {  // never closed: its functions stay in use until exit
      bind(lib, api.create, "cublasCreate_v2");
      bind(lib, api.destroy, "cublasDestroy_v2");
      bind(lib, api.set_stream, "cublasSetStream_v2");
      bind(lib, api.gemm_strided_batched_ex, "cublasGemmStridedBatchedEx");
      bind(lib, api.status_name, "cublasGetStatusName");
      bind(lib, api.status_string, "cublasGetStatusString");
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw Error(failure);
  return api;
}

}  // namespace hf::cuda
