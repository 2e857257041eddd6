#include "runtime/cuda/conv_cudnn.h"

#include <vector>

#include "runtime/cuda/caching_allocator.h"
#include "runtime/cuda/conv_algo.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_math.h"
#include "runtime/ir/error.h"
#include "runtime/ir/f32_precision.h"

namespace hf::cuda {

void cudnn_check(cudnnStatus_t s, const std::string& what) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  char last[512] = {};
  cudnnGetLastErrorString(last, sizeof last);  // cuDNN 9: the reason behind the status
  std::string msg = "cuDNN: " + what + ": " + cudnnGetErrorString(s);
  if (last[0]) msg += " (" + std::string(last) + ")";
  throw Error(msg);
}

namespace {

cudnnDataType_t cudnn_type(DType t, const std::string& node) {
  switch (t) {
    case DType::F32:
      return CUDNN_DATA_FLOAT;
    case DType::F16:
      return CUDNN_DATA_HALF;
    case DType::BF16:
      return CUDNN_DATA_BFLOAT16;
    default:
      throw Error(node + ": Conv on CUDA needs f32, f16 or bf16, got " +
                  std::string(dtype_name(t)));
  }
}

}  // namespace

CudnnConv::CudnnConv(cudnnHandle_t h, const ConvGeometry& g, DType dt, CachingAllocator& alloc,
                     const std::string& node, ConvAlgoMemo* memo, bool fused_relu)
    : h_(h), alloc_(alloc), node_(node) {
  const CudnnConvShape s = cudnn_conv_shape(g, node);
  const cudnnDataType_t t = cudnn_type(dt, node);
  shape_ = s;
  elem_bytes_ = dtype_size(dt);
  try {
    if (s.prepad) {
      const size_t bytes = size_t(s.n) * s.c * s.h * s.w * elem_bytes_;
      padded_ = alloc_.alloc(bytes);
      cudaStream_t st = nullptr;
      cudnn_check(cudnnGetStream(h_, &st), "cudnnGetStream");
      cuda_check(cudaMemsetAsync(padded_, 0, bytes, st), node + ": zeroing the padded input");
    }
    cudnn_check(cudnnCreateTensorDescriptor(&x_), "cudnnCreateTensorDescriptor");
    cudnn_check(cudnnCreateTensorDescriptor(&y_), "cudnnCreateTensorDescriptor");
    cudnn_check(cudnnCreateFilterDescriptor(&w_), "cudnnCreateFilterDescriptor");
    cudnn_check(cudnnCreateConvolutionDescriptor(&conv_), "cudnnCreateConvolutionDescriptor");
    // The sizes are always given as N, C, H, W (filters K, C, R, S); the format says how
    // they lie in memory: NHWC tensors take KRSC filters.
    const cudnnTensorFormat_t format = s.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    cudnn_check(cudnnSetTensor4dDescriptor(x_, format, t, s.n, s.c, s.h, s.w),
                node + ": input descriptor");
    cudnn_check(cudnnSetFilter4dDescriptor(w_, t, format, s.m, s.cg, s.kh, s.kw),
                node + ": weight descriptor");
    cudnn_check(cudnnSetConvolution2dDescriptor(conv_, s.pad[0], s.pad[1], s.stride[0], s.stride[1],
                                                s.dilation[0], s.dilation[1],
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                node + ": convolution descriptor");
    cudnn_check(cudnnSetConvolutionGroupCount(conv_, s.group), node + ": group count");
    // f32: TF32 or FMA math by HOTFUSE_F32_PRECISION (cuda_math.h); halves: tensor cores.
    const CudaMath math = cuda_math(dt, f32_precision());
    cudnn_check(cudnnSetConvolutionMathType(conv_, math.conv), node + ": math type");
    int dims[4] = {};
    cudnn_check(cudnnGetConvolution2dForwardOutputDim(conv_, x_, w_, &dims[0], &dims[1], &dims[2],
                                                      &dims[3]),
                node + ": output size");
    if (dims[0] != s.n || dims[1] != s.m || dims[2] != s.oh || dims[3] != s.ow)
      throw Error(node + ": cuDNN computes output [" + std::to_string(dims[0]) + ", " +
                  std::to_string(dims[1]) + ", " + std::to_string(dims[2]) + ", " +
                  std::to_string(dims[3]) + "], the graph says [" + std::to_string(s.n) + ", " +
                  std::to_string(s.m) + ", " + std::to_string(s.oh) + ", " + std::to_string(s.ow) +
                  "]");
    cudnn_check(cudnnSetTensor4dDescriptor(y_, format, t, s.n, s.m, s.oh, s.ow),
                node + ": output descriptor");
    if (fused_relu) {
      cudnn_check(cudnnCreateTensorDescriptor(&bias_), "cudnnCreateTensorDescriptor");
      cudnn_check(cudnnSetTensor4dDescriptor(bias_, format, t, 1, s.m, 1, 1),
                  node + ": bias descriptor");
      cudnn_check(cudnnCreateActivationDescriptor(&relu_), "cudnnCreateActivationDescriptor");
      cudnn_check(
          cudnnSetActivationDescriptor(relu_, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0),
          node + ": ReLU descriptor");
    }

    // A candidate set up: its math type on the descriptor (strict f32 keeps FMA math), its
    // workspace sized and allocated. A workspace the allocator cannot give (out of memory,
    // or over HOTFUSE_CUDA_MAX_BYTES) moves on to the next candidate rather than failing.
    int skipped = 0;
    auto take = [&](const cudnnConvolutionFwdAlgoPerf_t& r) -> std::optional<size_t> {
      if ((dt != DType::F32 || math.tf32) &&
          cudnnSetConvolutionMathType(conv_, r.mathType) != CUDNN_STATUS_SUCCESS)
        return std::nullopt;
      size_t bytes = 0;
      if (cudnnGetConvolutionForwardWorkspaceSize(h_, x_, w_, conv_, y_, r.algo, &bytes) !=
          CUDNN_STATUS_SUCCESS)
        return std::nullopt;
      void* ws = bytes ? alloc_.try_alloc(bytes) : nullptr;
      if (bytes && !ws) {
        ++skipped;
        note_ += (note_.empty() ? "" : ", ") + std::to_string(bytes) + " bytes for algorithm " +
                 std::to_string(static_cast<int>(r.algo));
        return std::nullopt;
      }
      ws_ = ws;
      ws_bytes_ = bytes;
      return bytes;
    };
    std::optional<ConvAlgoChoice> chosen;
    // 1. Measured before, in this process or (through the memo's store) an earlier one.
    const std::string key = memo ? memo->key(s, dt, math) : std::string();
    const std::optional<ConvAlgoChoice> kept = memo ? memo->find(key) : std::nullopt;
    if (kept) {
      cudnnConvolutionFwdAlgoPerf_t r{};
      r.algo = kept->algo;
      r.mathType = kept->math;
      r.time = kept->ms;
      r.status = CUDNN_STATUS_SUCCESS;
      chosen = pick_algorithm({&r, 1}, math, dt, take);
    }
    // 2. Measured now, on scratch buffers.
    if (!chosen && memo && !kept) {
      const std::vector<cudnnConvolutionFwdAlgoPerf_t> perf = measure();
      chosen = pick_algorithm(perf, math, dt, take);
      if (chosen) memo->keep(key, *chosen);
    }
    // 3. cuDNN's heuristics (nothing runs), best first.
    if (!chosen) {
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
      int found = 0;
      cudnn_check(cudnnGetConvolutionForwardAlgorithm_v7(
                      h_, x_, w_, conv_, y_, static_cast<int>(perf.size()), &found, perf.data()),
                  node + ": cudnnGetConvolutionForwardAlgorithm_v7");
      chosen = pick_algorithm(std::span(perf).first(found), math, dt, take);
      if (chosen) chosen->ms = -1;
    }
    if (chosen) {
      algo_ = chosen->algo;
      measured_ms_ = chosen->ms;
    }
    if (!chosen && skipped)  // out of memory, not unsupported: callers may degrade on it
      throw DeviceOutOfMemory(node + ": out of device memory for every cuDNN workspace (" + note_ +
                              ")");
    if (!chosen) throw Error(node + ": cuDNN has no usable algorithm for this convolution");
    if (skipped)
      note_ = node + ": out of device memory for the workspace of " + note_ + "; cuDNN algorithm " +
              std::to_string(static_cast<int>(algo_)) + " runs instead";
  } catch (...) {
    release();  // a throwing constructor runs no destructor
    throw;
  }
}

// Every algorithm cuDNN can run here, timed on scratch buffers (zeroed: timings must not
// depend on stale data) with the largest workspace the allocator gives up to
// kMaxFindWorkspace; fastest first. Empty when the scratch buffers do not fit or cuDNN fails:
// the heuristics decide then.
std::vector<cudnnConvolutionFwdAlgoPerf_t> CudnnConv::measure() {
  constexpr size_t kMaxFindWorkspace = size_t(256) << 20;
  constexpr size_t kMinFindWorkspace = size_t(1) << 20;
  const CudnnConvShape& s = shape_;
  const size_t bytes[3] = {size_t(s.n) * s.c * s.h * s.w * elem_bytes_,
                           size_t(s.m) * s.cg * s.kh * s.kw * elem_bytes_,
                           size_t(s.n) * s.m * s.oh * s.ow * elem_bytes_};
  void* buf[3] = {};
  void* ws = nullptr;
  size_t ws_bytes = kMaxFindWorkspace;
  auto release_scratch = [&] {
    for (void* p : buf)
      if (p) alloc_.free(p);
    if (ws) alloc_.free(ws);
  };
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
  int found = 0;
  try {
    cudaStream_t st = nullptr;
    cudnn_check(cudnnGetStream(h_, &st), "cudnnGetStream");
    for (int i = 0; i < 3; ++i) {
      buf[i] = alloc_.try_alloc(bytes[i]);
      if (!buf[i]) {
        release_scratch();
        return {};
      }
      cuda_check(cudaMemsetAsync(buf[i], 0, bytes[i], st), node_ + ": zeroing scratch buffers");
    }
    while (ws_bytes >= kMinFindWorkspace && !(ws = alloc_.try_alloc(ws_bytes))) ws_bytes /= 2;
    if (!ws) ws_bytes = 0;
    const cudnnStatus_t status = cudnnFindConvolutionForwardAlgorithmEx(
        h_, x_, buf[0], w_, buf[1], conv_, y_, buf[2], static_cast<int>(perf.size()), &found,
        perf.data(), ws, ws_bytes);
    cuda_check(cudaStreamSynchronize(st), node_ + ": timing cuDNN's algorithms");
    if (status != CUDNN_STATUS_SUCCESS) found = 0;
  } catch (...) {
    release_scratch();
    throw;
  }
  release_scratch();
  perf.resize(found);
  return perf;
}

CudnnConv::~CudnnConv() {
  release();
}

void CudnnConv::release() {
  if (ws_) alloc_.free(ws_);
  ws_ = nullptr;
  if (padded_) alloc_.free(padded_);
  padded_ = nullptr;
  if (relu_) cudnnDestroyActivationDescriptor(relu_);
  if (bias_) cudnnDestroyTensorDescriptor(bias_);
  relu_ = nullptr;
  bias_ = nullptr;
  if (conv_) cudnnDestroyConvolutionDescriptor(conv_);
  if (w_) cudnnDestroyFilterDescriptor(w_);
  if (y_) cudnnDestroyTensorDescriptor(y_);
  if (x_) cudnnDestroyTensorDescriptor(x_);
  conv_ = nullptr;
  w_ = nullptr;
  x_ = y_ = nullptr;
}

const void* CudnnConv::input(const void* x) {
  if (padded_) {
    // The input's images into the middle of the padded ones: one 3-D strided copy of N*C
    // planes of rows of W elements (NCHW), or of N images of rows of W*C elements (NHWC).
    const CudnnConvShape& s = shape_;
    const size_t px = s.nhwc ? size_t(s.c) * elem_bytes_ : elem_bytes_;  // bytes per pixel
    const size_t planes = s.nhwc ? size_t(s.n) : size_t(s.n) * s.c;
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(const_cast<void*>(x), s.in_w * px, s.in_w, s.in_h);
    p.dstPtr = make_cudaPitchedPtr(padded_, s.w * px, s.w, s.h);
    p.dstPos = make_cudaPos(s.pad_left * px, s.pad_top, 0);
    p.extent = make_cudaExtent(s.in_w * px, s.in_h, planes);
    p.kind = cudaMemcpyDeviceToDevice;
    cudaStream_t st = nullptr;
    cudnn_check(cudnnGetStream(h_, &st), "cudnnGetStream");
    cuda_check(cudaMemcpy3DAsync(&p, st), node_ + ": copying the input into its padding");
    x = padded_;
  }
  return x;
}

void CudnnConv::run(const void* x, const void* w, void* y) {
  const float one = 1.0f, zero = 0.0f;  // float scaling factors for float and half data
  x = input(x);
  cudnn_check(
      cudnnConvolutionForward(h_, &one, x_, x, w_, w, conv_, algo_, ws_, ws_bytes_, &zero, y_, y),
      node_ + ": cudnnConvolutionForward");
}

void CudnnConv::run_fused(const void* x, const void* w, const void* bias, const void* z, void* y) {
  if (!relu_) throw Error(node_ + ": cuDNN's fused convolution was not set up");
  const float one = 1.0f, zero = 0.0f;
  x = input(x);
  // Without a residual, z is y itself with a zero factor, whatever y holds (as PyTorch's
  // cudnn_convolution_relu passes its fresh output: a zero factor is not read).
  cudnn_check(cudnnConvolutionBiasActivationForward(h_, &one, x_, x, w_, w, conv_, algo_, ws_,
                                                    ws_bytes_, z ? &one : &zero, y_, z ? z : y,
                                                    bias_, bias, relu_, y_, y),
              node_ + ": cudnnConvolutionBiasActivationForward");
}

}  // namespace hf::cuda
