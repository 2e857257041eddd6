#include "runtime/cuda/cuda_backend.h"

#include "runtime/cuda/cublas_api.h"

#include <cublas_v2.h>
#include <cudnn.h>

#include "runtime/cuda/caching_allocator.h"
#include "runtime/cuda/conv_algo.h"
#include "runtime/cuda/conv_cudnn.h"
#include "runtime/cuda/conv_layout.h"
#include "runtime/cuda/cublas_api.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_math.h"
#include "runtime/cuda/kernels.h"
#include "runtime/cuda/matmul.h"
#include "runtime/cuda/nn_ops.h"
#include "runtime/ir/env_switch.h"
#include "runtime/ir/f32_precision.h"
#include "runtime/ir/op_table.h"

namespace hf::cuda {

namespace {

cudaStream_t as_stream(void* s) {
  return static_cast<cudaStream_t>(s);
}

// HOTFUSE_CUDA_GRAPHS: on (default, also when unset) or off; hf::Error naming the variable
// for anything else.
bool cuda_graphs_enabled() {
  return env_switch("HOTFUSE_CUDA_GRAPHS", "on", "off");
}

// The element strides of `v` read as `to` (broadcast: 0 on expanded axes), as EwParams wants.
void set_strides(i64* dst, const Shape& own, const Shape& to) {
  TensorView v = contiguous_view(nullptr, DType::F32, own);
  if (own != to) v = v.broadcast_to(to);
  for (size_t d = 0; d < to.size(); ++d) dst[d] = v.strides[d];
}

EwParams base_params(const Node& n, const Shape& out_shape, DType in, DType out) {
  if (out_shape.size() > static_cast<size_t>(kMaxRank))
    throw Error(describe(n) + ": rank " + std::to_string(out_shape.size()) +
                " exceeds the CUDA kernels' " + std::to_string(kMaxRank));
  EwParams p;
  p.rank = static_cast<int>(out_shape.size());
  for (int d = 0; d < p.rank; ++d) p.shape[d] = out_shape[d];
  p.numel = numel(out_shape);
  p.in_dtype = in;
  p.out_dtype = out;
  p.nin = 1;
  p.dense = true;
  return p;
}

// A kernel whose launch parameters are fixed at plan time; run() only fills in pointers.
class EwKernel final : public Kernel {
 public:
  enum class Kind { Elemwise, Convert, Pow };
  EwKernel(Kind kind, EwParams p, const CudaBackend& b, Mode mode = Mode::ADD, float e = 0)
      : kind_(kind),
        p_(p),
        stream_(as_stream(b.stream())),
        sms_(b.device().sm_count),
        mode_(mode),
        e_(e) {}
  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    for (int k = 0; k < p_.nin; ++k) p_.in[k] = in[k].data;
    p_.out = out[0].data;
    switch (kind_) {
      case Kind::Elemwise:
        launch_elemwise(mode_, p_, stream_, sms_);
        break;
      case Kind::Convert:
        launch_type_convert(p_, stream_, sms_);
        break;
      case Kind::Pow:
        launch_pow_const(p_, e_, stream_, sms_);
        break;
    }
  }

 private:
  Kind kind_;
  EwParams p_;
  cudaStream_t stream_;
  int sms_;
  Mode mode_;
  float e_;
};

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(ReduceMode mode, ReduceParams p, const CudaBackend& b)
      : mode_(mode), p_(p), stream_(as_stream(b.stream())), sms_(b.device().sm_count) {}
  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    p_.in = in[0].data;
    p_.out = out[0].data;
    launch_reduce(mode_, p_, stream_, sms_);
  }

 private:
  ReduceMode mode_;
  ReduceParams p_;
  cudaStream_t stream_;
  int sms_;
};

class MatMulKernel final : public Kernel {
 public:
  // compute: cuda_math's, decided when the plan is made.
  MatMulKernel(cublasHandle_t h, cublasComputeType_t compute) : h_(h), compute_(compute) {}
  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    matmul(h_, in[0], in[1], out[0], compute_);
  }

 private:
  cublasHandle_t h_;
  cublasComputeType_t compute_;
};

// Reshape: the bytes do not change.
class MemcpyKernel final : public Kernel {
 public:
  explicit MemcpyKernel(cudaStream_t s) : stream_(s) {}
  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    size_t bytes = static_cast<size_t>(out[0].numel()) * dtype_size(out[0].dtype);
    if (bytes && in[0].data != out[0].data)
      cuda_check(cudaMemcpyAsync(out[0].data, in[0].data, bytes, cudaMemcpyDeviceToDevice, stream_),
                 "cudaMemcpyAsync (Reshape)");
  }

 private:
  cudaStream_t stream_;
};

ReduceParams reduce_params(const Graph& g, const Node& n) {
  const Value& in = g.value(n.inputs[0]);
  const int rank = static_cast<int>(in.shape.size());
  if (rank > kMaxRank) throw Error(describe(n) + ": rank too large for the CUDA kernels");
  std::vector<int> axes = reduce_axes(n, rank);
  TensorView v = contiguous_view(nullptr, in.dtype, in.shape);
  ReduceParams p;
  p.dtype = in.dtype;
  p.outputs = 1;
  p.len = 1;
  std::vector<bool> reduced(rank, false);
  for (int a : axes) reduced[a] = true;
  for (int d = 0; d < rank; ++d) {
    if (reduced[d]) {
      p.red_shape[p.red_rank] = in.shape[d];
      p.red_strides[p.red_rank++] = v.strides[d];
      p.len *= in.shape[d];
    } else {
      p.kept_shape[p.kept_rank] = in.shape[d];
      p.kept_strides[p.kept_rank++] = v.strides[d];
      p.outputs *= in.shape[d];
    }
  }
  p.warp_per_output = rank > 0 && reduced[rank - 1] && p.len >= 32;
  return p;
}

}  // namespace

CudaBackend::CudaBackend() {
  const DeviceStatus& s = device_status();
  if (!s.usable) throw Error("no CUDA device: " + s.reason);
  alloc_ =
      std::make_unique<CachingAllocator>();  // first: a bad HOTFUSE_CUDA_MAX_BYTES leaks nothing
  graphs_ = cuda_graphs_enabled();  // before anything is created: a bad value leaks nothing
  nhwc_ = nhwc_conv_chains_enabled();
  conv_algos_ = std::make_unique<ConvAlgoMemo>(s.name, s.arch);
  cuda_check(cudaSetDevice(s.device), "cudaSetDevice");
  cudaStream_t st = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate");
  stream_ = st;
  const CublasApi* api = nullptr;
  try {
    api = &cublas();
  } catch (const Error&) {
    cudaStreamDestroy(st);
    throw;
  }
  cublasHandle_t h = nullptr;
  cublasStatus_t cs = api->create(&h);
  if (cs != CUBLAS_STATUS_SUCCESS) {
    cudaStreamDestroy(st);
    throw Error(std::string("cuBLAS: cublasCreate: ") + api->status_string(cs));
  }
  cs = api->set_stream(h, st);
  if (cs != CUBLAS_STATUS_SUCCESS) {
    api->destroy(h);
    cudaStreamDestroy(st);
    throw Error(std::string("cuBLAS: cublasSetStream: ") + api->status_string(cs));
  }
  cublas_ = h;
}

void* CudaBackend::cudnn(const std::string& node) {
  std::lock_guard lock(cudnn_mu_);
  if (cudnn_) return cudnn_;
  cudnnHandle_t h = nullptr;
  cudnn_check(cudnnCreate(&h), node + ": cudnnCreate");
  cudnnStatus_t st = cudnnSetStream(h, as_stream(stream_));
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroy(h);
    cudnn_check(st, node + ": cudnnSetStream");
  }
  cudnn_ = h;
  return cudnn_;
}

namespace {

class GraphRecording final : public Recording {
 public:
  GraphRecording(cudaGraphExec_t exec, cudaStream_t stream) : exec_(exec), stream_(stream) {}
  ~GraphRecording() override { cudaGraphExecDestroy(exec_); }
  void launch() override { cuda_check(cudaGraphLaunch(exec_, stream_), "cudaGraphLaunch"); }

 private:
  cudaGraphExec_t exec_;
  cudaStream_t stream_;
};

}  // namespace

std::unique_ptr<Recording> CudaBackend::record(const std::function<void()>& enqueue,
                                               std::string& why) {
  if (!graphs_) {
    why = "HOTFUSE_CUDA_GRAPHS=off";
    return nullptr;
  }
  cudaStream_t st = as_stream(stream_);
  // Thread-local: another thread's CUDA calls (the compile worker loading modules) neither
  // break the capture nor get captured.
  cudaError_t e = cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) {
    cudaGetLastError();
    why = std::string("cudaStreamBeginCapture: ") + cudaGetErrorString(e);
    return nullptr;
  }
  std::string failed;
  try {
    enqueue();
  } catch (const std::exception& ex) {  // a kernel that cannot be captured
    failed = ex.what();
  }
  cudaGraph_t graph = nullptr;
  e = cudaStreamEndCapture(st, &graph);
  if (failed.empty() && e != cudaSuccess)
    failed = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(e);
  cudaGraphExec_t exec = nullptr;
  if (failed.empty()) {
    e = cudaGraphInstantiate(&exec, graph, 0);
    if (e != cudaSuccess) failed = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(e);
  }
  if (graph) cudaGraphDestroy(graph);
  if (!failed.empty()) {
    cudaGetLastError();  // a failed capture is not a fault of the device: clear it
    why = "capturing the iteration as a CUDA graph failed: " + failed;
    return nullptr;
  }
  return std::make_unique<GraphRecording>(exec, st);
}

void CudaBackend::set_result_store(std::shared_ptr<ResultStore> store) {
  conv_algos_->set_store(std::move(store));
}

CudaBackend::~CudaBackend() {
  if (stream_) cudaStreamSynchronize(as_stream(stream_));
  alloc_.reset();
  if (cudnn_) cudnnDestroy(static_cast<cudnnHandle_t>(cudnn_));
  if (cublas_) cublas().destroy(static_cast<cublasHandle_t>(cublas_));
  if (stream_) cudaStreamDestroy(as_stream(stream_));
}

void* CudaBackend::alloc(size_t bytes) {
  return alloc_->alloc(bytes);
}
void CudaBackend::free(void* p) {
  alloc_->free(p);
}

void CudaBackend::sync() {
  cuda_check(cudaStreamSynchronize(as_stream(stream_)), "a kernel on the CUDA stream");
}

void CudaBackend::upload(void* dst, const void* src, size_t bytes) {
  cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, as_stream(stream_)),
             "cudaMemcpyAsync host to device (" + std::to_string(bytes) + " bytes)");
  sync();  // pageable host memory: the caller may reuse `src` when this returns
}

void CudaBackend::download(void* dst, const void* src, size_t bytes) {
  cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, as_stream(stream_)),
             "cudaMemcpyAsync device to host (" + std::to_string(bytes) + " bytes)");
  sync();
}

std::unique_ptr<Kernel> CudaBackend::make_kernel(const Graph& g, const Node& n) {
  if (n.op == OpType::Constant)  // it has no input; the plan folds it (runtime/ir/constant.h)
    throw Error(describe(n) + ": constants are folded by the plan, not run as kernels");
  const Value& out = g.value(n.outputs[0]);
  const Value& in0 = g.value(n.inputs[0]);
  auto unsupported = [&](const std::string& why) {
    return Error(describe(n) + ": not supported by the CUDA backend: " + why);
  };
  for (const std::vector<ValueId>* vs : {&n.inputs, &n.outputs})
    for (ValueId v : *vs)
      if (!is_core_dtype(g.value(v).dtype))
        throw unsupported(std::string(dtype_name(g.value(v).dtype)) +
                          " (its kernels handle f32, f16, bf16, i32, i64, u8 and bool; "
                          "run with --backend cpu)");
  switch (n.op) {
    case OpType::Elemwise: {
      EwParams p = base_params(n, out.shape, in0.dtype, out.dtype);
      p.nin = static_cast<int>(n.inputs.size());
      if (p.nin > kMaxEwInputs) throw unsupported("more than 4 inputs");
      for (int k = 0; k < p.nin; ++k) {
        const Shape& s = g.value(n.inputs[k]).shape;
        set_strides(p.in_strides[k], s, out.shape);
        // A one-element operand (a scalar constant, mostly) keeps the flat, vectorised
        // path: it is read once per thread instead of through per-element offsets.
        const bool one = numel(s) == 1;
        if (one) p.scalar |= 1u << k;
        p.dense = p.dense && (s == out.shape || one);
      }
      if (!elemwise_supported(n.mode, in0.dtype))
        throw unsupported(std::string(mode_info(n.mode).name) + " of " +
                          std::string(dtype_name(in0.dtype)));
      return std::make_unique<EwKernel>(EwKernel::Kind::Elemwise, p, *this, n.mode);
    }
    case OpType::PowC: {
      if (!is_float(in0.dtype)) throw unsupported("PowC of " + std::string(dtype_name(in0.dtype)));
      EwParams p = base_params(n, out.shape, in0.dtype, out.dtype);
      return std::make_unique<EwKernel>(EwKernel::Kind::Pow, p, *this, Mode::ADD,
                                        static_cast<float>(n.attr_float("exponent")));
    }
    case OpType::TypeCvt: {
      EwParams p = base_params(n, out.shape, in0.dtype, out.dtype);
      set_strides(p.in_strides[0], in0.shape, out.shape);
      return std::make_unique<EwKernel>(EwKernel::Kind::Convert, p, *this);
    }
    case OpType::Broadcast: {
      EwParams p = base_params(n, out.shape, in0.dtype, out.dtype);
      set_strides(p.in_strides[0], in0.shape, out.shape);
      p.dense = in0.shape == out.shape;
      return std::make_unique<EwKernel>(EwKernel::Kind::Convert, p, *this);
    }
    case OpType::Dimshuffle: {
      EwParams p = base_params(n, out.shape, in0.dtype, out.dtype);
      std::vector<int> perm = dimshuffle_perm(n, in0.shape.size());
      TensorView src = contiguous_view(nullptr, in0.dtype, in0.shape);
      for (size_t d = 0; d < perm.size(); ++d)
        p.in_strides[0][d] = perm[d] >= 0 ? src.strides[perm[d]] : 0;
      p.dense = false;
      return std::make_unique<EwKernel>(EwKernel::Kind::Convert, p, *this);
    }
    case OpType::Reshape:
    case OpType::BitCast:  // the same bytes under another type
      return std::make_unique<MemcpyKernel>(as_stream(stream_));
    case OpType::Reduce:
      return std::make_unique<ReduceKernel>(*parse_reduce_mode(n.attr_str("mode")),
                                            reduce_params(g, n), *this);
    case OpType::MatMul:
      if (!is_float(in0.dtype))
        throw unsupported("MatMul of " + std::string(dtype_name(in0.dtype)));
      return std::make_unique<MatMulKernel>(static_cast<cublasHandle_t>(cublas_),
                                            cuda_math(in0.dtype, f32_precision()).gemm);
    case OpType::Fused:
      throw Error(describe(n) + ": fused nodes run through the session's CUDA fusion backend");
    case OpType::Constant:
      break;
    case OpType::Conv:
    case OpType::MaxPool:
    case OpType::AveragePool:
    case OpType::Concat:
    case OpType::Slice:
    case OpType::Gather:
      return make_nn_kernel(*this, g, n);
    case OpType::Resize:
    case OpType::GridSample:
    case OpType::RoiAlign:
      throw unsupported("no CUDA kernel yet (the CPU backend runs it)");
    case OpType::Det:
      throw unsupported("no CUDA kernel for Det (run with --backend cpu)");
    case OpType::ScatterRows:  // sequential by index order; the CPU backend runs it
      throw unsupported("no CUDA kernel for ScatterRows (run with --backend cpu)");
  }
  throw unsupported("no kernel");
}

}  // namespace hf::cuda
