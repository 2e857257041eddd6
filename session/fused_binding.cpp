#include "session/fused_binding.h"

#include <algorithm>

#include "runtime/ir/error.h"

namespace hf {

FusedBinding bind_fused(const Node& n, const fusion::RegionKernel& rk) {
  FusedBinding b;
  for (ValueId v : rk.inputs)
    b.in_slot.push_back(std::find(n.inputs.begin(), n.inputs.end(), v) - n.inputs.begin());
  for (ValueId v : rk.outputs)
    b.out_slot.push_back(std::find(n.outputs.begin(), n.outputs.end(), v) - n.outputs.begin());
  for (size_t s : b.in_slot)
    if (s >= n.inputs.size()) throw Error(describe(n) + ": spec input is not a live-in");
  for (size_t s : b.out_slot)
    if (s >= n.outputs.size()) throw Error(describe(n) + ": spec output is not a live-out");

  b.args = std::make_unique<fusion::KernelArgs>();
  const Shape& shape = rk.iteration_shape;
  for (size_t d = 0; d < shape.size(); ++d) b.args->shape[d] = shape[d];
  b.args->numel = numel(shape);
  for (size_t k = 0; k < rk.inputs.size(); ++k)
    fusion::fill_input_strides(rk, k, shape, b.args->in_strides[k]);
  if (rk.spec.reduce) {
    int64_t row = 1;
    for (size_t d = rk.spec.reduce->first_axis; d < shape.size(); ++d) row *= shape[d];
    b.args->row_len = row;
    b.args->rows = row ? b.args->numel / row : 0;
  }
  return b;
}

}  // namespace hf
