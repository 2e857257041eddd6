#include "runtime/cuda/cublas_api.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "runtime/ir/error.h"

namespace hf::cuda {

namespace {

void* open_cublas(std::string& why) {
  const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h) return h;
  why = dlerror();
#ifdef HF_CUDA_LIBRARY_DIR
  const std::string toolkit = std::string(HF_CUDA_LIBRARY_DIR) + "/" + name;
  if ((h = dlopen(toolkit.c_str(), RTLD_NOW | RTLD_LOCAL))) return h;
  why += "; " + std::string(dlerror());
#endif
  return nullptr;
}

template <class F>
void bind(void* lib, F& fn, const char* symbol) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
  if (!fn) throw Error(std::string("cuBLAS: the library has no ") + symbol);
}

}  // namespace

const CublasApi& cublas() {
  static CublasApi api{};
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    std::string why;
    void* lib = open_cublas(why);
    if (!lib) {
      failure = "cuBLAS: cannot open libcublas.so." + std::to_string(CUBLAS_VER_MAJOR) + ": " + why;
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
