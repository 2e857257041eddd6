// CPU kernels of the convolution, pooling and data-movement ops (docs/ops.md). Same
// contracts as kernels.h; Conv, the pools and Gather need contiguous inputs and outputs
// (what the executor's buffers are) and throw std::invalid_argument otherwise.
#pragma once
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "runtime/cpu/out_block.h"
#include "runtime/ir/nn_geometry.h"
#include "runtime/ir/tensor.h"

namespace hf::cpu {

// out = conv(x, w) + bias (bias may be null). f32 through oneDNN on the pool
// (conv_onednn.h), or im2col + OpenBLAS for a geometry oneDNN refuses; f16/bf16 are
// converted to f32 and back. A Conv2d is made once per node (at plan time): oneDNN's
// primitives are built in the constructor, and with const_weights (the weights are a
// Constant, same address and data on every run) the weights are reordered once.
class OnednnConv;
class Conv2d {
 public:
  // weights_owner: the weights' constant, whose packed copy is shared (packed_weights.h).
  Conv2d(const ConvGeometry& g, ThreadPool& pool, DType dtype, bool const_weights,
         std::shared_ptr<const void> weights_owner = nullptr);
  ~Conv2d();
  // Each block of `out` is passed to `on_block` once written: right after its slice on the
  // oneDNN path, after the whole convolution otherwise.
  void run(const TensorView& x, const TensorView& w, const TensorView* bias, const TensorView& out,
           const OnBlock& on_block = {});
  // The implementation taken, e.g. "nhwc brgconv:avx512_core" or "im2col+openblas".
  const char* describe() const;

 private:
  void run_f32(const float* x, const float* w, const float* bias, float* y,
               const OnBlock& on_block);
  ConvGeometry g_;
  ThreadPool& pool_;
  std::unique_ptr<OnednnConv> onednn_;
};

// A Conv2d made for one call (its primitives come from oneDNN's primitive cache).
void conv2d(const ConvGeometry& g, const TensorView& x, const TensorView& w, const TensorView* bias,
            const TensorView& out, ThreadPool& pool);

// MaxPool (NaN propagates) or AveragePool (divided by the window's elements inside the
// input, or inside the padded input with count_include_pad).
void pool2d(bool max, const PoolGeometry& g, const TensorView& x, const TensorView& out,
            ThreadPool& pool);

// out = data[..., indices, ...] along `axis`; an index outside [-dim, dim) throws
// std::out_of_range naming it.
void gather(int axis, const TensorView& data, const TensorView& indices, const TensorView& out,
            ThreadPool& pool);

// ScatterRows (op_types.def): out = data, then for each k in order, row indices[k] of out
// (rows along axis 0) set to updates[k] or combined with it (f16/bf16 compute in f32,
// integer add and mul wrap, max and min propagate NaN). An index outside [-dim, dim)
// throws std::out_of_range naming it, before anything is written.
enum class ScatterReduction { None, Add, Mul, Max, Min };
std::optional<ScatterReduction> parse_scatter_reduction(const std::string& s);
void scatter_rows(ScatterReduction r, const TensorView& data, const TensorView& indices,
                  const TensorView& updates, const TensorView& out, ThreadPool& pool);

// Det: out[b] = the determinant of the matrix in[b, :, :] (in: [..., n, n], contiguous),
// by LU factorisation with partial pivoting in f64, rounded to the output type; n = 0 gives 1.
void determinant(const TensorView& in, const TensorView& out, ThreadPool& pool);

// out = in[start::step] per axis (any strides, negative steps included).
void slice(const SliceGeometry& g, const TensorView& in, const TensorView& out, ThreadPool& pool);

// The inputs placed one after another along `axis` of out.
void concat(int axis, std::span<const TensorView> inputs, const TensorView& out, ThreadPool& pool);

}  // namespace hf::cpu
