// Conv2d through cuDNN's descriptor API (cudnnConvolutionForward; still in cuDNN 9's
// libcudnn_cnn). Everything shape-dependent happens once, at plan time: descriptors, the
// algorithm (measured once per shape and kept: conv_algo.h; else cuDNN's heuristics) and
// its workspace, from the backend's caching allocator. Internal to runtime/cuda/.
#pragma once
#include <cudnn.h>

#include <string>
#include <vector>

#include "runtime/cuda/conv_shape.h"
#include "runtime/ir/dtype.h"

namespace hf::cuda {

class CachingAllocator;
class ConvAlgoMemo;

// cuDNN's status as an hf::Error naming the call (and cuDNN's last error message).
void cudnn_check(cudnnStatus_t s, const std::string& what);

class CudnnConv {
 public:
  // f32 runs TF32 or FMA math by HOTFUSE_F32_PRECISION (cuda_math.h, as MatMul); f16/bf16
  // may use tensor cores, all accumulate in f32. The first algorithm whose workspace can be
  // allocated wins: when the device (or HOTFUSE_CUDA_MAX_BYTES) has no room for the
  // preferred one, a leaner one runs and `note()` says so.
  // memo: where the algorithm measured for this shape is kept (conv_algo.h); with one, a
  // shape it does not know is measured (cudnnFindConvolutionForwardAlgorithmEx) and the
  // fastest usable algorithm kept; without one, or when measuring cannot run, cuDNN's
  // heuristics choose.
  // fused_relu: run_fused() may be called (cuDNN's fused convolution, conv_fusion.h).
  CudnnConv(cudnnHandle_t h, const ConvGeometry& g, DType dt, CachingAllocator& alloc,
            const std::string& node, ConvAlgoMemo* memo = nullptr, bool fused_relu = false);
  ~CudnnConv();
  CudnnConv(const CudnnConv&) = delete;
  CudnnConv& operator=(const CudnnConv&) = delete;

  void run(const void* x, const void* w, void* y);  // y = conv(x, w), on the handle's stream
  // y = relu(conv(x, w) + z + bias[m]) in one call (cudnnConvolutionBiasActivationForward;
  // z null: no residual), on the handle's stream. ReLU propagates NaN, as the graph's.
  void run_fused(const void* x, const void* w, const void* bias, const void* z, void* y);
  cudnnConvolutionFwdAlgo_t algorithm() const { return algo_; }
  size_t workspace_bytes() const { return ws_bytes_; }
  const std::string& note() const { return note_; }  // "" unless the algorithm was degraded
  // The chosen algorithm's measured time (here or when it was kept), or -1: the heuristics'.
  float measured_ms() const { return measured_ms_; }

 private:
  void release();  // frees the workspace and destroys the descriptors made so far
  // x, or (prepad) x copied into the zero-bordered buffer, which is returned.
  const void* input(const void* x);
  std::vector<cudnnConvolutionFwdAlgoPerf_t> measure();

  cudnnHandle_t h_;
  CachingAllocator& alloc_;
  std::string node_;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnTensorDescriptor_t bias_ = nullptr;      // fused_relu: [1, M, 1, 1]
  cudnnActivationDescriptor_t relu_ = nullptr;  // fused_relu
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  void* ws_ = nullptr;
  size_t ws_bytes_ = 0;
  CudnnConvShape shape_{};
  size_t elem_bytes_ = 4;
  void* padded_ = nullptr;  // prepad: the zero-bordered input (the border is zeroed once)
  std::string note_;
  float measured_ms_ = -1;
};

}  // namespace hf::cuda
