// f32 MatMul through oneDNN's matmul primitive (brgemm kernels for the machine's widest
// vectors), run on hotfuse's pool like every oneDNN primitive here (onednn_context.h).
//
// Planned once per shape (at plan time) for dense row-major operands:
//  - b shared by every batch (a Linear layer on [batch, seq, hidden]): a's batches fold into
//    one tall matrix; the pool's slices are column blocks of b and out when out is wide
//    enough, else row blocks of a and out. Constant weights are reordered into the layout
//    the primitive wants once, per column block, and kept.
//  - a and b with the same batches (attention's Q K^T and P V), or one of them shared:
//    one primitive per slice of a batch, the pool walking batches x slices.
// Other broadcast patterns, strided views and f16/bf16 stay on matmul() (kernels.h).
#pragma once
#include <memory>

#include "runtime/cpu/out_block.h"
#include "runtime/ir/shape.h"

namespace hf::cpu {

class OnednnMatmul {
 public:
  // nullptr when the shapes are not ones it plans, or oneDNN refuses them.
  // threads: how many slices to aim for (the pool's size).
  // const_b: b's data and address stay the same for every run.
  // b_owner: b's constant (its ConstantData), whose packed copy is then shared with every
  // other kernel packing it the same way (packed_weights.h).
  static std::unique_ptr<OnednnMatmul> create(const Shape& a, const Shape& b, const Shape& out,
                                              int threads, bool const_b,
                                              std::shared_ptr<const void> b_owner = nullptr);
  ~OnednnMatmul();

  // out = a x b for dense f32 operands of the planned shapes. Safe to call from several
  // threads (calls on one object take turns). Each slice's block of out is passed to
  // `on_block` right after it is written.
  void run(const float* a, const float* b, float* out, ThreadPool& pool,
           const OnBlock& on_block = {});

  // The plan and oneDNN's implementation, e.g. "2 column blocks, packed b, brg:avx512_core".
  const char* describe() const;

  struct Impl;

 private:
  explicit OnednnMatmul(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hf::cpu
