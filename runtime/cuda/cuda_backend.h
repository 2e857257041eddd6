// The CUDA backend: graph nodes mapped onto the AOT kernels of kernels.h (cuBLAS for
// MatMul, cuDNN for Conv: nn_ops.h), run in order on one stream, in memory from a caching
// allocator. docs/cuda.md.
//
// Plans hold device memory: callers move graph inputs in and outputs out with
// Backend::upload / download. No CUDA header here, so the launcher includes it freely.
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "runtime/cuda/device.h"
#include "runtime/cuda/result_store.h"
#include "runtime/exec/backend.h"

namespace hf::cuda {

class CachingAllocator;
class ConvAlgoMemo;

class CudaBackend final : public Backend {
 public:
  // Device 0. hf::Error "no CUDA device: <reason>" when device_status() says it is unusable.
  CudaBackend();
  ~CudaBackend() override;
  std::string_view name() const override { return "cuda"; }
  // hf::Error naming the node for an op or dtype without a CUDA kernel (Fused nodes are run
  // by the session's FusingCudaBackend).
  std::unique_ptr<Kernel> make_kernel(const Graph& g, const Node& n) override;
  void* alloc(size_t bytes) override;
  void free(void* p) override;
  void sync() override;  // cudaStreamSynchronize; reports faults of earlier kernels
  void upload(void* dst, const void* src, size_t bytes) override;
  void download(void* dst, const void* src, size_t bytes) override;
  // The iteration captured from the stream as a CUDA graph (cudaStreamBeginCapture), one
  // cudaGraphLaunch per iteration; nullptr with the reason under HOTFUSE_CUDA_GRAPHS=off or
  // when a kernel cannot be captured.
  std::unique_ptr<Recording> record(const std::function<void()>& enqueue,
                                    std::string& why) override;

  void* stream() const { return stream_; }  // cudaStream_t
  const DeviceStatus& device() const { return device_status(); }
  CachingAllocator& allocator() { return *alloc_; }
  // cudnnHandle_t on the stream, created by the first Conv planned (cuDNN loads its
  // sub-libraries then); hf::Error naming `node` when cuDNN cannot start.
  void* cudnn(const std::string& node);
  // The cuDNN algorithms measured for this device's Conv shapes (conv_algo.h), kept for
  // the process and, once a store is set, across processes.
  ConvAlgoMemo& conv_algos() { return *conv_algos_; }
  void set_result_store(std::shared_ptr<ResultStore> store);
  // Whether sessions move Conv chains to NHWC on this backend (HOTFUSE_CUDA_LAYOUT, read
  // when the backend is made: conv_layout.h). Its kernels run either layout regardless.
  bool nhwc_conv_chains() const { return nhwc_; }

 private:
  void* stream_ = nullptr;  // cudaStream_t
  void* cublas_ = nullptr;  // cublasHandle_t
  void* cudnn_ = nullptr;   // cudnnHandle_t
  std::mutex cudnn_mu_;
  std::unique_ptr<CachingAllocator> alloc_;
  std::unique_ptr<ConvAlgoMemo> conv_algos_;
  bool graphs_ = true;  // HOTFUSE_CUDA_GRAPHS: on (default) or off
  bool nhwc_ = true;    // HOTFUSE_CUDA_LAYOUT: nhwc (default) or nchw
};

}  // namespace hf::cuda
