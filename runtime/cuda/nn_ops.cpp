#include "runtime/cuda/nn_ops.h"

#include <iostream>

#include "runtime/cuda/caching_allocator.h"
#include "runtime/cuda/conv_cudnn.h"
#include "runtime/cuda/conv_fusion.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/kernels.h"
#include "runtime/cuda/nn_kernels.h"
#include "runtime/ir/constant.h"
#include "runtime/ir/epilogue.h"
#include "runtime/ir/nn_geometry.h"

namespace hf::cuda {

namespace {

cudaStream_t stream_of(const CudaBackend& b) {
  return static_cast<cudaStream_t>(b.stream());
}

// Where a Conv kernel's operands are among its node's inputs: a Conv node's own (x, w and
// maybe a bias), or a Fused node's with a HeavyEpilogue (its heavy_inputs, and maybe the
// residual its epilogue adds).
struct ConvOperands {
  int x = 0, w = 1, bias = -1, residual = -1;
  bool relu = false;  // cuDNN's fused convolution: y = relu(conv + residual + bias)
};

// y = conv(x, w) by cuDNN, then + bias[c] by the Elemwise ADD kernel reading the bias with
// strides 0 but along the channel axis, in place (each element is read before its own thread
// writes it). Fused (conv_fusion.h): one cudnnConvolutionBiasActivationForward, with zeros
// for a missing bias. NHWC (the rewrite of Conv chains): cuDNN reads KRSC weights, which the
// strided copy kernel writes from the graph's [M, C/group, kh, kw] into a buffer of the
// kernel's own: once for a constant (written once per plan, runtime/ir/constant.h), every
// run otherwise.
class ConvKernel final : public Kernel {
 public:
  ConvKernel(CudaBackend& b, const ConvGeometry& g, DType dt, ConvOperands at,
             bool constant_weights, const std::string& node)
      : conv_(static_cast<cudnnHandle_t>(b.cudnn(node)), g, dt, b.allocator(), node,
              &b.conv_algos(), at.relu),
        alloc_(b.allocator()),
        at_(at),
        constant_weights_(constant_weights),
        stream_(stream_of(b)),
        sms_(b.device().sm_count) {
    if (!conv_.note().empty()) std::cerr << "hotfuse: " << conv_.note() << "\n";
    const i64 kh = g.win.k[0], kw = g.win.k[1], cg = g.c / g.group;
    try {
      if (g.nhwc) {
        krsc_.nin = 1;
        krsc_.rank = 4;
        const i64 shape[4] = {g.m, kh, kw, cg}, from[4] = {cg * kh * kw, kw, 1, kh * kw};
        for (int d = 0; d < 4; ++d) {
          krsc_.shape[d] = shape[d];
          krsc_.in_strides[0][d] = from[d];
        }
        krsc_.numel = g.m * kh * kw * cg;
        krsc_.in_dtype = krsc_.out_dtype = dt;
        krsc_.out = alloc_.alloc(static_cast<size_t>(krsc_.numel) * dtype_size(dt));
      }
      if (at_.relu && at_.bias < 0) {
        const size_t bytes = static_cast<size_t>(g.m) * dtype_size(dt);
        zero_bias_ = alloc_.alloc(bytes);
        cuda_check(cudaMemsetAsync(zero_bias_, 0, bytes, stream_), node + ": zeroing its bias");
      }
    } catch (...) {
      release();
      throw;
    }
    if (at_.relu || at_.bias < 0) return;
    add_.nin = 2;
    add_.rank = 4;
    const i64 shape[4] = {g.n, g.nhwc ? g.win.out[0] : g.m, g.nhwc ? g.win.out[1] : g.win.out[0],
                          g.nhwc ? g.m : g.win.out[1]};
    i64 stride = 1;
    for (int d = 3; d >= 0; --d) {
      add_.shape[d] = shape[d];
      add_.in_strides[0][d] = stride;
      stride *= shape[d];
    }
    add_.in_strides[1][g.nhwc ? 3 : 1] = 1;  // bias [M] along the channel axis
    add_.numel = stride;
    add_.in_dtype = add_.out_dtype = dt;
    add_.dense = false;
  }
  ~ConvKernel() override { release(); }
  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const void* w = in[at_.w].data;
    if (krsc_.out) {
      if (!constant_weights_ || krsc_.in[0] != w) {
        krsc_.in[0] = w;
        launch_type_convert(krsc_, stream_, sms_);
      }
      w = krsc_.out;
    }
    if (at_.relu) {
      conv_.run_fused(in[at_.x].data, w, at_.bias >= 0 ? in[at_.bias].data : zero_bias_,
                      at_.residual >= 0 ? in[at_.residual].data : nullptr, out[0].data);
      return;
    }
    conv_.run(in[at_.x].data, w, out[0].data);
    if (at_.bias < 0) return;
    add_.in[0] = out[0].data;
    add_.in[1] = in[at_.bias].data;
    add_.out = out[0].data;
    launch_elemwise(Mode::ADD, add_, stream_, sms_);
  }

 private:
  void release() {
    if (krsc_.out) alloc_.free(krsc_.out);
    if (zero_bias_) alloc_.free(zero_bias_);
    krsc_.out = zero_bias_ = nullptr;
  }

  CudnnConv conv_;
  CachingAllocator& alloc_;
  ConvOperands at_;
  bool constant_weights_;
  EwParams add_;
  EwParams krsc_;              // krsc_.out: the KRSC weights (NHWC only); krsc_.in[0]: their source
  void* zero_bias_ = nullptr;  // fused without a bias: M zeros
  cudaStream_t stream_;
  int sms_;
};

class PoolKernel final : public Kernel {
 public:
  PoolKernel(const CudaBackend& b, PoolParams p)
      : p_(p), stream_(stream_of(b)), sms_(b.device().sm_count) {}
  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    p_.in = in[0].data;
    p_.out = out[0].data;
    launch_pool2d(p_, stream_, sms_);
  }

 private:
  PoolParams p_;
  cudaStream_t stream_;
  int sms_;
};

// Slice: the input read through a view with an offset and scaled (maybe negative) strides,
// by the strided copy kernel of Dimshuffle and Broadcast.
class SliceKernel final : public Kernel {
 public:
  SliceKernel(const CudaBackend& b, EwParams p, i64 offset_bytes)
      : p_(p), offset_(offset_bytes), stream_(stream_of(b)), sms_(b.device().sm_count) {}
  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    p_.in[0] = static_cast<const char*>(in[0].data) + offset_;
    p_.out = out[0].data;
    launch_type_convert(p_, stream_, sms_);
  }

 private:
  EwParams p_;
  i64 offset_;
  cudaStream_t stream_;
  int sms_;
};

// Concat: each input is `outer` rows of `row` bytes, placed at a column offset into rows of
// the output's row bytes: one cudaMemcpy2DAsync per input.
class ConcatKernel final : public Kernel {
 public:
  ConcatKernel(const CudaBackend& b, const Graph& g, const Node& n) : stream_(stream_of(b)) {
    const Value& out = g.value(n.outputs[0]);
    const int axis = axis_attr(n, static_cast<int>(out.shape.size()));
    const size_t es = dtype_size(out.dtype);
    size_t inner = 1;
    for (size_t d = axis + 1; d < out.shape.size(); ++d) inner *= static_cast<size_t>(out.shape[d]);
    outer_ = 1;
    for (int d = 0; d < axis; ++d) outer_ *= static_cast<size_t>(out.shape[d]);
    out_row_ = static_cast<size_t>(out.shape[axis]) * inner * es;
    for (ValueId v : n.inputs)
      rows_.push_back(static_cast<size_t>(g.value(v).shape[axis]) * inner * es);
  }
  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    size_t at = 0;
    for (size_t k = 0; k < in.size(); ++k) {
      if (rows_[k] && outer_ == 1)  // one row (axis 0): no pitch limit to mind
        cuda_check(cudaMemcpyAsync(static_cast<char*>(out[0].data) + at, in[k].data, rows_[k],
                                   cudaMemcpyDeviceToDevice, stream_),
                   "cudaMemcpyAsync (Concat input " + std::to_string(k) + ")");
      else if (rows_[k] && outer_)
        cuda_check(cudaMemcpy2DAsync(static_cast<char*>(out[0].data) + at, out_row_, in[k].data,
                                     rows_[k], rows_[k], outer_, cudaMemcpyDeviceToDevice, stream_),
                   "cudaMemcpy2DAsync (Concat input " + std::to_string(k) + ")");
      at += rows_[k];
    }
  }

 private:
  cudaStream_t stream_;
  size_t outer_ = 1, out_row_ = 0;
  std::vector<size_t> rows_;
};

// Gather: an index out of range cannot throw in a kernel; the kernel flags it and, once the
// iteration has finished, after_iteration() reads the flag back, so the error names the
// node as the CPU's does. run() only enqueues (the flag's reset and the kernel), so an
// iteration with a Gather can be captured as a CUDA graph.
class GatherKernel final : public Kernel {
 public:
  GatherKernel(CudaBackend& b, GatherParams p, std::string node)
      : b_(b), p_(p), node_(std::move(node)), stream_(stream_of(b)), sms_(b.device().sm_count) {
    p_.bad = static_cast<unsigned long long*>(b_.allocator().alloc(2 * sizeof(unsigned long long)));
  }
  ~GatherKernel() override { b_.allocator().free(p_.bad); }
  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    p_.data = in[0].data;
    p_.indices = in[1].data;
    p_.out = out[0].data;
    cuda_check(cudaMemsetAsync(p_.bad, 0, 2 * sizeof(unsigned long long), stream_),
               "cudaMemsetAsync (Gather flag)");
    launch_gather(p_, stream_, sms_);
  }
  void after_iteration() override {
    unsigned long long bad[2] = {};
    cuda_check(cudaMemcpy(bad, p_.bad, sizeof bad, cudaMemcpyDeviceToHost), node_ + ": Gather");
    if (bad[0])
      throw Error(node_ + ": index " + std::to_string(static_cast<long long>(bad[1])) +
                  " is out of range for an axis of size " + std::to_string(p_.dim));
  }

 private:
  CudaBackend& b_;
  GatherParams p_;
  std::string node_;
  cudaStream_t stream_;
  int sms_;
};

}  // namespace

std::unique_ptr<Kernel> make_nn_kernel(CudaBackend& b, const Graph& g, const Node& n) {
  const Value& in0 = g.value(n.inputs[0]);
  const Value& out = g.value(n.outputs[0]);
  const std::string node = describe(n);
  switch (n.op) {
    case OpType::Conv: {
      ConvGeometry geo = conv_geometry(n, in0.shape, g.value(n.inputs[1]).shape);
      ConvOperands at;
      if (n.inputs.size() == 3) at.bias = 2;
      return std::make_unique<ConvKernel>(b, geo, in0.dtype, at, is_constant(g, n.inputs[1]), node);
    }
    case OpType::MaxPool:
    case OpType::AveragePool: {
      PoolGeometry geo = pool_geometry(n, in0.shape);
      PoolParams p;
      p.nhwc = geo.nhwc;
      p.channels = geo.c;
      p.dtype = in0.dtype;
      p.max = n.op == OpType::MaxPool;
      p.count_include_pad = geo.count_include_pad;
      p.planes = geo.n * geo.c;
      for (int a = 0; a < 2; ++a) {
        p.in_size[a] = geo.win.in[a];
        p.out_size[a] = geo.win.out[a];
        p.k[a] = geo.win.k[a];
        p.stride[a] = geo.win.stride[a];
        p.dilation[a] = geo.win.dilation[a];
        p.pad_begin[a] = geo.win.pad_begin[a];
        p.pad_end[a] = geo.win.pad_end[a];
      }
      return std::make_unique<PoolKernel>(b, p);
    }
    case OpType::Slice: {
      if (in0.shape.size() > static_cast<size_t>(kMaxRank))
        throw Error(node + ": rank " + std::to_string(in0.shape.size()) +
                    " exceeds the CUDA kernels' " + std::to_string(kMaxRank));
      SliceGeometry geo = slice_geometry(n, in0.shape);
      TensorView src = contiguous_view(nullptr, in0.dtype, in0.shape);
      EwParams p;
      p.nin = 1;
      p.rank = static_cast<int>(in0.shape.size());
      p.numel = numel(out.shape);
      p.in_dtype = p.out_dtype = in0.dtype;
      i64 offset = 0;
      for (int d = 0; d < p.rank; ++d) {
        p.shape[d] = geo.count[d];
        p.in_strides[0][d] = src.strides[d] * geo.step[d];
        offset += geo.start[d] * src.strides[d];
      }
      return std::make_unique<SliceKernel>(b, p, offset * static_cast<i64>(dtype_size(in0.dtype)));
    }
    case OpType::Concat:
      return std::make_unique<ConcatKernel>(b, g, n);
    case OpType::Gather: {
      const Value& idx = g.value(n.inputs[1]);
      const int axis = axis_attr(n, static_cast<int>(in0.shape.size()));
      GatherParams p;
      p.indices_i64 = idx.dtype == DType::I64;
      p.outer = p.inner = 1;
      for (int d = 0; d < axis; ++d) p.outer *= in0.shape[d];
      for (size_t d = axis + 1; d < in0.shape.size(); ++d) p.inner *= in0.shape[d];
      p.dim = in0.shape[axis];
      p.count = numel(idx.shape);
      p.elem_bytes = static_cast<int>(dtype_size(in0.dtype));
      return std::make_unique<GatherKernel>(b, p, node);
    }
    default:
      throw Error(node + ": not a convolution, pooling or data-movement op");
  }
}

std::unique_ptr<Kernel> make_epilogue_kernel(CudaBackend& b, const Graph& g, const Node& n) {
  const auto* e = dynamic_cast<const HeavyEpilogue*>(n.payload.get());
  if (!e) throw Error(describe(n) + ": not a heavy op with an epilogue");
  const std::string node = describe(n);
  std::vector<Shape> shapes;
  for (ValueId v : n.inputs) shapes.push_back(g.value(v).shape);
  const std::optional<CudnnConvFusion> fused =
      cudnn_conv_fusion(*e, shapes, g.value(n.outputs[0]).shape);
  if (!fused) throw Error(node + ": " + kCudnnConvFusionForm);
  const std::vector<int>& hi = e->heavy_inputs;
  const Value& x = g.value(n.inputs[hi[0]]);
  const ConvGeometry geo = conv_geometry(e->heavy, x.shape, shapes[hi[1]]);
  ConvOperands at;
  at.x = hi[0];
  at.w = hi[1];
  at.bias = hi.size() > 2 ? hi[2] : -1;
  at.residual = fused->residual;
  at.relu = true;
  return std::make_unique<ConvKernel>(b, geo, x.dtype, at, is_constant(g, n.inputs[hi[1]]), node);
}

}  // namespace hf::cuda
