#include <string>

#include "runtime/cpu/elemwise_modes.h"
#include "runtime/cpu/kernels.h"

namespace hf::cpu {
namespace {

const ModeTable& mode_table() {
  static const ModeTable* table = [] {
    static ModeTable t = {};
    fill_modes_part0(t);
    fill_modes_part1(t);
    fill_modes_part2(t);
    fill_modes_part3(t);
    fill_modes_part4(t);
    fill_modes_part5(t);
    return &t;
  }();
  return *table;
}

}  // namespace

BlockFn mode_block_fn(Mode mode, DType compute) {
  return mode_table()[static_cast<int>(mode)][static_cast<int>(compute)];
}

void elemwise(Mode mode, std::span<const TensorView> inputs, const TensorView& out,
              ThreadPool& pool) {
  const ModeInfo& info = mode_info(mode);
  if (static_cast<int>(inputs.size()) != info.arity)
    throw std::invalid_argument(std::string("elemwise ") + info.name + ": expected " +
                                std::to_string(info.arity) + " inputs, got " +
                                std::to_string(inputs.size()));
  const DType in = inputs[0].dtype;
  for (const TensorView& v : inputs)
    if (v.dtype != in)
      throw std::invalid_argument(std::string("elemwise ") + info.name +
                                  ": inputs have different dtypes");
  const DType compute = compute_dtype(in);
  BlockFn fn = mode_block_fn(mode, compute);
  if (!fn)
    throw std::invalid_argument(std::string("elemwise ") + info.name + " does not support dtype " +
                                std::string(dtype_name(in)));
  const bool to_bool = info.kind == ModeKind::Compare || info.kind == ModeKind::Predicate;
  const DType want_out = to_bool ? DType::Bool : in;
  if (out.dtype != want_out)
    throw std::invalid_argument(std::string("elemwise ") + info.name + ": output dtype " +
                                std::string(dtype_name(out.dtype)) + ", expected " +
                                std::string(dtype_name(want_out)));
  ElemJob job;
  job.fn = fn;
  job.compute = compute;
  job.result = to_bool ? DType::Bool : compute;
  // Storage conversions cost about as much as a cheap mode.
  job.flops = info.flops + (compute != in ? 2 : 0);
  job.grain = grain_for_flops(job.flops);
  run_elemwise(inputs, out, job, pool);
}

}  // namespace hf::cpu
