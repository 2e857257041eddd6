#include "session/backend_select.h"

#include "runtime/ir/error.h"
#if HF_HAVE_CUDA_BACKEND
#include "runtime/cuda/cuda_backend.h"
#include "session/disk_result_store.h"
#include "session/fusing_cuda_backend.h"
#endif

namespace hf {

std::string cuda_unavailable_reason() {
#if HF_HAVE_CUDA_BACKEND
  const cuda::DeviceStatus& s = cuda::device_status();
  if (s.usable) return "";
  return s.no_driver ? s.reason : "no CUDA device: " + s.reason;
#else
  return "this build has no CUDA backend";
#endif
}

BackendChoice choose_backend(const std::string& requested) {
  BackendChoice c;
  if (requested == "cpu") return c;
  const bool must = requested == "cuda";
  if (!must && requested != "auto")
    throw Error("--backend " + requested + ": expected auto, cpu or cuda");
  auto cpu_because = [&](const std::string& why) {
    if (must) throw Error("--backend cuda: " + why);
    c.line = "backend auto: using cpu (" + why + ")";
    return std::move(c);
  };
  if (std::string why = cuda_unavailable_reason(); !why.empty()) return cpu_because(why);
#if HF_HAVE_CUDA_BACKEND
  try {
    auto b = std::make_unique<cuda::CudaBackend>();
    b->set_result_store(default_result_store());  // measured cuDNN algorithms, across runs
    const cuda::DeviceStatus& s = b->device();
    c.line = "backend " + requested + ": using cuda (" + s.name + ", sm_" + std::to_string(s.arch) +
             ", " + std::to_string(s.sm_count) + " SMs; fused kernels as " +
             cuda_kernel_format(s.arch) + ")";
    c.cuda = std::move(b);
  } catch (const Error& e) {
    return cpu_because(std::string("the CUDA backend failed to start: ") + e.what());
  }
#endif
  return c;
}

}  // namespace hf
