// Runs a HeavyEpilogue's elementwise steps (runtime/ir/epilogue.h) over blocks of the heavy
// op's output, in place, while a block is in cache: the CPU half of epilogue fusion.
//
// Each step is the unfused op's own dense loop (the elemwise mode table, pow_const's loops)
// over chunks of a few hundred elements, so fused results are bitwise those of the unfused
// ops. Operands are classified once per plan over the output's shape with adjacent axes
// merged: the full shape (read in place), a scalar or a vector along the innermost axis (a
// bias: read through a buffer repeating it), or anything else broadcast (gathered per run of
// the innermost axis).
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "runtime/cpu/out_block.h"
#include "runtime/ir/epilogue.h"
#include "runtime/ir/tensor.h"

namespace hf::cpu {

class EpilogueProgram {
 public:
  // out: the heavy op's output shape; inputs: the Fused node's input shapes. Throws
  // hf::Error naming the step when a mode has no f32 loop.
  EpilogueProgram(const HeavyEpilogue& e, const Shape& out, const std::vector<Shape>& inputs);
  ~EpilogueProgram();

  // Applies every step to `out`'s block, in place; `inputs` are the Fused node's inputs
  // (dense). Safe to call from several threads on disjoint blocks.
  void apply(float* out, std::span<const TensorView> inputs, const OutBlock& block) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hf::cpu
