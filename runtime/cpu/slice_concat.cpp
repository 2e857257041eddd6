// Slice and Concat as strided copies: a slice is a view of its input with an offset and
// scaled (possibly negative) strides; each Concat input is copied into a view of the output.
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/nn_kernels.h"

namespace hf::cpu {

void slice(const SliceGeometry& g, const TensorView& in, const TensorView& out, ThreadPool& pool) {
  if (out.numel() == 0) return;
  TensorView src = in;
  src.shape = g.count;
  int64_t offset = 0;
  for (int d = 0; d < in.rank(); ++d) {
    offset += g.start[d] * in.strides[d];
    src.strides[d] = in.strides[d] * g.step[d];
  }
  src.data = static_cast<char*>(in.data) + offset * static_cast<int64_t>(dtype_size(in.dtype));
  copy(src, out, pool);
}

void concat(int axis, std::span<const TensorView> inputs, const TensorView& out, ThreadPool& pool) {
  int64_t at = 0;
  for (const TensorView& v : inputs) {
    TensorView dst = out;
    dst.shape = v.shape;
    dst.data = static_cast<char*>(out.data) +
               at * out.strides[axis] * static_cast<int64_t>(dtype_size(out.dtype));
    at += v.shape[axis];
    if (v.numel() != 0) copy(v, dst, pool);
  }
}

}  // namespace hf::cpu
