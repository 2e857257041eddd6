// The block engine behind elemwise and pow_const: walks any broadcast/strided layout in
// blocks, hands each block's operands to a BlockFn as dense arrays of the compute type, and
// splits the blocks over the pool. Per-mode code only ever sees dense arrays, so each mode
// is instantiated once per compute type, whatever the strides or storage types.
#pragma once
#include <span>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/ops/mode.h"

namespace hf::cpu {

// Computes out[i] = f(in0[i], in1[i], ...) for i < n on dense arrays of the compute type.
// `out` may be the same array as an input (in-place), never a partial overlap.
using BlockFn = void (*)(const void* const* in, void* out, int64_t n, const void* ctx);

struct ElemJob {
  BlockFn fn = nullptr;
  const void* ctx = nullptr;   // passed to fn (e.g. pow_const's exponent)
  DType compute = DType::F32;  // what fn reads: compute_dtype of the inputs
  DType result = DType::F32;   // what fn writes: the compute type, or Bool
  int64_t grain = 32768;       // elements per chunk below which a second thread is not worth it
  int flops = 1;               // per element, the op table's count (for should_stream)
};

// The dense loop of `mode` on `compute` (elemwise's), and of x ^ exponent (pow_const's;
// its ctx is a const float* to the exponent); nullptr where a mode does not take the type.
BlockFn mode_block_fn(Mode mode, DType compute);
BlockFn pow_block_fn(float exponent);

// Inputs are broadcast to out.shape (stride 0 is fine, so are right-aligned lower ranks);
// all inputs share one dtype whose compute type is job.compute; out.dtype is job.result or,
// for a float result, f16/bf16.
void run_elemwise(std::span<const TensorView> inputs, const TensorView& out, const ElemJob& job,
                  ThreadPool& pool);

// Grain for a kernel costing about `flops` per element: cheap ops need big chunks to
// amortise a wake-up, transcendental ones pay off sooner.
inline int64_t grain_for_flops(int flops) {
  int64_t g = 65536 / (1 + (flops > 0 ? flops : 1));
  return g < 2048 ? 2048 : (g > 32768 ? 32768 : g);
}

}  // namespace hf::cpu
